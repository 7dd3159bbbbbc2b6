"""The Stable Diffusion path on randomly initialised diffusers/transformers models of the real architectures (issue 50):
``AutoencoderKL`` (with its mid-block attention), ``UNet2DConditionModel`` (cross-attention blocks), a ``CLIPTextModel``
and a ``CLIPTokenizer`` (a 54-token vocabulary written here), SD's scaled-linear ``DDPMScheduler`` with epsilon and
v-prediction. CAT, the six protections and DreamBooth run on them through the public functions; nothing is downloaded.
"""

from __future__ import annotations

import copy
import json

import pytest
import torch

pytest.importorskip("diffusers")
pytest.importorskip("peft")
pytest.importorskip("transformers")

from icml25.cat import (  # noqa: E402
    NoiseSchedule,
    UNetDenoiser,
    add_cat_adapter,
    advdm,
    aspl,
    decode_with_cat,
    diffusion_loss,
    dreambooth,
    encode_prompts,
    encode_with_cat,
    encoder_attack,
    generate,
    latent_distortion,
    mist,
    random_noise,
    sds,
    train_cat_adapter,
)

PROMPTS = ["a photo of person", "a photo of sks person", ""]
CLASS, SKS, EMPTY = 0, 1, 2
LATENT = (4, 16, 16)  # 32 px images, one 2x down-sampler in the tiny VAE


def _scheduler(prediction_type="epsilon"):
    from diffusers import DDPMScheduler

    # Stable Diffusion's training schedule (scheduler_config.json of SD 1.x/2.x)
    return DDPMScheduler(num_train_timesteps=1000, beta_schedule="scaled_linear", beta_start=0.00085, beta_end=0.012,
                         prediction_type=prediction_type)


@pytest.fixture(scope="module")
def sd(tmp_path_factory):
    from diffusers import AutoencoderKL, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel, CLIPTokenizer

    torch.manual_seed(0)
    vae = AutoencoderKL(block_out_channels=(8, 16), latent_channels=4, norm_num_groups=4, sample_size=32,
                        down_block_types=("DownEncoderBlock2D",) * 2, up_block_types=("UpDecoderBlock2D",) * 2,
                        scaling_factor=0.18215)
    unet = UNet2DConditionModel(sample_size=16, in_channels=4, out_channels=4, block_out_channels=(8, 16),
                                layers_per_block=1, down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
                                up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"), cross_attention_dim=16,
                                attention_head_dim=4, norm_num_groups=4)
    d = tmp_path_factory.mktemp("tokenizer")
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = {"<|startoftext|>": 0, "<|endoftext|>": 1, **{c: 2 + i for i, c in enumerate(letters)},
             **{c + "</w>": 28 + i for i, c in enumerate(letters)}}
    (d / "vocab.json").write_text(json.dumps(vocab))
    (d / "merges.txt").write_text("#version: 0.2\n")
    tok = CLIPTokenizer(str(d / "vocab.json"), str(d / "merges.txt"), model_max_length=8)
    te = CLIPTextModel(CLIPTextConfig(vocab_size=len(vocab), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                      num_attention_heads=2, max_position_embeddings=8, bos_token_id=0,
                                      eos_token_id=1, pad_token_id=1)).eval()
    return {"vae": vae.eval(), "unet": unet.eval(), "text_encoder": te, "tokenizer": tok}


def _den(sd, prediction_type="epsilon", **kw):
    schedule = NoiseSchedule.from_diffusers(_scheduler(prediction_type))
    den = UNetDenoiser.from_prompts(copy.deepcopy(sd["unet"]).train(), schedule, sd["text_encoder"], sd["tokenizer"], PROMPTS,
                                    latent_shape=LATENT, **kw)
    return den, schedule


def _x(n=2, seed=0):
    return torch.rand(n, 3, 32, 32, generator=torch.Generator().manual_seed(seed))


