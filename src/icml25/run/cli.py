"""The ``icml25`` command: ``list``, ``reproduce``, ``plan``, ``report`` and per-paper tools (``icml25 <paper> ...``).

Exit codes and messages:

- a mistake the user can fix (a bad option or ``--set`` value, an unknown slug, a missing extra, missing data, an
  unusable ``--out``, a time budget that ran out; see :data:`icml25.core.errors.USER_ERRORS`): one line
  ``icml25: error: <what and how to fix it>``, exit 2, nothing run;
- any other exception inside a reproduction is a bug: ``icml25: internal error in <slug>: <type>: <message>``
  and the path of ``<out>/<slug>/error.log`` (the full traceback), exit 1; files already in ``<out>`` are kept;
  with several slugs the other papers still run;
- ``--debug`` (alias ``--traceback``) re-raises the exception instead, for its traceback;
- ``reproduce --strict``: exit 1 when a claim of the run's scale fails.

``reproduce`` runs every (paper, seed) as one task (:func:`icml25.run.runner.reproduce_many`) with
``--executor serial`` (default), ``process`` (``--jobs N`` local processes) or ``ray`` (a local Ray instance, or a
cluster with ``--ray-address auto|ray://host:10001``); a task whose ``report.json`` has the run's scale, seed and
config is skipped unless ``--force``; a failed task leaves its ``error.log`` and the others go on.

Per-paper tools (``icml25 <paper> ...``) take user values straight into library calls, so there a ``ValueError``,
``KeyError``, ``ImportError`` or ``FileNotFoundError`` is also reported as a user error (exit 2).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import sys
import typing
from pathlib import Path

__all__ = ["main"]

#: errors that a per-paper tool (``icml25 <paper> ...``) reports as the user's (its library calls validate input)
_TOOL_ERRORS: tuple[type[BaseException], ...] = (KeyError, ValueError, ImportError, FileNotFoundError, TimeoutError)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (``icml25 reproduce: error: argument --seed: ...``)."""

    def error(self, message: str) -> typing.NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _int_at_least(low: int) -> typing.Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer >= {low}, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be an integer >= {low}, got {value}")
        return value

    parse.__name__ = f"integer >= {low}"
    return parse


def _latest_verdict(slug: str, out: Path | None) -> tuple[typing.Any, str]:
    """The verdict to show for ``slug``: of its report in ``out`` or the one recorded in its package, whichever is of
    the larger scale (at equal scale the newer); and the counts text of that report (own scale and preview)."""
    from icml25.core.report import read_report, scale_counts_text
    from icml25.core.verdict import best_verdict, recorded_verdict, run_date, verdict_of

    recorded = recorded_verdict(slug)
    fresh = None
    counts = ""
    if out is not None and (out / slug / "report.json").exists():
        try:
            rep = read_report(out / slug / "report.json")
            fresh = verdict_of(rep, date=run_date(out / slug / "report.json"))
            counts = scale_counts_text(rep)
        except (OSError, ValueError, KeyError, TypeError):
            counts = "unreadable report"
    best = best_verdict(recorded, fresh)
    if best is not None and best is recorded and fresh is not None and best is not fresh:
        counts = ""
    return best, counts


def _status_rows(out: Path | None = None) -> list[dict[str, str]]:
    from icml25.core.registry import list_reproductions

    rows = []
    for r in list_reproductions():
        v, counts = _latest_verdict(r.slug, out)
        rows.append({"slug": r.slug, "title": r.title, "ref": r.arxiv, "extras": ",".join(r.extras),
                     "verdict": v.verdict if v is not None else "not run",
                     "verdict_text": v.text() if v is not None else "not run",
                     "verdict_scale": v.scale if v is not None else "",
                     "last_run": counts})
    return rows


def papers_markdown() -> str:
    """The README's table of papers with their verdicts (generated from the registry and the recorded verdicts)."""
    lines = ["| slug | paper | reference | verdict (scale, seeds, date) |", "|---|---|---|---|"]
    for r in _status_rows():
        link = f"[{r['slug']}](src/icml25/{r['slug']}/README.md)"
        lines.append(f"| {link} | {r['title']} | {r['ref']} | {r['verdict_text'].split(':')[0]} |")
    return "\n".join(lines)


def _cmd_list(args: argparse.Namespace) -> int:
    if args.markdown:
        print(papers_markdown())
        return 0
    rows = _status_rows(Path(args.out))
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    w = max((len(r["slug"]) for r in rows), default=4)
    for r in rows:
        extra = f" [{r['extras']}]" if r["extras"] else ""
        verdict = r["verdict"] + (f" ({r['verdict_scale']})" if r["verdict_scale"] else "")
        last = f"  last: {r['last_run']}" if r["last_run"] else ""
        print(f"{r['slug']:<{w}}  {verdict:<28}  {r['title'][:60]}{extra}{last}")
    return 0


