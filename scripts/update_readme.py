"""Regenerate the table of papers in README.md from the registry (`make readme`)."""

import re
from pathlib import Path

from icml25.run.cli import papers_markdown

path = Path(__file__).resolve().parents[1] / "README.md"
text = path.read_text(encoding="utf-8")
new = re.sub(r"(<!-- papers:start[^>]*-->\n).*?(\n<!-- papers:end -->)",
             lambda m: m.group(1) + papers_markdown() + m.group(2), text, flags=re.S)
path.write_text(new, encoding="utf-8")
print("README.md table updated" if new != text else "README.md table already current")
