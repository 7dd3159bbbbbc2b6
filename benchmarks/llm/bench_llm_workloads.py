"""The llm layer's workloads on the two pretrained causal models, before and after issue 43, per CPU-second.

For SmolLM2-135M-Instruct and Gemma-3-270M, each variant runs in its own fresh Python process (one torch thread):

* ``before``: the ``icml25.llm`` package as of ``--before`` (default 87202c5, the commit before issue 43), extracted
  from git into a temporary folder and imported as ``icml25_llm_before`` (transformers ``AutoModelForCausalLM``,
  one prefill per sample);
* ``after``: the current package (native decoder, float32: the default, exact);
* ``after-int8``: the current package with ``quantize="int8"`` (opt-in, approximate);
* ``after-int4``: the current package with ``quantize="int4"`` (opt-in, approximate).

Measured in each process: ``load_model("pretrained:<name>")`` from the cache (CPU seconds and wall seconds, with
``import torch`` done before and reported apart), resident memory (RSS) after the load and after the workloads,
and tokens per CPU-second (``time.process_time``, least of ``--repeats`` after a warm-up; the variants' processes
alternate for ``--rounds`` rounds and each number is the best round, since the machine's load drifts) of

* score 256 tokens: ``logprobs`` of a 256-token continuation after a 10-token prompt;
* greedy, one sequence: 64 new tokens (``temperature=0``, no stop) after a 20-token prompt;
* 8 samples from one prompt: ``n=8``, temperature 1, 64 new tokens each;
* 4-option MCQ: ``next_token_logits`` of 8 multiple-choice prompts (question, options A-D, "Answer:") and the
  log-probabilities of " A" ... " D"; tokens = prompt tokens.

llama.cpp: run side by side when ``import llama_cpp`` works (same GGUF files, ``n_threads=1``); otherwise the
reason is printed and the llama.cpp column is derived from the issue's measured ratios on this kind of machine
(llama.cpp / before: greedy x3.1 SmolLM2, x2.7 Gemma; 8 samples x1.2; load 0.3 s / 1.7 s; RSS 166 / 331 MB), marked
"derived".

Run: ``.venv/bin/python benchmarks/llm/bench_llm_workloads.py [--models ...] [--variants ...] [--readme]``
(``--readme`` writes the table into ``src/icml25/llm/README.md`` between the bench_llm_workloads markers).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "src" / "icml25" / "llm" / "README.md"
MODELS = ["smollm2-135m-instruct", "gemma-3-270m"]
VARIANTS = ["before", "after", "after-int8", "after-int4"]
# the llama.cpp / before ratios (1 thread, per CPU-second, same GGUF) and llama.cpp's load time and RSS
LLAMA_CPP = {"smollm2-135m-instruct": {"greedy": 3.1, "samples8": 1.2, "load_s": 0.3, "rss_mb": 166},
             "gemma-3-270m": {"greedy": 2.7, "samples8": 1.2, "load_s": 1.7, "rss_mb": 331}}

TEXT = ("The history of the city goes back to a small settlement on the river, where traders met to exchange salt, "
        "grain and cloth. Over the centuries the market grew into a town with walls, a cathedral and a university, "
        "and its merchants sent ships to every port of the northern sea. Today the old town is a quiet place of "
        "narrow streets, small shops and cafes, visited by people from many countries who come to see the houses "
        "of the merchants, the cathedral with its tall tower, and the market square where a fair is still held "
        "every autumn. In the museum one can see the old maps of the trade routes, coins from a dozen kingdoms, "
        "and the ledgers in which the merchants wrote down every sack of grain and every bolt of cloth they sold. "
        "The river is quieter now, but in summer small boats still carry visitors from the harbour to the island.")
MCQ = [("Which planet is known as the Red Planet?", ["Venus", "Mars", "Jupiter", "Saturn"]),
       ("What is the capital of Japan?", ["Kyoto", "Osaka", "Tokyo", "Nagoya"]),
       ("How many legs does a spider have?", ["Six", "Eight", "Ten", "Four"]),
       ("Which gas do plants take in from the air?", ["Oxygen", "Nitrogen", "Carbon dioxide", "Helium"]),
       ("What is 7 times 8?", ["54", "56", "64", "48"]),
       ("Which ocean is the largest?", ["Atlantic", "Indian", "Arctic", "Pacific"]),
       ("Who wrote 'Romeo and Juliet'?", ["Dickens", "Shakespeare", "Austen", "Tolstoy"]),
       ("What is the boiling point of water at sea level in Celsius?", ["90", "100", "110", "120"])]

WORKER = r'''
import json, os, resource, sys, time
spec = json.loads(sys.argv[1])
t0, c0 = time.perf_counter(), time.process_time()
import torch
torch.set_num_threads(1)
t1, c1 = time.perf_counter(), time.process_time()
if spec["variant"] == "before":
    sys.path.insert(0, spec["before_path"])
    from icml25_llm_before.loading import load_model
else:
    from icml25.llm import load_model
kw = {"quantize": spec["variant"][6:]} if spec["variant"].startswith("after-int") else {}
t2, c2 = time.perf_counter(), time.process_time()
lm = load_model("pretrained:" + spec["model"], progress=False, **kw)
t3, c3 = time.perf_counter(), time.process_time()

def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    return float("nan")

out = {"import_torch_cpu_s": c1 - c0, "import_torch_wall_s": t1 - t0, "load_cpu_s": c3 - c2, "load_wall_s": t3 - t2,
       "rss_after_load_mb": rss_mb()}
text, reps = spec["text"], spec["repeats"]

def least(fn):
    fn()  # warm-up
    best, res = float("inf"), None
    for _ in range(reps):
        c = time.process_time()
        res = fn()
        best = min(best, time.process_time() - c)
    return best, res

ids = lm._cont_ids(text)
prompt10, cont256 = lm._decode(ids[:10]), lm._decode(ids[10:266])
n256 = len(lm._cont_ids(cont256))
s, _ = least(lambda: lm.logprobs([prompt10], [cont256]))
out["score256"] = n256 / s
prompt20 = lm._decode(ids[:20])
s, g = least(lambda: lm.generate([prompt20], temperature=0, max_tokens=64, seed=0))
out["greedy"] = len(g[0][0].token_logprobs) / s
out["greedy_text"] = g[0][0].text
s, g = least(lambda: lm.generate([prompt20], n=8, temperature=1.0, max_tokens=64, seed=0))
out["samples8"] = sum(len(x.token_logprobs) for x in g[0]) / s
mcq = ["Question: " + q + "\n" + "".join(f"{L}. {o}\n" for L, o in zip("ABCD", opts)) + "Answer:"
       for q, opts in spec["mcq"]]
letters = [lm._cont_ids(" " + L)[-1] for L in "ABCD"]
n_mcq = sum(len(lm._prompt_ids(p)) for p in mcq)
s, logits = least(lambda: lm.next_token_logits(mcq))
out["mcq"] = n_mcq / s
lp = torch.log_softmax(torch.as_tensor(logits, dtype=torch.float64), -1)[:, letters]
out["mcq_choice"] = "".join("ABCD"[int(i)] for i in lp.argmax(-1))
out["rss_after_work_mb"] = rss_mb()
out["max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
out["backend"] = getattr(lm, "backend", "transformers")
print("RESULT " + json.dumps(out))
'''


def extract_before(rev: str, dest: Path) -> Path:
    """``src/icml25/llm`` as of ``rev`` in ``dest/icml25_llm_before`` (importable with ``dest`` on sys.path)."""
    arch = dest / "before.tar"
    with open(arch, "wb") as f:
        subprocess.run(["git", "-C", str(ROOT), "archive", rev, "src/icml25/llm"], stdout=f, check=True)
    with tarfile.open(arch) as tf:
        tf.extractall(dest, filter="data")
    (dest / "src" / "icml25" / "llm").rename(dest / "icml25_llm_before")
    return dest


def run_variant(model: str, variant: str, before_path: str, repeats: int, timeout: int) -> dict:
    spec = {"model": model, "variant": variant, "before_path": before_path, "repeats": repeats, "text": TEXT,
            "mcq": MCQ}
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    proc = subprocess.run([sys.executable, "-c", WORKER, json.dumps(spec)], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=str(ROOT))
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"{model} {variant} failed:\n{proc.stderr[-3000:]}")


def best_of(old: dict | None, new: dict) -> dict:
    """Per metric the better of two rounds: higher rates, lower times and memory."""
    if old is None:
        return new
    out = dict(new)
    for k, v in new.items():
        if isinstance(v, float) and isinstance(old.get(k), float):
            lower = k.endswith("_s") or k.endswith("_mb")
            out[k] = min(v, old[k]) if lower else max(v, old[k])
    return out


def llama_cpp_side_by_side(model: str, repeats: int) -> dict | None:
    """llama.cpp on the same GGUF (greedy and 8 samples per CPU-second), or None with the reason printed."""
    try:
        import llama_cpp  # noqa: F401
    except Exception as exc:  # noqa: BLE001 (any import failure means: not available)
        print(f"llama.cpp: not run ({type(exc).__name__}: {exc}); its column is derived from the issue's ratios",
              flush=True)
        return None
    import time

    from icml25.llm import pretrained as P

    m = P.get_pretrained(model)
    srcs = P._source_files(m)
    if m.source_format == "gguf-chunks":
        path = Path(tempfile.mkdtemp()) / "model.gguf"
        P._assemble_chunks(m, srcs, path, progress=False)
    else:
        path = srcs[0]
    c, t = time.process_time(), time.perf_counter()
    llm = llama_cpp.Llama(model_path=str(path), n_threads=1, n_ctx=512, verbose=False)
    out = {"load_cpu_s": time.process_time() - c, "load_wall_s": time.perf_counter() - t}
    prompt = TEXT[:100]
    best = float("inf")
    for _ in range(repeats + 1):
        c = time.process_time()
        r = llm(prompt, max_tokens=64, temperature=0.0)
        best = min(best, time.process_time() - c)
    out["greedy"] = r["usage"]["completion_tokens"] / best
    return out


def machine() -> str:
    cpu = platform.processor() or "cpu"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}"



def write_between_markers(readme: Path, name: str, text: str) -> None:
    """Replace what lies between ``<!-- name:start -->`` and ``<!-- name:end -->`` in ``readme`` by ``text``."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    doc = readme.read_text()
    if start in doc and end in doc:
        doc = doc[:doc.index(start) + len(start)] + "\n" + text + "\n" + doc[doc.index(end):]
        readme.write_text(doc)
        print(f"wrote the table into {readme}")
    else:
        print(f"{readme} has no {start} ... {end} markers; table not written")

