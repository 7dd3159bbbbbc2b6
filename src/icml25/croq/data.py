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
from pathlib import Path
from typing import Any

import numpy as np

from icml25.core.data import resolve_data
from icml25.core.files import (
    FileFormatError,
    check_file,
    parse_number,
    read_csv,
    read_json,
    read_jsonl,
    read_text,
    snippet,
)

from .mcq import LETTERS, MCQ

__all__ = ["build_mcq", "load_mmlu_redux", "load_truthfulqa", "load_toolalpaca", "load_countries",
           "load_country_facts", "SHIPPED_MMLU_SUBJECTS", "ALL_MMLU_SUBJECTS", "DATASETS", "KNOWLEDGE_SETS"]

#: factual MCQ sets built from the shipped countryinfo table (not in the paper; knowledge small models have)
KNOWLEDGE_SETS = ("capitals", "continents", "demonyms", "translations")
DATASETS = ("mmlu", "truthfulqa", "toolalpaca", "countries", *KNOWLEDGE_SETS)
_URL = "https://raw.githubusercontent.com/"
#: the upstream commits of the shipped copies (data/SOURCE.md), so that a download is the file hashed in SHA256
_MMLU_REDUX = "aryopg/mmlu-redux/4563cfa79b659d76716e5b6019f46bba85fa02db/"
_TOOLALPACA = "tangqiaoyu/ToolAlpaca/189069998d64a7baf1b4a1c3c4b2e75eb9d05532/"
#: SHA-256 of the files shipped in data/ that are unchanged copies of their download: a download is checked against
#: them (TruthfulQA is a copy of a copy, countries a conversion, the LLaMA-13B files come from a zip: not pinned)
SHA256 = {
    "mmlu_redux/mmlu_anatomy.csv": "e73da98de4080a67d7bf832d12b5cf5b1156aa7aaec3d44b1a20b730bc5782a8",
    "mmlu_redux/mmlu_business_ethics.csv": "2c732b4bf5430225bfe4329d3aaa445917c3dc961942d5bd5336555c5fce86a9",
    "mmlu_redux/mmlu_clinical_knowledge.csv": "37ec6e0d612370a88f69a3a560f1d43877f084ea819dc8155a622ae75d7a82b0",
    "mmlu_redux/mmlu_college_chemistry.csv": "5d7ee98e59a528e1c77960a226ca11c20ddbdd7039c86584f227e74597785664",
    "mmlu_redux/mmlu_college_computer_science.csv": "f06bcec202a789d98d26689d9667fdcd5fa07c860376f3fb3da85c851f046c92",
    "mmlu_redux/mmlu_college_medicine.csv": "2a0f750982849d6f30c7edc9731df61f7f84cd2cf4d9c855e8e4e35b53688f76",
    "mmlu_redux/mmlu_computer_security.csv": "03ac8a43d2407e274116988767399909b89bc1f16f94f59df9840fa659d4ea22",
    "mmlu_redux/mmlu_formal_logic.csv": "0d5a15ed033a7006a7d790fef09e6e3c6c63d46c4a8d7b979d1afd63032a361a",
    "mmlu_redux/mmlu_high_school_biology.csv": "98204af59693f3497f594ce9689e7adadf82a5c77ed79d07fe3f794554179e42",
    "mmlu_redux/mmlu_high_school_computer_science.csv":
        "21c739d43b30b59c2d3cc3ec15048eee22bfac3a02bb3bae2b34ceb7fac1339b",
    "mmlu_redux/mmlu_machine_learning.csv": "7350cb93c40e3ba7ccaff868a918f41d9fa6fd392a64a13697c9647998613ece",
    "mmlu_redux/mmlu_management.csv": "6b782b960b55334aa0088153f96f7c2dfb5a625bfc5ebcce076d5d310620d2f0",
    "mmlu_redux/mmlu_marketing.csv": "4efc6eab77670e52914144a7cbba7b553e4c8b29f10e17c1257a18bb3c0e2c71",
    "mmlu_redux/mmlu_professional_accounting.csv": "123f075cae47b09feaa7160cd8069e2d525cedab882e6a8ae94360aa19119f33",
    "mmlu_redux/mmlu_professional_medicine.csv": "3c024ec4ebd67683b288068f40221b9caf222ef944f24e637652fd2e8776760a",
    "mmlu_redux/mmlu_public_relations.csv": "7f4d9b17365085e946a517ad5abf75153d89dd7858ca3909803a329f5baee1d2",
    "toolalpaca/eval_real.json": "86d1392c786060e00dd6feaa963d8a87660e3042380b0abbd8ccad2b931e2778",
    "toolalpaca/eval_simulated.json": "17085ffefae0a0e15c1d2d564263063932d692011edf27ce8ae3d3803432ba08",
}
#: MMLU-Redux subjects shipped with the package (the 16 subjects of the LLaMA-13B probability files)
SHIPPED_MMLU_SUBJECTS = (
    "anatomy", "business_ethics", "clinical_knowledge", "college_chemistry", "college_computer_science",
    "college_medicine", "computer_security", "formal_logic", "high_school_biology", "high_school_computer_science",
    "machine_learning", "management", "marketing", "professional_accounting", "professional_medicine",
    "public_relations",
)
#: all 57 MMLU subjects (MMLU-Redux has 100 questions each); the 41 not shipped are read from the cache or downloaded
#: from the MMLU-Redux repository with ``--allow-download`` (``build_mcq("mmlu", ..., subjects="all")``)
ALL_MMLU_SUBJECTS = (
    "abstract_algebra", "anatomy", "astronomy", "business_ethics", "clinical_knowledge", "college_biology",
    "college_chemistry", "college_computer_science", "college_mathematics", "college_medicine", "college_physics",
    "computer_security", "conceptual_physics", "econometrics", "electrical_engineering", "elementary_mathematics",
    "formal_logic", "global_facts", "high_school_biology", "high_school_chemistry", "high_school_computer_science",
    "high_school_european_history", "high_school_geography", "high_school_government_and_politics",
    "high_school_macroeconomics", "high_school_mathematics", "high_school_microeconomics", "high_school_physics",
    "high_school_psychology", "high_school_statistics", "high_school_us_history", "high_school_world_history",
    "human_aging", "human_sexuality", "international_law", "jurisprudence", "logical_fallacies", "machine_learning",
    "management", "marketing", "medical_genetics", "miscellaneous", "moral_disputes", "moral_scenarios", "nutrition",
    "philosophy", "prehistory", "professional_accounting", "professional_law", "professional_medicine",
    "professional_psychology", "public_relations", "security_studies", "sociology", "us_foreign_policy", "virology",
    "world_religions",
)


