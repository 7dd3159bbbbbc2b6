"""The bad-input fuzz contract over every paper package and ``llm`` (issue 19), and tests of the harness itself.

Per package, ``tests/<slug>/bad_input_cases.py`` must define ``CASES: list[BadInputCase]``; every callable public
name of ``icml25.<slug>.__all__`` needs a case (or ``skip=`` with a reason), every valid example call must succeed
and every bad variant of every declared argument must raise ``ValueError``/``TypeError`` naming the argument. The
engine is :mod:`icml25.testing.fuzz` (its docstring lists the variants per kind and what counts as a callable). The
counts of callables and bad inputs tried are printed in the terminal summary (tests/conftest.py).
"""

from __future__ import annotations

import importlib
import math
import sys
import textwrap
import types
import warnings

import numpy as np
import pytest

from icml25.core.registry import discover
from icml25.core.validation import check_array, check_int, check_positive, check_probability, check_real
from icml25.testing import ARRAY, POSITIVE, PROB, REAL, SIZE, TEXT, BadInputCase, fuzz

PACKAGES = [*sorted(discover()), "llm"]


@pytest.mark.parametrize("slug", PACKAGES)
def test_bad_inputs_are_rejected(slug: str, record_property) -> None:  # type: ignore[no-untyped-def]
    path = fuzz.cases_path(slug)
    cases = fuzz.load_cases(path)  # a missing registry fails here, naming the file to write
    module = importlib.import_module(f"icml25.{slug}")
    res = fuzz.check_package(module, cases)
    record_property("bad_input_fuzz", {"package": slug, "callables": res.callables, "bad_inputs": res.bad_inputs,
                                       "cases": res.cases, "skipped": len(res.skipped)})
    assert not res.failures, res.summary() + ":\n  " + "\n  ".join(res.failures)
    assert res.covered == res.callables


# ------------------------------------------------------------------------------- the harness on a fake package
FAKE = '''
import math
import numpy as np
from icml25.core.validation import check_array, check_int, check_positive, check_probability, check_real

__all__ = ["good_mean", "silent_nan", "zero_div", "vague", "Scaler", "uncovered", "MyError", "CONST", "good_text"]

CONST = 3

class MyError(ValueError):
    pass

def good_mean(x, p, n, scale, shift):
    x = check_array(x, "x", ndim=1)
    p = check_probability(p, "p")
    n = check_int(n, "n", low=1)
    scale = check_positive(scale, "scale")
    shift = check_real(shift, "shift")
    return float(x[:n].mean() * scale + shift) * p

def silent_nan(x):  # accepts NaN and returns garbage
    return float(np.mean(x))

def zero_div(n):  # a late crash
    return 1 / (n - n) if n <= 0 else 1.0 / n

def vague(p):  # rejects, but does not say which argument
    if not 0 <= p <= 1:
        raise ValueError("bad value")
    return p

def good_text(s):
    if not isinstance(s, str) or not s:
        raise TypeError(f"s must be a non-empty string, got {s!r}")
    return s.upper()

def uncovered(x):
    return x

class Scaler:
    def __init__(self, factor):
        self.factor = check_positive(factor, "factor")
    def apply(self, x):
        return np.asarray(x) * self.factor  # no check: NaN passes
'''


@pytest.fixture
def fake_module(tmp_path, monkeypatch):
    path = tmp_path / "fakepkg_badinput.py"
    path.write_text(textwrap.dedent(FAKE))
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("fakepkg_badinput", None)
    return importlib.import_module("fakepkg_badinput")


def _valid_good_mean():
    return {"x": np.arange(5.0), "p": 0.5, "n": 3, "scale": 2.0, "shift": 1.0}


def test_harness_passes_a_well_behaved_callable(fake_module) -> None:
    fake_module.__all__ = ["good_mean", "good_text", "MyError", "CONST"]
    cases = [BadInputCase("good_mean", _valid_good_mean, {"x": ARRAY, "p": PROB, "n": SIZE, "scale": POSITIVE,
                                                          "shift": REAL}),
             BadInputCase("good_text", lambda: {"s": "abc"}, {"s": TEXT})]
    res = fuzz.check_package(fake_module, cases)
    assert res.failures == []
    assert res.callables == 2 and res.covered == 2  # the exception class and the constant need no case
    assert set(res.excluded) == {"MyError", "CONST"}
    fixed = sum(len(fuzz.fixed_variants(k, v, a)) for a, k, v in
                [("x", ARRAY, np.arange(5.0)), ("p", PROB, 0.5), ("n", SIZE, 3), ("scale", POSITIVE, 2.0),
                 ("shift", REAL, 1.0), ("s", TEXT, "abc")])
    assert res.bad_inputs == fixed + 6 * fuzz.DRAWS


def test_harness_catches_every_kind_of_violation(fake_module) -> None:
    cases = [
        BadInputCase("good_mean", _valid_good_mean, {"x": ARRAY}),
        BadInputCase("silent_nan", lambda: {"x": [1.0, 2.0]}, {"x": ARRAY}),
        BadInputCase("zero_div", lambda: {"n": 2}, {"n": SIZE}),
        BadInputCase("vague", lambda: {"p": 0.5}, {"p": PROB}),
        BadInputCase("Scaler", lambda: {"factor": 2.0}, {"factor": POSITIVE}),
        BadInputCase("Scaler.apply", lambda: {"x": np.ones(3)}, {"x": ARRAY}, obj=lambda: fake_module.Scaler(2.0)),
        BadInputCase("good_text", lambda: {"s": "a"}, {"s": TEXT}),
        BadInputCase("nosuch", lambda: {}),
        BadInputCase("good_mean", lambda: {"x": [1.0], "p": 2.0, "n": 1, "scale": 1.0, "shift": 0.0}),  # invalid
    ]
    res = fuzz.check_package(fake_module, cases)
    text = "\n".join(res.failures)
    assert "uncovered: public callable without a bad-input case" in text
    assert "silent_nan: x = NaN at flat index 0: returned nan without an error" in text
    assert "zero_div: n = 0: raised ZeroDivisionError" in text
    assert "vague: p = NaN: raised ValueError('bad value'), which does not name 'p'" in text
    assert "Scaler.apply: x = NaN at flat index 0: returned an array of shape (3,) containing NaN" in text
    assert "'nosuch' is not in" in text
    assert "good_mean: the valid example call failed: ValueError: p must be a probability" in text
    assert not any(f.startswith("Scaler: ") or f.startswith("good_text") or "good_mean: x" in f
                   for f in res.failures)
    assert res.callables == 7 and res.covered == 6


