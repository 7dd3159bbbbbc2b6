"""Configuration helpers: frozen-dataclass configs with ``--set key=value`` overrides."""

from __future__ import annotations

import dataclasses
import json
import re
import types
import typing
from typing import Any

from .errors import UsageError

__all__ = ["ConfigError", "apply_overrides", "config_to_dict", "parse_set_args", "validate_fields"]


class ConfigError(UsageError):
    """A ``--set`` override names an unknown key, has a value of the wrong type, or fails the config's validation.

    A ``UsageError`` (so a ``ValueError``): the CLI prints it as one line and exits with code 2.
    """


def parse_set_args(items: list[str] | None) -> dict[str, str]:
    """Parse ``["key=value", ...]`` into a dict, raising :class:`ConfigError` on a malformed item."""
    out: dict[str, str] = {}
    for item in items or []:
        if "=" not in item:
            raise ConfigError(f"--set expects key=value, got {item!r}")
        key, value = item.split("=", 1)
        out[key.strip()] = value.strip()
    return out


def _coerce(name: str, text: str, typ: Any, current: Any) -> Any:
    origin = typing.get_origin(typ)
    args = typing.get_args(typ)
    if origin in (typing.Union, types.UnionType):
        if text.lower() in ("none", "null") and type(None) in args:
            return None
        non_none = [a for a in args if a is not type(None)]
        if len(non_none) == 1:
            return _coerce(name, text, non_none[0], current)
    if typ is bool or isinstance(current, bool):
        low = text.lower()
        if low in ("1", "true", "yes", "on"):
            return True
        if low in ("0", "false", "no", "off"):
            return False
        raise ConfigError(f"--set {name}: expected a boolean (true/false), got {text!r}")
    if typ is int or (typ is Any and isinstance(current, int)):
        try:
            return int(text)
        except ValueError:
            raise ConfigError(f"--set {name}: expected an integer, got {text!r}") from None
    if typ is float or (typ is Any and isinstance(current, float)):
        try:
            return float(text)
        except ValueError:
            raise ConfigError(f"--set {name}: expected a number, got {text!r}") from None
    if typ is str:
        return text
    if origin in (tuple, list) or isinstance(current, (tuple, list)):
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            value = [v.strip() for v in text.strip("()[]").split(",") if v.strip()]
        if not isinstance(value, list):
            value = [value]
        inner = args[0] if args else None
        if inner is None and current:  # a bare ``tuple``/``list`` field: its default's element types decide
            kinds = {type(v) for v in current}
            inner = int if kinds == {int} else float if kinds <= {int, float} else None
        if inner in (int, float):
            try:
                value = [inner(v) for v in value]
            except (TypeError, ValueError):
                raise ConfigError(f"--set {name}: expected a list of {inner.__name__}, got {text!r}") from None
        return tuple(value) if (origin is tuple or isinstance(current, tuple)) else list(value)
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def apply_overrides(config: Any, overrides: dict[str, str]) -> Any:
    """Return a copy of the frozen dataclass ``config`` with string ``overrides`` coerced to the field types.

    The copy is built with :func:`dataclasses.replace`, so the config's ``__post_init__`` validates it. The
    convention for every reproduction ``Config``: ``__post_init__`` checks ranges, types and relations of its
    fields (e.g. with :mod:`icml25.core.validation`, or :func:`validate_fields`) and raises ``ValueError`` or
    ``TypeError`` whose message names the field; here that becomes a :class:`ConfigError`
    ``"--set <field>: <message>"`` (CLI: one line, exit 2).

    Raises
    ------
    ConfigError
        For a key the config lacks (the message lists the valid keys), a value of the wrong type, or a value the
        config's validation rejects.
    """
    if not overrides:
        return config
    if config is None:
        raise ConfigError("this reproduction has no configuration; --set is not available for it")
    fields = {f.name: f for f in dataclasses.fields(config)}
    hints = typing.get_type_hints(type(config))
    changes = {}
    for key, text in overrides.items():
        if key not in fields:
            raise ConfigError(f"--set {key}: unknown key for {type(config).__name__}; valid keys: "
                              f"{', '.join(sorted(fields))}")
        changes[key] = _coerce(key, text, hints.get(key, Any), getattr(config, key))
    try:
        return dataclasses.replace(config, **changes)
    except (ValueError, TypeError) as exc:
        msg = " ".join(str(exc).split())
        named = [k for k in changes if re.search(r"(?<![A-Za-z0-9_])" + re.escape(k) + r"(?![A-Za-z0-9_])", msg)]
        keys = named if len(named) == 1 else list(changes)
        raise ConfigError(f"--set {', '.join(keys)}: {msg}") from exc


def config_to_dict(config: Any) -> dict[str, Any]:
    """A JSON-serialisable dict of a dataclass config (None gives ``{}``)."""
    if config is None:
        return {}
    if dataclasses.is_dataclass(config):
        return json.loads(json.dumps(dataclasses.asdict(config), default=str))
    return dict(config)


def validate_fields(config: Any, **rules: dict[str, Any]) -> None:
    """Check fields of a config (call it from ``__post_init__``); raises ``ValueError``/``TypeError`` naming the field.

    Each keyword is a field name; its value says what the field must be, with the keys of
    :mod:`icml25.core.validation`: ``int=True`` (an integer; else a real number), ``low``/``high`` (inclusive
    bounds), ``low_open``/``high_open`` (make them strict), ``prob=True`` (a probability in [0, 1]),
    ``options=[...]`` (one of these values), ``none=True`` (``None`` is also allowed). Relations between fields
    (``n_cal < n``) are plain checks after the call.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Config:
    ...     n: int = 100
    ...     alpha: float = 0.1
    ...     def __post_init__(self):
    ...         validate_fields(self, n=dict(int=True, low=1), alpha=dict(low=0, high=1, low_open=True, high_open=True))
    >>> Config(n=0)
    Traceback (most recent call last):
    ...
    ValueError: n must be >= 1, got 0
    """
    from .validation import check_int, check_option, check_probability, check_real

    for name, rule in rules.items():
        value = getattr(config, name)
        rule = dict(rule)
        if rule.pop("none", False) and value is None:
            continue
        if "options" in rule:
            check_option(value, name, rule.pop("options"))
        elif rule.pop("prob", False):
            check_probability(value, name)
        elif rule.pop("int", False):
            check_int(value, name, low=rule.pop("low", None), high=rule.pop("high", None))
        else:
            check_real(value, name, low=rule.pop("low", None), high=rule.pop("high", None),
                       low_open=rule.pop("low_open", False), high_open=rule.pop("high_open", False))
        if rule:
            raise TypeError(f"validate_fields({name}=...): unknown rule keys {sorted(rule)}")
