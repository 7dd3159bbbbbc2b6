"""The diffusers path on a tiny randomly initialised AutoencoderKL (no download): official target patterns, identity
start, only LoRA gradients, the loss decreases, save -> load round-trips exactly."""

from __future__ import annotations

import copy
import re

import pytest
import torch

pytest.importorskip("diffusers")
pytest.importorskip("peft")

from icml25.cat import (  # noqa: E402
    add_cat_adapter,
    cat_parameters,
    encode_with_cat,
    load_cat_adapter,
    load_image_folder,
    save_cat_adapter,
    train_cat_adapter,
)


@pytest.fixture(scope="module")
def akl():
    from diffusers import AutoencoderKL

    torch.manual_seed(0)
    return AutoencoderKL(block_out_channels=(8, 16), latent_channels=4, norm_num_groups=4, sample_size=32,
                         down_block_types=("DownEncoderBlock2D",) * 2, up_block_types=("UpDecoderBlock2D",) * 2)


def _x(n=4):
    return torch.rand(n, 3, 32, 32, generator=torch.Generator().manual_seed(0))


@pytest.mark.parametrize("target", ["encoder", "decoder", "both"])
def test_official_target_patterns_on_autoencoderkl(akl, target) -> None:
    # the official script's regex, matched here by hand against every conv/linear layer name
    names = r"(conv|conv1|conv2|to_q|to_k|to_v|to_out\.0)"
    pat = {"encoder": f".*encoder.*{names}$", "decoder": f".*decoder.*{names}$", "both": f"(.*\\.)?{names}$"}[target]
    layers = [n for n, m in akl.named_modules() if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear))]
    expected = {n for n in layers if re.fullmatch(pat, n)}
    assert "encoder.mid_block.attentions.0.to_q" in expected or target == "decoder"
    assert not any(n.endswith(("conv_in", "conv_out", "conv_shortcut", "quant_conv")) for n in expected)
    vae = add_cat_adapter(copy.deepcopy(akl), rank=4, target=target)
    assert {n.split(".lora_")[0] for n, _ in cat_parameters(vae)} == expected


def test_identity_start_lora_only_gradients_and_learning(akl) -> None:
    vae = add_cat_adapter(copy.deepcopy(akl), rank=4, target="both")
    x = _x()
    with torch.no_grad():
        assert torch.equal(vae.decode(vae.encode(2 * x - 1).latent_dist.mean).sample,
                           akl.decode(akl.encode(2 * x - 1).latent_dist.mean).sample)
    frozen = {n: p.clone() for n, p in vae.named_parameters() if ".lora_" not in n}
    losses = train_cat_adapter(vae, x, steps=20, lr=3e-3, batch_size=4)
    assert all(torch.equal(p, frozen[n]) for n, p in vae.named_parameters() if ".lora_" not in n)
    assert sum(losses[-5:]) / 5 < sum(losses[:5]) / 5
    z = encode_with_cat(vae, x, sample=False)
    assert z.shape == (4, 4, 16, 16)  # two blocks: one 2x downsampler
    assert encode_with_cat(vae, x[:1, :, :16, :16]).shape == (1, 4, 8, 8)  # any size, as diffusers allows


def test_save_load_round_trip_is_exact(akl, tmp_path) -> None:
    vae = add_cat_adapter(copy.deepcopy(akl), rank=4, target="encoder")
    train_cat_adapter(vae, _x(), steps=3, lr=1e-2)
    path = save_cat_adapter(vae, tmp_path / "cat.safetensors", rank=4, target="encoder")
    from safetensors import safe_open

    with safe_open(str(path), framework="pt") as f:
        assert all(k.startswith("vae.encoder.") and ".lora_" in k for k in f.keys())
    fresh = load_cat_adapter(copy.deepcopy(akl), path)
    a, b = dict(cat_parameters(vae)), dict(cat_parameters(fresh))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    x = _x(2)
    with torch.no_grad():
        assert torch.equal(encode_with_cat(vae, x, sample=False), encode_with_cat(fresh, x, sample=False))


def test_images_must_match_the_autoencoder(akl, tmp_path) -> None:
    vae = add_cat_adapter(copy.deepcopy(akl), rank=2)
    with pytest.raises(ValueError, match="images must have 3 channel"):
        train_cat_adapter(vae, torch.rand(2, 1, 32, 32), steps=1)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        train_cat_adapter(vae, 2 * torch.rand(2, 3, 32, 32) - 1, steps=1)
    from PIL import Image

    Image.new("RGB", (50, 40), (10, 200, 30)).save(tmp_path / "b.png")
    imgs = load_image_folder(tmp_path, resolution=32)
    assert imgs.shape == (1, 3, 32, 32) and abs(float(imgs[0, 1].mean()) - 200 / 255) < 1e-2
