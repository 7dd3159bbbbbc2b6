"""The paper preset (Stable Diffusion's VAE and the user's photos), its dry-run plan, the paper-scale code path on a
tiny saved AutoencoderKL, and the claims the quick run adds (held-out Q3, Q4, the paper-only claim)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from icml25.core import Scale


def test_paper_preset_and_plans() -> None:
    from icml25.cat.reproduce import Config

    paper = Config.paper()
    assert paper.backend == "diffusers" and paper.cat_rank == 128 and paper.cat_steps == 10_000
    assert paper.resolution == 512 and paper.device == "cuda" and "stable-diffusion-2-1" in paper.sd_model
    for name in ("quick", "full", "paper"):
        plan = getattr(Config, name)().plan()
        assert plan.scale == name and plan.estimated_seconds > 0
    quick = Config.quick()
    assert dataclasses.replace(quick, db_steps=2000).plan().estimated_seconds > quick.plan().estimated_seconds
    with pytest.raises(ValueError, match="backend"):
        Config(backend="sd")


def _sd_folder(tmp_path):
    """A tiny randomly initialised AutoencoderKL saved in the diffusers layout (<dir>/vae) and 8 photos."""
    import torch
    from diffusers import AutoencoderKL
    from PIL import Image

    torch.manual_seed(0)
    vae = AutoencoderKL(block_out_channels=(8, 16), latent_channels=4, norm_num_groups=4, sample_size=32,
                        down_block_types=("DownEncoderBlock2D",) * 2, up_block_types=("UpDecoderBlock2D",) * 2)
    vae.save_pretrained(tmp_path / "sd" / "vae")
    photos = tmp_path / "photos"
    photos.mkdir()
    rng = np.random.default_rng(0)
    for i in range(8):
        Image.fromarray(rng.integers(0, 256, size=(40, 40, 3), dtype=np.uint8)).save(photos / f"{i}.png")
    return tmp_path / "sd", photos


def test_paper_scale_path_on_a_tiny_saved_vae(tmp_path) -> None:
    """The diffusers backend measures Q1-Q4 on the loaded VAE and the photos; customisation stays not measured."""
    pytest.importorskip("diffusers")
    from icml25.cat.reproduce import Config, reproduce, reproduce_stub

    sd, photos = _sd_folder(tmp_path)
    cfg = dataclasses.replace(Config.paper(), sd_model=str(sd), image_dir=str(photos), resolution=32, device="cpu",
                              pgd_steps=3, cat_steps=3, cat_rank=2)
    rep = reproduce(scale=Scale.PAPER, seed=0, out=tmp_path, config=cfg)
    by = {c.id: c for c in rep.claims}
    assert {"Q1", "Q2", "Q3", "Q4", "sd_customisation"} <= set(by)
    assert all(math.isfinite(by[k].measured) for k in ("Q1", "Q2", "Q3", "Q4"))
    assert math.isnan(by["sd_customisation"].measured) and by["sd_customisation"].headline
    stub = reproduce_stub(scale=Scale.PAPER, seed=0, out=tmp_path, config=cfg)
    assert {c.id: c for c in stub.claims}["Q4"].measured == 0.0  # the untrained adapter is the identity


def test_paper_scale_errors_name_what_to_pass(tmp_path) -> None:
    pytest.importorskip("diffusers")
    from icml25.cat._sd_path import load_sd_vae, subject_sets
    from icml25.cat.reproduce import Config

    with pytest.raises(FileNotFoundError, match="--set sd_model="):
        load_sd_vae(str(tmp_path / "nothing"), "cpu")
    with pytest.raises(FileNotFoundError, match="--set image_dir="):
        subject_sets(Config.paper())


def test_quick_run_registers_the_paper_only_claim() -> None:
    from icml25.cat.experiment import add_paper_only_claims
    from icml25.core import Report

    rep = Report(slug="cat", title="t")
    add_paper_only_claims(rep)
    (c,) = rep.claims
    assert c.scale == Scale.PAPER and c.headline and "not measured here" in c.note and math.isnan(c.measured)
