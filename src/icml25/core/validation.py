"""Input validation shared by every paper: small checks that raise a message a user can act on.

Each check names the argument, says what was expected and what was given, and raises ``TypeError`` for a wrong
type or ``ValueError`` for a wrong value (NaN, inf, shape, range). Checks return the validated value converted to
the canonical type (a float, an int, a numpy array), so a caller writes ``p = check_probability(p, "p")``.

Examples
--------
>>> check_probability(0.3, "p")
0.3
>>> check_probability(float("nan"), "p")
Traceback (most recent call last):
...
ValueError: p must be a probability in [0, 1], got nan
>>> check_int(3, "K", low=1)
3
>>> check_array([[1.0, 2.0]], "X", ndim=2).shape
(1, 2)
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import numbers
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

__all__ = [
    "precheck_sklearn_X", "trusted_tensors",
    "check_array", "check_real", "check_positive", "check_probability", "check_int", "check_option",
    "check_prob_vector", "check_stochastic_matrix", "check_same_length", "check_fitted", "NotFittedError",
    "check_tensor", "check_device",
]


def _describe(x: Any) -> str:
    if isinstance(x, np.ndarray):
        return f"an array of shape {x.shape} and dtype {x.dtype}"
    text = repr(x)
    return text if len(text) <= 60 else text[:57] + "..."


class NotFittedError(ValueError, AttributeError):
    """An estimator was used before ``fit`` (the fallback when scikit-learn, whose class is used, is absent)."""


def check_real(x: Any, name: str, *, low: float | None = None, high: float | None = None,
               low_open: bool = False, high_open: bool = False, allow_inf: bool = False) -> float:
    """A real number (Python or numpy scalar, not bool) that is finite and within ``[low, high]``.

    ``low_open``/``high_open`` make the bound strict. Returns it as a Python ``float``.
    """
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        if isinstance(x, np.ndarray) and x.ndim == 0 and np.issubdtype(x.dtype, np.number):
            x = x.item()
        else:
            raise TypeError(f"{name} must be a real number, got {_describe(x)}")
    v = float(x)
    if math.isnan(v) or (math.isinf(v) and not allow_inf):
        raise ValueError(f"{name} must be a finite number, got {v}")
    if low is not None and (v < low or (low_open and v == low)):
        raise ValueError(f"{name} must be {'>' if low_open else '>='} {low}, got {v}")
    if high is not None and (v > high or (high_open and v == high)):
        raise ValueError(f"{name} must be {'<' if high_open else '<='} {high}, got {v}")
    return v


def check_positive(x: Any, name: str, *, allow_zero: bool = False) -> float:
    """A finite real number ``> 0`` (``>= 0`` with ``allow_zero``), returned as a float."""
    return check_real(x, name, low=0.0, low_open=not allow_zero)


def check_probability(x: Any, name: str, *, open_low: bool = False, open_high: bool = False) -> float:
    """A probability in ``[0, 1]`` (endpoints excluded with ``open_low``/``open_high``), returned as a float."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (numbers.Real, np.ndarray)):
        raise TypeError(f"{name} must be a probability in [0, 1], got {_describe(x)}")
    v = float(x)
    lo = "(" if open_low else "["
    hi = ")" if open_high else "]"
    if math.isnan(v) or v < 0 or v > 1 or (open_low and v == 0) or (open_high and v == 1):
        raise ValueError(f"{name} must be a probability in {lo}0, 1{hi}, got {v}")
    return v


def check_int(x: Any, name: str, *, low: int | None = None, high: int | None = None) -> int:
    """An integer (Python or numpy, or an integral float such as ``3.0``; not bool) in ``[low, high]``."""
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer, got {x!r}")
    if isinstance(x, numbers.Integral):
        v = int(x)
    elif isinstance(x, numbers.Real) and float(x).is_integer():
        v = int(x)
    else:
        raise TypeError(f"{name} must be an integer, got {_describe(x)}")
    if low is not None and v < low:
        raise ValueError(f"{name} must be >= {low}, got {v}")
    if high is not None and v > high:
        raise ValueError(f"{name} must be <= {high}, got {v}")
    return v


