"""Latent distortion and the toy identity metrics against direct computations; the VAE learns."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from icml25.cat import (
    DigitClassifier,
    TinyVAE,
    identity_scores,
    latent_distortion,
    load_digit_images,
    pca_latents,
    subject_images,
    train_vae,
)


def test_latent_distortion_matches_a_direct_computation(tiny_vae, images) -> None:
    other = (images + 0.05).clamp(0, 1)
    d = latent_distortion(tiny_vae, images, other)
    with torch.no_grad():
        mu, logvar = tiny_vae.encode(images)
        mu_a = tiny_vae.encode(other)[0]
        rec = tiny_vae.decode(mu_a).clamp(0, 1)
    rel = [float((mu_a[i] - mu[i]).norm() / mu[i].norm()) for i in range(4)]
    assert d["rel_l2"] == pytest.approx(np.mean(rel), rel=1e-5)
    assert d["sigma_l2"] == pytest.approx(float(((mu_a - mu) ** 2 / logvar.exp()).mean()), rel=1e-5)
    assert d["decoded_mse"] == pytest.approx(float(((rec - images) ** 2).mean()), rel=1e-5)
    assert d["recon_mse"] == pytest.approx(float(((rec - other) ** 2).mean()), rel=1e-5)
    assert d["psnr"] == pytest.approx(10 * np.log10(1 / d["decoded_mse"]), rel=1e-6)
    same = latent_distortion(tiny_vae, images, images)
    assert same["rel_l2"] == 0.0 and same["decoded_mse"] == same["clean_decoded_mse"]


def test_identity_scores_match_softmax_by_hand(images) -> None:
    torch.manual_seed(0)
    clf = DigitClassifier()
    with torch.no_grad():
        p = torch.softmax(clf(images), 1).numpy()
    s = identity_scores(clf, images, subject=2, threshold=0.3)
    assert s["ism"] == pytest.approx(p[:, 2].mean(), rel=1e-6)
    assert s["fdfr"] == pytest.approx((p.max(1) < 0.3).mean())
    assert s["accuracy"] == pytest.approx((p.argmax(1) == 2).mean())


def test_pca_separates_shifted_groups(tiny_vae, images) -> None:
    out = pca_latents(tiny_vae, {"a": images * 0.2, "b": images * 0.2 + 0.8})
    assert abs(out["a"][:, 0].mean() - out["b"][:, 0].mean()) > 3 * (out["a"][:, 0].std() + out["b"][:, 0].std())


def test_digits_and_a_short_vae_training() -> None:
    x, y = load_digit_images(16)
    sub = subject_images(x, y, 3, 8)
    assert sub.shape == (8, 1, 16, 16) and x.dtype == np.float32 and 0 <= x.min() and x.max() <= 1
    torch.manual_seed(0)
    vae = TinyVAE(width=8)
    losses = train_vae(vae, x[:256], steps=60, batch_size=32, seed=0)
    assert np.mean(losses[-10:]) < 0.6 * np.mean(losses[:5])
    with pytest.raises(ValueError, match="only 0 exist"):
        subject_images(x, y, 3, 8, offset=10_000)
