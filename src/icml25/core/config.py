"""Configuration helpers: frozen-dataclass configs with ``--set key=value`` overrides."""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from typing import Any

__all__ = ["ConfigError", "apply_overrides", "config_to_dict", "parse_set_args"]


class ConfigError(ValueError):
    """A ``--set`` override names an unknown key or has a value of the wrong type."""


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

    Raises
    ------
    ConfigError
        For a key the config lacks (the message lists the valid keys) or a value of the wrong type.
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
    return dataclasses.replace(config, **changes)


def config_to_dict(config: Any) -> dict[str, Any]:
    """A JSON-serialisable dict of a dataclass config (None gives ``{}``)."""
    if config is None:
        return {}
    if dataclasses.is_dataclass(config):
        return json.loads(json.dumps(dataclasses.asdict(config), default=str))
    return dict(config)