def test_skip_covers_a_callable_and_warns_is_accepted(fake_module) -> None:
    def warn_on_nan(x):
        if isinstance(x, str):
            raise TypeError("x must be numbers")
        x = np.asarray(x, dtype=float)
        if not np.isfinite(x).all():
            warnings.warn("x has NaN/inf entries; they are dropped", RuntimeWarning, stacklevel=2)
            x = x[np.isfinite(x)]
        return float(x.mean()) if x.size else 0.0

    mod = types.ModuleType("fake_warns")
    mod.warn_on_nan = warn_on_nan
    mod.uncovered = fake_module.uncovered
    mod.__all__ = ["warn_on_nan", "uncovered"]
    ok = fuzz.check_package(mod, [BadInputCase("uncovered", skip="identity; nothing to check"),
                                  BadInputCase("warn_on_nan", lambda: {"x": [1.0, 2.0]}, {"x": REAL},
                                               warns=RuntimeWarning)])
    assert ok.failures == [] and ok.skipped == ["uncovered: identity; nothing to check"]
    bad = fuzz.check_package(mod, [BadInputCase("uncovered", skip="identity"),
                                   BadInputCase("warn_on_nan", lambda: {"x": [1.0, 2.0]}, {"x": REAL})])
    assert any("warn_on_nan: x = NaN" in f and "without an error" in f for f in bad.failures)


def test_variants_of_every_kind_are_bad_for_the_shared_checks() -> None:
    """Each fixed variant of a kind is rejected by the matching core.validation check (and the valid one is not)."""
    checks = {ARRAY: (np.arange(6.0).reshape(2, 3), lambda v: check_array(v, "a", ndim=2)),
              PROB: (0.3, lambda v: check_probability(v, "a")),
              SIZE: (4, lambda v: check_int(v, "a", low=1)),
              POSITIVE: (1.5, lambda v: check_positive(v, "a")),
              REAL: (-2.0, lambda v: check_real(v, "a"))}
    for kind, (valid, check) in checks.items():
        check(valid)
        for v in fuzz.fixed_variants(kind, valid, "a"):
            assert fuzz.check_rejected(lambda v=v, check=check: check(v.value), "a", None) == "", (kind, v.label)


def test_scalar_kinds_on_array_values_place_the_bad_value() -> None:
    vs = fuzz.fixed_variants(PROB, np.array([0.2, 0.4, 0.6]), "p")
    assert [v.label for v in vs][:3] == ["NaN at flat index 0", "-0.1 at flat index 0", "1.1 at flat index 0"]
    assert math.isnan(vs[0].value[0]) and vs[1].value[0] == -0.1 and vs[3].value == "[0.2, 0.4, 0.6]"
    lst = fuzz.fixed_variants(ARRAY, [[1, 2], [3, 4]], "X")
    assert isinstance(lst[0].value, list) and math.isnan(lst[0].value[0][0])
    assert lst[3].value == [] and np.shape(lst[4].value) == (1, 2, 2) and np.shape(lst[5].value) == (2, 2, 1)


def test_argument_must_be_named_as_a_word() -> None:
    def f(n):
        raise ValueError("expected an integer")

    assert "does not name 'n'" in fuzz.check_rejected(lambda: f(0), "n", None)
    assert fuzz.check_rejected(lambda: check_int(0, "n", low=1), "n", None) == ""
    assert fuzz.check_rejected(lambda: check_int(0, "config.n", low=1), "n", None) == ""


def test_a_hang_on_bad_input_is_reported() -> None:
    import time

    def spins(tol):
        x = 0.0
        while not x < tol:  # never ends for tol = NaN: a loop that a bad input cannot leave
            time.sleep(0.01)
        return x

    err = fuzz.check_rejected(lambda: spins(math.nan), "tol", None, limit_s=0.3)
    assert "did not return within 0.3s" in err


def test_missing_registry_fails_naming_the_file(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="bad_input_cases.py is missing"):
        fuzz.load_cases(tmp_path / "tests" / "x" / "bad_input_cases.py")
    bad = tmp_path / "bad_input_cases.py"
    bad.write_text("CASES = [1]\n")
    with pytest.raises(TypeError, match="CASES must be a list"):
        fuzz.load_cases(bad)


def test_public_callables_exclusions() -> None:
    from enum import Enum
    from typing import Protocol

    class Color(Enum):
        RED = 1

    class Proto(Protocol):
        def f(self) -> int: ...

    mod = types.ModuleType("m")
    mod.Color, mod.Proto, mod.Alias, mod.np, mod.err, mod.fn = Color, Proto, dict[str, int], np, KeyError, len
    mod.__all__ = ["Color", "Proto", "Alias", "np", "err", "fn"]
    needed, excluded, _ = fuzz.public_callables(mod)
    assert list(needed) == ["fn"]
    assert excluded == {"Color": "enum", "Proto": "Protocol (interface)", "Alias": "type alias", "np": "module",
                        "err": "exception class"}
