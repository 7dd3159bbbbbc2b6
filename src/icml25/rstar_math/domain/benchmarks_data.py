"""Real benchmark files in the official format and GSM8K calculator annotations as gold code trajectories."""

from __future__ import annotations

import re
from pathlib import Path

from icml25.core.data import resolve_data
from icml25.core.files import FileFormatError, check_file, read_json, read_jsonl

__all__ = ["load_benchmark", "load_gsm8k_annotated", "gsm8k_code_steps", "BENCHMARK_FILES"]

#: branch rStar-math at the shipped copies' commit (data/SOURCE.md), so that a download is the file hashed below
_BASE = "https://raw.githubusercontent.com/microsoft/rStar/b3c1846185f4af877e1e441a67c4c5fcfed9d442/eval_data/"
_GSM8K_URL = ("https://raw.githubusercontent.com/openai/grade-school-math/3101c7d5072418e28b9008a6636bde82a006892c/"
              "grade_school_math/data/test.jsonl")
BENCHMARK_FILES = {"math500": "math500_test.json", "gsm8k": "GSM8K_test.json", "aime2024": "aime2024_test.json",
                   "math": "MATH_test.json", "amc23": "amc23_test.json", "olympiadbench": "olympiadbench_test.json",
                   "collegemath": "collegemath_test.json", "gaokao2023en": "gaokao2023en_test.json",
                   "omni": "omni_test.json"}
#: SHA-256 of the files shipped in data/ (unchanged copies of the downloads): a download is checked against them
SHA256 = {"math500_test.json": "f46b40fed502b874bbf85cf1410fa5de6e18fedf7907f2e47a691e2e47342676",
          "GSM8K_test.json": "063e68ba7f84cfdbea2c135cabde56e1ada0d3bd6ad390d848fe5b5cfe7d18e5",
          "aime2024_test.json": "0accce80b9de28204d3938d8f24c86f26dd26f60a9ede8e395da7053947b4ee0",
          "gsm8k_test.jsonl": "3730d312f6e3440559ace48831e51066acaca737f6eabec99bccb9e4b3c39d14"}
_ANN = re.compile(r"<<([^=<>]*)=([^<>]*)>>")


def load_benchmark(name: str, path: str | Path | None = None) -> list[dict]:
    """Load an evaluation set in the official format (list of ``{"index", "question", "answer"}``).

    Parameters
    ----------
    name : str
        One of ``BENCHMARK_FILES`` (math500, gsm8k, aime2024 ship with the package; the others need ``path`` or
        a download the user allows).
    path : path, optional
        A local file in the same format. A missing or malformed file raises ``FileNotFoundError``/``ValueError``
        (one line naming the file and, where there is one, the line).
    """
    if name not in BENCHMARK_FILES:
        raise ValueError(f"name must be one of {sorted(BENCHMARK_FILES)}, got {name!r}")
    what = "a JSON list of {'question', 'answer'} records (official eval format)"
    if path is not None:
        check_file(path, what)
    f = resolve_data("rstar_math", BENCHMARK_FILES[name], path=path, url=_BASE + BENCHMARK_FILES[name],
                     sha256=SHA256.get(BENCHMARK_FILES[name]))
    data = read_json(f, what)  # not JSON, not UTF-8, NaN, empty: one line naming the file and the line
    if not isinstance(data, list) or not data:
        raise FileFormatError(f"{f}: expected {what}, got a JSON {type(data).__name__}")
    for i, d in enumerate(data):
        missing = [k for k in ("question", "answer") if not isinstance(d, dict) or k not in d]
        if missing:
            raise FileFormatError(f"{f}: record {i} lacks {missing[0]!r}; expected {what}")
    return data


def load_gsm8k_annotated(path: str | Path | None = None) -> list[dict]:
    """GSM8K test problems with step solutions (``question``, ``solution``, ``answer`` after ``####``)."""
    what = "GSM8K JSON lines {'question', 'answer'} with the final answer after '####'"
    if path is not None:
        check_file(path, what)
    f = resolve_data("rstar_math", "gsm8k_test.jsonl", path=path, url=_GSM8K_URL, sha256=SHA256["gsm8k_test.jsonl"])
    out = []
    for no, d in read_jsonl(f, what, required=("question", "answer")):
        if not isinstance(d["answer"], str) or not isinstance(d["question"], str) or "####" not in d["answer"]:
            raise FileFormatError(f"{f}:{no}: the answer has no '####' final answer; expected {what}")
        sol, _, ans = d["answer"].rpartition("####")
        out.append({"question": d["question"], "solution": sol.strip(), "answer": ans.strip().replace(",", "")})
    return out


def gsm8k_code_steps(solution: str) -> list[str]:
    """Turn each ``<<expr=value>>`` annotation into one code step (official step format, real-Python style).

    Step ``i`` is ``"# <sentence>\\nv{i} = <expr>\\n<end_of_step>"``; the last step prints the last variable
    and ends with ``<end_of_code>``; the first step opens with ``<code>``. Returns [] when there is no
    annotation.
    """
    from .._validation import check_text

    check_text(solution, "solution")
    steps = []
    k = 0
    for line in solution.splitlines():
        anns = _ANN.findall(line)
        comment = _ANN.sub("", line).strip().replace("\n", " ")
        for expr, _ in anns:
            k += 1
            expr = expr.replace(",", "").replace("x", "*").replace("÷", "/").replace("^", "**").strip()
            steps.append(f"\n# {comment}\nv{k} = {expr}\n<end_of_step>")
    if not steps:
        return []
    steps[0] = "<code>" + steps[0]
    steps.append(f"\n# Now print the final answer\nprint(v{k})\n<end_of_code>")
    return steps
