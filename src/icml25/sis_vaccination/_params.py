"""A minimal scikit-learn-style ``get_params``/``set_params`` mixin (scikit-learn is not a dependency here)."""

from __future__ import annotations

import inspect
from typing import Any

__all__ = ["ParamsMixin"]


class ParamsMixin:
    """``get_params``/``set_params`` from the ``__init__`` signature, as in scikit-learn's BaseEstimator."""

    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return [p for p in sig.parameters if p != "self"]

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor parameters as a dict."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params: Any) -> ParamsMixin:
        """Set constructor parameters; unknown names raise ValueError. Returns self."""
        valid = set(self._param_names())
        for key, value in params.items():
            if key not in valid:
                raise ValueError(f"unknown parameter {key!r} for {type(self).__name__}; valid: {sorted(valid)}")
            setattr(self, key, value)
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"
