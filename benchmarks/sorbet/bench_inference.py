"""Inference time of Sorbet's replacements against the operations they replace, and of the ANN vs its SNN, same run.

1. softmax (torch) vs PTsoftmax on attention scores (B=32, heads=12, L=32);
2. LayerNorm (torch) vs BSPN (folded, eval) on hidden states (B=32, L=32, C=384);
3. the W1A4 ANN vs the exact spiking simulation (T=16, per step and window-summed) of a 1-layer MiniLM-sized model
   (hidden 384, 12 heads, FFN 1536) on a batch of 32 x 32 tokens.
Median over repeats after one warm-up call; one torch thread. On a CPU the replacements are *slower* (they emulate
shifts with float ops); their point is hardware without exp/sqrt/division, which a CPU timing cannot show.

    python benchmarks/sorbet/bench_inference.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch

from icml25.sorbet import BSPN, SpikingSorbet, convert, pt_softmax


def timeit(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for k in range(repeats + 1):
        t = time.perf_counter()
        with torch.no_grad():
            fn()
        if k:
            times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    s = torch.randn(32, 12, 32, 32) * 3
    t_sm = timeit(lambda: torch.softmax(s, -1), args.repeats)
    t_pt = timeit(lambda: pt_softmax(s), args.repeats)
    h = torch.randn(32, 32, 384)
    ln = torch.nn.LayerNorm(384).eval()
    bspn = BSPN(384, 12, warmup_iters=1)
    bspn(h)
    bspn.fold()
    t_ln = timeit(lambda: ln(h), args.repeats)
    t_bs = timeit(lambda: bspn(h), args.repeats)

    from transformers import BertConfig, BertForSequenceClassification

    cfg = BertConfig(vocab_size=30522, hidden_size=384, num_hidden_layers=1, num_attention_heads=12,
                     intermediate_size=1536, max_position_embeddings=64)
    m = convert(BertForSequenceClassification(cfg), "w1a4").train()
    ids = torch.randint(1000, 30000, (32, 32))
    am = torch.ones_like(ids)
    m(ids, am)
    m.eval()
    t_ann = timeit(lambda: m(ids, am), args.repeats)
    t_snn = timeit(lambda: SpikingSorbet(m)(ids, am), max(1, args.repeats // 2))
    t_win = timeit(lambda: SpikingSorbet(m, per_step=False)(ids, am), args.repeats)
    rows = [("softmax (torch)", t_sm, 1.0), ("PTsoftmax", t_pt, t_pt / t_sm),
            ("LayerNorm (torch)", t_ln, 1.0), ("BSPN (folded)", t_bs, t_bs / t_ln),
            ("W1A4 ANN (1 layer, 32x32 tokens)", t_ann, 1.0), ("spiking, per step (T=16)", t_snn, t_snn / t_ann),
            ("spiking, window-summed", t_win, t_win / t_ann)]
    print(f"{'operation':40s} {'median ms':>10s} {'ratio to peer':>14s}")
    for name, t, r in rows:
        print(f"{name:40s} {t * 1e3:10.2f} {r:14.2f}")


if __name__ == "__main__":
    main()
