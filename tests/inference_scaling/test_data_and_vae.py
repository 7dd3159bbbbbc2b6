"""Shipped data loaders and the VAE attempt generator."""

from __future__ import annotations

import numpy as np
import pytest

from icml25.inference_scaling import load_digitized_curve, load_llmonkeys_pythia_math, load_pythia_checkpoints
from icml25.testing import requires


def test_llmonkeys_loader() -> None:
    data = load_llmonkeys_pythia_math()
    assert list(data)[0] == "Pythia 70M" and list(data)[-1] == "Pythia 12B" and len(data) == 7
    for d in data.values():
        assert d["n"].shape == (128,) and np.all(d["n"] == 10_000) and np.all(d["c"] <= d["n"])


def test_checkpoint_loader() -> None:
    math = load_pythia_checkpoints(benchmark="MATH")
    assert math and all(r["benchmark"] == "MATH" for r in math)
    assert len(load_pythia_checkpoints()) > len(math)
    assert max(int(r["n"].max()) for r in math) > 10_112  # adaptive sample counts
    with pytest.raises(ValueError, match="benchmark"):
        load_pythia_checkpoints(benchmark="HumanEval")


def test_digitized_curves_are_sorted_and_unique() -> None:
    for name in ("Gemma-2B", "Llama-3-8B", "Pythia-2.8B", "pythia28B"):
        k, y = load_digitized_curve(name)
        assert np.all(np.diff(k) > 0) and np.all(np.diff(y) >= 0)
    with pytest.raises(ValueError, match="name"):
        load_digitized_curve("GPT-4")


def test_user_path_is_used(tmp_path) -> None:
    p = tmp_path / "curve.csv"
    p.write_text("x, y\n10, 0.5\n1, 0.1\n")
    k, y = load_digitized_curve("Gemma-2B", path=p)
    assert k.tolist() == [1.0, 10.0] and y.tolist() == [0.1, 0.5]


@requires("torch")
def test_vae_learns_and_attempts_are_seeded_and_correlated() -> None:
    import torch

    from icml25.inference_scaling import attempt_errors, train_vae

    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    protos = (rng.random((4, 64)) > 0.5).astype(np.float32)
    X = np.clip(protos[rng.integers(0, 4, 120)] + 0.05 * rng.standard_normal((120, 64)), 0, 1).astype(np.float32)
    untrained = train_vae(X, epochs=1, seed=0, hidden=32, batch_size=16)
    trained = train_vae(X, epochs=40, seed=0, hidden=32, batch_size=16, lr=3e-3)
    e_un = attempt_errors(untrained, X, 1.0, 8, seed=0)
    e_tr = attempt_errors(trained, X, 1.0, 8, seed=0)
    assert e_tr.shape == (120, 1, 8)
    assert e_tr.mean() < 0.5 * e_un.mean()  # learning happens
    assert np.array_equal(e_tr, attempt_errors(trained, X, 1.0, 8, seed=0))  # seeded
    # higher temperature -> worse reconstructions
    assert attempt_errors(trained, X, 4.0, 8, seed=0).mean() > e_tr.mean()
    # rho close to 1: attempts in a batch nearly coincide; rho = 0: they spread
    near = attempt_errors(trained, X, 1.0, 16, rho=0.999, n_batches=2, seed=1)
    iid = attempt_errors(trained, X, 1.0, 16, rho=0.0, n_batches=2, seed=1)
    assert near.std(axis=2).mean() < 0.2 * iid.std(axis=2).mean()
    with pytest.raises(ValueError, match="rho"):
        attempt_errors(trained, X, 1.0, 4, rho=1.0)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        train_vae(X * 16, epochs=1)