def check_option(x: Any, name: str, options: Iterable[Any]) -> Any:
    """``x`` must be one of ``options`` (compared with ``==``); the message lists them."""
    opts = list(options)
    if x not in opts:
        raise ValueError(f"{name} must be one of {', '.join(repr(o) for o in opts)}; got {x!r}")
    return x


def check_array(x: Any, name: str, *, ndim: int | Sequence[int] | None = None,
                shape: Sequence[int | None] | None = None, dtype: Any = float, finite: bool = True,
                min_size: int = 1, low: float | None = None, high: float | None = None) -> np.ndarray:
    """Convert ``x`` to a numpy array and check it.

    Parameters
    ----------
    ndim : int or sequence of int, optional
        Allowed numbers of dimensions.
    shape : sequence of (int or None), optional
        Required shape; ``None`` entries match any length.
    dtype : numpy dtype or None
        Target dtype (``float`` by default; ``int`` accepts integral floats; None keeps the dtype).
    finite : bool
        Reject NaN and inf (numeric dtypes only).
    min_size : int
        Minimum number of elements (1 rejects empty arrays).
    low, high : float, optional
        Inclusive bounds on every element.
    """
    if isinstance(x, (str, bytes)):
        raise TypeError(f"{name} must be an array of numbers, got {_describe(x)}")
    try:
        arr = np.asarray(x)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{name} must be a rectangular array, could not convert it: {exc}") from None
    if arr.dtype == object or arr.dtype.kind in "USV":
        raise TypeError(f"{name} must be an array of numbers, got {_describe(arr)}")
    if dtype is not None:
        target = np.dtype(dtype)
        if target.kind in "iu" and arr.dtype.kind == "f":
            if arr.size and not np.all(np.isfinite(arr)):
                raise ValueError(f"{name} must hold finite integers, found NaN or inf")
            if arr.size and not np.all(arr == np.round(arr)):
                raise TypeError(f"{name} must hold integers, got non-integral floats")
        if target.kind in "iuf" and arr.dtype.kind == "c":
            raise TypeError(f"{name} must be real, got a complex array")
        arr = arr.astype(target, copy=False)
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if arr.ndim not in allowed:
            raise ValueError(f"{name} must have {' or '.join(map(str, allowed))} dimension(s), got shape {arr.shape}")
    if shape is not None:
        if arr.ndim != len(shape) or any(s is not None and s != a for s, a in zip(shape, arr.shape)):
            want = "(" + ", ".join("any" if s is None else str(s) for s in shape) + ")"
            raise ValueError(f"{name} must have shape {want}, got {arr.shape}")
    if arr.size < min_size:
        raise ValueError(f"{name} must have at least {min_size} element(s), got shape {arr.shape}")
    if finite and arr.dtype.kind in "fc" and arr.size and not np.all(np.isfinite(arr)):
        bad = int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
        raise ValueError(f"{name} must be finite, found {bad} NaN/inf value(s)")
    if low is not None and arr.size and np.any(arr < low):
        raise ValueError(f"{name} must be >= {low} everywhere, got min {arr.min()}")
    if high is not None and arr.size and np.any(arr > high):
        raise ValueError(f"{name} must be <= {high} everywhere, got max {arr.max()}")
    return arr


#: the dtype kinds ``check_tensor(dtype=...)`` accepts as a string, with the test each dtype must pass
_TENSOR_KINDS = {
    "float": lambda dt: dt.is_floating_point,
    "complex": lambda dt: dt.is_complex,
    "int": lambda dt: not dt.is_floating_point and not dt.is_complex and str(dt) != "torch.bool",
    "bool": lambda dt: str(dt) == "torch.bool",
}


