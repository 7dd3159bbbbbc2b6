"""Updates per second of CGCIVL vs GCIVL (the peer: the same library's plain GCIVL) on the same batches.

One update = value step (+ penalty for CGCIVL) + Polyak target update + actor step, batch 256 drawn once from a
generated pointmaze-medium-stitch dataset (30 episodes) and reused, 1 torch thread. Variants: GCIVL (MLP value),
CGCIVL with the MRN head, CGCIVL with the IQE head, at the quick widths (2 x 256) and the paper's (3 x 512).
Median over repeats after warm-up steps; process CPU time is also shown (the machine may be shared). The last column
times the update as the training loop runs it, inside ``trusted_tensors()`` (no per-step value checks).

    python benchmarks/cgcivl/bench_updates.py [--repeats 20] [--no-paper-size]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from icml25.cgcivl import GCIVL, AgentConfig, GCDataset, generate_pointmaze_dataset
from icml25.core.validation import trusted_tensors

VARIANTS = {"GCIVL (MLP V)": dict(value="mlp", alpha_c=0.0), "CGCIVL (MRN)": dict(value="mrn", alpha_c=0.3),
            "CGCIVL (IQE)": dict(value="iqe", alpha_c=0.3)}


def time_updates(agent: GCIVL, batch: dict, repeats: int) -> tuple[float, float]:
    for _ in range(3):
        agent.update(batch)
    wall, cpu = [], []
    for _ in range(repeats):
        t, c = time.perf_counter(), time.process_time()
        agent.update(batch)
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return statistics.median(wall), statistics.median(cpu)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--no-paper-size", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(1)
    d = generate_pointmaze_dataset("medium", "stitch", 30, seed=0, show_progress=False)
    obs = d["observations"]
    batch = GCDataset(obs, d["actions"], d["terminals"], random_state=0).sample(256)
    sizes = {"2x256": (256, 256)} if args.no_paper_size else {"2x256": (256, 256), "3x512": (512, 512, 512)}
    print("| variant | widths | updates/s (wall) | ms/update (CPU) | CPU time / GCIVL's | ms/update (CPU, trusted) |")
    print("|---|---|---|---|---|---|")
    for size, hidden in sizes.items():
        base = None
        for name, kw in VARIANTS.items():
            cfg = AgentConfig(hidden=hidden, latent=64, actor="flat", **kw)
            agent = GCIVL(2, 2, cfg, obs_mean=obs.mean(0), obs_std=obs.std(0), seed=0)
            wall, cpu = time_updates(agent, batch, args.repeats)
            with trusted_tensors():
                _, cpu_t = time_updates(agent, batch, args.repeats)
            base = cpu if base is None else base
            print(f"| {name} | {size} | {1 / wall:.1f} | {1000 * cpu:.1f} | {cpu / base:.2f} | {1000 * cpu_t:.1f} |",
                  flush=True)


if __name__ == "__main__":
    main()