_ENCODINGS = ("utf-8", "cp1252")  # the releases are UTF-8; a Windows re-save is read as cp1252


def _user_file(path: Path | None, what: str) -> Path | None:
    """A user-given file checked up front (missing or a directory: one line naming it and what was expected)."""
    return None if path is None else check_file(path, what)


def load_mmlu_redux(subjects: Any = None, path: str | Path | None = None, only_ok: bool = True) -> list[dict]:
    """Read MMLU-Redux questions.

    Parameters
    ----------
    subjects : list of str, optional
        Subjects to read (default: :data:`SHIPPED_MMLU_SUBJECTS`; ``"all"``: :data:`ALL_MMLU_SUBJECTS`).
    path : path-like, optional
        A folder holding ``mmlu_<subject>.csv`` files (e.g. the full 57-subject release).
    only_ok : bool
        Keep only items whose ``error_type`` is ``ok`` (case-insensitive).

    Returns
    -------
    list of dict
        ``{"subject", "question", "choices" (list of 4 str), "answer" (int)}``.

    Raises
    ------
    FileNotFoundError, ValueError
        A missing file, or a malformed one (one line naming the file and the line): a row with the wrong number of
        fields, or an item marked ``ok`` whose ``choices`` (a Python list literal) or ``answer`` (an index into it)
        cannot be read. Items MMLU-Redux marks as erroneous are skipped unread (``only_ok``) or skipped when they do
        not parse.
    """
    subjects = list(SHIPPED_MMLU_SUBJECTS if subjects is None else ALL_MMLU_SUBJECTS if subjects == "all"
                    else subjects)
    rows: list[dict] = []
    what = ("an MMLU-Redux CSV with columns question, choices (a list literal), answer (an index), error_type, "
            "separated by ';' or ','")
    for subj in subjects:
        fname = f"mmlu_redux/mmlu_{subj}.csv"
        user = _user_file(None if path is None else Path(path) / f"mmlu_{subj}.csv", what)
        p = resolve_data("croq", fname, path=user, url=_URL + _MMLU_REDUX + fname, sha256=SHA256.get(fname))
        first = read_text(p, what, _ENCODINGS).split("\n", 1)[0]
        delim = ";" if first.count(";") > first.count(",") else ","
        header, table = read_csv(p, what, delimiter=delim, required=("question", "choices", "answer"),
                                 encodings=_ENCODINGS)
        for line, fields in table:
            r = dict(zip(header, fields))
            flagged = str(r.get("error_type", "")).strip().lower() != "ok"
            if only_ok and flagged:
                continue
            try:
                choices = [str(c) for c in ast.literal_eval(r["choices"])]
                ans = int(parse_number(r["answer"], p, line, "answer", integer=True))
                if len(choices) < 2 or not 0 <= ans < len(choices):
                    raise ValueError(f"answer {ans} of {len(choices)} choices")
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
                if flagged:
                    continue
                raise FileFormatError(f"{p}:{line}: unreadable item ({str(exc)[:60]}); expected choices as a list "
                                      f"literal of >= 2 options and answer an index into it") from None
            rows.append({"subject": subj, "question": r["question"], "choices": choices, "answer": ans})
    return rows


