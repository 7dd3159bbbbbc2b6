"""Task families of "Everything Everywhere All at Once" (Xiong et al., ICML 2025): the official settings of the
paper's Figure 2 (built from the official lookup tables) and the synthetic families of the CPU reproduction.

A *task* maps an input to an answer string; a *family* (the paper's "setting") fixes K tasks that share one input
space, how an input is written, and the separator between input and answer. An in-context example reads
``"{input}{sep}{answer}"`` and a query ``"{input}{sep}"`` (paper §2 / official ``tasks.py``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np

from icml25.core.data import shipped_path
from icml25.core.files import FileFormatError, read_json, read_jsonl, read_text
from icml25.core.validation import check_int, check_option

__all__ = ["Task", "TaskFamily", "official_setting", "OFFICIAL_SETTINGS", "synthetic_family", "SYNTHETIC_FAMILIES",
           "load_countries", "load_number_words", "load_words"]

SLUG = "task_superposition"


@dataclass(frozen=True)
class Task:
    """One task: a name and a function from an input to its answer string.

    Examples
    --------
    >>> Task("copyA", lambda x: str(x[0])).fn((3, 5))
    '3'
    """

    name: str
    fn: Callable[[Any], str]

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise TypeError(f"name must be a non-empty string, got {self.name!r}")
        if not callable(self.fn):
            raise TypeError(f"fn must be callable (input -> answer string), got {type(self.fn).__name__}")


@dataclass(frozen=True)
class TaskFamily:
    """K tasks over one input space (the paper's "setting"), with the prompt format.

    Parameters
    ----------
    name : str
        Family name, e.g. ``"country"``.
    tasks : tuple of Task
        The K tasks (K >= 1).
    sample_input : callable
        ``sample_input(rng: numpy.random.Generator) -> input``; draws one input uniformly.
    format_input : callable
        ``format_input(input) -> str``: the input as written in the prompt (e.g. ``"57+66"``).
    sep : str
        Separator between input and answer (``"->"`` or ``"="`` in the official settings).
    joiner : str
        Separator between examples (the official prompt template uses ``"\\n"``).
    distinct_answers : bool
        Queries are drawn until the K answers are pairwise distinct (else a probability is counted twice).
    alphabet : str
        For synthetic families: every character a prompt can contain (the char-level vocabulary).
    description : str
        One line on the family.
    answer_prefix : str
        Written before every answer (e.g. ``" "`` for ``"France -> Paris"`` with ``sep=" ->"``); part of the answer
        strings returned by :meth:`answers` (official settings: ``""``).

    Examples
    --------
    >>> fam = official_setting("country")
    >>> [t.name for t in fam.tasks]
    ['capital', 'continent', 'upper']
    >>> x = {"country": "France", "capital": "Paris", "continent": "Europe"}
    >>> fam.query(x), fam.answers(x)
    ('France->', ['Paris', 'Europe', 'FRANCE'])
    """

    name: str
    tasks: tuple[Task, ...]
    sample_input: Callable[[np.random.Generator], Any]
    format_input: Callable[[Any], str]
    sep: str
    joiner: str = "\n"
    distinct_answers: bool = True
    alphabet: str = ""
    description: str = field(default="", compare=False)
    answer_prefix: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.tasks, tuple) or not self.tasks:
            raise ValueError(f"tasks must be a non-empty tuple of Task, got {self.tasks!r:.80}")
        for t in self.tasks:
            if not isinstance(t, Task):
                raise TypeError(f"tasks must hold Task objects, got {type(t).__name__}")
        names = [t.name for t in self.tasks]
        if len(set(names)) != len(names):
            raise ValueError(f"tasks must have distinct names, got {names}")
        if not isinstance(self.sep, str) or not isinstance(self.joiner, str) or not self.joiner:
            raise TypeError("sep must be a string and joiner a non-empty string")

    @property
    def K(self) -> int:
        """Number of tasks."""
        return len(self.tasks)

    @property
    def task_names(self) -> list[str]:
        """Names of the tasks, in order."""
        return [t.name for t in self.tasks]

    def example(self, x: Any, k: int) -> str:
        """The in-context example ``"{input}{sep}{f_k(input)}"``."""
        return f"{self.format_input(x)}{self.sep}{self.answer_prefix}{self.tasks[k].fn(x)}"

    def query(self, x: Any) -> str:
        """The query ``"{input}{sep}"``."""
        return f"{self.format_input(x)}{self.sep}"

    def answers(self, x: Any) -> list[str]:
        """The K answers ``[f_1(x), ..., f_K(x)]``."""
        return [self.answer_prefix + t.fn(x) for t in self.tasks]

    def subset(self, tasks: Sequence[str | int]) -> TaskFamily:
        """The same family restricted to ``tasks`` (names or indices, in the given order).

        Examples
        --------
        >>> official_setting("AB").subset(["copyA", "add"]).task_names
        ['copyA', 'add']
        """
        if isinstance(tasks, (str, int)) or not isinstance(tasks, Sequence) or not tasks:
            raise ValueError(f"tasks must be a non-empty list of task names or indices, got {tasks!r}")
        chosen = []
        for t in tasks:
            if isinstance(t, (int, np.integer)) and not isinstance(t, bool):
                chosen.append(self.tasks[check_int(t, "tasks", low=0, high=self.K - 1)])
            else:
                check_option(t, "tasks", self.task_names)
                chosen.append(self.tasks[self.task_names.index(t)])
        return TaskFamily(self.name, tuple(chosen), self.sample_input, self.format_input, self.sep, self.joiner,
                          self.distinct_answers, self.alphabet, self.description, self.answer_prefix)


# ---------------------------------------------------------------------------------------------- shipped tables
_LANGUAGES = ("en", "fr", "es", "de", "zh")  # the languages of the add_translate setting


@cache
def load_countries(path: str | None = None) -> tuple[dict[str, str], ...]:
    """The official country table (168 rows: country, capital, continent, currency, name_zh).

    Parameters
    ----------
    path : str, optional
        A user copy of ``countries.jsonl``; default: the copy shipped in the package. A missing or malformed file
        raises ``FileNotFoundError``/``ValueError`` (one line naming the file and the line).

    Examples
    --------
    >>> rows = load_countries()
    >>> len(rows), [r for r in rows if r["country"] == "France"][0]["capital"]
    (168, 'Paris')
    """
    p = path if path is not None else shipped_path(SLUG, "countries.jsonl")
    what = "a JSON-lines country table (country, capital, continent, currency, name_zh)"
    rows = []
    for line, r in read_jsonl(p, what, required=("country", "capital", "continent")):
        if not all(isinstance(r[k], str) and r[k].strip() for k in ("country", "capital", "continent")):
            raise FileFormatError(f"{p}:{line}: empty or non-string country, capital or continent; expected {what}")
        rows.append(r)
    return tuple(rows)


@cache
def load_number_words(path: str | None = None) -> dict[str, tuple[str, ...]]:
    """The official number-word tables: ``{"en"|"fr"|"es"|"de"|"zh": words of 0..999}``.

    A user file (``path``) must hold the five languages with 1000 words each; otherwise ``ValueError`` names it.

    Examples
    --------
    >>> w = load_number_words()
    >>> w["en"][123], w["fr"][123], w["es"][123]
    ('one hundred and twenty-three', 'cent vingt-trois', 'ciento veintitrés')
    """
    p = path if path is not None else shipped_path(SLUG, "number_words_0_999.json")
    what = "a JSON object mapping each of en, fr, es, de, zh to the 1000 number words of 0..999"
    table = read_json(p, what)
    if not isinstance(table, dict):
        raise FileFormatError(f"{p}: a JSON {type(table).__name__}; expected {what}")
    missing = [k for k in _LANGUAGES if k not in table]
    if missing:
        raise FileFormatError(f"{p}: no {missing[0]!r} table (it has {sorted(table)}); expected {what}")
    for k, v in table.items():
        if not isinstance(v, list) or len(v) != 1000 or not all(isinstance(w, str) and w for w in v):
            raise FileFormatError(f"{p}: the {k!r} table is not a list of 1000 non-empty strings; expected {what}")
    return {k: tuple(v) for k, v in table.items()}


@cache
def load_words(path: str | None = None) -> tuple[str, ...]:
    """English nouns for the "word" setting: lower-case alphabetic words of length > 1 whose first and last
    letters differ (the official filter), from the ``wonderwords`` noun list (MIT) shipped in the package (or the
    UTF-8 word-per-line file ``path``; a file without a usable word raises ``ValueError``)."""
    p = path if path is not None else shipped_path(SLUG, "wonderwords_nounlist.txt")
    what = "a UTF-8 text file with one word per line"
    words = [w.strip() for w in read_text(p, what).splitlines()]
    kept = tuple(w for w in words if len(w) > 1 and w.isascii() and w.isalpha() and w.islower() and w[0] != w[-1])
    if not kept:
        raise FileFormatError(f"{p}: no usable word; expected {what} (lower-case ASCII letters, first and last "
                              f"letters different)")
    return kept


# ---------------------------------------------------------------------------------------------- official settings
def _pair(low: int, high: int) -> Callable[[np.random.Generator], tuple[int, int]]:
    def sample(rng: np.random.Generator) -> tuple[int, int]:
        a, b = rng.integers(low, high + 1, size=2)
        return int(a), int(b)

    return sample


def _choice(rows: Sequence[Any]) -> Callable[[np.random.Generator], Any]:
    return lambda rng: rows[int(rng.integers(len(rows)))]


def _add_translate() -> TaskFamily:
    words = load_number_words()

    def lang(code: str) -> Callable[[tuple[int, int]], str]:
        return lambda x: words[code][x[0] + x[1]]

    tasks = (Task("digits", lambda x: str(x[0] + x[1])), Task("en", lang("en")), Task("fr", lang("fr")),
             Task("es", lang("es")), Task("de", lang("de")), Task("zh", lang("zh")))
    return TaskFamily("add_translate", tasks, _pair(10, 99), lambda x: f"{x[0]}+{x[1]}", "->",
                      description="A+B (A, B in [10, 99]) answered in digits or in words of a language")


def _country() -> TaskFamily:
    rows = load_countries()
    tasks = (Task("capital", lambda r: r["capital"]), Task("continent", lambda r: r["continent"]),
             Task("upper", lambda r: r["country"].upper()), Task("currency", lambda r: r["currency"]),
             Task("chinese", lambda r: r["name_zh"]))
    return TaskFamily("country", tasks, _choice(rows), lambda r: r["country"], "->",
                      description="country -> capital / continent / upper-case name / currency / Chinese name")


def _ab() -> TaskFamily:
    tasks = (Task("copyA", lambda x: str(x[0])), Task("copyB", lambda x: str(x[1])),
             Task("add", lambda x: str(x[0] + x[1])))
    return TaskFamily("AB", tasks, _pair(10, 99), lambda x: f"{x[0]}@{x[1]}", "=",
                      description="A@B= answered by A, by B or by A+B")


def _word() -> TaskFamily:
    words = load_words()
    tasks = (Task("first", lambda w: w[0].lower()), Task("last", lambda w: w[-1].lower()),
             Task("first_upper", lambda w: w[0].upper()), Task("last_upper", lambda w: w[-1].upper()))
    return TaskFamily("word", tasks, _choice(words), lambda w: w, "->",
                      description="word -> first / last letter, lower or upper case")


#: setting name -> (builder, the tasks of the paper's Figure 2 setting, official number of examples m)
OFFICIAL_SETTINGS: dict[str, tuple[Callable[[], TaskFamily], tuple[str, ...], int]] = {
    "add_translate": (_add_translate, ("digits", "en", "fr", "es"), 80),
    "country": (_country, ("capital", "continent", "upper"), 60),
    "AB": (_ab, ("copyA", "copyB", "add"), 60),
    "word": (_word, ("first", "last", "first_upper", "last_upper"), 80),
}


def official_setting(name: str, tasks: Sequence[str] | None = None, spaced: bool = False) -> TaskFamily:
    """One of the four settings of the paper's Figure 2, from the official lookup tables.

    Parameters
    ----------
    name : {"add_translate", "country", "AB", "word"}
    tasks : list of str, optional
        Task names to keep (default: the tasks of the Figure-2 setting). ``add_translate`` also offers ``"de"`` and
        ``"zh"``; ``country`` also ``"currency"`` and ``"chinese"`` (other generators of the official code).
    spaced : bool
        Write ``"x -> y"`` (separator ``" ->"``, answers with a leading space) instead of the official ``"x->y"``:
        a prompt format that small models follow more easily (not the paper's).

    Returns
    -------
    TaskFamily

    Examples
    --------
    >>> fam = official_setting("add_translate")
    >>> fam.example((57, 66), 1), fam.answers((57, 66))[2:]
    ('57+66->one hundred and twenty-three', ['cent vingt-trois', 'ciento veintitrés'])
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a setting name (str), got {type(name).__name__}")
    check_option(name, "name", list(OFFICIAL_SETTINGS))
    build, default, _ = OFFICIAL_SETTINGS[name]
    fam = build().subset(list(default) if tasks is None else tasks)
    if not isinstance(spaced, bool):
        raise TypeError(f"spaced must be a bool, got {spaced!r}")
    if spaced:
        fam = TaskFamily(fam.name + "_spaced", fam.tasks, fam.sample_input, fam.format_input, " " + fam.sep.strip(),
                         fam.joiner, fam.distinct_answers, fam.alphabet, fam.description, " ")
    return fam


# ---------------------------------------------------------------------------------------------- synthetic families
_RET_ALPHABET = "abcdefghijklmnop"


def _f_ab() -> TaskFamily:
    tasks = (Task("copyA", lambda x: str(x[0])), Task("copyB", lambda x: str(x[1])),
             Task("add_mod10", lambda x: str((x[0] + x[1]) % 10)))
    return TaskFamily("F-AB", tasks, _pair(0, 9), lambda x: f"{x[0]}{x[1]}", "=", alphabet="0123456789=\n",
                      description="ab= (digits) answered by a, b or (a+b) mod 10 (single-token AB)")


def _index(s: str, i: int) -> str:
    return s[i]


def _sum_mod10(x: tuple[int, int], c: int) -> str:
    return str((x[0] + x[1] + c) % 10)


def _f_ret() -> TaskFamily:
    def sample(rng: np.random.Generator) -> str:
        return "".join(rng.choice(list(_RET_ALPHABET), size=4, replace=False))

    tasks = tuple(Task(f"pos{i}", functools.partial(_index, i=i)) for i in range(4))
    return TaskFamily("F-RET", tasks, sample, lambda s: s, "=", alphabet=_RET_ALPHABET + "=\n",
                      description="4 distinct symbols of 16; task i retrieves the i-th")


def _f_mod() -> TaskFamily:
    tasks = tuple(Task(f"plus{c}", functools.partial(_sum_mod10, c=c)) for c in range(10))
    return TaskFamily("F-MOD", tasks, _pair(0, 9), lambda x: f"{x[0]}{x[1]}", "=", alphabet="0123456789=\n",
                      description="ab= answered by (a+b+c) mod 10 for offsets c = 0..9")


def _f_ab2() -> TaskFamily:
    fam = _ab()
    return TaskFamily("F-AB2", fam.tasks, fam.sample_input, fam.format_input, fam.sep, alphabet="0123456789@=\n",
                      description="A@B= with A, B in [10, 99]: multi-token answers A, B, A+B")


SYNTHETIC_FAMILIES: dict[str, Callable[[], TaskFamily]] = {"F-AB": _f_ab, "F-RET": _f_ret, "F-MOD": _f_mod,
                                                           "F-AB2": _f_ab2}


def synthetic_family(name: str, tasks: Sequence[str | int] | None = None) -> TaskFamily:
    """A synthetic family of the CPU reproduction (spec §5): ``"F-AB"``, ``"F-RET"``, ``"F-MOD"``, ``"F-AB2"``.

    Parameters
    ----------
    name : str
    tasks : list of str or int, optional
        Tasks to keep (default: all).

    Examples
    --------
    >>> fam = synthetic_family("F-AB", ["copyA", "copyB"])
    >>> fam.example((3, 7), 1), fam.alphabet
    ('37=7', '0123456789=\\n')
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a family name (str), got {type(name).__name__}")
    check_option(name, "name", list(SYNTHETIC_FAMILIES))
    fam = SYNTHETIC_FAMILIES[name]()
    return fam if tasks is None else fam.subset(tasks)
