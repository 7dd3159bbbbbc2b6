"""Regenerate what the READMEs show from the registry and the recorded verdicts (`make readme`).

- README.md: the table of papers with their verdicts (between the ``papers:start``/``papers:end`` markers);
- src/icml25/<slug>/README.md: the first line, ``> **Verdict: ...**``, from the paper's ``verdict.json``.

Record verdicts first with ``icml25 report --out reports --record`` (a report of a larger scale, or a newer one of
the same scale, replaces the recorded verdict).
"""

import re
from pathlib import Path

from icml25.core.registry import PACKAGE_ROOT, list_reproductions
from icml25.core.verdict import recorded_verdict
from icml25.run.cli import papers_markdown

VERDICT_PREFIX = "> **Verdict:"


def verdict_line(slug: str) -> str:
    """The first line of a paper's README."""
    v = recorded_verdict(slug)
    if v is None:
        return (f"{VERDICT_PREFIX} not run yet** — run `icml25 reproduce {slug}` and `icml25 report --record` "
                "(see [how verdicts are computed](../core/verdict.py))")
    return (f"{VERDICT_PREFIX} {v.verdict}** — ({v.context()}): {v.headline_text()} "
            "(headline claims; [how verdicts are computed](../core/verdict.py))")


def main() -> None:
    root = Path(__file__).resolve().parents[1]
    path = root / "README.md"
    text = path.read_text(encoding="utf-8")
    new = re.sub(r"(<!-- papers:start[^>]*-->\n).*?(\n<!-- papers:end -->)",
                 lambda m: m.group(1) + papers_markdown() + m.group(2), text, flags=re.S)
    path.write_text(new, encoding="utf-8")
    print("README.md table updated" if new != text else "README.md table already current")
    for r in list_reproductions():
        readme = PACKAGE_ROOT / r.slug / "README.md"
        lines = readme.read_text(encoding="utf-8").split("\n")
        line = verdict_line(r.slug)
        if lines and lines[0].startswith(VERDICT_PREFIX):
            changed = lines[0] != line
            lines[0] = line
        else:
            changed = True
            lines = [line, "", *lines]
        if changed:
            readme.write_text("\n".join(lines), encoding="utf-8")
            print(f"{r.slug}: verdict line updated")


if __name__ == "__main__":
    main()
