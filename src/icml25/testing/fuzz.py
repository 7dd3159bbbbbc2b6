"""The bad-input fuzz contract: every public callable rejects bad arguments with a message naming them.

A package's registry ``tests/<slug>/bad_input_cases.py`` defines ``CASES: list[BadInputCase]`` (see
:class:`icml25.testing.BadInputCase`): one valid example call per public callable and the kinds of the
arguments to corrupt. :func:`check_package` checks that

1. every callable public name of the package (see :func:`public_callables`) has a case (``name`` or
   ``name.method``) or a case with ``skip=`` and a reason, and every case names something that exists;
2. every valid example call succeeds;
3. every bad variant of every declared argument (the fixed variants of :func:`fixed_variants` plus a few drawn by
   hypothesis at random positions and values, :func:`variant_strategy`) raises ``ValueError`` or ``TypeError``
   (or the case's documented ``warns`` warning) whose message names the argument (as a word: ``n`` is named by
   ``"n must be >= 1"``, not by ``"an integer"``). Any other exception and a silent return fail.

Bad variants per kind: ARRAY -> NaN, +inf, -inf at a position, an empty array (zero rows, same number of axes), an
extra axis of length 1 at a position, a string; PROB -> NaN, < 0, > 1, a string; SIZE -> 0, a negative, a
non-integral float, NaN, a string; POSITIVE -> 0, a negative, NaN, inf, a string; REAL -> NaN, +inf, -inf, a string;
TEXT -> ``""``, a number. The string is the valid value written as text (``"0.3"`` for ``0.3``: the plausible user
mistake that ``float(x)`` would silently accept). When the valid value of a scalar kind (PROB, SIZE, POSITIVE, REAL)
is an array, the bad scalar is placed at a position of it (a per-record probability vector, say); a string
replaces the whole value.

Self-check of one paper while writing its cases (the same code the test suite runs)::

    python -c "from icml25.testing.fuzz import main; main('label_dp')"
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import math
import os
import re
import signal
import sys
import threading
import time
import types
import typing
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np

from .helpers import ARRAY, POSITIVE, PROB, REAL, SIZE, TEXT, BadInputCase

__all__ = ["public_callables", "load_cases", "check_package", "FuzzResult", "fixed_variants", "variant_strategy",
           "cases_path", "main", "KINDS"]

KINDS = (ARRAY, PROB, SIZE, POSITIVE, REAL, TEXT)

#: hypothesis draws per declared argument, on top of the fixed variants (kept small: the suite must stay fast)
DRAWS = 4
#: seconds a bad call may take (it must be rejected before any work) and a valid example call may take
BAD_CALL_LIMIT_S = 10.0
VALID_CALL_LIMIT_S = 60.0


class _CallTimeout(BaseException):
    """Raised by the alarm of :func:`_time_limit` (a BaseException, so ``except Exception`` cannot swallow it)."""


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Interrupt the block after ``seconds`` (SIGALRM; a no-op off the main thread or without SIGALRM)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGALRM"):
        yield
        return

    def on_alarm(signum: int, frame: Any) -> None:
        raise _CallTimeout()

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)

def tests_root() -> Path:
    """The folder holding ``<slug>/bad_input_cases.py``: ``$ICML25_TESTS_ROOT``, else ``./tests``, else the checkout's.

    An installed wheel has no test tree, so the caller (or the environment) names it; from a checkout the
    repository's ``tests/`` is found beside ``src/``.
    """
    env = os.environ.get("ICML25_TESTS_ROOT")
    if env:
        return Path(env)
    here = Path.cwd() / "tests"
    if here.is_dir():
        return here
    return Path(__file__).resolve().parents[3] / "tests"


# ---------------------------------------------------------------------------------------------- public callables
def _is_type_alias(obj: Any) -> bool:
    if inspect.isclass(obj) and not isinstance(obj, types.GenericAlias):
        return False
    return (typing.get_origin(obj) is not None or isinstance(obj, typing.TypeVar)
            or type(obj).__module__ == "typing" or type(obj).__name__ in ("GenericAlias", "UnionType",
                                                                           "TypeAliasType"))


def excluded_reason(obj: Any) -> str:
    """Why a public name needs no bad-input case ('' if it needs one).

    Excluded: modules, non-callables (constants, dicts, tuples), type aliases and ``TypeVar``s, exception classes,
    enums, ``typing.Protocol`` classes (interfaces: their implementations are the callables). Every other function,
    class (including dataclasses and ``NamedTuple``s: their constructors take user input) and callable instance
    needs a case or an explicit ``skip=`` reason.
    """
    if inspect.ismodule(obj):
        return "module"
    if _is_type_alias(obj):
        return "type alias"
    if not callable(obj):
        return "not callable (constant)"
    if inspect.isclass(obj):
        if issubclass(obj, BaseException):
            return "exception class"
        if issubclass(obj, Enum):
            return "enum"
        if getattr(obj, "_is_protocol", False):
            return "Protocol (interface)"
    return ""


def public_callables(module: Any) -> tuple[dict[str, Any], dict[str, str], dict[str, str]]:
    """The names of ``module.__all__`` that need a case.

    Returns ``(needed, excluded, unavailable)``: name -> object for the callables that need a case; name -> reason
    for the excluded names (:func:`excluded_reason`); name -> error for names whose lazy import failed (a missing
    optional extra).
    """
    needed: dict[str, Any] = {}
    excluded: dict[str, str] = {}
    unavailable: dict[str, str] = {}
    for name in getattr(module, "__all__", None) or []:
        try:
            obj = getattr(module, name)
        except ImportError as exc:
            unavailable[name] = f"{type(exc).__name__}: {exc}"
            continue
        reason = excluded_reason(obj)
        if reason:
            excluded[name] = reason
        else:
            needed[name] = obj
    return needed, excluded, unavailable


# ---------------------------------------------------------------------------------------------------- cases file
def cases_path(slug: str, root: Path | None = None) -> Path:
    """``<tests root>/<slug>/bad_input_cases.py`` (``root`` is the tests folder; default :func:`tests_root`)."""
    return (root or tests_root()) / slug / "bad_input_cases.py"


def load_cases(path: Path, module_name: str | None = None) -> list[BadInputCase]:
    """Import ``CASES`` from a cases file by path (tests are not a package; pytest runs with importlib mode).

    Raises
    ------
    FileNotFoundError
        The file does not exist (the message says what to write).
    TypeError
        ``CASES`` is missing or holds something other than :class:`BadInputCase`.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: write CASES: list[BadInputCase] (icml25.testing) with a "
                                "valid example call of every public callable")
    name = module_name or f"_icml25_bad_input_cases_{path.parent.name}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    cases = getattr(mod, "CASES", None)
    if not isinstance(cases, (list, tuple)) or not all(isinstance(c, BadInputCase) for c in cases):
        raise TypeError(f"{path}: CASES must be a list of icml25.testing.BadInputCase")
    return list(cases)