def check_device(device: Any, name: str = "device", *, available: bool = False) -> str:
    """Check a torch device string: ``"cpu"``, ``"cuda"``, ``"cuda:<i>"`` or ``"mps"``; return it.

    With ``available=True`` a CUDA device is also refused when torch sees no GPU (torch is imported only then), with
    the fix (``--set device=cpu``) in the message: call it before anything runs.

    Raises
    ------
    ValueError
        ``device`` is not one of the forms above.
    UsageError
        ``available=True`` and ``device`` names CUDA, but no CUDA GPU is visible.
    """
    if not isinstance(device, str) or not (device in ("cpu", "cuda", "mps")
                                           or (device.startswith("cuda:") and device[5:].isdigit())):
        raise ValueError(f"{name} must be 'cpu', 'cuda', 'cuda:<i>' or 'mps', got {_describe(device)}")
    if available and device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            from .errors import UsageError

            raise UsageError(f"{name}={device!r} needs a CUDA GPU and a CUDA build of torch, and torch sees none; "
                             f"pass --set {name}=cpu to run on the CPU (--dry-run says how long that takes)")
    return device


_TRUSTED: contextvars.ContextVar[bool] = contextvars.ContextVar("icml25_trusted_tensors", default=False)


@contextlib.contextmanager
def trusted_tensors() -> Iterator[None]:
    """Inside the block, :func:`check_tensor` only converts (``dtype=torch.<dtype>``) and checks nothing.

    For a library's own inner loops (a training step called thousands of times on tensors the library built), where
    the value checks (a pass over the data and a device sync each) cost more than the step's arithmetic; the public
    entry points still check what a user passes. Results are unchanged for valid input.
    """
    token = _TRUSTED.set(True)
    try:
        yield
    finally:
        _TRUSTED.reset(token)


