"""The dry-run plan of the CAT reproduction (``icml25 reproduce cat --dry-run``): nothing is trained, no torch."""

from __future__ import annotations

from typing import TYPE_CHECKING

from icml25.core.plan import Needs, Plan, UnitCost, closest_preset

if TYPE_CHECKING:
    from .reproduce import Config


#: CPU seconds per step (thread clock, 1 thread, this project's shared 2-core machine at load ~7; 20-50 steps of each
#: with the quick config): VAE at batch 32, classifier, LDM at batch 128, PGD of the encoder attack on 8 images,
#: CAT adapter (rank 8, encoder), DreamBooth at batch 16
_TOY_S = {"vae": 0.178, "clf": 0.091, "ldm": 0.011, "pgd": 0.0092, "cat": 0.025, "db": 0.0098}
#: the same for the photo world (issue 50; 32x32 RGB, 4x8x8 latent, 1 thread, this machine, 20-800 steps of each
#: timed): VAE width 32 at batch 32, identity CNN at batch 64, LDM MLP 512 wide at batch 128, encoder-attack PGD on
#: 8 crops, CAT (rank 8, encoder), DreamBooth at batch 16 (+16 prior) including its 64 samples
_PHOTO_S = {"vae": 0.175, "clf": 0.0225, "ldm": 0.019, "pgd": 0.0093, "cat": 0.027, "db": 0.012}
#: CPU seconds of one forward + backward pass of SD 2.1's VAE architecture (random weights) on one 256 px image, one
#: thread, timed here; costs scale with the pixel count. On a GPU it is assumed _SD_GPU_SPEEDUP x faster (not
#: measured: no GPU in this session; 512 px, batch 4 then takes ~0.33 s per CAT step)
_SD_CPU_S_256, _SD_GPU_SPEEDUP = 41.4, 2000.0
#: denoiser="unet" (sd.small_unet_denoiser, width 32) over the MLP (512 wide), per training step on the 4x8x8 latent,
#: 1 thread, this machine (issue 50, 10 timed steps each): 189 vs 16.6 ms at batch 128 (LDM pre-training), 66 vs
#: 8.8 ms at batch 32 (DreamBooth's 16 + 16). With 2 threads both were 3-40x slower here (contention), so 1 thread.
_UNET_X = {"ldm": 11.4, "db": 7.5}


