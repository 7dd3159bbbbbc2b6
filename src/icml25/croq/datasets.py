"""Builders of 4/10/15-option MCQs from MMLU-Redux, TruthfulQA and ToolAlpaca (spec §5), seeded.

Distractor rules:
- MMLU: the question's own options, then options of other questions of the same subject;
- TruthfulQA: correct = Best Answer; distractors = its Incorrect Answers, then incorrect answers of other questions
  of the same Category;
- ToolAlpaca: question = instruction; correct = first golden Action; distractors = other functions of the same API,
  then functions of other APIs; options rendered ``"name: one-line description"``;
- countries (a factual MCQ small models know, not in the paper): "What is the capital of <country>?"; correct =
  its capital; distractors = capitals of other countries of the same continent first, then of other continents.
Extra distractors never repeat (case-insensitively) an option already present, so the answer text is never
duplicated. Options are shuffled and the answer index stored.
"""

from __future__ import annotations

import ast
import csv
import io
import json
from pathlib import Path
from typing import Any

import numpy as np

from icml25.core.data import resolve_data

from .mcq import LETTERS, MCQ

__all__ = ["build_mcq", "load_mmlu_redux", "load_truthfulqa", "load_toolalpaca", "load_countries",
           "SHIPPED_MMLU_SUBJECTS", "DATASETS"]

DATASETS = ("mmlu", "truthfulqa", "toolalpaca", "countries")
_URL = "https://raw.githubusercontent.com/"
#: MMLU-Redux subjects shipped with the package (the 16 subjects of the LLaMA-13B probability files)
SHIPPED_MMLU_SUBJECTS = (
    "anatomy", "business_ethics", "clinical_knowledge", "college_chemistry", "college_computer_science",
    "college_medicine", "computer_security", "formal_logic", "high_school_biology", "high_school_computer_science",
    "machine_learning", "management", "marketing", "professional_accounting", "professional_medicine",
    "public_relations",
)


def _read_text(path: Path) -> str:
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("cp1252")


def load_mmlu_redux(subjects: Any = None, path: str | Path | None = None, only_ok: bool = True) -> list[dict]:
    """Read MMLU-Redux questions.

    Parameters
    ----------
    subjects : list of str, optional
        Subjects to read (default: :data:`SHIPPED_MMLU_SUBJECTS`).
    path : path-like, optional
        A folder holding ``mmlu_<subject>.csv`` files (e.g. the full 57-subject release).
    only_ok : bool
        Keep only items whose ``error_type`` is ``ok`` (case-insensitive).

    Returns
    -------
    list of dict
        ``{"subject", "question", "choices" (list of 4 str), "answer" (int)}``.
    """
    subjects = list(SHIPPED_MMLU_SUBJECTS if subjects is None else subjects)
    rows: list[dict] = []
    for subj in subjects:
        fname = f"mmlu_redux/mmlu_{subj}.csv"
        p = resolve_data("croq", fname, path=None if path is None else Path(path) / f"mmlu_{subj}.csv",
                         url=_URL + "aryopg/mmlu-redux/main/" + fname)
        text = _read_text(p)
        delim = ";" if text.split("\n", 1)[0].count(";") > text.split("\n", 1)[0].count(",") else ","
        for r in csv.DictReader(io.StringIO(text), delimiter=delim):
            if only_ok and str(r.get("error_type", "")).strip().lower() != "ok":
                continue
            try:
                choices = [str(c) for c in ast.literal_eval(r["choices"])]
                ans = int(r["answer"])
            except (ValueError, SyntaxError, KeyError):
                continue
            if len(choices) >= 2 and 0 <= ans < len(choices):
                rows.append({"subject": subj, "question": r["question"], "choices": choices, "answer": ans})
    return rows


def load_truthfulqa(path: str | Path | None = None) -> list[dict]:
    """Read TruthfulQA: ``{"category", "question", "best", "incorrect" (list of str)}`` per row."""
    p = resolve_data("croq", "truthfulqa/TruthfulQA.csv", path=path,
                     url=_URL + "sylinrl/TruthfulQA/main/TruthfulQA.csv")
    out = []
    for r in csv.DictReader(io.StringIO(_read_text(p))):
        inc = [s.strip() for s in r["Incorrect Answers"].split(";") if s.strip()]
        out.append({"category": r["Category"], "question": r["Question"], "best": r["Best Answer"].strip(),
                    "incorrect": inc})
    return out


def load_toolalpaca(path: str | Path | None = None) -> list[dict]:
    """Read the ToolAlpaca evaluation APIs (real + simulated): name, functions (name -> description), instructions
    and golden first actions."""
    apis = []
    files = ["toolalpaca/eval_real.json", "toolalpaca/eval_simulated.json"]
    paths = [Path(path) / Path(f).name for f in files] if path is not None else [None, None]
    for f, up in zip(files, paths):
        p = resolve_data("croq", f, path=up, url=_URL + "tangqiaoyu/ToolAlpaca/main/data/" + Path(f).name)
        for api in json.loads(_read_text(p)):
            funcs = api["Function_Description"]
            if isinstance(funcs, str):
                funcs = ast.literal_eval(funcs)
            funcs = {k: str(v).split("\n", 1)[0].strip() for k, v in funcs.items() if k != "components"}
            items = []
            for instr, gold in zip(api["Instructions"], api["Golden_Answers"]):
                if gold and gold[0].get("Action") in funcs:
                    items.append((instr, gold[0]["Action"]))
            apis.append({"name": api["Name"], "functions": funcs, "items": items})
    return apis


