"""CAT adapters on the TinyVAE: start as the identity, touch only the targeted modules, train only LoRA weights,
and reduce the reconstruction error of the images they are trained on."""

from __future__ import annotations

import copy
import re

import pytest
import torch

from icml25.cat import (
    TARGET_PATTERNS,
    add_cat_adapter,
    cat_parameters,
    decode_with_cat,
    encode_with_cat,
    train_cat_adapter,
)


def _lora_modules(vae) -> set[str]:
    return {n.split(".lora_")[0] for n, _ in cat_parameters(vae)}


@pytest.mark.parametrize("target", ["encoder", "decoder", "both"])
def test_targets_match_the_official_regex_and_nothing_else(tiny_vae, target) -> None:
    layers = [n for n, m in tiny_vae.named_modules() if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear))]
    names = r"(conv|conv1|conv2|to_q|to_k|to_v|to_out\.0)"
    official = {"encoder": f".*encoder.*{names}$", "decoder": f".*decoder.*{names}$", "both": f"(.*\\.)?{names}$"}
    expected = {n for n in layers if re.fullmatch(official[target], n)}
    assert not any(n.endswith(("conv_in", "conv_out")) for n in expected)
    assert _lora_modules(add_cat_adapter(copy.deepcopy(tiny_vae), rank=2, target=target)) == expected
    assert TARGET_PATTERNS[target] == official[target]


def test_adapter_starts_as_the_identity_and_uses_the_released_init(tiny_vae, images) -> None:
    vae = add_cat_adapter(copy.deepcopy(tiny_vae), rank=4, target="both")
    assert torch.equal(vae(images), tiny_vae(images))
    params = dict(cat_parameters(vae))
    for name, p in params.items():
        if ".lora_B." in name:
            assert torch.count_nonzero(p) == 0
        else:  # Gaussian A ~ N(0, 1/r): std 0.5 for r = 4
            assert 0.2 < float(p.detach().std()) < 0.9


def test_only_adapter_weights_get_gradients_and_change(tiny_vae, images) -> None:
    vae = add_cat_adapter(copy.deepcopy(tiny_vae), rank=2, target="encoder")
    before = {n: p.clone() for n, p in vae.named_parameters()}
    train_cat_adapter(vae, images, steps=5, lr=1e-2)
    changed = {n for n, p in vae.named_parameters() if not torch.equal(p, before[n])}
    assert changed and all(".lora_" in n and n.startswith("encoder.") for n in changed)
    assert all(p.requires_grad == (".lora_" in n) for n, p in vae.named_parameters())


def test_decoder_adapter_leaves_the_encoder_unchanged(tiny_vae, images) -> None:
    vae = add_cat_adapter(copy.deepcopy(tiny_vae), rank=2, target="decoder")
    train_cat_adapter(vae, images, steps=5, lr=1e-2)
    with torch.no_grad():
        assert torch.equal(vae.encode(images)[0], tiny_vae.encode(images)[0])
        assert not torch.equal(vae.decode(vae.encode(images)[0]), tiny_vae.decode(tiny_vae.encode(images)[0]))


@pytest.mark.long  # over ~10 s: CI's second phase (make test-long)
def test_cat_training_reduces_reconstruction_error(tiny_vae, images) -> None:
    vae = add_cat_adapter(copy.deepcopy(tiny_vae), rank=4, target="both")
    with torch.no_grad():
        before = float(((tiny_vae(images) - images) ** 2).mean())
    train_cat_adapter(vae, images, steps=60, lr=5e-3, batch_size=4)
    with torch.no_grad():
        after = float(((vae(images) - images) ** 2).mean())
    assert after < 0.7 * before


def test_encode_applies_the_same_scale_with_and_without_adapter(tiny_vae, images) -> None:
    tiny_vae._scaling.fill_(0.5)
    vae = add_cat_adapter(copy.deepcopy(tiny_vae), rank=2)
    z = encode_with_cat(vae, images, sample=False)
    assert torch.allclose(z, 0.5 * tiny_vae.encode(images)[0])
    assert torch.allclose(decode_with_cat(vae, z), tiny_vae.decode(z / 0.5).clamp(0, 1))


def test_training_needs_an_adapter_and_valid_arguments(tiny_vae, images) -> None:
    with pytest.raises(ValueError, match="add_cat_adapter"):
        train_cat_adapter(tiny_vae, images, steps=1)
    with pytest.raises(ValueError, match="target must be one of"):
        add_cat_adapter(tiny_vae, rank=2, target="unet")
    with pytest.raises(ValueError, match="rank must be >= 1"):
        add_cat_adapter(tiny_vae, rank=0)