def load_truthfulqa(path: str | Path | None = None) -> list[dict]:
    """Read TruthfulQA: ``{"category", "question", "best", "incorrect" (list of str)}`` per row.

    A malformed file (wrong delimiter, a missing column or field, not UTF-8/cp1252 text) raises ``ValueError`` naming
    the file and the line.
    """
    what = "TruthfulQA.csv with columns Category, Question, Best Answer, Incorrect Answers"
    p = resolve_data("croq", "truthfulqa/TruthfulQA.csv", path=_user_file(path, what),
                     url=_URL + "sylinrl/TruthfulQA/main/TruthfulQA.csv")
    header, table = read_csv(p, what, required=("Category", "Question", "Best Answer", "Incorrect Answers"),
                             encodings=_ENCODINGS)
    out = []
    for _, fields in table:
        r = dict(zip(header, fields))
        inc = [s.strip() for s in r["Incorrect Answers"].split(";") if s.strip()]
        out.append({"category": r["Category"], "question": r["Question"], "best": r["Best Answer"].strip(),
                    "incorrect": inc})
    return out


def _api(api: Any, p: Path, i: int, what: str) -> dict:
    """One ToolAlpaca API record, checked: name, functions (name -> first description line), (instruction,
    golden first action) items."""
    if not isinstance(api, dict):
        raise FileFormatError(f"{p}: item {i} is a JSON {type(api).__name__}; expected {what}")
    missing = [k for k in ("Name", "Function_Description", "Instructions", "Golden_Answers") if k not in api]
    if missing:
        raise FileFormatError(f"{p}: API {i} ({str(api.get('Name', '?'))[:40]!r}) lacks {missing[0]!r}; expected "
                              f"{what}")
    funcs = api["Function_Description"]
    try:
        if isinstance(funcs, str):
            funcs = ast.literal_eval(funcs)
        if not isinstance(funcs, dict):
            raise ValueError(f"a {type(funcs).__name__}")
        if not isinstance(api["Instructions"], list) or not isinstance(api["Golden_Answers"], list):
            raise ValueError("Instructions and Golden_Answers must be lists")
        gold = [g[0].get("Action") if isinstance(g, list) and g and isinstance(g[0], dict) else None
                for g in api["Golden_Answers"]]
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
        raise FileFormatError(f"{p}: API {i} ({str(api['Name'])[:40]!r}) is unreadable ({str(exc)[:60]}); "
                              f"expected {what}") from None
    funcs = {k: str(v).split("\n", 1)[0].strip() for k, v in funcs.items() if k != "components"}
    items = [(instr, act) for instr, act in zip(api["Instructions"], gold) if act in funcs]
    return {"name": api["Name"], "functions": funcs, "items": items}


