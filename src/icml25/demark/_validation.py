"""Input checks of the De-mark reproduction that ``icml25.core.validation`` does not have."""

from __future__ import annotations


def check_local_model_spec(value: object, name: str, allow_empty: bool = False) -> None:
    """``value`` is a local model spec ``hf:<folder>`` or ``pretrained:<name>`` (the watermark is applied in-process
    to its logits), or ``""`` when ``allow_empty``; a ValueError names ``name`` otherwise."""
    if not isinstance(value, str) or (value or not allow_empty) and (
            ":" not in value or value.split(":", 1)[0].lower() not in ("hf", "pretrained")
            or not value.split(":", 1)[1].strip()):
        raise ValueError(f"{name} must be a local model spec hf:<folder> or pretrained:<name> (the watermark "
                         f"is applied in-process to its logits){'' if not allow_empty else ', or empty'}"
                         f", got {value!r}")