def _cmd_plan(args: argparse.Namespace) -> int:
    from icml25.core.config import parse_set_args
    from icml25.core.plan import plans_table
    from icml25.core.registry import discover, get_reproduction

    slugs = sorted(discover()) if args.slugs == ["all"] else list(dict.fromkeys(args.slugs))
    overrides = parse_set_args(args.set)
    plans = [get_reproduction(s).plan(args.scale, overrides) for s in slugs]
    if args.json:
        print(json.dumps([p.to_dict() for p in plans], indent=2, default=str))
    elif len(plans) == 1:
        print(plans[0].text())
    else:
        print(plans_table(plans))
    return 0


def _task_line(result: typing.Any, done: int, total: int) -> str:
    """One line per finished task: ``[3/8] demo seed 1: paper claims: 2/2 held; ... (1.2 s)``."""
    from icml25.core.report import counts_text

    head = f"[{done}/{total}] {result.task.name}"
    if result.status == "skipped":
        return f"{head}: skipped, its report.json has this scale, seed and config (--force reruns it)"
    if result.status in ("internal", "user"):
        kind = "internal error" if result.status == "internal" else "error"
        return f"{head}: FAILED ({kind}: {result.error}) after {result.wall_time_s:.1f} s"
    counts: dict[str, dict[str, int]] = {}
    for c in (result.report or {}).get("claims", []):
        d = counts.setdefault(c.get("kind") or "unspecified", {"held": 0, "failed": 0, "not measured": 0, "total": 0})
        d[c.get("status", "failed")] = d.get(c.get("status", "failed"), 0) + 1
        d["total"] += 1
    return f"{head}: {counts_text(counts)} ({result.wall_time_s:.1f} s)"


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from icml25.core.config import parse_set_args
    from icml25.core.data import set_allow_download
    from icml25.core.errors import ReproductionError, UsageError, one_line
    from icml25.core.progress import progress_bar
    from icml25.core.report import write_index
    from icml25.core.seeding import default_seed

    from .runner import _summary_line, reproduce_many

    set_allow_download(args.allow_download)
    overrides = parse_set_args(args.set)
    if args.seed is None:
        args.seed = default_seed(args.scale)
    if args.dry_run:
        return _cmd_plan(args)
    if args.executor == "serial" and args.jobs is not None:
        raise UsageError("--jobs needs --executor process or ray (the serial executor runs one task at a time)")
    if args.ray_address is not None and args.executor != "ray":
        raise UsageError("--ray-address needs --executor ray")
    from icml25.core.registry import discover

    known = discover()
    slugs = sorted(known) if args.slugs == ["all"] else list(dict.fromkeys(args.slugs))
    debug = args.debug or args.debug_global
    failures: list[typing.Any] = []
    stack = contextlib.ExitStack()
    advance = stack.enter_context(progress_bar(len(slugs) * args.seeds, f"reproduce ({args.executor})"))

    def on_result(result: typing.Any, done: int, total: int) -> None:
        advance()
        print(_task_line(result, done, total), file=sys.stderr)
        if result.status == "internal" and debug:
            if result.exception is not None:
                raise result.exception
            raise ReproductionError(result.task.slug, RuntimeError(result.error + "\n" + result.traceback),
                                    result.log_path)
        if result.status == "user" and (debug or len(slugs) == 1):
            raise result.exception if result.exception is not None else UsageError(result.error)

    def on_start(task: typing.Any) -> None:
        print(f"» {task.name} ({task.scale})", file=sys.stderr)

    def on_paper(report: typing.Any) -> None:
        if isinstance(report.seed, list):
            print(f"  {_summary_line(report)} (over seeds {', '.join(map(str, report.seed))})", file=sys.stderr)

    try:
        summary = reproduce_many(slugs, scale=args.scale, seed=args.seed, seeds=args.seeds, out=args.out,
                                 overrides=overrides, executor=args.executor, jobs=args.jobs,
                                 ray_address=args.ray_address, force=args.force, on_result=on_result,
                                 on_paper=on_paper, on_start=on_start)
    finally:
        stack.close()
    out = Path(args.out)
    results = list(summary.reports.values())
    failures = summary.failed
    idx = write_index(out)
    if args.slugs == ["all"] or len(slugs) > 1:
        print(f"index written to {idx}", file=sys.stderr)
    c = summary.counts
    if len(summary.results) > 1 or c["skipped"] or c["failed"]:
        print(f"{len(summary.results)} tasks: {c['ran']} ran, {c['skipped']} skipped, {c['failed']} failed"
              + (f" ({args.executor} executor)" if args.executor != "serial" else ""), file=sys.stderr)
    internal = user = False
    for f in failures:
        where = f" seed {f.task.seed}" if args.seeds > 1 else ""
        if f.status == "internal":
            internal = True
            log = (f"the full traceback is in {f.log_path}" if f.log_path
                   else "its traceback could not be saved")
            print(f"icml25: internal error in {f.task.slug}{where}: {f.error}", file=sys.stderr)
            print(f"icml25: this is a bug in icml25; {log} (rerun with --debug to see it here)", file=sys.stderr)
        else:
            user = True
            print(f"icml25: error in {f.task.slug}{where}: {one_line(f.error)}", file=sys.stderr)
    failed_any = any(not all(cl.held for cl in r.claims_at(r.scale)) for r in results)
    if args.json:
        print(json.dumps([r.to_dict() for r in results], indent=2, default=str))
    else:
        from icml25.core.report import claims_markdown

        for r in results:
            print(f"\n## {r.slug}\n" + claims_markdown(r))
    if internal:
        return 1
    if user:
        return 2
    return 1 if (args.strict and failed_any) else 0