# -------------------------------------------------------------------------------------------------- bad variants
_STRING_ARRAY = "not an array"


def _as_text(valid: Any) -> str:
    if isinstance(valid, np.ndarray):
        return str(valid.tolist())
    if hasattr(valid, "tolist"):
        return str(valid.tolist())
    return str(valid)


def _is_tensor(x: Any) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "numpy")


def _to_numpy(valid: Any, arg: str) -> np.ndarray:
    if _is_tensor(valid):
        arr = valid.detach().cpu().numpy()
    else:
        arr = np.asarray(valid)
    if arr.dtype == object or arr.dtype.kind not in "biuf":
        raise TypeError(f"harness: the valid value of array argument {arg!r} is not a numeric array "
                        f"({type(valid).__name__}, dtype {arr.dtype}); declare another kind or none")
    return arr


def _like(valid: Any, arr: np.ndarray) -> Any:
    """``arr`` in the container type of ``valid`` (numpy array, list, tuple, torch tensor)."""
    if _is_tensor(valid):
        import torch

        dtype = valid.dtype if arr.dtype.kind == np.asarray(valid.detach().cpu().numpy()).dtype.kind else None
        return torch.as_tensor(arr, dtype=dtype) if dtype is not None else torch.as_tensor(arr)
    if isinstance(valid, list):
        return arr.tolist()
    if isinstance(valid, tuple):
        out = arr.tolist()
        return tuple(out) if isinstance(out, list) else out
    return arr


def _with_value_at(valid: Any, arg: str, value: float, index: int) -> Any:
    arr = _to_numpy(valid, arg)
    if arr.size == 0:
        raise TypeError(f"harness: the valid value of {arg!r} is empty; give a non-empty example")
    out = arr.astype(np.float64 if arr.dtype.kind != "f" else arr.dtype, copy=True)
    out.flat[index % out.size] = value  # .flat writes through for any memory layout (reshape may copy)
    return _like(valid, out)


def _is_arraylike(valid: Any) -> bool:
    return (isinstance(valid, (list, tuple, np.ndarray)) or _is_tensor(valid)) and np.ndim(
        valid if not _is_tensor(valid) else valid.detach().cpu().numpy()) >= 1