def load_toolalpaca(path: str | Path | None = None) -> list[dict]:
    """Read the ToolAlpaca evaluation APIs (real + simulated): name, functions (name -> description), instructions
    and golden first actions.

    ``path`` is a folder holding ``eval_real.json`` and ``eval_simulated.json``; a missing or malformed file raises
    (``FileNotFoundError``/``ValueError``, one line naming it).
    """
    what = ("a ToolAlpaca eval JSON: a list of APIs with Name, Function_Description, Instructions and "
            "Golden_Answers")
    apis = []
    files = ["toolalpaca/eval_real.json", "toolalpaca/eval_simulated.json"]
    paths = [_user_file(Path(path) / Path(f).name, what) for f in files] if path is not None else [None, None]
    for f, up in zip(files, paths):
        p = resolve_data("croq", f, path=up, url=_URL + _TOOLALPACA + "data/" + Path(f).name, sha256=SHA256[f])
        data = read_json(p, what, encodings=_ENCODINGS)
        if not isinstance(data, list) or not data:
            raise FileFormatError(f"{p}: a JSON {type(data).__name__} of {len(data)} items; expected {what}")
        apis += [_api(api, p, i, what) for i, api in enumerate(data)]
    return apis


def load_countries(path: str | Path | None = None) -> list[dict]:
    """Read the country table: ``{"country", "capital", "continent", ...}`` per country (168 countries).

    Every line must be a JSON object with non-empty ``country``, ``capital`` and ``continent`` strings; otherwise
    ``ValueError`` names the file and the line.
    """
    what = "a JSON-lines country table with country, capital and continent strings"
    p = resolve_data("croq", "countries/countries.jsonl", path=_user_file(path, what),
                     url=_URL + "edixiong/task-superposition/main/util/")
    rows = []
    for line, r in read_jsonl(p, what, required=("country", "capital", "continent"), encodings=_ENCODINGS):
        if not all(isinstance(r.get(k), str) and r[k].strip() for k in ("country", "capital", "continent")):
            raise FileFormatError(f"{p}:{line}: country table row lacks a country, capital or continent "
                                  f"({snippet(r)}); expected non-empty strings")
        rows.append(r)
    return rows


_FACT_KEYS = ("country", "capital", "continent", "demonym", "name_fr", "name_es")


def load_country_facts(path: str | Path | None = None) -> list[dict]:
    """Read the shipped country-facts table (235 countries from the ``countryinfo`` package, MIT): one dict per
    country with non-empty ``country``, ``capital``, ``continent``, ``demonym``, ``name_fr`` and ``name_es``."""
    what = "a JSON-lines table with country, capital, continent, demonym, name_fr and name_es strings"
    p = resolve_data("croq", "knowledge/countries_facts.jsonl", path=_user_file(path, what))
    rows = []
    for line, r in read_jsonl(p, what, required=_FACT_KEYS, encodings=_ENCODINGS):
        if not all(isinstance(r.get(k), str) and r[k].strip() for k in _FACT_KEYS):
            raise FileFormatError(f"{p}:{line}: country-facts row lacks one of {_FACT_KEYS} ({snippet(r)})")
        rows.append(r)
    return rows


