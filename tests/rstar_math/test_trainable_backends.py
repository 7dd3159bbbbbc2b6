"""Trainable policy backends of SelfEvolution: the TinyGPT backend is the old code path exactly; a custom backend
receives every model-specific stage; bad backends fail clearly. (The LoRA backend: test_lora_backend.py.)"""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")

from icml25.rstar_math.domain.bootstrap_solver import NoisyRuleSolver  # noqa: E402
from icml25.rstar_math.domain.steparith import StepArithGenerator  # noqa: E402
from icml25.rstar_math.execution.code_executors import SafeArithExecutor  # noqa: E402
from icml25.rstar_math.models.tiny_policy import make_tiny_lm  # noqa: E402
from icml25.rstar_math.models.trainable import BACKEND_METHODS, TinyGPTBackend, TrainableBackend, as_backend  # noqa: E402
from icml25.rstar_math.pipeline.self_evolution import RoundConfig, SelfEvolution  # noqa: E402
from icml25.rstar_math.search.mcts import MCTS, MCTSConfig  # noqa: E402

TRAIN = dict(sft_steps=20, ppm_steps=12, batch_size=8, ppm_batch_pairs=4, lr=1e-3)


def _setup():
    torch.set_num_threads(1)
    pool = StepArithGenerator(levels=(1, 2, 3), seed=0).sample(12)
    base = make_tiny_lm(n_layer=1, n_head=2, n_embd=32, block_size=160, seed=0)
    rounds = [RoundConfig(MCTSConfig(n_candidates=3, rollouts=4, max_depth=10, errors_threshold=2), **TRAIN),
              RoundConfig(MCTSConfig(n_candidates=3, rollouts=2, max_depth=10, errors_threshold=2, mode="ppm_init"),
                          **TRAIN)]  # round 2: SLM-r1 generates, PPM-r1 scores (through the backend)
    return pool, base, rounds


def _run(pool, base, rounds, workdir, backend=None):
    torch.manual_seed(0)  # the PPM head's initialisation draws from torch's global generator
    ev = SelfEvolution(pool, NoisyRuleSolver(pool, seed=0), rounds, workdir, backend or base,
                       SafeArithExecutor(False), max_tokens=24)
    metrics = ev.run()
    for m in metrics:
        m.pop("search_seconds")
    return ev, metrics


def _old_round1(pool, base, rc):
    """Round 1 written out with the library pieces, as SelfEvolution did before the backends existed."""
    from dataclasses import replace

    from icml25.rstar_math.models.process_preference_model import PPMModel, pair_accuracy, train_ppm
    from icml25.rstar_math.models.sft import sft_examples, train_sft
    from icml25.rstar_math.models.tiny_policy import clone_lm
    from icml25.rstar_math.pipeline.extraction import extract_pairs, extract_sft

    torch.manual_seed(0)
    cfg = replace(rc.mcts, seed=1, max_tokens=24)
    trees = MCTS(NoisyRuleSolver(pool, seed=0), SafeArithExecutor(False), config=cfg).search(pool)
    sft, pairs = extract_sft(trees, top_k=2), extract_pairs(trees, min_edit=rc.pair_min_edit)
    policy = clone_lm(base)
    sft_losses = train_sft(policy, sft_examples(sft), steps=rc.sft_steps, batch_size=rc.batch_size, lr=rc.lr, seed=1)
    ppm = PPMModel.from_policy(policy)
    ppm_losses = train_ppm(ppm, pairs, steps=rc.ppm_steps, batch_size=rc.ppm_batch_pairs, lr=rc.lr, seed=1)
    return {"coverage": sum(t.solved() for t in trees) / len(trees), "n_sft": len(sft), "n_pairs": len(pairs),
            "sft_loss_first": sum(sft_losses[:10]) / 10, "sft_loss_last": sum(sft_losses[-10:]) / 10,
            "ppm_loss_last": sum(ppm_losses[-10:]) / 10, "ppm_train_pair_acc": pair_accuracy(ppm, pairs)}, policy, ppm


def test_tinygpt_backend_is_the_original_code_path(tmp_path):
    pool, base, rounds = _setup()
    ev_a, plain = _run(pool, base, rounds, tmp_path / "a")  # base_lm = a TinyGPT (backwards compatible)
    ev_b, wrapped = _run(pool, base, rounds, tmp_path / "b", TinyGPTBackend(base))
    assert isinstance(ev_a.backend, TinyGPTBackend) and ev_a.backend.base_lm is base
    assert json.dumps(plain, sort_keys=True) == json.dumps(wrapped, sort_keys=True)
    old, old_policy, old_ppm = _old_round1(pool, base, rounds[0])
    assert old["n_sft"] > 0 and old["n_pairs"] > 0
    assert {k: plain[0][k] for k in old} == old  # the same numbers as the pre-backend implementation
    policy, ppm = ev_a.models[1]
    for a, b in ((policy.module, old_policy.module), (ppm, old_ppm)):
        assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))
    # the saved layout is unchanged: a TinyGPT.save folder and PPMModel.save files
    for f in ("policy/config.json", "policy/model.pt", "ppm/trunk.pt", "ppm/value_head.bin"):
        assert (tmp_path / "a" / "round_1" / f).is_file()


class _CountingBackend(TinyGPTBackend):
    """A third-party backend: TinyGPT underneath, recording every call SelfEvolution makes."""

    def __init__(self, base):
        super().__init__(base)
        self.calls: list[str] = []
        for m in BACKEND_METHODS:
            setattr(self, m, self._record(m, getattr(self, m)))

    def _record(self, name, fn):
        def call(*a, **k):
            self.calls.append(name)
            return fn(*a, **k)
        return call


def test_any_backend_object_is_used_for_every_model_stage(tmp_path):
    pool, base, rounds = _setup()
    be = _CountingBackend(base)
    assert isinstance(be, TrainableBackend) and as_backend(be) is be
    _, m = _run(pool, base, rounds[:1], tmp_path, be)
    assert be.calls == ["fresh_policy", "train_policy", "save_policy", "make_ppm", "train_ppm", "save_ppm",
                        "pair_accuracy"]
    be2 = _CountingBackend(base)  # a second run resumes: round 1 is loaded through the backend, then round 2
    SelfEvolution(pool, NoisyRuleSolver(pool, seed=0), rounds, tmp_path, be2, SafeArithExecutor(False),
                  max_tokens=24).run()
    assert be2.calls[:2] == ["load_policy", "load_ppm"] and "step_policy" in be2.calls  # SLM-r1 generates


def test_bad_backends_give_clear_errors(tmp_path):
    pool, base, rounds = _setup()

    class Partial:
        def fresh_policy(self):
            return None

        def train_policy(self, *a, **k):
            return []

    with pytest.raises(TypeError, match="lacks step_policy, make_ppm"):
        SelfEvolution(pool, NoisyRuleSolver(pool), rounds, tmp_path, Partial(), SafeArithExecutor(False))
    with pytest.raises(TypeError, match="TinyGPT or a trainable backend"):
        as_backend(object())
    hf_like = type("HFModelLike", (), {"model": None, "hidden_states": lambda self, p: None})()
    with pytest.raises(TypeError, match="LoRABackend"):
        as_backend(hf_like)
    with pytest.raises(TypeError, match="TinyGPT"):
        TinyGPTBackend("not a model")
    with pytest.raises(ValueError, match="ppm_dropout"):
        TinyGPTBackend(base, ppm_dropout=1.5)
    with pytest.raises(ValueError, match="score_transform"):
        TinyGPTBackend(base, score_transform="sigmoid")