def table(results: dict, derived: dict) -> str:
    rows = ["| model | measurement | before | after (float32, default) | after, int8 (opt-in) | after, int4 (opt-in) "
            "| after / before | llama.cpp | after / llama.cpp | int4 / llama.cpp |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    what = [("load_cpu_s", "load from cache, CPU s (torch imported before)", "s"),
            ("load_wall_s", "load from cache, wall s", "s"),
            ("rss_after_load_mb", "RSS after load, MB", "MB"),
            ("rss_after_work_mb", "RSS after the workloads, MB", "MB"),
            ("score256", "score 256 tokens, tokens/CPU-s", "tok"),
            ("greedy", "greedy, 1 sequence x 64, tokens/CPU-s", "tok"),
            ("samples8", "8 samples x 64 from one prompt, tokens/CPU-s", "tok"),
            ("mcq", "4-option MCQ next-token log-probs (8 prompts), prompt tokens/CPU-s", "tok")]
    for model, res in results.items():
        llama = derived.get(model, {})
        for key, label, unit in what:
            vals = [res.get(v, {}).get(key) for v in VARIANTS]
            cells = [("-" if v is None else f"{v:.2f}" if unit == "s" else f"{v:.0f}" if unit == "MB" else f"{v:.1f}")
                     for v in vals]
            b, a = vals[0], vals[1]
            ratio = "-" if a is None or b is None else (f"{b / a:.1f}x faster" if unit == "s" else
                                                        f"{a / b:.2f}" if unit == "tok" else f"{a / b:.2f}")
            lc, lr, l4 = llama.get(key), "-", "-"
            if lc is not None and a is not None:
                lr = f"{a / lc:.2f}" if unit == "tok" else f"{a / lc:.1f}x"
            if lc is not None and vals[3] is not None:
                l4 = f"{vals[3] / lc:.2f}" if unit == "tok" else f"{vals[3] / lc:.1f}x"
            lcell = "-" if lc is None else (f"{lc:.1f}" if unit == "tok" else f"{lc:.2f}" if unit == "s" else
                                            f"{lc:.0f}")
            if lc is not None and llama.get("_derived"):
                lcell += " (derived)"
            rows.append(f"| {model} | {label} | " + " | ".join(cells) + f" | {ratio} | {lcell} | {lr} | {l4} |")
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=MODELS)
    ap.add_argument("--variants", nargs="+", default=VARIANTS, choices=VARIANTS)
    ap.add_argument("--before", default="87202c5", help="git revision of the 'before' llm package")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=2, help="alternating rounds of the variants (best kept)")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per variant process")
    ap.add_argument("--readme", action="store_true", help="write the table into src/icml25/llm/README.md")
    ap.add_argument("--json", type=Path, help="also write the raw results here")
    args = ap.parse_args()
    from icml25.llm import pretrained as P

    load0 = os.getloadavg()
    results: dict[str, dict] = {}
    derived: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="icml25-bench-before-") as tmp:
        before_path = ""
        if "before" in args.variants:
            try:
                before_path = str(extract_before(args.before, Path(tmp)))
            except (OSError, subprocess.CalledProcessError) as exc:
                print(f"before: cannot extract {args.before} from git ({exc}); skipped", flush=True)
        for model in args.models:
            if not P.is_installed(model):
                print(f"{model}: not installed ({P.get_pretrained(model).install}); skipped", flush=True)
                continue
            P.pretrained_path(model)  # build the cache first (not timed)
            results[model] = {}
            for _ in range(args.rounds):
                for variant in args.variants:
                    if variant == "before" and not before_path:
                        continue
                    r = run_variant(model, variant, before_path, args.repeats, args.timeout)
                    print(f"{model} {variant}: " + ", ".join(f"{k}={v:.2f}" if isinstance(v, float) else
                                                             f"{k}={v!r:.40}" for k, v in r.items()), flush=True)
                    results[model][variant] = best_of(results[model].get(variant), r)
            side = llama_cpp_side_by_side(model, args.repeats)
            b = results[model].get("before", {})
            ratio = LLAMA_CPP[model]
            if side is not None:
                derived[model] = side
            elif b:
                derived[model] = {"_derived": True, "greedy": b["greedy"] * ratio["greedy"],
                                  "samples8": b["samples8"] * ratio["samples8"], "load_wall_s": ratio["load_s"],
                                  "rss_after_load_mb": ratio["rss_mb"]}
    load1 = os.getloadavg()
    import torch
    import transformers

    head = (f"Measured {datetime.date.today().isoformat()} on {machine()}; 1 torch thread; load average "
            f"{load0[0]:.1f} at the start, {load1[0]:.1f} at the end (a shared machine: other jobs ran); "
            f"torch {torch.__version__}, transformers {transformers.__version__}; least of {args.repeats} after a "
            f"warm-up, CPU time, best of {args.rounds} alternating rounds.")
    text = head + "\n\n" + table(results, derived)
    print("\n" + text)
    if args.json:
        args.json.write_text(json.dumps({"head": head, "results": results, "llama_cpp": derived}, indent=1))
    if args.readme:
        write_between_markers(README, "bench_llm_workloads", text)


if __name__ == "__main__":
    main()