def _knowledge_items(dataset: str, rows: list[dict]) -> list[tuple[str, str, list[str], list[str], dict]]:
    """(question, correct, near distractors, far distractors, meta) of a factual set; near = same continent (or,
    for continents, every other continent)."""
    items = []
    conts = sorted({r["continent"] for r in rows})
    n_dem: dict[str, int] = {}
    for r in rows:
        n_dem[r["demonym"].lower()] = n_dem.get(r["demonym"].lower(), 0) + 1
    for r in rows:
        same = [o for o in rows if o["continent"] == r["continent"] and o is not r]
        other = [o for o in rows if o["continent"] != r["continent"]]
        meta = {"country": r["country"], "continent": r["continent"]}
        if dataset == "capitals":
            items.append((f"What is the capital of {r['country']}?", r["capital"], [o["capital"] for o in same],
                          [o["capital"] for o in other], {**meta, "direction": "country->capital"}))
            items.append((f"{r['capital']} is the capital of which country?", r["country"],
                          [o["country"] for o in same], [o["country"] for o in other],
                          {**meta, "direction": "capital->country"}))
        elif dataset == "continents":
            wrong = [c for c in conts if c != r["continent"]]
            items.append((f"On which continent is {r['country']}?", r["continent"], wrong, [],
                          {**meta, "direction": "country->continent"}))
            items.append((f"On which continent is the city of {r['capital']}?", r["continent"], wrong, [],
                          {**meta, "direction": "capital->continent"}))
        elif dataset == "demonyms":
            if n_dem[r["demonym"].lower()] > 1:  # shared demonym ("American"): the question would be ambiguous
                continue
            items.append((f"What is a person from {r['country']} called?", r["demonym"],
                          [o["demonym"] for o in same], [o["demonym"] for o in other],
                          {**meta, "direction": "country->demonym"}))
            items.append((f"Which country are the {r['demonym']} people from?", r["country"],
                          [o["country"] for o in same], [o["country"] for o in other],
                          {**meta, "direction": "demonym->country"}))
        else:  # translations: only names that differ from the English one (copying is not knowledge)
            for key, lang in (("name_fr", "French"), ("name_es", "Spanish")):
                if r[key].lower() != r["country"].lower():
                    items.append((f"What is the {lang} name of {r['country']}?", r[key], [o[key] for o in same],
                                  [o[key] for o in other], {**meta, "direction": f"country->{key}"}))
    return items


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
    dataset : {"mmlu", "truthfulqa", "toolalpaca", "countries", "capitals", "continents", "demonyms", "translations"}
        The last four are factual sets from the shipped countryinfo table (:data:`KNOWLEDGE_SETS`; not in the
        paper): capitals (country <-> capital, 470 questions), continents (country or capital -> continent, 470,
        at most 5 options), demonyms (country <-> demonym, 426), translations (French / Spanish country names
        that differ from the English one, 313).
    n_options : int
        Options per question, 2..15 (the paper uses 4, 10 and 15).
    seed : int
        Seed of the distractor draws and the option shuffle.
    path : path-like, optional
        Folder (MMLU, ToolAlpaca) or file (TruthfulQA) with the user's copy of the data.
    subjects : list of str or "all", optional
        MMLU subjects (default: the 16 shipped; ``"all"``: the 57 of MMLU, the rest downloaded with
        ``--allow-download``).

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
    elif dataset in KNOWLEDGE_SETS:
        for question, correct, near, far, meta in _knowledge_items(dataset, load_country_facts(path)):
            opts = _add_unique([correct], near, n_options, rng)
            opts = _add_unique(opts, far, n_options, rng)
            q = _finish(question, correct, opts, n_options, rng, meta)
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
