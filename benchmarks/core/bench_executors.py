"""Benchmark: ``icml25 reproduce`` of a few cheap real papers, serial vs ``--executor process --jobs 2``.

Each executor runs in a fresh ``icml25`` process (imports included) into its own temporary folder; the reports are
then compared (they must be identical apart from wall times and timing tables) and the wall-time ratio is printed together with the
machine's load average, since on a shared machine the ratio depends on what else runs.

    python benchmarks/core/bench_executors.py [--papers sis_vaccination inference_scaling] [--seeds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _cpu() -> float:
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def _run(papers: list[str], seeds: int, out: Path, extra: list[str]) -> float:
    """Wall time of one ``icml25 reproduce`` (its task lines and CPU time printed)."""
    cmd = [sys.executable, "-m", "icml25.run.cli", "reproduce", *papers, "--seeds", str(seeds), "--out", str(out),
           "--force", *extra]
    t, c = time.perf_counter(), _cpu()
    res = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "ICML25_PROGRESS": "0"})
    took, cpu = time.perf_counter() - t, _cpu() - c
    if res.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {res.returncode}:\n{res.stderr[-2000:]}")
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("[") or " tasks: " in ln]
    print("\n".join(f"    {ln}" for ln in lines))
    print(f"    wall {took:.1f} s, CPU time {cpu:.1f} s (all processes): {cpu / took:.2f} cores used on average")
    return took


def _reports(out: Path) -> dict[str, dict]:
    """Every report.json under ``out`` without what measures time (``wall_time_s``, tables named ``*time*``)."""
    found = {}
    for p in sorted(out.rglob("report.json")):
        data = json.loads(p.read_text())
        data.pop("wall_time_s", None)
        data["tables"] = {k: v for k, v in data.get("tables", {}).items() if "time" not in k}
        found[str(p.relative_to(out))] = data
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--papers", nargs="+", default=["sis_vaccination", "inference_scaling"])
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        load0 = os.getloadavg()
        print(f"serial: {len(args.papers)} papers x {args.seeds} seeds")
        t_serial = _run(args.papers, args.seeds, Path(tmp) / "serial", [])
        print("process --jobs 1 (the cost of worker processes alone):")
        t_one = _run(args.papers, args.seeds, Path(tmp) / "process1", ["--executor", "process", "--jobs", "1"])
        print(f"process --jobs {args.jobs}:")
        t_proc = _run(args.papers, args.seeds, Path(tmp) / "process", ["--executor", "process", "--jobs",
                                                                      str(args.jobs)])
        load1 = os.getloadavg()
        same = (_reports(Path(tmp) / "serial") == _reports(Path(tmp) / "process")
                == _reports(Path(tmp) / "process1"))
        n_reports = len(_reports(Path(tmp) / "serial"))
    print(f"papers {', '.join(args.papers)}, {args.seeds} seeds, {os.cpu_count()} CPUs: serial {t_serial:.1f} s, "
          f"process --jobs 1 {t_one:.1f} s, process --jobs {args.jobs} {t_proc:.1f} s; ratio serial / process "
          f"--jobs {args.jobs} = {t_serial / t_proc:.2f} (pool gain --jobs 1 / --jobs {args.jobs} = "
          f"{t_one / t_proc:.2f}); {n_reports} report.json files "
          f"{'identical' if same else 'DIFFERENT'} apart from timings")
    print(f"load average (1 min) before {load0[0]:.1f}, after {load1[0]:.1f} on {os.cpu_count()} CPUs: on a shared "
          "machine with more runnable processes than cores, two workers do not get two cores, so these ratios say "
          "little about an idle machine; a serial run also keeps warm in-process caches between seeds, which "
          "freshly spawned workers rebuild")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
