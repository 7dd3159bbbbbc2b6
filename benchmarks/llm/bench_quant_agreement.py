"""How far the opt-in weight quantisations (``quantize="int8"``, ``"int4"``) move the answers from float32's.

For SmolLM2-135M-Instruct and Gemma-3-270M, in one process per model (one torch thread), each mode loaded in turn:

* greedy decoding of 10 prompts x 32 tokens, one token per step on the native decoder's KV cache (decoding rows:
  the int8 / int4 kernels): the prompts whose 32 tokens all equal float32's, the mean length of the common prefix,
  and the fraction of positions equal;
* mean and max |delta log-probability| of float32's greedy tokens, teacher-forced one per step (decoding rows);
* the benchmark's score workload (256 tokens after a 10-token prompt, one prefill: the de-quantised weights in
  float32): mean and max |delta log-probability| per token;
* the benchmark's 8 multiple-choice prompts: the answer letter (argmax over " A" ... " D") equal to float32's, and
  the mean |delta log-probability| of the four letters.

Run: ``.venv/bin/python benchmarks/llm/bench_quant_agreement.py [--models ...] [--readme]`` (``--readme`` writes the
table into ``src/icml25/llm/README.md`` between the bench_quant_agreement markers).
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "src" / "icml25" / "llm" / "README.md"
MODES = [None, "int8", "int4"]
PROMPTS = ["The history of the city goes back to", "Once upon a time, in a small village,",
           "The three most important inventions of the last century are", "Question: What is 12 times 7?\nAnswer:",
           "def fibonacci(n):\n    ", "The recipe calls for two cups of flour and",
           "In physics, the law of conservation of energy states that", "Dear Sir or Madam,\nI am writing to",
           "The capital of France is Paris. The capital of Germany is", "Photosynthesis is the process by which"]
N_TOKENS = 32


def greedy_and_forced(lm, prompt: str, forced: list[int] | None) -> tuple[list[int], list[float]]:
    """Greedy ``N_TOKENS`` ids after ``prompt`` (one token per step on a KV cache), and the log-probabilities of
    ``forced`` (or of the greedy ids when None) fed one per step."""
    import torch

    net = lm._native
    ids = lm._prompt_ids(prompt)
    out_ids, lps = [], []
    for mode in ("greedy", "forced") if forced is not None else ("greedy",):
        cache = net.new_cache(1, len(ids) + N_TOKENS + 1)
        with torch.inference_mode():
            logits = net.forward(torch.tensor([ids]), torch.arange(len(ids))[None], cache=cache)[0, -1]
            seq = []
            for t in range(N_TOKENS):
                lp = torch.log_softmax(logits.double(), -1)
                nxt = int(lp.argmax()) if mode == "greedy" else forced[t]
                seq.append(nxt)
                if mode == "forced" or forced is None:
                    lps.append(float(lp[nxt]))
                pos = len(ids) + t
                logits = net.forward(torch.tensor([[nxt]]), torch.tensor([[pos]]), cache=cache)[0, -1]
        if mode == "greedy":
            out_ids = seq
    return out_ids, lps


def measure(model: str) -> dict:
    import numpy as np
    import torch

    torch.set_num_threads(1)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_llm_workloads import MCQ, TEXT

    from icml25.llm import load_model

    ref: dict = {}
    res: dict = {}
    for mode in MODES:
        lm = load_model("pretrained:" + model, progress=False, **({"quantize": mode} if mode else {}))
        if lm.backend != "native":
            raise RuntimeError(f"{model}: not on the native backend")
        r: dict = {"greedy": [], "forced": []}
        for i, p in enumerate(PROMPTS):
            g, lp = greedy_and_forced(lm, p, None if mode is None else ref["greedy"][i])
            r["greedy"].append(g)
            r["forced"].append(lp)
        ids = lm._cont_ids(TEXT)
        r["score"] = lm.logprobs([lm._decode(ids[:10])], [lm._decode(ids[10:266])])[0].tolist()
        mcq = ["Question: " + q + "\n" + "".join(f"{L}. {o}\n" for L, o in zip("ABCD", opts)) + "Answer:"
               for q, opts in MCQ]
        letters = [lm._cont_ids(" " + L)[-1] for L in "ABCD"]
        lpm = torch.log_softmax(torch.as_tensor(lm.next_token_logits(mcq), dtype=torch.float64), -1)[:, letters]
        r["mcq"] = lpm.tolist()
        del lm
        gc.collect()
        if mode is None:
            ref = r
            continue
        eq = [sum(1 for a, b in zip(g, f) if a == b) for g, f in zip(r["greedy"], ref["greedy"])]
        prefix = []
        for g, f in zip(r["greedy"], ref["greedy"]):
            k = 0
            while k < N_TOKENS and g[k] == f[k]:
                k += 1
            prefix.append(k)
        dforced = np.abs(np.array(r["forced"]) - np.array(ref["forced"]))
        dscore = np.abs(np.array(r["score"]) - np.array(ref["score"]))
        a, b = np.array(r["mcq"]), np.array(ref["mcq"])
        res[mode] = {"greedy_all_equal": sum(k == N_TOKENS for k in prefix), "greedy_prompts": len(PROMPTS),
                     "greedy_mean_prefix": float(np.mean(prefix)), "greedy_pos_equal": sum(eq) / (N_TOKENS * len(eq)),
                     "forced_mean_abs": float(dforced.mean()), "forced_max_abs": float(dforced.max()),
                     "score_mean_abs": float(dscore.mean()), "score_max_abs": float(dscore.max()),
                     "mcq_argmax_equal": int((a.argmax(1) == b.argmax(1)).sum()), "mcq_n": len(a),
                     "mcq_mean_abs": float(np.abs(a - b).mean())}
        print(model, mode, json.dumps(res[mode]), flush=True)
    return res


def table(results: dict) -> str:
    rows = ["| model | mode | greedy: prompts equal for 32 tokens | mean common prefix (tokens) | positions equal | "
            "decoding steps, mean / max abs delta log-prob | score 256, mean / max abs delta log-prob | MCQ answer equal | "
            "MCQ letters, mean abs delta log-prob |", "|---|---|---|---|---|---|---|---|---|"]
    for model, res in results.items():
        for mode, r in res.items():
            rows.append(f"| {model} | {mode} | {r['greedy_all_equal']} / {r['greedy_prompts']} | "
                        f"{r['greedy_mean_prefix']:.1f} | {100 * r['greedy_pos_equal']:.0f} % | "
                        f"{r['forced_mean_abs']:.3f} / {r['forced_max_abs']:.2f} | "
                        f"{r['score_mean_abs']:.3f} / {r['score_max_abs']:.2f} | {r['mcq_argmax_equal']} / {r['mcq_n']} | "
                        f"{r['mcq_mean_abs']:.3f} |")
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=["smollm2-135m-instruct", "gemma-3-270m"])
    ap.add_argument("--readme", action="store_true", help="write the table into src/icml25/llm/README.md")
    ap.add_argument("--json", type=Path, help="also write the raw results here")
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from icml25.llm import pretrained as P

    results = {}
    for model in args.models:
        if not P.is_installed(model):
            print(f"{model}: not installed ({P.get_pretrained(model).install}); skipped", flush=True)
            continue
        results[model] = measure(model)
    import torch

    text = (f"Measured {datetime.date.today().isoformat()}; torch {torch.__version__}; {len(PROMPTS)} prompts x "
            f"{N_TOKENS} greedy tokens, against float32 (the default) on the same machine.\n\n" + table(results))
    print("\n" + text)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    if args.readme:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from bench_llm_workloads import write_between_markers

        write_between_markers(README, "bench_quant_agreement", text)


if __name__ == "__main__":
    main()
