"""Issue 43's payoff for rStar-Math: the same MCTS with the LoRA SmolLM2 policy before and after, per CPU-second.

The workload (identical in both): ``n_problems`` problems of the pool ``StepArithGenerator(levels=(1, 2, 3),
seed=0).sample(24)``, terminal-guided MCTS with ``n`` candidates per expansion, ``R`` rollouts, depth 10, one code
error ends a node, ``step_tokens`` tokens per step at temperature 1, seed 0, and one policy: SmolLM2-135M-Instruct +
LoRA (r=16, alpha=32) SFT'd once (``sft_steps`` steps x 2 sequences of the bootstrap engine's SFT data, seed 0, by
the current package) and saved with ``LoRABackend.save_policy``; both packages load that adapter with
``load_policy`` (the same peft layout).

* ``before``: the package as of ``--before`` (default 87202c5, the commit before issue 43: transformers
  ``generate``, each prompt re-encoded per sample), ``git archive``d into a temporary folder and put first on
  ``PYTHONPATH`` of its process (the working tree is not touched);
* ``after``: the current package.

Each run is its own process with one torch thread; the variants alternate for ``--rounds`` rounds and the least CPU
time of the search (``time.process_time``; loading not included) is kept. Reported: CPU seconds per generated
token, per generated step and per problem x rollout x candidate (the dry run's unit), and the implied hours of
search per round of the ``paper`` preset (240 problems x R=16 x n=8 = 30,720 units) at this workload's tokens per
unit.

Run: ``.venv/bin/python benchmarks/rstar_math/bench_payoff_43.py [--problems 2] [--n 4] [--rollouts 2]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAPER_UNITS = 240 * 16 * 8

SETUP = r'''
import json, sys, time
import torch
torch.set_num_threads(1)
spec = json.loads(sys.argv[1])
from icml25.llm import load_model
from icml25.rstar_math.domain.step_format import StepFormat
from icml25.rstar_math.experiment import stages as ex
from icml25.rstar_math.models.lora_backend import LoRABackend
from icml25.rstar_math.models.sft import sft_examples
from icml25.rstar_math.reproduce import Config
eng = ex.run_engine(Config(n_problems=24, levels=(1, 2, 3), n_candidates=5, rollouts=8), 0)
backend = LoRABackend(load_model("pretrained:smollm2-135m-instruct", progress=False), r=16, alpha=32.0,
                      max_length=512, warmup=1)
policy = backend.fresh_policy()
c = time.process_time()
loss = backend.train_policy(policy, sft_examples(eng["sft"], StepFormat()), steps=spec["sft_steps"], batch_size=2,
                            lr=2e-3, seed=0)
backend.save_policy(policy, spec["adapter"])
print("RESULT " + json.dumps({"sft_cpu_s": time.process_time() - c, "loss": [float(x) for x in loss]}))
'''

WORKER = r'''
import hashlib, json, sys, time
c0 = time.process_time()
import torch
torch.set_num_threads(1)
spec = json.loads(sys.argv[1])
import icml25
from icml25.llm import load_model
if spec["variant"] == "before":  # the flat layout of 87202c5
    from icml25.rstar_math.executors import SafeArithExecutor
    from icml25.rstar_math.lora_backend import LoRABackend
    from icml25.rstar_math.mcts import MCTS, MCTSConfig
    from icml25.rstar_math.step_format import StepFormat
    from icml25.rstar_math.steparith import StepArithGenerator
    from icml25.llm import pretrained as P
    m = P.get_pretrained("smollm2-135m-instruct")
    why = P.cache_problem(P.cache_folder(m.name), m, False)
    if why is not None:  # never let the old package rebuild the shared cache
        raise SystemExit(f"the old package does not accept the model cache ({why}); not run")
else:
    from icml25.rstar_math.domain.step_format import StepFormat
    from icml25.rstar_math.domain.steparith import StepArithGenerator
    from icml25.rstar_math.execution.code_executors import SafeArithExecutor
    from icml25.rstar_math.models.lora_backend import LoRABackend
    from icml25.rstar_math.search.mcts import MCTS, MCTSConfig
c1 = time.process_time()
backend = LoRABackend(load_model("pretrained:smollm2-135m-instruct", progress=False), r=16, alpha=32.0,
                      max_length=512, warmup=1)
policy = backend.load_policy(spec["adapter"])
step_policy = backend.step_policy(policy)
c2 = time.process_time()

class Counting:  # the policy's generate, counting generated tokens
    def __init__(self, lm):
        self.lm, self.tokens, self.calls = lm, 0, 0
    def generate(self, *a, **k):
        out = self.lm.generate(*a, **k)
        self.calls += 1
        self.tokens += sum(len(g.token_logprobs) for row in out for g in row)
        return out
    def __getattr__(self, name):
        return getattr(self.lm, name)

counter = Counting(step_policy.lm)
step_policy.lm = counter
fmt, exe = StepFormat(), SafeArithExecutor(allow_float=False)
pool = StepArithGenerator(levels=(1, 2, 3), seed=0).sample(24)[:spec["problems"]]
cfg = MCTSConfig(n_candidates=spec["n"], rollouts=spec["rollouts"], max_depth=10, errors_threshold=1,
                 mode="terminal", max_tokens=spec["step_tokens"], seed=0)
c = time.process_time()
trees = MCTS(step_policy, exe, config=cfg, fmt=fmt).search(pool)
search = time.process_time() - c
steps = sum(t.meta["generated_steps"] for t in trees)
print("RESULT " + json.dumps({
    "package": icml25.__file__, "import_cpu_s": c1 - c0, "load_cpu_s": c2 - c1, "search_cpu_s": search,
    "steps": steps, "tokens": counter.tokens, "generate_calls": counter.calls,
    "solved": sum(t.solved() for t in trees),
    "questions": hashlib.sha256("|".join(p.question for p in pool).encode()).hexdigest()[:12]}))
'''


def _run(code: str, spec: dict, pythonpath: str | None, timeout: int) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false",
           "ICML25_PROGRESS": "0"}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-c", code, json.dumps(spec)], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=tempfile.gettempdir())
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"{spec.get('variant', 'setup')} failed:\n{proc.stdout[-1500:]}\n{proc.stderr[-3000:]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default="87202c5", help="git revision of the 'before' package")
    ap.add_argument("--problems", type=int, default=2)
    ap.add_argument("--n", type=int, default=4)
    ap.add_argument("--rollouts", type=int, default=2)
    ap.add_argument("--step-tokens", type=int, default=48)
    ap.add_argument("--sft-steps", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=2, help="alternating rounds of the two variants (least kept)")
    ap.add_argument("--timeout", type=int, default=1200)
    ap.add_argument("--json", type=Path, help="also write the raw results here")
    args = ap.parse_args()
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="icml25-payoff43-") as tmp:
        arch = Path(tmp) / "before.tar"
        with open(arch, "wb") as f:
            subprocess.run(["git", "-C", str(ROOT), "archive", args.before, "src"], stdout=f, check=True)
        with tarfile.open(arch) as tf:
            tf.extractall(Path(tmp) / "before", filter="data")
        before_src = str(Path(tmp) / "before" / "src")
        adapter = str(Path(tmp) / "policy")
        setup = _run(SETUP, {"sft_steps": args.sft_steps, "adapter": adapter}, None, args.timeout)
        print(f"policy: {args.sft_steps} SFT steps x 2 sequences, loss {setup['loss'][0]:.2f} -> "
              f"{setup['loss'][-1]:.2f} ({setup['sft_cpu_s']:.0f} CPU-s)", flush=True)
        spec = {"adapter": adapter, "problems": args.problems, "n": args.n, "rollouts": args.rollouts,
                "step_tokens": args.step_tokens}
        runs: dict[str, list[dict]] = {"before": [], "after": []}
        for _ in range(args.rounds):
            for variant in ("before", "after"):
                r = _run(WORKER, {**spec, "variant": variant}, before_src if variant == "before" else None,
                         args.timeout)
                if variant == "before" and not r["package"].startswith(before_src):
                    raise RuntimeError(f"'before' imported {r['package']}, not the extracted package")
                runs[variant].append(r)
                print(f"{variant}: {json.dumps(r)}", flush=True)
    load1 = os.getloadavg()
    if len({r["questions"] for v in runs.values() for r in v}) != 1:
        raise RuntimeError("the two packages drew different problems")
    units = args.problems * args.rollouts * args.n
    rows = ["| package | search CPU s (least of rounds) | generated steps | generated tokens | CPU s / token | "
            "CPU s / step | CPU s / unit | tokens / unit | implied h / paper round |", "|---|---|---|---|---|---|---|---|---|"]
    best = {}
    for variant, rs in runs.items():
        r = min(rs, key=lambda x: x["search_cpu_s"])
        best[variant] = r
        per_unit = r["search_cpu_s"] / units
        rows.append(f"| {variant} | {r['search_cpu_s']:.1f} | {r['steps']} | {r['tokens']} | "
                    f"{r['search_cpu_s'] / r['tokens']:.4f} | {r['search_cpu_s'] / r['steps']:.2f} | {per_unit:.2f} | "
                    f"{r['tokens'] / units:.1f} | {per_unit * PAPER_UNITS / 3600:.1f} |")
    b, a = best["before"], best["after"]
    text = (f"{args.problems} problems x R={args.rollouts} x n={args.n} ({units} units), {args.step_tokens} tokens "
            f"per step, policy after {args.sft_steps} SFT steps; one torch thread, least of {args.rounds} alternating "
            f"rounds; load average {load0[0]:.1f} at the start, {load1[0]:.1f} at the end.\n\n" + "\n".join(rows) +
            f"\n\nafter / before: {b['search_cpu_s'] / b['tokens'] / (a['search_cpu_s'] / a['tokens']):.2f}x per "
            f"token, {b['search_cpu_s'] / b['steps'] / (a['search_cpu_s'] / a['steps']):.2f}x per step")
    print("\n" + text)
    if args.json:
        args.json.write_text(json.dumps({"args": vars(args) | {"json": str(args.json)}, "setup": setup,
                                         "runs": runs, "table": text}, indent=1))


if __name__ == "__main__":
    main()
