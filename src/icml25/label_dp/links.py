"""Inverse link functions F and their densities f for binary response models ``P(y=1|x) = F(x'beta)``."""

from __future__ import annotations

import numpy as np
from scipy.special import expit, ndtr

__all__ = ["LINKS", "link_functions"]

LINKS = ("logit", "probit", "cloglog")


def _logit(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    F = expit(t)
    return F, F * (1.0 - F)


def _probit(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return ndtr(t), np.exp(-0.5 * t * t) / np.sqrt(2 * np.pi)


def _cloglog(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    et = np.exp(np.minimum(t, 700.0))
    return -np.expm1(-et), et * np.exp(-et)


_FUNCS = {"logit": _logit, "probit": _probit, "cloglog": _cloglog}


def link_functions(link: str):  # type: ignore[no-untyped-def]
    """``t -> (F(t), f(t))`` for ``link`` in ``("logit", "probit", "cloglog")``.

    Examples
    --------
    >>> F, f = link_functions("logit")(np.array([0.0]))
    >>> float(F[0]), float(f[0])
    (0.5, 0.25)
    """
    if not isinstance(link, str) or link not in _FUNCS:
        raise ValueError(f"link must be one of {LINKS}, got {link!r}")
    return _FUNCS[link]