def load_countries(path: str | Path | None = None) -> list[dict]:
    """Read the country table: ``{"country", "capital", "continent", ...}`` per country (168 countries)."""
    p = resolve_data("croq", "countries/countries.jsonl", path=path,
                     url=_URL + "edixiong/task-superposition/main/util/")
    rows = [json.loads(line) for line in _read_text(p).splitlines() if line.strip()]
    for i, r in enumerate(rows):
        if not all(isinstance(r.get(k), str) and r[k].strip() for k in ("country", "capital", "continent")):
            raise ValueError(f"country table row {i} lacks a country, capital or continent: {r!r:.80}")
    return rows


def _add_unique(options: list[str], pool: list[str], n_options: int, rng: np.random.Generator) -> list[str]:
    seen = {o.strip().lower() for o in options}
    for j in rng.permutation(len(pool)):
        if len(options) >= n_options:
            break
        cand = pool[int(j)]
        key = cand.strip().lower()
        if key and key not in seen:
            options.append(cand)
            seen.add(key)
    return options


def _finish(question: str, correct: str, options: list[str], n_options: int, rng: np.random.Generator,
            meta: dict) -> MCQ | None:
    if len(options) < n_options:
        return None
    order = rng.permutation(n_options)
    shuffled = tuple(options[int(i)] for i in order)
    return MCQ(question, shuffled, int(np.flatnonzero(order == 0)[0]), meta)


def build_mcq(dataset: str, n_options: int = 4, seed: int = 0, path: str | Path | None = None,
              subjects: Any = None) -> list[MCQ]:
    """Build seeded ``n_options``-choice questions from one of the real data sets (spec §5).

    Parameters
    ----------
    dataset : {"mmlu", "truthfulqa", "toolalpaca", "countries"}
    n_options : int
        Options per question, 2..15 (the paper uses 4, 10 and 15).
    seed : int
        Seed of the distractor draws and the option shuffle.
    path : path-like, optional
        Folder (MMLU, ToolAlpaca) or file (TruthfulQA) with the user's copy of the data.
    subjects : list of str, optional
        MMLU subjects.

    Returns
    -------
    list of MCQ
        Options shuffled; ``answer`` is the index of the correct option; the correct text occurs once.
        Questions that cannot be filled to ``n_options`` distinct options are dropped.
    """
    if dataset not in DATASETS:
        raise ValueError(f"dataset must be one of {DATASETS}, got {dataset!r}")
    if not isinstance(n_options, (int, np.integer)) or not 2 <= n_options <= len(LETTERS):
        raise ValueError(f"n_options must be an int in 2..{len(LETTERS)}, got {n_options!r}")
    rng = np.random.default_rng(seed)
    out: list[MCQ] = []
    if dataset == "mmlu":
        rows = load_mmlu_redux(subjects, path)
        by_subj: dict[str, list[str]] = {}
        for r in rows:
            by_subj.setdefault(r["subject"], []).extend(r["choices"])
        for r in rows:
            correct = r["choices"][r["answer"]]
            own = [c for i, c in enumerate(r["choices"]) if i != r["answer"]]
            opts = _add_unique([correct], own, min(n_options, 1 + len(own)), rng)
            opts = _add_unique(opts, by_subj[r["subject"]], n_options, rng)
            q = _finish(r["question"], correct, opts, n_options, rng, {"subject": r["subject"]})
            if q is not None:
                out.append(q)
    elif dataset == "truthfulqa":
        rows = load_truthfulqa(path)
        by_cat: dict[str, list[str]] = {}
        for r in rows:
            by_cat.setdefault(r["category"], []).extend(r["incorrect"])
        for r in rows:
            opts = _add_unique([r["best"]], r["incorrect"], n_options, rng)
            opts = _add_unique(opts, by_cat[r["category"]], n_options, rng)
            q = _finish(r["question"], r["best"], opts, n_options, rng, {"category": r["category"]})
            if q is not None:
                out.append(q)
    elif dataset == "countries":
        rows = load_countries(path)
        for r in rows:
            same = [o["capital"] for o in rows if o["continent"] == r["continent"] and o is not r]
            other = [o["capital"] for o in rows if o["continent"] != r["continent"]]
            opts = _add_unique([r["capital"]], same, n_options, rng)
            opts = _add_unique(opts, other, n_options, rng)
            q = _finish(f"What is the capital of {r['country']}?", r["capital"], opts, n_options, rng,
                        {"continent": r["continent"], "country": r["country"]})
            if q is not None:
                out.append(q)
    else:
        apis = load_toolalpaca(path)
        for a_i, api in enumerate(apis):
            render = {name: f"{name}: {desc}" for name, desc in api["functions"].items()}
            others = [f"{n}: {d}" for b_i, b in enumerate(apis) if b_i != a_i for n, d in b["functions"].items()]
            for instr, action in api["items"]:
                same = [v for k, v in render.items() if k != action]
                opts = _add_unique([render[action]], same, n_options, rng)
                opts = _add_unique(opts, others, n_options, rng)
                q = _finish(instr, render[action], opts, n_options, rng, {"api": api["name"]})
                if q is not None:
                    out.append(q)
    return out