def check_tensor(x: Any, name: str, *, ndim: int | Sequence[int] | None = None,
                 shape: Sequence[Any] | None = None, dtype: Any = None, finite: bool = True, device: Any = None,
                 min_size: int = 1, low: float | None = None, high: float | None = None,
                 low_open: bool = False) -> Any:
    """Check a torch tensor the way :func:`check_array` checks a numpy array (torch is imported only when called).

    Parameters
    ----------
    x : torch.Tensor, or an array-like when ``dtype`` is a ``torch.dtype``
        The argument.
    name : str
        Its name, used in the error messages.
    ndim : int or sequence of int, optional
        Allowed numbers of dimensions.
    shape : sequence of (int or None), optional
        Required shape; ``None`` entries match any length and a leading ``...`` any number of leading axes
        (``shape=(..., 4)``: at least one axis, the last of length 4).
    dtype : str, torch.dtype or None
        ``None`` accepts any dtype. A kind, ``"float"``, ``"int"``, ``"bool"`` or ``"complex"``, is required
        (``TypeError`` otherwise; nothing is converted). A ``torch.dtype`` converts to it (gradients kept) and also
        accepts array-likes (lists, numpy arrays, numbers), converted with ``torch.as_tensor``; without one,
        anything but a ``torch.Tensor`` is a ``TypeError``.
    finite : bool
        Reject NaN and inf (floating and complex dtypes only).
    device : str or torch.device, optional
        Required device: ``"cpu"``, ``"cuda"`` (any index) or ``"cuda:1"``.
    min_size : int
        Minimum number of elements (1 rejects empty tensors).
    low, high : float, optional
        Inclusive bounds on every element (``low_open`` makes ``low`` strict).

    Values are not checked on the ``meta`` device (a shape-only tensor has none). Returns the tensor (converted
    when ``dtype`` is a ``torch.dtype``).

    Examples
    --------
    >>> import torch
    >>> check_tensor(torch.zeros(2, 3), "x", ndim=2, shape=(None, 3), dtype="float").shape
    torch.Size([2, 3])
    >>> check_tensor([1, 2], "w", dtype=torch.float64)
    tensor([1., 2.], dtype=torch.float64)
    >>> check_tensor([1.0, 2.0], "x")
    Traceback (most recent call last):
    ...
    TypeError: x must be a torch.Tensor, got a list
    >>> check_tensor(torch.tensor([1.0, float("nan")]), "x")
    Traceback (most recent call last):
    ...
    ValueError: x must be finite, found 1 NaN/inf value(s)
    >>> check_tensor(torch.zeros(2, 3), "x", shape=(..., 4))
    Traceback (most recent call last):
    ...
    ValueError: x must have shape (..., 4), got (2, 3)
    >>> check_tensor(torch.arange(3), "idx", dtype="float")
    Traceback (most recent call last):
    ...
    TypeError: idx must be a float tensor, got dtype torch.int64
    """
    from .optional import require

    torch = require("torch", extra="torch")
    convert_to = dtype if isinstance(dtype, torch.dtype) else None
    if _TRUSTED.get():
        if convert_to is None:
            return x
        return x.to(convert_to) if isinstance(x, torch.Tensor) else torch.as_tensor(x, dtype=convert_to)
    if dtype is not None and convert_to is None and dtype not in _TENSOR_KINDS:
        raise ValueError(f"check_tensor: dtype must be a torch.dtype or one of {sorted(_TENSOR_KINDS)}, got {dtype!r}")
    if not isinstance(x, torch.Tensor):
        if isinstance(x, (str, bytes)) or (isinstance(x, (list, tuple)) and any(isinstance(v, (str, bytes)) for v in x)):
            raise TypeError(f"{name} must be a tensor of numbers, got {_describe(x)}")
        if convert_to is None:
            what = _describe(x) if isinstance(x, np.ndarray) else f"a {type(x).__name__}"
            raise TypeError(f"{name} must be a torch.Tensor, got {what}")
    if convert_to is not None:
        try:
            x = x.to(convert_to) if isinstance(x, torch.Tensor) else torch.as_tensor(x, dtype=convert_to)
        except (TypeError, ValueError, RuntimeError) as exc:
            raise TypeError(f"{name} must be a tensor of numbers, could not convert it: {exc}") from None
    elif dtype is not None and not _TENSOR_KINDS[dtype](x.dtype):
        raise TypeError(f"{name} must be a{'n' if dtype == 'int' else ''} {dtype} tensor, got dtype {x.dtype}")
    got = tuple(x.shape)
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if x.dim() not in allowed:
            raise ValueError(f"{name} must have {' or '.join(map(str, allowed))} dimension(s), got shape {got}")
    if shape is not None:
        want = tuple(shape)
        if want[:1] == (Ellipsis,):
            tail = want[1:]
            ok = len(got) >= max(len(tail), 1) and all(s is None or s == a for s, a in zip(tail, got[len(got) - len(tail):]))
        else:
            ok = len(got) == len(want) and all(s is None or s == a for s, a in zip(want, got))
        if not ok:
            text = ", ".join("..." if s is Ellipsis else "any" if s is None else str(s) for s in want)
            raise ValueError(f"{name} must have shape ({text}{',' if len(want) == 1 else ''}), got {got}")
    if x.numel() < min_size:
        need = "not be empty" if min_size == 1 else f"have at least {min_size} element(s)"
        raise ValueError(f"{name} must {need}, got shape {got}")
    if device is not None:
        want_dev = torch.device(device)
        if x.device.type != want_dev.type or (want_dev.index is not None and x.device.index != want_dev.index):
            raise ValueError(f"{name} must be on device {want_dev}, got {x.device}")
    if x.device.type == "meta" or not x.numel():  # shape-only tensors: no values to check
        return x
    with torch.no_grad():
        if finite and (x.is_floating_point() or x.is_complex()) and not bool(torch.isfinite(x).all()):
            bad = int(x.numel() - int(torch.isfinite(x).sum()))
            raise ValueError(f"{name} must be finite, found {bad} NaN/inf value(s)")
        if low is not None and (bool((x <= low).any()) if low_open else bool((x < low).any())):
            raise ValueError(f"{name} must be {'>' if low_open else '>='} {low}, got min {float(x.min())}")
        if high is not None and bool((x > high).any()):
            raise ValueError(f"{name} must be <= {high}, got max {float(x.max())}")
    return x


