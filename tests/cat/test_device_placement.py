"""CAT's tensors follow the model's device (issue 45 item 3), for the toy world and the Stable Diffusion path.

Two kinds of check, as in tests/sorbet/test_device_placement.py:

- The library functions check image values (range, finiteness), which a ``meta`` tensor lacks, so they run with the
  models and data on the CPU and ``meta`` as torch's *default* device: any tensor the code creates without naming a
  device (a random draw, ``torch.full``, ``torch.tensor(1.0)``, ``torch.arange``) lands on meta and the next operation
  with a CPU tensor fails. Random draws come from CPU generators and are moved, so seeds mean the same everywhere.
- The value-free cores (the denoisers' forward passes, the diffusion loss, the VAE posterior sample and decoder with
  CAT adapters) run entirely on ``meta``, backward included.
"""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("peft")

from icml25.cat import (  # noqa: E402
    LatentDenoiser,
    NoiseSchedule,
    TinyVAE,
    add_cat_adapter,
    advdm,
    aspl,
    ddim_sample,
    decode_with_cat,
    diffusion_loss,
    dreambooth,
    encode_with_cat,
    encoder_attack,
    generate,
    identity_scores,
    latent_distortion,
    mist,
    pca_latents,
    random_noise,
    sds,
    train_cat_adapter,
    train_denoiser,
    train_vae,
)
from icml25.cat._vae_io import decode, posterior_sample  # noqa: E402
from icml25.cat.metrics import DigitClassifier  # noqa: E402

META = torch.device("meta")


def _on_cpu(*tensors):
    return all(t.device.type == "cpu" for t in tensors)


def _protections(x, vae, den, schedule, label):
    kw = {"label": label, "eps": 0.05}
    return [advdm(x, vae, den, schedule, steps=1, **kw), advdm(x, vae, den, schedule, steps=1, sign=-1, **kw),
            encoder_attack(x, vae, eps=0.05, steps=1), mist(x, vae, den, schedule, steps=1, **kw),
            sds(x, vae, den, schedule, steps=1, **kw), sds(x, vae, den, schedule, steps=1, sign=-1, **kw),
            aspl(x, vae, den, schedule, rounds=1, surrogate_steps=1, pgd_steps=1, **kw), random_noise(x, 0.05)]


def test_toy_world_creates_no_tensor_off_its_device(images):
    torch.manual_seed(0)
    vae, den, clf = TinyVAE(width=8), LatentDenoiser((2, 4, 4), hidden=16), DigitClassifier(width=4)
    schedule = NoiseSchedule(20)
    x = images
    cat = add_cat_adapter(copy.deepcopy(vae), rank=2, target="both")
    torch.set_default_device(META)  # models and data stay on the CPU; only the default device changes
    try:
        train_vae(vae, x, steps=2, batch_size=2)
        assert vae(x, sample=True, generator=torch.Generator().manual_seed(0)).device.type == "cpu"
        advs = _protections(x, vae, den, schedule, label=11)
        losses = train_cat_adapter(cat, advs[0], steps=2, batch_size=2, schedule="cosine")
        z = encode_with_cat(cat, advs[0])
        dist = latent_distortion(cat, x, advs[0], reference_vae=vae)
        pcs = pca_latents(vae, {"clean": x, "adv": advs[0]})
        train_denoiser(den, schedule, z, [3] * len(z), steps=2, batch_size=2, null_class=10)
        tuned = dreambooth(den, schedule, z, 11, prior_latents=z, prior_labels=[1] * len(z), steps=2, batch_size=2,
                           init_token_from=10)
        s = ddim_sample(tuned, schedule, [11, 11], steps=3, eta=1.0, guidance_scale=2.0, null_label=10)
        imgs = generate(tuned, schedule, cat, 11, 2, steps=3)
        scores = identity_scores(clf, imgs, subject=3)
        rec = decode_with_cat(cat, z)
    finally:
        torch.set_default_device("cpu")
    assert _on_cpu(*advs, z, s, imgs, rec) and all(map(lambda v: v == v, losses))
    assert all(float((a - x).abs().max()) <= 0.05 + 1e-6 for a in advs)
    assert set(dist) >= {"rel_l2", "decoded_mse"} and pcs["adv"].shape == (4, 2) and 0 <= scores["ism"] <= 1


def test_toy_cores_run_on_meta():
    schedule = NoiseSchedule(20)
    with META:
        vae = add_cat_adapter(TinyVAE(width=8), rank=2, target="both")
        den = LatentDenoiser((2, 4, 4), hidden=16)
        x = torch.rand(3, 1, 16, 16)
    g = torch.Generator().manual_seed(0)
    z = posterior_sample(vae, x, g)
    rec = decode(vae, z)
    loss = ((rec - x) ** 2).mean() + diffusion_loss(den, schedule, 2.0 * z,
                                                    torch.full((3,), 11, device=META), g)
    assert z.device.type == rec.device.type == loss.device.type == "meta"
    loss.backward()
    grads = [p.grad for n, p in vae.named_parameters() if "lora_" in n] + [p.grad for p in den.parameters()]
    assert grads and all(gr is not None and gr.device.type == "meta" for gr in grads)


# --- the Stable Diffusion path: AutoencoderKL, UNet2DConditionModel, CLIPTextModel ---------------------------------