def test_schedule_and_prompts_match_diffusers_and_transformers(sd) -> None:
    sch = _scheduler()
    s = NoiseSchedule.from_diffusers(sch)
    z0, eps, t = torch.randn(3, *LATENT), torch.randn(3, *LATENT), torch.tensor([0, 400, 999])
    assert torch.allclose(s.add_noise(z0, eps, t), sch.add_noise(z0, eps, t), atol=1e-6)
    assert NoiseSchedule.from_diffusers(_scheduler("v_prediction")).prediction_type == "v_prediction"
    emb = encode_prompts(sd["text_encoder"], sd["tokenizer"], PROMPTS)
    ids = sd["tokenizer"](PROMPTS, padding="max_length", max_length=8, truncation=True, return_tensors="pt").input_ids
    with torch.no_grad():
        assert torch.equal(emb, sd["text_encoder"](ids)[0])
    assert emb.shape == (3, 8, 16)
    with pytest.raises(TypeError, match="NoiseSchedule"):
        UNetDenoiser(sd["unet"], _scheduler(), emb)
    with pytest.raises(ValueError, match="cross_attention_dim"):
        UNetDenoiser(sd["unet"], s, emb[..., :8])


@pytest.mark.parametrize("prediction_type", ["epsilon", "v_prediction"])
def test_unet_denoiser_predicts_noise_and_its_loss_is_sds_loss(sd, prediction_type) -> None:
    den, schedule = _den(sd, prediction_type)
    z0 = torch.randn(3, *LATENT, generator=torch.Generator().manual_seed(1))
    c = torch.tensor([CLASS, SKS, EMPTY])
    # the same draws as diffusion_loss makes (t, then eps, from the generator)
    g = torch.Generator().manual_seed(5)
    t = torch.randint(1000, (3,), generator=g)
    eps = torch.randn(z0.shape, generator=g)
    sch = _scheduler(prediction_type)
    zt = sch.add_noise(z0, eps, t)
    with torch.no_grad():
        enc = encode_prompts(sd["text_encoder"], sd["tokenizer"], PROMPTS)
        native = sd["unet"](zt, t, encoder_hidden_states=enc[c]).sample
        per = diffusion_loss(den, schedule, z0, c, torch.Generator().manual_seed(5), reduction="none")
    ab = sch.alphas_cumprod[t].view(-1, 1, 1, 1)
    if prediction_type == "epsilon":
        expected = ((native - eps) ** 2).flatten(1).mean(1)
    else:  # eps - eps_hat = sqrt(abar) (v - v_hat): the noise MSE is abar_t times the v-MSE SD is trained with
        expected = (ab.flatten() * ((native - sch.get_velocity(z0, eps, t)) ** 2).flatten(1).mean(1))
    assert torch.allclose(per, expected, rtol=1e-4, atol=1e-6)


def test_cat_on_autoencoderkl_uses_its_latent_conventions(sd) -> None:
    vae = sd["vae"]
    x = _x(4)
    with torch.no_grad():
        mu = vae.encode(2 * x - 1).latent_dist.mean
        ref = (vae.decode(mu).sample.clamp(-1, 1) + 1) / 2
    assert torch.allclose(encode_with_cat(vae, x, sample=False), 0.18215 * mu)  # s * mean of latent_dist
    assert torch.allclose(decode_with_cat(vae, 0.18215 * mu), ref, atol=1e-6)  # [-1, 1] -> [0, 1]
    z1, z2 = encode_with_cat(vae, x, seed=3), encode_with_cat(vae, x, seed=3)
    assert torch.equal(z1, z2) and not torch.equal(z1, 0.18215 * mu)  # a seeded posterior sample
    shifted = copy.deepcopy(vae)
    shifted.register_to_config(shift_factor=0.5)  # SD3/Flux-style VAEs: s * (z - shift)
    assert torch.allclose(encode_with_cat(shifted, x, sample=False), 0.18215 * (mu - 0.5))
    assert torch.allclose(decode_with_cat(shifted, 0.18215 * (mu - 0.5)), ref, atol=1e-5)
    half = copy.deepcopy(vae).to(torch.bfloat16)  # weights loaded with torch_dtype=torch.bfloat16
    zb = encode_with_cat(half, x, sample=False)
    assert zb.dtype == torch.float32 and torch.allclose(zb, 0.18215 * mu, atol=0.05)
    cat = add_cat_adapter(copy.deepcopy(vae), rank=4, target="both")
    x_a = encoder_attack(x, vae, eps=0.1, steps=3)
    before = latent_distortion(cat, x, x_a, reference_vae=vae)["recon_mse"]
    losses = train_cat_adapter(cat, x_a, steps=15, lr=3e-3, batch_size=4)
    assert sum(losses[-4:]) < sum(losses[:4])
    assert latent_distortion(cat, x, x_a, reference_vae=vae)["recon_mse"] < before