def check_prob_vector(p: Any, name: str, *, axis: int = -1, atol: float = 1e-6, ndim: int | None = None) -> np.ndarray:
    """Probability vectors along ``axis``: entries in [0, 1] that sum to 1 within ``atol``."""
    arr = check_array(p, name, ndim=ndim, low=-atol, high=1 + atol)
    sums = arr.sum(axis=axis)
    if not np.allclose(sums, 1.0, atol=atol * max(1, arr.shape[axis] if arr.ndim else 1)):
        worst = float(np.max(np.abs(sums - 1.0)))
        raise ValueError(f"{name} must sum to 1 along axis {axis} (probability vectors); worst deviation {worst:.3g}")
    return np.clip(arr, 0.0, 1.0)


def check_stochastic_matrix(P: Any, name: str, *, atol: float = 1e-6) -> np.ndarray:
    """A (..., n, n) or (..., n, m) row-stochastic matrix: every row a probability vector."""
    arr = check_array(P, name, ndim=tuple(range(2, 8)))
    return check_prob_vector(arr, name, axis=-1, atol=atol)


def check_same_length(**arrays: Any) -> int:
    """All keyword arrays have the same first dimension; returns it. ``check_same_length(X=X, y=y)``."""
    lengths = {k: len(v) for k, v in arrays.items()}
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"{k} has {n}" for k, n in lengths.items())
        raise ValueError(f"{' and '.join(lengths)} must have the same number of rows; {desc}")
    return next(iter(lengths.values()), 0)


def check_fitted(estimator: Any, attributes: str | Sequence[str]) -> None:
    """Raise scikit-learn's ``NotFittedError`` unless ``estimator`` has every attribute in ``attributes`` (set by ``fit``)."""
    attrs = [attributes] if isinstance(attributes, str) else list(attributes)
    if not all(getattr(estimator, a, None) is not None for a in attrs):
        try:  # scikit-learn's own class (also a ValueError and AttributeError), so sklearn tooling recognises it
            from sklearn.exceptions import NotFittedError as error
        except ImportError:
            error = NotFittedError
        raise error(f"this {type(estimator).__name__} instance is not fitted yet; call fit(...) first")


def precheck_sklearn_X(X: Any) -> Any:
    """Name ``X`` in the errors of a numeric input before scikit-learn's ``validate_data`` sees it.

    A string is refused; a real numeric array-like must be a finite non-empty 2-D array. Anything else (sparse,
    object or complex data) is left to scikit-learn, whose own errors its estimator checks expect. Returns ``X``
    unchanged (so data frames keep their feature names).

    Examples
    --------
    >>> precheck_sklearn_X([[1.0, float("nan")]])
    Traceback (most recent call last):
    ...
    ValueError: X must be finite, found 1 NaN/inf value(s)
    """
    if isinstance(X, (str, bytes)):
        raise TypeError(f"X must be a 2-D array of numbers (n_samples, n_features), got the string {X[:40]!r}")
    try:
        arr = np.asarray(X)
    except (TypeError, ValueError):
        return X
    if arr.dtype.kind in "biuf":
        if arr.ndim != 2:
            raise ValueError(f"X must be a 2-D array (n_samples, n_features), got shape {arr.shape}. Reshape your "
                             "data either using array.reshape(-1, 1) if your data has a single feature or "
                             "array.reshape(1, -1) if it contains a single sample.")
        check_array(arr, "X", ndim=2, min_size=0)
        if arr.shape[0] == 0:  # scikit-learn's wording, which its estimator checks look for
            raise ValueError(f"X has 0 sample(s) (shape={arr.shape}) while a minimum of 1 is required.")
        if arr.shape[1] == 0:
            raise ValueError(f"X has 0 feature(s) (shape={arr.shape}) while a minimum of 1 is required.")
    return X