def cat_plan(cfg: Config) -> Plan:
    """The dry-run plan of ``cfg`` (``Config.plan``): its stages, models, data, needs and estimated cost."""
    scale = closest_preset(cfg)
    if cfg.backend == "diffusers":
        from ._sd_path import SD_PROTECTIONS

        run = [p for p in cfg.protections if p in SD_PROTECTIONS]
        pgd_imgs = 2 * len(run) * len(cfg.etas[:1]) + len(run) * (len(cfg.etas) - 1)
        per_image = _SD_CPU_S_256 * (cfg.resolution / 256) ** 2 / (_SD_GPU_SPEEDUP if cfg.device != "cpu" else 1.0)
        where = "2-core CPU, 1 thread: SD 2.1 VAE architecture, fwd+bwd of one 256 px image (41.4 s), x pixels"
        gpu = f"GPU assumed {_SD_GPU_SPEEDUP:g}x one CPU thread (not measured)" if cfg.device != "cpu" else ""
        costs = [UnitCost("encoder attack on SD's VAE (train + held-out sets)", "PGD step x image",
                          pgd_imgs * cfg.pgd_steps * cfg.n_subject, per_image, where, gpu),
                 UnitCost("CAT adapter training (SD VAE, LoRA)", "step", cfg.cat_steps if run else 0,
                          per_image * cfg.cat_batch, where, f"batch {cfg.cat_batch}; {gpu}")]
        return Plan(slug="cat", scale=scale,
                    stages=[f"load SD's VAE from {cfg.sd_model} and 2 x {cfg.n_subject} photos from image_dir",
                            f"protect with {', '.join(run) or 'nothing runnable'} and uniform noise at eta "
                            f"{', '.join(f'{e:.3g}' for e in cfg.etas)}; latent distortion (claim 1)",
                            f"CAT adapters ({cfg.cat_target}, rank {cfg.cat_rank}, {cfg.cat_steps} steps) on the "
                            "protected training photos; reconstruction error on the held-out protected photos"],
                    models=[f"Stable Diffusion VAE ({cfg.sd_model}), provided by the user"],
                    datasets=["the user's face photos (CelebA-HQ / VGGFace2 identity) in image_dir"],
                    runs=1,
                    needs=Needs(cpu_cores=2, gpus=1 if cfg.device != "cpu" else 0,
                                gpu_memory_gb=24.0 if cfg.device != "cpu" else 0.0, ram_gb=16.0, disk_gb=6.0,
                                weights=(f"{cfg.sd_model} (diffusers layout, vae/ subfolder; --set sd_model=<path>)",),
                                downloads=("CelebA-HQ / VGGFace2 photos of one identity (placed by hand in "
                                           "image_dir)",)),
                    costs=costs,
                    notes=["not run at this scale: the UNet-based protections (AdvDM, Mist, SDS, ASPL: in the "
                           "library through UNetDenoiser, not wired into this preset; MetaCloak, Glaze: not "
                           "implemented), DreamBooth/LoRA customisation of SD (library: UNetDenoiser + dreambooth), "
                           "ArcFace/RetinaFace scores (not implemented): the customisation claims stay not measured"])
    photos = cfg.world == "photos"
    c = dict(_PHOTO_S if photos else _TOY_S)
    unet = cfg.denoiser == "unet"
    if unet:
        for k, x in _UNET_X.items():
            c[k] *= x * (cfg.unet_width / 32) ** 2
    n_subj = len({cfg.subject, *cfg.subjects})
    n_cells = len(cfg.protections) * len(cfg.etas)
    per_seed_db = n_subj * (2 * n_cells + 2) * cfg.db_steps if cfg.customise else 0
    where = "2-core CPU, 1 thread, 20-50 steps of the real code timed (thread clock)"
    vae_scale = cfg.vae_batch / 32 * ((cfg.vae_width / 32) ** 2 if photos else 1.0)
    costs = [UnitCost("world: VAE training", "step", cfg.vae_steps * cfg.n_seeds, c["vae"] * vae_scale,
                      where, "scaled by vae_batch / 32" + (" and (vae_width / 32)^2" if photos else "")),
             UnitCost("world: classifier", "step", cfg.classifier_steps * cfg.n_seeds, c["clf"], where),
             UnitCost("world: LDM pre-training", "step", cfg.ldm_steps * cfg.n_seeds,
                      c["ldm"] * cfg.ldm_batch / 128, where, "scaled by ldm_batch / 128"),
             UnitCost("protections (PGD, + held-out set)", "step",
                      n_subj * (n_cells + 2) * cfg.pgd_steps * cfg.n_seeds, c["pgd"], where,
                      "the encoder attack's cost; diffusion-loss attacks cost more"),
             UnitCost("CAT adapters", "step", n_subj * (n_cells + 1) * cfg.cat_steps * cfg.n_seeds, c["cat"], where),
             UnitCost("DreamBooth customisations", "step", per_seed_db * cfg.n_seeds,
                      c["db"] * cfg.db_batch / 16, where, "scaled by db_batch / 16")]
    return Plan(slug="cat", scale=scale,
                stages=[f"world: {cfg.world} VAE, classifier, latent DDPM (all but the subjects), prior set",
                        f"protections {', '.join(cfg.protections)} at eta {', '.join(map(str, cfg.etas))} and noise; "
                        "latent distortion",
                        f"CAT adapters ({cfg.cat_target}, rank {cfg.cat_rank}, {cfg.cat_steps} steps); held-out "
                        "reconstruction",
                        "DreamBooth customisation clean / protected / CAT; ISM*, FDFR*" if cfg.customise
                        else "no customisation"],
                models=[f"TinyVAE (width {cfg.vae_width}), latent DDPM "
                        + (f"UNet2DConditionModel (width {cfg.unet_width})" if unet else f"MLP ({cfg.ldm_hidden})")
                        + ", "
                        + ("photo identity CNN" if photos else "digit classifier")],
                datasets=["CC0/public-domain photographs from scikit-image, shipped (cat/data/SOURCE.md)" if photos
                          else "scikit-learn digits (bundled)"], runs=cfg.n_seeds,
                needs=Needs(cpu_cores=1, ram_gb=2.0), costs=costs)