@dataclass(frozen=True)
class Variant:
    """One bad value: what it is (for messages) and the value."""

    label: str
    value: Any = field(compare=False)


def _scalar(kind: str, valid: Any, arg: str, label: str, value: Any, index: int = 0) -> Variant:
    """A bad scalar for a scalar kind; placed at ``index`` of an array-valued valid value."""
    if isinstance(value, str) or not _is_arraylike(valid):
        return Variant(label, value)
    return Variant(f"{label} at flat index {index % max(1, np.size(valid))}",
                   _with_value_at(valid, arg, float(value), index))


def fixed_variants(kind: str, valid: Any, arg: str) -> list[Variant]:
    """The fixed bad variants of ``kind`` for an argument whose valid value is ``valid`` (always tried)."""
    text = _as_text(valid)
    if kind == ARRAY:
        arr = _to_numpy(valid, arg)
        out = [Variant("NaN at flat index 0", _with_value_at(valid, arg, math.nan, 0)),
               Variant("inf at the last flat index", _with_value_at(valid, arg, math.inf, -1)),
               Variant("-inf at flat index 0", _with_value_at(valid, arg, -math.inf, 0)),
               Variant(f"an empty array of shape {(0,) + arr.shape[1:]}",
                       _like(valid, np.empty((0,) + arr.shape[1:], dtype=arr.dtype))),
               Variant(f"an extra leading axis (shape {(1,) + arr.shape})", _like(valid, arr[np.newaxis])),
               Variant(f"an extra trailing axis (shape {arr.shape + (1,)})", _like(valid, arr[..., np.newaxis])),
               Variant(f"the string {_short(text)!r}", text if text else _STRING_ARRAY)]
        return out
    if kind == PROB:
        return [_scalar(kind, valid, arg, "NaN", math.nan), _scalar(kind, valid, arg, "-0.1", -0.1),
                _scalar(kind, valid, arg, "1.1", 1.1), Variant(f"the string {_short(text)!r}", text)]
    if kind == SIZE:
        return [_scalar(kind, valid, arg, "0", 0), _scalar(kind, valid, arg, "-1", -1),
                _scalar(kind, valid, arg, "2.5", 2.5), _scalar(kind, valid, arg, "NaN", math.nan),
                Variant(f"the string {_short(text)!r}", text)]
    if kind == POSITIVE:
        return [_scalar(kind, valid, arg, "0.0", 0.0), _scalar(kind, valid, arg, "-1.0", -1.0),
                _scalar(kind, valid, arg, "NaN", math.nan), _scalar(kind, valid, arg, "inf", math.inf),
                Variant(f"the string {_short(text)!r}", text)]
    if kind == REAL:
        return [_scalar(kind, valid, arg, "NaN", math.nan), _scalar(kind, valid, arg, "inf", math.inf),
                _scalar(kind, valid, arg, "-inf", -math.inf), Variant(f"the string {_short(text)!r}", text)]
    if kind == TEXT:
        return [Variant("the empty string", ""), Variant("the number 3", 3), Variant("the number 1.5", 1.5)]
    raise ValueError(f"unknown bad-input kind {kind!r} for argument {arg!r}; use one of {', '.join(KINDS)}")


