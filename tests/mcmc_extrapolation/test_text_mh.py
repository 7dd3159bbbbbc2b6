"""Mask-and-infill MH with a (tiny, random) Hugging Face masked LM: the Hastings ratio against a brute-force
computation of the proposal probabilities, and the chain's stationary distribution against exact enumeration."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from icml25.mcmc_extrapolation import MaskInfillProposal, MetropolisHastings  # noqa: E402
from icml25.mcmc_extrapolation.text_models import MLMInfill  # noqa: E402

WORDS4 = ["a", "b", "c", "d"]


@pytest.fixture(scope="module")
def infill(tmp_path_factory):  # type: ignore[no-untyped-def]
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("mcmc_conftest", Path(__file__).with_name("conftest.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    folder = mod.save_mlm(tmp_path_factory.mktemp("mlm4"), words=WORDS4, seed=0, init_range=0.1)
    return MLMInfill(f"hf:{folder}")


def _brute_force_q(infill: MLMInfill, text: str, masked: list[int], fill: list[str]) -> float:
    """q(fill at masked | text) from a masked *string* run through the tokenizer and the model directly."""
    import torch

    words = text.split()
    for i in masked:
        words[i] = "[MASK]"
    enc = infill.tokenizer(" ".join(words), return_tensors="pt")  # [CLS] ... [SEP] by the tokenizer's template
    with torch.no_grad():
        logits = infill.model(**enc).logits[0]
    allowed = [infill.tokenizer.convert_tokens_to_ids(w) for w in ["[UNK]"] + WORDS4]
    q = 1.0
    for i, w in zip(masked, fill):
        z = logits[i + 1, allowed].double()
        p = torch.softmax(z, 0)
        q *= float(p[allowed.index(infill.tokenizer.convert_tokens_to_ids(w))])
    return q


def test_infill_probabilities_and_hastings_ratio_match_brute_force(infill: MLMInfill) -> None:
    x = infill.encode(["a b c", "d d a"], length=3)
    pos = np.array([[0, 2], [1, 2]])
    lp = infill.log_probs(x, pos)
    assert lp.shape[:2] == (2, 2)
    np.testing.assert_allclose(np.exp(lp).sum(-1), 1.0, atol=1e-9)  # a distribution over the non-special tokens
    y, fwd, rev = infill(x, pos, np.random.default_rng(0))
    for r, (src, p) in enumerate(zip(["a b c", "d d a"], pos)):
        new = infill.decode(y[r:r + 1])[0].split()
        q_fwd = _brute_force_q(infill, src, list(p), [new[i] for i in p])
        q_rev = _brute_force_q(infill, " ".join(new), list(p), [src.split()[i] for i in p])
        assert fwd[r] == pytest.approx(np.log(q_fwd), abs=1e-5)
        assert rev[r] == pytest.approx(np.log(q_rev), abs=1e-5)
    # the MH acceptance the sampler uses: min(1, exp(beta (s(x') - s(x))) q(x|x') / q(x'|x))
    prop = MaskInfillProposal(infill, n_positions=2)
    y2, corr = prop.propose(x, np.random.default_rng(1))
    pos2 = np.sort(np.argsort(np.random.default_rng(1).uniform(size=(2, 3)), axis=1)[:, :2], axis=1)
    for r in range(2):
        src, new = infill.decode(x[r:r + 1])[0].split(), infill.decode(y2[r:r + 1])[0].split()
        q_fwd = _brute_force_q(infill, " ".join(src), list(pos2[r]), [new[i] for i in pos2[r]])
        q_rev = _brute_force_q(infill, " ".join(new), list(pos2[r]), [src[i] for i in pos2[r]])
        assert corr[r] == pytest.approx(np.log(q_rev / q_fwd), abs=1e-5)


def test_padding_is_never_infilled(infill: MLMInfill) -> None:
    x = infill.encode(["a b", "c"], length=3)
    assert (x[:, -1] == infill.pad_id).all() and x[1, 1] == infill.pad_id
    y, fwd, rev = infill(x, np.array([[1, 2], [1, 2]]), np.random.default_rng(0))
    assert y[1, 1] == infill.pad_id and y[0, 2] == infill.pad_id
    assert fwd[1] == 0.0 and rev[1] == 0.0


@pytest.mark.parametrize("n_positions", [1, 2])
def test_text_mh_samples_exp_energy_exactly(infill: MLMInfill, n_positions: int) -> None:
    """Stationary distribution on all 5^2 two-token texts (the 4 words and [UNK]) vs exact enumeration."""
    allowed = np.flatnonzero(infill.allowed)
    assert len(allowed) == 5
    X = np.array(list(itertools.product(allowed, repeat=2)))
    table = np.random.default_rng(0).normal(scale=1.0, size=len(X))
    code = {tuple(r): i for i, r in enumerate(X)}

    def energy(x: np.ndarray) -> np.ndarray:
        return np.array([table[code[tuple(r)]] for r in np.asarray(x, dtype=np.int64)])

    target = np.exp(table - table.max())
    target /= target.sum()
    mh = MetropolisHastings(energy, MaskInfillProposal(infill, n_positions=n_positions), beta=1.0)
    start = X[np.random.default_rng(1).integers(len(X), size=800)]
    ch = mh.run(start, 60, seed=2)
    samples = ch.states[:, 10:].reshape(-1, 2).astype(np.int64)
    emp = np.bincount([code[tuple(r)] for r in samples], minlength=len(X)) / len(samples)
    assert 0.5 * np.abs(emp - target).sum() < 0.03
    # the same chain without the Hastings correction is biased towards the masked LM's own distribution
    naive = MaskInfillProposal(lambda x, p, r: (lambda y, f, b: (y, f, f))(*infill(x, p, r)), n_positions)
    ch2 = MetropolisHastings(energy, naive, beta=1.0).run(start, 60, seed=2)
    emp2 = np.bincount([code[tuple(r)] for r in ch2.states[:, 10:].reshape(-1, 2).astype(np.int64)],
                       minlength=len(X)) / len(samples)
    assert 0.5 * np.abs(emp2 - target).sum() > 0.1  # calibration: 0.32 (exact: 0.016)
