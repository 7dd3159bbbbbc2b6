"""From-scratch training batches and task vectors (patching identities, geometry)."""

from __future__ import annotations

import numpy as np
import pytest

from icml25.task_superposition import (
    MixturePromptBuilder,
    TaskVectorExtractor,
    answer_probabilities,
    icl_training_batch,
    layer_hidden_states,
    official_setting,
    patch_and_score,
    synthetic_family,
)


def test_training_batch_masks_exactly_the_answers_and_terminators():
    from icml25.llm.tokenizers import CharTokenizer

    fam = synthetic_family("F-AB")
    tok = CharTokenizer(fam.alphabet)
    x, y, w = icl_training_batch(fam, tok, np.random.default_rng(0), 8, 1, 4)
    for r in range(8):
        text = tok.decode([int(i) for i in y[r] if i != tok.pad_id])
        lines = text.split("\n")[:-1]
        assert all(len(ln) == 4 and ln[2] == "=" for ln in lines)  # "ab=c" per example and the query
        # loss mask: the answer char (after '=') and the newline after it, nothing else
        assert w[r].sum() == 2 * len(lines)
        targets = [tok.decode([int(t)]) for t, m in zip(y[r], w[r]) if m]
        assert targets[1::2] == ["\n"] * len(lines)
        # one task per prompt: every answer is the same function of its input
        tasks = {next(k for k in range(3) if fam.tasks[k].fn((int(ln[0]), int(ln[1]))) == ln[3]) for ln in lines
                 if len({fam.tasks[k].fn((int(ln[0]), int(ln[1]))) for k in range(3)}) == 3}
        assert len(tasks) <= 1


def _reference_batch(family, tokenizer, rng, batch_size, m_min, m_max):
    """icl_training_batch as it was written before its fast path: build_prompt, one encode per head and tail."""
    from icml25.task_superposition.prompts import build_prompt

    rows = []
    for _ in range(batch_size):
        k = int(rng.integers(family.K))
        m = int(rng.integers(m_min, m_max + 1))
        counts = np.zeros(family.K, dtype=int)
        counts[k] = m
        item = build_prompt(family, counts, rng)
        ids, mask = [tokenizer.eot_id], [0]
        segments = item.prompt.split(family.joiner) if m else [item.prompt]
        for j, line in enumerate(segments):
            if j < len(segments) - 1:
                head, _, ans = line.rpartition(family.sep)
                head += family.sep
                tail = ans + family.joiner
            else:
                head, tail = line, item.answers[k] + family.joiner
            h, t = tokenizer.encode(head), tokenizer.encode(tail)
            ids += h + t
            mask += [0] * len(h) + [1] * len(t)
        rows.append((ids, mask))
    T = max(len(r[0]) for r in rows) - 1
    x = np.full((batch_size, T), tokenizer.pad_id, dtype=np.int64)
    y = np.full((batch_size, T), tokenizer.pad_id, dtype=np.int64)
    w = np.zeros((batch_size, T), dtype=np.float32)
    for r, (ids, mask) in enumerate(rows):
        n = len(ids) - 1
        x[r, :n], y[r, :n], w[r, :n] = ids[:-1], ids[1:], mask[1:]
    return x, y, w


@pytest.mark.parametrize("tasks,m_min,tok_kind", [(["copyA", "copyB"], 1, "char"), (None, 0, "char"),
                                                  (["copyA", "add_mod10"], 0, "byte")])
def test_training_batch_fast_path_equals_build_prompt(tasks, m_min, tok_kind):
    """The training batches (fast path: no PromptItem, one look-up per character) are the arrays of build_prompt
    plus per-segment encoding, and leave the generator in the same state (the next batches agree too)."""
    from icml25.llm.tokenizers import ByteTokenizer, CharTokenizer

    fam = synthetic_family("F-AB", tasks) if tasks else synthetic_family("F-AB")
    tok = CharTokenizer(fam.alphabet) if tok_kind == "char" else ByteTokenizer()
    fast, ref = np.random.default_rng(5), np.random.default_rng(5)
    for _ in range(4):
        a = icl_training_batch(fam, tok, fast, 16, m_min, 8)
        b = _reference_batch(fam, tok, ref, 16, m_min, 8)
        for u, v in zip(a, b):
            assert u.dtype == v.dtype and u.shape == v.shape and np.array_equal(u, v)