def _short(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."


def variant_strategy(kind: str, valid: Any, arg: str) -> Any:
    """A hypothesis strategy of bad variants of ``kind`` at drawn positions and values."""
    from hypothesis import strategies as st

    idx = st.integers(0, 10**6)
    neg = st.floats(min_value=-1e6, max_value=-1e-6)
    if kind == ARRAY:
        arr = _to_numpy(valid, arg)

        def extra_axis(pos: int) -> Variant:
            pos = pos % (arr.ndim + 1)
            new = np.expand_dims(arr, pos)
            return Variant(f"an extra axis at position {pos} (shape {new.shape})", _like(valid, new))

        return st.one_of(
            st.tuples(st.sampled_from([math.nan, math.inf, -math.inf]), idx).map(
                lambda t: Variant(f"{t[0]} at flat index {t[1] % max(1, arr.size)}",
                                  _with_value_at(valid, arg, t[0], t[1]))),
            st.integers(0, 8).map(extra_axis))
    if kind == PROB:
        vals = st.one_of(st.just(math.nan), neg, st.floats(min_value=1 + 1e-6, max_value=1e6))
    elif kind == SIZE:
        vals = st.one_of(st.just(0), st.integers(-10**6, -1), st.just(math.nan),
                         st.floats(min_value=0.01, max_value=1e4).filter(lambda v: not float(v).is_integer()))
    elif kind == POSITIVE:
        vals = st.one_of(st.sampled_from([0.0, -0.0, math.nan, math.inf]), neg)
    elif kind == REAL:
        vals = st.sampled_from([math.nan, math.inf, -math.inf])
    elif kind == TEXT:
        return st.one_of(st.integers(-10**6, 10**6), st.floats(allow_nan=False)).map(
            lambda v: Variant(f"the number {v!r}", v))
    else:
        raise ValueError(f"unknown bad-input kind {kind!r} for argument {arg!r}; use one of {', '.join(KINDS)}")
    return st.tuples(vals, idx).map(lambda t: _scalar(kind, valid, arg, repr(t[0]), t[0], t[1]))


# ---------------------------------------------------------------------------------------------------- running
@dataclass
class FuzzResult:
    """What :func:`check_package` found."""

    package: str
    callables: int = 0          # public callables that need a case
    covered: int = 0            # of which have a case (or skip=)
    skipped: list[str] = field(default_factory=list)        # "name: reason" (skip=)
    excluded: dict[str, str] = field(default_factory=dict)  # name -> why it needs no case
    unavailable: dict[str, str] = field(default_factory=dict)
    cases: int = 0
    valid_calls: int = 0
    bad_inputs: int = 0
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def summary(self) -> str:
        return (f"{self.package}: {self.callables} public callables ({len(self.skipped)} skipped with a reason), "
                f"{self.cases} cases, {self.bad_inputs} bad inputs tried, {len(self.failures)} failure(s) "
                f"in {self.seconds:.1f}s")


def _word_re(arg: str) -> re.Pattern[str]:
    return re.compile(r"(?<![A-Za-z0-9_])" + re.escape(arg) + r"(?![A-Za-z0-9_])")


def _describe_result(x: Any) -> str:
    if isinstance(x, np.ndarray):
        return f"an array of shape {x.shape}" + (" containing NaN" if x.dtype.kind == "f" and np.isnan(x).any()
                                                 else "")
    text = repr(x)
    return text if len(text) <= 80 else text[:77] + "..."


def check_rejected(call: Callable[[], Any], arg: str, warns: type | None,
                   limit_s: float = BAD_CALL_LIMIT_S) -> str:
    """'' if ``call()`` rejects its bad ``arg`` properly, else what went wrong."""
    named = _word_re(arg)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with _time_limit(limit_s):
                result = call()
        except _CallTimeout:
            return (f"did not return within {limit_s:g}s: it hangs or does the work on a bad input instead of "
                    "rejecting it first")
        except (ValueError, TypeError) as exc:
            msg = str(exc)
            if not named.search(msg):
                return f"raised {type(exc).__name__}({_short(msg)!r}), which does not name {arg!r}"
            return ""
        except Exception as exc:  # noqa: BLE001 - the point is to catch anything else
            return f"raised {type(exc).__name__}: {_short(str(exc))} (expected ValueError or TypeError naming {arg!r})"
    if warns is not None:
        hits = [w for w in caught if issubclass(w.category, warns)]
        if any(named.search(str(w.message)) for w in hits):
            return ""
        if hits:
            return f"warned {warns.__name__}({_short(str(hits[0].message))!r}), which does not name {arg!r}"
    return f"returned {_describe_result(result)} without an error"


def _resolve(module: Any, name: str) -> tuple[Any, str]:
    """(public object, method name or '') of a case name, or raise LookupError."""
    head, _, method = name.partition(".")
    if head not in (getattr(module, "__all__", None) or []):
        raise LookupError(f"case {name!r}: {head!r} is not in {module.__name__}.__all__")
    obj = getattr(module, head)
    if method and not hasattr(obj, method):
        raise LookupError(f"case {name!r}: {head} has no attribute {method!r}")
    return obj, method


def _target(case: BadInputCase, public: Any, method: str) -> Callable[..., Any]:
    if not method:
        return public
    owner = case.obj() if case.obj is not None else public
    return getattr(owner, method)


def _drawn_failures(strategy: Any, attempt: Callable[[Variant], str], draws: int, where: str) -> list[str]:
    """Try ``draws`` variants drawn by hypothesis (derandomized, no shrinking); the first failure, if any."""
    from hypothesis import HealthCheck, Phase, given, settings

    found: list[str] = []

    @settings(max_examples=draws, deadline=None, derandomize=True, database=None,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(strategy)
    def drawn(v: Variant) -> None:
        err = attempt(v)
        if err:
            found.append(err)
            raise AssertionError(err)

    try:
        drawn()
    except AssertionError:
        pass
    except Exception as exc:  # noqa: BLE001 - a harness/strategy problem: report it, do not crash the others
        found.append(f"{where}: drawing variants failed: {type(exc).__name__}: {exc}")
    return found[:1]


def _run_case(case: BadInputCase, module: Any, res: FuzzResult, draws: int) -> None:
    try:
        public, method = _resolve(module, case.name)
    except LookupError as exc:
        res.failures.append(str(exc))
        return
    if case.skip:
        return
    for arg, kind in case.bad.items():
        if kind not in KINDS:
            res.failures.append(f"{case.name}: argument {arg!r} has unknown kind {kind!r}; use one of {KINDS}")
            return
    try:
        kwargs = case.kwargs() if case.kwargs is not None else {}
        fn = _target(case, public, method)
    except ImportError as exc:
        res.unavailable[case.name] = f"{type(exc).__name__}: {exc}"
        return
    except Exception as exc:  # noqa: BLE001 - a broken registry entry: report it, check the other cases
        res.failures.append(f"{case.name}: building its valid kwargs/obj failed: {type(exc).__name__}: {exc}")
        return
    missing = [a for a in case.bad if a not in kwargs]
    if missing:
        res.failures.append(f"{case.name}: bad argument(s) {missing} are not in its valid kwargs")
        return
    try:
        limit = max(VALID_CALL_LIMIT_S, float(getattr(case, "valid_limit_s", VALID_CALL_LIMIT_S)))
        with _time_limit(limit):
            fn(**kwargs)
        res.valid_calls += 1
    except _CallTimeout:
        res.failures.append(f"{case.name}: the valid example call took over {limit:g}s; make it smaller")
        return
    except Exception as exc:  # noqa: BLE001
        res.failures.append(f"{case.name}: the valid example call failed: {type(exc).__name__}: {exc}")
        return
    for arg, kind in case.bad.items():
        valid = kwargs[arg]
        where = f"{case.name}({arg}=<{kind}>)"

        def attempt(v: Variant, arg: str = arg) -> str:
            res.bad_inputs += 1
            err = check_rejected(lambda: fn(**{**kwargs, arg: v.value}), arg, case.warns)
            return f"{case.name}: {arg} = {v.label}: {err}" if err else ""

        try:
            fixed = fixed_variants(kind, valid, arg)
            strategy = variant_strategy(kind, valid, arg)
        except (TypeError, ValueError) as exc:
            res.failures.append(f"{where}: {exc}")
            continue
        for v in fixed:
            err = attempt(v)
            if err:
                res.failures.append(err)
        if draws > 0:
            res.failures.extend(_drawn_failures(strategy, attempt, draws, where))


def check_package(module: Any, cases: list[BadInputCase], *, draws: int = DRAWS) -> FuzzResult:
    """Run the fuzz contract of ``cases`` against ``module`` (see the module docstring); never raises for a
    contract violation, which goes to ``FuzzResult.failures``."""
    t0 = time.perf_counter()
    res = FuzzResult(module.__name__)
    needed, res.excluded, res.unavailable = public_callables(module)
    res.callables = len(needed)
    names = [c.name for c in cases]
    for name in needed:
        mine = [c for c in cases if c.name == name or c.name.startswith(name + ".")]
        if not mine:
            res.failures.append(f"{name}: public callable without a bad-input case (add a BadInputCase, or one "
                                f"with skip='<why it takes no user input to check>')")
            continue
        res.covered += 1
        res.skipped += [f"{c.name}: {c.skip}" for c in mine if c.skip]
    res.cases = len(names)
    for case in cases:
        _run_case(case, module, res, draws)
    res.seconds = time.perf_counter() - t0
    return res


def _iter_packages() -> Iterator[str]:
    from icml25.core.registry import discover

    yield from sorted(discover())
    yield "llm"


def main(slug: str | None = None) -> int:
    """Check one package (or all) from the command line; prints the failures and a summary; 1 if any failed."""
    import os

    os.environ.setdefault("ICML25_PROGRESS", "0")
    rc = 0
    for s in ([slug] if slug else list(_iter_packages())):
        try:
            cases = load_cases(cases_path(s))
        except (FileNotFoundError, TypeError) as exc:
            print(f"{s}: {exc}")
            rc = 1
            continue
        res = check_package(importlib.import_module(f"icml25.{s}"), cases)
        for f in res.failures:
            print(f"  FAIL {f}")
        print(res.summary())
        rc |= bool(res.failures)
    return rc


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1] if len(sys.argv) > 1 else None))