def _cmd_report(args: argparse.Namespace) -> int:
    from icml25.core.report import read_report, write_index
    from icml25.core.verdict import record_verdict, run_date, verdict_of

    path = write_index(Path(args.out))
    print(path)
    if args.record:
        for rj in sorted(Path(args.out).glob("*/report.json")):
            v = verdict_of(read_report(rj), date=run_date(rj))
            where, written = record_verdict(v)
            print(f"{v.slug}: {v.text()} -> {'recorded in ' + str(where) if written else 'kept the recorded one'}")
    return 0


def _paper_tools() -> dict[str, str]:
    """Per-paper subcommands: ``icml25/<slug>/cli.py`` with a ``main(argv)`` becomes ``icml25 <slug-with-dashes>``."""
    from icml25.core import registry

    tools = {}
    for p in sorted(registry.PACKAGE_ROOT.glob("*/cli.py")):
        if p.parent.name in ("core", "llm", "run", "testing"):
            continue
        tools[p.parent.name.replace("_", "-")] = f"{registry.ROOT_PACKAGE}.{p.parent.name}.cli"
    tools["models"] = "icml25.llm.models_cli"  # the pretrained-model registry: icml25 models [prepare NAME...]
    return tools


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``icml25`` command."""
    parser = _Parser(prog="icml25", description="19 ICML 2025 papers as tested software.")
    parser.add_argument("--debug", "--traceback", dest="debug_global", action="store_true",
                        help="re-raise errors with their traceback instead of a one-line message")
    sub = parser.add_subparsers(dest="command", required=True)

    p_list = sub.add_parser("list", help="the papers, their status and extras")
    p_list.add_argument("--markdown", action="store_true", help="print the README's table of papers")
    p_list.add_argument("--json", action="store_true")
    p_list.add_argument("--out", default="reports", help="where to look for last reports (default: reports)")
    p_list.set_defaults(func=_cmd_list)

    p_rep = sub.add_parser("reproduce", help="run reproductions and write claim reports")
    p_rep.add_argument("slugs", nargs="+", help="paper slugs, or 'all'")
    p_rep.add_argument("--scale", choices=["quick", "full", "paper"], default="quick",
                       help="quick (~2 min, 2 CPU cores), full (< 1 h, 2 cores) or paper (the paper's own setting; "
                            "see --dry-run)")
    p_rep.add_argument("--dry-run", action="store_true",
                       help="print the plan (stages, models, data, needs, estimated time) and exit without running")
    p_rep.add_argument("--seed", type=_int_at_least(0), default=None,
                       help="first seed (an integer >= 0); default 0 (a development seed) at quick scale and 1000 (the "
                            "first evaluation seed, never used to choose a knob) at full and paper scale")
    p_rep.add_argument("--seeds", type=_int_at_least(1), default=1, help="number of seeds (claims are averaged)")
    p_rep.add_argument("--out", default="reports")
    p_rep.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config field")
    p_rep.add_argument("--json", action="store_true", help="print the reports as JSON")
    p_rep.add_argument("--strict", action="store_true", help="exit 1 when a claim of the run's scale fails")
    p_rep.add_argument("--allow-download", action="store_true", help="allow downloading missing data sets")
    p_rep.add_argument("--debug", action="store_true", help="re-raise an error inside a reproduction (traceback)")
    p_rep.add_argument("--executor", choices=["serial", "process", "ray"], default="serial",
                       help="where the (paper, seed) tasks run: one after another here (default), a local "
                            "process pool, or Ray tasks (local, or a cluster with --ray-address)")
    p_rep.add_argument("--jobs", type=_int_at_least(1), default=None,
                       help="worker processes (process) or CPUs of the local Ray instance (ray)")
    p_rep.add_argument("--ray-address", default=None, metavar="ADDR",
                       help="an existing Ray cluster: 'auto' or 'ray://host:10001' (needs --executor ray)")
    p_rep.add_argument("--force", action="store_true",
                       help="rerun (paper, seed) tasks whose report.json of the same scale and config exists")
    p_rep.set_defaults(func=_cmd_reproduce)

    p_idx = sub.add_parser("report", help="rebuild <out>/index.md from existing reports")
    p_idx.add_argument("--out", default="reports")
    p_idx.add_argument("--record", action="store_true",
                       help="record each report's verdict in its paper's package (verdict.json) unless a larger-scale "
                            "or newer one is recorded")
    p_idx.set_defaults(func=_cmd_report)

    p_plan = sub.add_parser("plan", help="what a run will take: stages, models, data, needs, estimated time")
    p_plan.add_argument("slugs", nargs="+", help="paper slugs, or 'all'")
    p_plan.add_argument("--scale", choices=["quick", "full", "paper"], default="paper")
    p_plan.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config field")
    p_plan.add_argument("--json", action="store_true")
    p_plan.set_defaults(func=_cmd_plan)

    for name in _paper_tools():
        what = "pretrained models from PyPI: list, prepare caches" if name == "models" else f"tools of the {name} paper"
        sub.add_parser(name, help=f"{what} (icml25 {name} --help)", add_help=False)
    return parser


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread like Ctrl-C, so that the same clean-up runs (workers stopped, staging
    folders removed); the exit code is 143."""