def _sd_models():
    pytest.importorskip("diffusers")
    pytest.importorskip("transformers")
    from diffusers import AutoencoderKL, DDPMScheduler, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel

    torch.manual_seed(0)
    vae = AutoencoderKL(block_out_channels=(8, 16), latent_channels=4, norm_num_groups=4, sample_size=32,
                        down_block_types=("DownEncoderBlock2D",) * 2, up_block_types=("UpDecoderBlock2D",) * 2)
    unet = UNet2DConditionModel(sample_size=8, in_channels=4, out_channels=4, block_out_channels=(8, 16),
                                layers_per_block=1, down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
                                up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"), cross_attention_dim=16,
                                attention_head_dim=4, norm_num_groups=4)
    te = CLIPTextModel(CLIPTextConfig(vocab_size=20, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                      num_attention_heads=2, max_position_embeddings=6))
    schedule = NoiseSchedule.from_diffusers(DDPMScheduler(beta_schedule="scaled_linear", beta_start=0.00085,
                                                          beta_end=0.012, prediction_type="v_prediction"))
    return vae.eval(), unet.eval(), te.eval(), schedule


def _tokenizer(prompts, **kw):  # ids of 3 prompts, padded to 6 (any callable with a tokenizer's interface works)
    ids = {"a photo of person": [0, 3, 4, 5, 1, 1], "a photo of sks person": [0, 3, 4, 7, 5, 1], "": [0, 1, 1, 1, 1, 1]}
    return {"input_ids": torch.tensor([ids[p] for p in prompts], device="cpu")}


PROMPTS = ["a photo of person", "a photo of sks person", ""]


@pytest.mark.parametrize("train_text_encoder", [False, True])
def test_sd_path_creates_no_tensor_off_its_device(train_text_encoder):
    from icml25.cat import UNetDenoiser

    vae, unet, te, schedule = _sd_models()
    den = UNetDenoiser.from_prompts(unet, schedule, te, _tokenizer, PROMPTS, train_text_encoder=train_text_encoder)
    cat = add_cat_adapter(copy.deepcopy(vae), rank=2, target="both")
    x = torch.rand(2, 3, 16, 16, generator=torch.Generator().manual_seed(0))
    torch.set_default_device(META)
    try:
        advs = _protections(x, vae, den, schedule, label=1)
        train_cat_adapter(cat, advs[0], steps=2, batch_size=2)
        z = encode_with_cat(cat, advs[0])
        tuned = dreambooth(den, schedule, z, 1, prior_latents=z, prior_labels=[0, 0], steps=1, batch_size=2)
        imgs = generate(tuned, schedule, cat, 1, 2, steps=2, guidance_scale=7.5, null_label=2)
        dist = latent_distortion(cat, x, advs[0], reference_vae=vae)
    finally:
        torch.set_default_device("cpu")
    assert z.shape == (2, 4, 8, 8) and _on_cpu(*advs, z, imgs) and imgs.shape == (2, 3, 16, 16)
    assert dist["rel_l2"] == dist["rel_l2"]


def test_sd_cores_run_on_meta():
    from icml25.cat import UNetDenoiser

    vae, unet, te, schedule = _sd_models()
    vae = add_cat_adapter(vae, rank=2, target="encoder").to(META)
    den = UNetDenoiser.from_prompts(unet, schedule, te, _tokenizer, PROMPTS, train_text_encoder=True).to(META)
    x = torch.rand(2, 3, 16, 16, device=META)
    g = torch.Generator().manual_seed(0)
    z = 0.18215 * posterior_sample(vae, x, g)
    loss = ((decode(vae, z / 0.18215) - x) ** 2).mean() + diffusion_loss(den, schedule, z,
                                                                         torch.tensor([1, 2], device=META), g)
    assert loss.device.type == "meta"
    loss.backward()
    lora = [p.grad for n, p in vae.named_parameters() if "lora_" in n]
    assert lora and all(gr is not None and gr.device.type == "meta" for gr in lora)
    assert den.unet.conv_in.weight.grad.device.type == "meta"
    assert den.text_encoder.get_input_embeddings().weight.grad.device.type == "meta"


def test_paper_scale_path_creates_no_tensor_off_its_device(tmp_path, monkeypatch):
    """The diffusers backend of the paper preset (encoder attack, noise, CAT, held-out images) on a tiny saved VAE."""
    import dataclasses

    from icml25.cat import _sd_path
    from icml25.cat.reproduce import Config

    from .test_paper_preset import _sd_folder

    sd, photos = _sd_folder(tmp_path)
    cfg = dataclasses.replace(Config.paper(), sd_model=str(sd), image_dir=str(photos), resolution=32, device="cpu",
                              pgd_steps=2, cat_steps=2, cat_rank=2)
    vae = _sd_path.load_sd_vae(cfg.sd_model, cfg.device)  # loading itself builds modules on the default device
    monkeypatch.setattr(_sd_path, "load_sd_vae", lambda model, device: vae)
    torch.set_default_device(META)
    try:
        out = _sd_path.run_sd(cfg, seed=0, stub=False)
    finally:
        torch.set_default_device("cpu")
    assert out["main"] == "encoder" and out["clean_shift"] == out["clean_shift"]
