"""Input checks of the task-superposition reproduction that ``icml25.core.validation`` does not have: model names or
load_model specs, the ``"setting:task1,task2"`` strings of the real-model settings, and the short model tags of the
claim ids (which must be distinct)."""

from __future__ import annotations

import re
from typing import Any

from icml25.core.validation import check_option

#: the pretrained names of icml25.llm that the reproduction knows (measured costs in the plan)
REAL_MODELS = ("smollm2-135m-instruct", "gemma-3-270m")


def check_model_name(name: str) -> None:
    """A pretrained name of icml25.llm or a load_model spec (``hf:<folder>``, ``openai:<url>#<model>``, ...)."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"real_models entries must be model names or specs, got {name!r}")
    if ":" not in name:
        check_option(name, "real_models", REAL_MODELS)
    elif name.split(":", 1)[0].lower() not in ("hf", "pretrained", "openai", "tiny"):
        raise ValueError(f"real_models entry {name!r}: expected a pretrained name {REAL_MODELS} or a spec "
                         "hf:<folder>, pretrained:<name>, openai:<base_url>#<model> or tiny:<dir>")


def model_tag(name: str) -> str:
    """Short model tag for claim ids: 'smollm2' / 'gemma' for the pretrained names (as before), else the
    lower-cased last path component of the spec ('qwen1.5-72b')."""
    if ":" not in name:
        return name.split("-")[0]
    last = re.split(r"[/#:]", name.rstrip("/"))[-1]
    return re.sub(r"[^a-z0-9.]+", "-", last.lower()).strip("-") or "model"


def parse_setting(spec: str) -> Any:
    """``"country:capital,continent"`` (official format) or ``"country:capital,continent:spaced"`` -> the family."""
    from .tasks import official_setting

    if not isinstance(spec, str) or ":" not in spec:
        raise ValueError(f"real_settings entries must look like 'country:capital,continent', got {spec!r}")
    parts = spec.split(":")
    names = [t for t in parts[1].split(",") if t]
    if len(names) != 2 or len(parts) > 3 or (len(parts) == 3 and parts[2] != "spaced"):
        raise ValueError(f"real_settings entries name exactly two tasks (optionally ':spaced'), got {spec!r}")
    return official_setting(parts[0], names, spaced=len(parts) == 3)


def parse_family(spec: str) -> Any:
    """A competence setting: ``"AB"`` (the Figure-2 tasks), ``"country:capital,upper"`` (>= 2 named tasks) or
    ``"country::spaced"`` / ``"country:capital,upper:spaced"`` (the spaced format) -> the family."""
    from .tasks import official_setting

    if not isinstance(spec, str) or not spec:
        raise ValueError(f"competence_settings entries must look like 'AB' or 'country::spaced', got {spec!r}")
    parts = spec.split(":")
    names = [t for t in parts[1].split(",") if t] if len(parts) > 1 else []
    if len(parts) > 3 or (len(parts) == 3 and parts[2] != "spaced") or len(names) == 1:
        raise ValueError(f"competence_settings entries look like 'AB', 'country:capital,upper' or "
                         f"'country::spaced' (two or more tasks, or none for the Figure-2 tasks), got {spec!r}")
    return official_setting(parts[0], names or None, spaced=len(parts) == 3)


def pair_setting(spec: str, first: str, second: str) -> str:
    """The two-task real-model setting (``parse_setting`` format) of tasks ``first``, ``second`` of the competence
    setting ``spec``: ``pair_setting("country::spaced", "capital", "upper") == "country:capital,upper:spaced"``."""
    parts = spec.split(":")
    return f"{parts[0]}:{first},{second}" + (":spaced" if len(parts) == 3 else "")


def setting_tag(spec: str) -> str:
    """The setting part of claim ids: ``"AB"``, ``"country-spaced"`` (distinct for the two country formats)."""
    parts = spec.split(":")
    return parts[0] + ("-spaced" if len(parts) == 3 else "")
