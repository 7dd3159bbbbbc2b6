"""Regenerate ``countries_facts.jsonl`` from the ``countryinfo`` PyPI package (not imported by icml25).

    pip install countryinfo==1.0.1 && python src/icml25/croq/data/knowledge/generate.py

Keeps the countries with a capital, a region (continent), a demonym and French/Spanish names; one JSON object a
line, sorted by country name.
"""

import json
from pathlib import Path

import countryinfo

rows = []
for c in countryinfo.all_countries():
    tr = c.translations() or {}
    row = {"country": c.name(), "capital": c.capital(), "continent": c.region(), "demonym": c.demonym(),
           "name_fr": tr.get("fr"), "name_es": tr.get("es")}
    if all(isinstance(v, str) and v.strip() for v in row.values()):
        rows.append({k: v.strip() for k, v in row.items()})
rows.sort(key=lambda r: r["country"])
out = Path(__file__).with_name("countries_facts.jsonl")
out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
print(len(rows), "countries ->", out)
