"""The real-image world (issue 50): shipped CC0/public-domain photos, random crops, the photo pipeline end to end."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

PHOTOS_SHA256 = "bf650acc3b58aace39c7039618240a7a99d73858e41eaf8b4f7ebc1a91a872d3"


def test_shipped_photos_are_the_documented_files() -> None:
    import icml25.cat.data as d
    from icml25.cat.data import PHOTOS, load_photos

    path = Path(d.__file__).with_name("data") / "photos.npz"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == PHOTOS_SHA256
    assert PHOTOS_SHA256 in (path.parent / "SOURCE.md").read_text(encoding="utf-8")
    photos = load_photos()
    assert tuple(photos) == PHOTOS
    for name, img in photos.items():
        assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3 and min(img.shape[:2]) == 128, name
        assert img.std() > 10, name  # a real photo, not a constant


def test_photo_crops_are_deterministic_labelled_and_in_range() -> None:
    from icml25.cat.data import PHOTOS, load_photo_crops

    x, y = load_photo_crops(3, size=32, seed=5)
    x2, y2 = load_photo_crops(3, size=32, seed=5)
    x3, _ = load_photo_crops(3, size=32, seed=6)
    assert x.shape == (3 * len(PHOTOS), 3, 32, 32) and x.dtype == np.float32
    assert np.array_equal(x, x2) and np.array_equal(y, y2) and not np.array_equal(x, x3)
    assert y.tolist() == [i for i in range(len(PHOTOS)) for _ in range(3)]
    assert 0.0 <= x.min() and x.max() <= 1.0
    # crops of one photo resemble each other more than crops of another photo (mean colour)
    means = x.mean(axis=(2, 3)).reshape(len(PHOTOS), 3, 3).mean(1)
    assert np.ptp(means, axis=0).max() > 0.1
    with pytest.raises(ValueError, match="scale"):
        load_photo_crops(2, scale=(0.5, 0.2))


def test_config_world_and_subjects_are_checked() -> None:
    from icml25.cat.reproduce import Config

    with pytest.raises(ValueError, match="world"):
        Config(world="faces")
    with pytest.raises(ValueError, match="subject"):
        Config(world="photos", subject=7)
    with pytest.raises(TypeError, match="subjects"):
        Config(world="photos", subject=0, subjects=[1])
    with pytest.raises(ValueError, match="subjects"):
        Config(world="photos", subject=0, subjects=(1, 2, 3, 4, 5))
    with pytest.raises(ValueError, match="image_size"):
        Config(world="photos", subject=0, image_size=30)
    assert Config.photos().world == "photos" and Config.full().world == Config.quick().world == "digits"
    assert Config.photos().plan().estimated_seconds < 3600  # the photo world fits the hour on one thread


def test_photo_pipeline_runs_end_to_end_with_tiny_models(tmp_path) -> None:
    from icml25.cat.reproduce import Config, reproduce
    from icml25.core import Scale

    cfg = Config(world="photos", subject=0, subjects=(1,), protections=("encoder", "advdm+"), etas=(0.1, 0.05),
                 n_crops=20, n_test_crops=4, n_subject=4, vae_width=8, latent_channels=4, vae_steps=3,
                 vae_batch=8, classifier_steps=3, ldm_hidden=32, timesteps=20, ldm_steps=3, n_prior=8,
                 ddim_steps=4, pgd_steps=2, cat_steps=2, cat_batch=4, db_steps=2, db_batch=4, n_samples=8)
    rep = reproduce(scale=Scale.FULL, seed=0, out=tmp_path, config=cfg)
    ids = {c.id for c in rep.claims}
    assert {"Q1", "Q3", "C2-clean", "C2-learn", "C2a", "C2c", "C1b"} <= ids
    rows = next(v for k, v in rep.tables.items() if k.startswith("world"))
    assert 0.0 < rows[0]["VAE held-out MSE"] < 1.0 and np.isfinite(rows[0]["FD floor (training vs held-out crops)"])
    crow = next(v for k, v in rep.tables.items() if k.startswith("customisation"))
    assert crow[0]["run"] == "un-customised model" and "ISM* (cosine)" in crow[0]