def test_training_reduces_the_loss():
    import torch

    torch.set_num_threads(1)
    from icml25.task_superposition import train_icl_model

    _, hist = train_icl_model(synthetic_family("F-AB", ["copyA"]), size="S", steps=60, lr=1e-2, seed=1,
                              show_progress=False)
    assert np.mean(hist["loss"][-10:]) < 0.7 * np.mean(hist["loss"][:5])


@pytest.mark.parametrize("backend", ["tiny_fab", "random_gpt2"])
def test_patching_a_state_with_itself_changes_nothing(backend, request):
    model = request.getfixturevalue(backend)
    fam = synthetic_family("F-AB") if backend == "tiny_fab" else official_setting("country")
    items = MixturePromptBuilder(fam, m=3, random_state=0).sample(3)
    prompts, answers = [it.prompt for it in items], [list(it.answers) for it in items]
    p = answer_probabilities(model, prompts, answers)
    h = layer_hidden_states(model, prompts, 1)
    assert patch_and_score(model, prompts, answers, 1, h) == pytest.approx(p, rel=1e-4)
    moved = patch_and_score(model, prompts, answers, 1, h + 50.0 * np.sign(h))
    assert np.abs(np.log(moved) - np.log(p)).max() > 1e-3  # a different state does change the output


def test_task_vector_geometry_on_constructed_states(tiny_fab):
    tv = TaskVectorExtractor(tiny_fab, layer=1).fit([["12=", "34="], ["56=", "78="]])
    v = tv.vectors_
    lam = np.array([0.75, 0.25])
    h = np.stack([lam @ v, v[0], v[1]])
    assert tv.position(h) == pytest.approx([0.75, 1.0, 0.0])
    assert tv.mixture_coefficient(h[:1], lam) == pytest.approx([1.0])
    with pytest.raises(ValueError, match="weights must sum to 1"):
        tv.combination([0.5, 0.6])


def test_train_icl_model_passes_the_init_and_tying_options():
    import torch

    torch.set_num_threads(1)
    from icml25.task_superposition import train_icl_model

    fam = synthetic_family("F-AB", ["copyA", "copyB"])
    model, hist = train_icl_model(fam, size="S", steps=2, show_progress=False)
    assert (model.config.init, model.config.tie_embeddings) == ("torch", False)
    assert model.module.lm_head.weight is not model.module.wte.weight
    assert "emerged_at" in hist and hist["emerged_at"] is None  # 2 steps cannot leave the plateau
    gpt2, _ = train_icl_model(fam, size="S", steps=2, show_progress=False, init="gpt2", tie_embeddings=True)
    assert gpt2.module.lm_head.weight is gpt2.module.wte.weight
    assert float(gpt2.module.wte.weight.std()) < 0.05 < float(model.module.wte.weight.std())
    with pytest.raises(ValueError, match="init"):
        train_icl_model(fam, size="S", steps=1, init="xavier", show_progress=False)


@pytest.mark.slow
@pytest.mark.parametrize(("init", "tie", "emerges"), [("torch", False, True), ("gpt2", True, False)])
def test_in_context_learning_emerges_with_torch_init_and_untied_head(init, tie, emerges):
    """The lever of the README: 800 steps on single-task copyA/copyB prompts (size M, ~25 s CPU each). With PyTorch's
    default initialisation and an untied output layer the model learns to read the task from the examples (greedy
    single-task accuracy >= 0.9 for both tasks, loss below half the ln(2)/2 plateau); with GPT-2's N(0, 0.02) and tied
    embeddings it stays on the "answer is a or b" plateau (accuracy about 0.5 per task)."""
    import torch

    torch.set_num_threads(1)
    from icml25.task_superposition import single_task_accuracy, train_icl_model

    fam = synthetic_family("F-AB", ["copyA", "copyB"])
    model, hist = train_icl_model(fam, size="M", steps=800, lr=3e-3, seed=0, init=init, tie_embeddings=tie,
                                  show_progress=False)
    acc = [single_task_accuracy(model, fam, k, m=8, n=50, seed=11) for k in range(2)]
    if emerges:
        assert min(acc) >= 0.9 and hist["emerged_at"] is not None
        assert np.mean(hist["loss"][-50:]) < np.log(2) / 4
    else:
        assert min(acc) < 0.8 and hist["emerged_at"] is None
