"""Pretrained models from PyPI (icml25.llm.pretrained): scoring and sampling throughput, fast vs plain log-probs,
and load time cold (de-quantise the GGUF) vs cached.

For each causal model (gemma-3-270m, smollm2-135m-instruct), at 1 and 2 torch threads:

* scoring, batch 16 x 64 tokens: ``HFModel.logprobs`` of a 4-token continuation after a 60-token prompt, our
  fast path (output layer only at the scored positions) vs ``fast=False`` (full logits at every position, the
  plain computation), tokens/s = 16 * 64 / seconds, and the speed-up; plus whole-sequence scoring (63-token
  continuation, where both paths must compute almost every position's logits);
* sampling, batch 8, 32 new tokens, temperature 1: new tokens / second.

Load: cold = de-quantise the GGUF and write the cache (in a temporary ``ICML25_CACHE``, deleted afterwards);
cached = ``load_model("pretrained:<name>")`` from the existing cache. Wall-clock seconds, best of ``--repeats``
after a warm-up; the machine is shared, so numbers are indicative.

Run: ``.venv/bin/python benchmarks/llm/bench_pretrained.py [--no-cold] [--threads 1 2] [--repeats 1]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time

import torch

from icml25.llm import load_model
from icml25.llm import pretrained as P

TEXT = ("The history of the city goes back to a small settlement on the river, where traders met to exchange salt, "
        "grain and cloth. Over the centuries the market grew into a town with walls, a cathedral and a university, "
        "and its merchants sent ships to every port of the northern sea. Today the old town is a quiet place of "
        "narrow streets, small shops and cafes, visited by people from many countries who come to see the houses")


def best(fn, repeats: int) -> float:
    fn()  # warm-up
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return min(ts)


def token_rows(lm, n_rows: int, length: int) -> list[list[int]]:
    ids = lm.tokenizer(TEXT * 3, add_special_tokens=False)["input_ids"]
    return [ids[r * 3: r * 3 + length] for r in range(n_rows)]


def split_texts(lm, rows: list[list[int]], n_cont: int) -> tuple[list[str], list[str]]:
    """Prompt / continuation strings whose re-encoding gives exactly the given token counts (checked)."""
    prompts, conts = [], []
    for ids in rows:
        prompts.append(lm.tokenizer.decode(ids[:-n_cont]))
        conts.append(lm.tokenizer.decode(ids[-n_cont:]))
    return prompts, conts


def bench_model(name: str, threads: list[int], repeats: int, rows: list[dict]) -> None:
    t0 = time.perf_counter()
    lm = load_model(f"pretrained:{name}", progress=False)
    load_s = time.perf_counter() - t0
    rows.append({"model": name, "what": "load from cache", "threads": torch.get_num_threads(), "value": load_s,
                 "unit": "s"})
    seqs = token_rows(lm, 16, 63)  # + BOS for Gemma = 64 positions; SmolLM2 adds none: 63
    n_pos = 16 * (len(lm._prompt_ids("x")) - 1 + 63)
    short_p, short_c = split_texts(lm, seqs, 4)
    long_p, long_c = split_texts(lm, seqs, 62)
    gen_prompts = [lm.tokenizer.decode(s[:16]) for s in seqs[:8]]
    holder: dict[str, int] = {}

    def sample() -> None:
        out = lm.generate(gen_prompts, temperature=1.0, max_tokens=32, seed=0)
        holder["steps"] = max(len(g[0].token_logprobs) for g in out)

    for th in threads:
        torch.set_num_threads(th)
        fast = best(lambda: lm.logprobs(short_p, short_c), repeats)
        plain = best(lambda: lm.logprobs(short_p, short_c, fast=False), repeats)
        lfast = best(lambda: lm.logprobs(long_p, long_c), repeats)
        lplain = best(lambda: lm.logprobs(long_p, long_c, fast=False), repeats)
        samp = best(sample, repeats)
        for what, secs, tokens in [("score 16x64, 4-token continuation, fast", fast, n_pos),
                                   ("score 16x64, 4-token continuation, plain full logits", plain, n_pos),
                                   ("score 16x64, 62-token continuation, fast", lfast, n_pos),
                                   ("score 16x64, 62-token continuation, plain full logits", lplain, n_pos),
                                   ("sample batch 8 x 32 new tokens", samp, 8 * holder["steps"])]:
            rows.append({"model": name, "what": what, "threads": th, "value": tokens / secs, "unit": "tokens/s"})
        rows.append({"model": name, "what": "speed-up fast / plain (4-token continuation)", "threads": th,
                     "value": plain / fast, "unit": "x"})
        print(f"{name} threads={th}: fast {n_pos / fast:.0f} tok/s, plain {n_pos / plain:.0f} tok/s "
              f"(x{plain / fast:.2f}); sampling {8 * holder['steps'] / samp:.1f} tok/s", flush=True)


def cold_load(name: str, rows: list[dict]) -> None:
    old = os.environ.get("ICML25_CACHE")
    tmp = tempfile.mkdtemp(prefix="icml25-bench-cache-")
    try:
        os.environ["ICML25_CACHE"] = tmp
        t0 = time.perf_counter()
        lm = load_model(f"pretrained:{name}", progress=False)
        rows.append({"model": name, "what": "load cold (de-quantise + write cache)",
                     "threads": torch.get_num_threads(), "value": time.perf_counter() - t0, "unit": "s"})
        del lm
    finally:
        if old is None:
            os.environ.pop("ICML25_CACHE", None)
        else:
            os.environ["ICML25_CACHE"] = old
        shutil.rmtree(tmp, ignore_errors=True)


class _Printed(list):
    """A list that prints each row as it is added (so a run cut short keeps what it measured)."""

    def append(self, r: dict) -> None:
        print("row:", _row(r), flush=True)
        super().append(r)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=["gemma-3-270m", "smollm2-135m-instruct"])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--no-cold", action="store_true", help="skip the cold (de-quantising) load")
    ap.add_argument("--load-only", action="store_true", help="only the load times (cold and cached)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    rows: list[dict] = _Printed()
    for name in args.models:
        if not P.is_installed(name):
            print(f"{name}: not installed ({P.get_pretrained(name).install}); skipped")
            continue
        P.pretrained_path(name)  # build the real cache first (not timed)
        torch.set_num_threads(1)
        if not args.no_cold:
            cold_load(name, rows)
        torch.set_num_threads(1)
        if args.load_only:
            t0 = time.perf_counter()
            load_model(f"pretrained:{name}", progress=False)
            rows.append({"model": name, "what": "load from cache", "threads": 1,
                         "value": time.perf_counter() - t0, "unit": "s"})
        else:
            bench_model(name, args.threads, args.repeats, rows)
    print("\n| model | measurement | threads | value |\n|---|---|---|---|")
    for r in rows:
        print(_row(r))


def _row(r: dict) -> str:
    v = r["value"]
    val = f"{v:.1f} s" if r["unit"] == "s" else f"{v:.2f}x" if r["unit"] == "x" else f"{v:,.0f} {r['unit']}"
    return f"| {r['model']} | {r['what']} | {r['threads']} | {val} |"


if __name__ == "__main__":
    main()