@pytest.mark.parametrize("name", ["advdm+", "advdm-", "encoder", "mist", "sds+", "aspl"])
def test_six_protections_on_the_sd_pipeline(sd, name) -> None:
    den, schedule = _den(sd, "v_prediction")
    weights = {k: v.clone() for k, v in den.state_dict().items()}
    x, eps = _x(2), 0.05
    kw = {"label": SKS, "eps": eps}
    if name in ("advdm+", "advdm-"):
        adv = advdm(x, sd["vae"], den, schedule, steps=3, sign=1 if name == "advdm+" else -1, **kw)
    elif name == "encoder":
        adv = encoder_attack(x, sd["vae"], eps=eps, steps=3)
    elif name == "mist":
        adv = mist(x, sd["vae"], den, schedule, steps=3, **kw)
    elif name == "sds+":
        adv = sds(x, sd["vae"], den, schedule, steps=3, **kw)
    else:
        adv = aspl(x, sd["vae"], den, schedule, rounds=2, surrogate_steps=1, pgd_steps=2, **kw)
    assert adv.shape == x.shape and adv.dtype == torch.float32
    assert float((adv - x).abs().max()) <= eps + 1e-6 and 0 <= float(adv.min()) and float(adv.max()) <= 1
    assert float((adv != x).float().mean()) > 0.5  # signed steps move (almost) every pixel: gradients reached x
    assert all(torch.equal(v, weights[k]) for k, v in den.state_dict().items())  # the denoiser is not modified
    assert all(p.requires_grad for p in den.parameters()) and den.unet.training  # flags and mode restored
    if name == "encoder":  # PhotoGuard's objective moved: closer to the target's latent than the clean image
        d = latent_distortion(sd["vae"], x, adv)
        assert d["rel_l2"] > latent_distortion(sd["vae"], x, random_noise(x, 1e-3))["rel_l2"]
        wide = torch.rand(1, 3, 16, 32)  # AutoencoderKL takes any size divisible by its factor, so do the attacks
        assert encoder_attack(wide, sd["vae"], eps=eps, steps=1).shape == wide.shape
        with pytest.raises(ValueError, match="height and width"):
            encoder_attack(wide, sd["vae"], target=torch.rand(1, 3, 16, 16), steps=1)


def test_dreambooth_on_cat_latents_tunes_unet_and_text_encoder(sd) -> None:
    den, schedule = _den(sd, "v_prediction", train_text_encoder=True)
    vae = add_cat_adapter(copy.deepcopy(sd["vae"]), rank=4, target="encoder")
    x_a = encoder_attack(_x(4, seed=1), sd["vae"], eps=0.05, steps=2)
    train_cat_adapter(vae, x_a, steps=3, lr=1e-3)
    z = encode_with_cat(vae, x_a)  # s * sample(E'(x_a)): the customiser's training latents
    prior = generate(den, schedule, vae, CLASS, 2, steps=3, seed=1, guidance_scale=7.5, null_label=EMPTY)
    zp = encode_with_cat(vae, prior)

    def loss(model):
        with torch.no_grad():
            return float(diffusion_loss(model, schedule, z.repeat(8, 1, 1, 1), torch.full((32,), SKS),
                                        torch.Generator().manual_seed(9)))

    tuned = dreambooth(den, schedule, z, SKS, prior_latents=zp, prior_labels=[CLASS, CLASS], steps=25, lr=2e-3,
                       batch_size=2)
    assert loss(tuned) < loss(den)
    te0, te1 = dict(den.text_encoder.named_parameters()), dict(tuned.text_encoder.named_parameters())
    assert any(not torch.equal(te0[k], te1[k]) for k in te0)  # DreamBooth tunes the text encoder too
    assert torch.equal(den.unet.conv_in.weight, sd["unet"].conv_in.weight)  # the original stays untouched
    imgs = generate(tuned, schedule, vae, SKS, 3, steps=4, guidance_scale=3.0, null_label=EMPTY)
    assert imgs.shape == (3, 3, 32, 32) and 0 <= float(imgs.min()) and float(imgs.max()) <= 1
    table, _ = _den(sd)  # precomputed embeddings: the "sks" row of the table is tuned, it can start as the class's
    tuned_t = dreambooth(table, schedule, z, SKS, steps=2, batch_size=2, init_token_from=CLASS)
    assert not torch.equal(tuned_t.class_emb.weight[SKS], table.class_emb.weight[SKS])
    with pytest.raises(ValueError, match="class_emb"):
        dreambooth(den, schedule, z, SKS, steps=1, init_token_from=CLASS)
