"""Benchmark: CAT adapter training steps/s against full VAE fine-tuning (all weights), in the same run.

Both use the same loss (MSE reconstruction through a posterior sample), optimiser (AdamW) and batch; the adapter
run updates only the LoRA weights (peft), the peer updates every VAE weight (what a customiser without CAT would
have to do to re-fit the autoencoder). Run: ``PYTHONPATH=src python benchmarks/cat/bench_adapter_training.py``.
"""

from __future__ import annotations

import argparse
import copy
import time

import torch


def _full_finetune(vae: torch.nn.Module, x: torch.Tensor, steps: int) -> None:
    from icml25.cat._vae_io import decode, posterior

    for p in vae.parameters():
        p.requires_grad_(True)
    opt = torch.optim.AdamW(vae.parameters(), lr=1e-4, weight_decay=0.0)
    g = torch.Generator().manual_seed(0)
    for _ in range(steps):
        mu, logvar = posterior(vae, x)
        z = mu + torch.exp(0.5 * logvar) * torch.randn(mu.shape, generator=g)
        loss = ((decode(vae, z) - x) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(vae.parameters(), 1.0)
        opt.step()


def _rate(fn, steps: int, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn(steps)
        best = min(best, time.perf_counter() - t)
    return steps / best


def bench(model: str, steps: int, repeats: int, rank: int) -> dict[str, float]:
    from icml25.cat import TinyVAE, add_cat_adapter, train_cat_adapter

    torch.manual_seed(0)
    if model == "tiny":
        vae, x = TinyVAE(width=32), torch.rand(8, 1, 16, 16)
    else:
        from diffusers import AutoencoderKL

        vae = AutoencoderKL(block_out_channels=(32, 64), latent_channels=4, norm_num_groups=8, sample_size=64,
                            down_block_types=("DownEncoderBlock2D",) * 2, up_block_types=("UpDecoderBlock2D",) * 2)
        x = torch.rand(4, 3, 64, 64)
    cat = add_cat_adapter(copy.deepcopy(vae), rank=rank, target="both")
    r_cat = _rate(lambda n: train_cat_adapter(cat, x, steps=n, lr=1e-4, batch_size=len(x)), steps, repeats)
    r_full = _rate(lambda n: _full_finetune(vae, x, n), steps, repeats)
    n_cat = sum(p.numel() for _, p in cat.named_parameters() if p.requires_grad)
    n_full = sum(p.numel() for p in vae.parameters())
    return {"cat steps/s": r_cat, "full steps/s": r_full, "ratio": r_cat / r_full, "trainable cat": n_cat,
            "trainable full": n_full}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rank", type=int, default=8)
    args = ap.parse_args()
    torch.set_num_threads(1)
    for model in ("tiny", "autoencoderkl"):
        r = bench(model, args.steps, args.repeats, args.rank)
        print(f"{model:14s} CAT (LoRA r={args.rank}, both): {r['cat steps/s']:7.1f} steps/s, "
              f"{r['trainable cat']:,} trainable | full fine-tuning: {r['full steps/s']:7.1f} steps/s, "
              f"{r['trainable full']:,} trainable | CAT/full = {r['ratio']:.2f}x")


if __name__ == "__main__":
    main()