#: set when SIGTERM arrived during this command (a library may re-raise our Terminated as a plain KeyboardInterrupt)
_SIGTERM_SEEN: list[bool] = [False]


def _on_sigterm(signum: int, frame: typing.Any) -> None:
    _SIGTERM_SEEN[0] = True
    raise Terminated()


@contextlib.contextmanager
def _sigterm_as_interrupt() -> typing.Iterator[None]:
    """Turn SIGTERM into :class:`Terminated` while the command runs (main thread only; restored after)."""
    import signal

    _SIGTERM_SEEN[0] = False
    try:
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``icml25`` console script; returns the exit code."""
    with _sigterm_as_interrupt():
        return _main(argv)


def _main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    tools = _paper_tools()
    if argv and argv[0] in tools:
        mod = importlib.import_module(tools[argv[0]])
        debug = "--traceback" in argv or "--debug" in argv
        return _guarded(lambda: mod.main(argv[1:]), debug, user_errors=_TOOL_ERRORS)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help (0) or a one-line usage error (2)
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    debug = bool(args.debug_global or getattr(args, "debug", False))
    if not hasattr(args, "debug"):
        args.debug = False
    return _guarded(lambda: args.func(args), debug)


def _guarded(fn: typing.Callable[[], typing.Any], show_traceback: bool,
             user_errors: tuple[type[BaseException], ...] | None = None) -> int:
    """Run ``fn``: a user error prints one line (exit 2), an unexpected exception one line (exit 1)."""
    from icml25.core.errors import USER_ERRORS, one_line

    user_errors = USER_ERRORS if user_errors is None else tuple({*USER_ERRORS, *user_errors})
    try:
        return int(fn() or 0)
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (Terminated): complete reports are kept, see run.runner
        terminated = isinstance(exc, Terminated) or _SIGTERM_SEEN[0]
        print(f"icml25: {'terminated' if terminated else 'interrupted'}", file=sys.stderr)
        return 143 if terminated else 130
    except BrokenPipeError:  # `icml25 ... | head`: the reader left; nothing to report
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silences the interpreter's flush at exit
        return 0
    except user_errors as exc:
        if show_traceback:
            raise
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        print(f"icml25: error: {one_line(str(msg))}", file=sys.stderr)
        return 2
    except Exception as exc:
        if show_traceback:
            raise
        print(f"icml25: internal error: {type(exc).__name__}: {one_line(str(exc))} (a bug in icml25; rerun with "
              "--debug for the traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
