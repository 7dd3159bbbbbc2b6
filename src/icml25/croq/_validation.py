"""Input checks of the CROQ reproduction that ``icml25.core.validation`` does not have."""

from __future__ import annotations


def is_model_spec(v: object) -> bool:
    """A load_model spec: ``hf:<folder>``, ``pretrained:<name>``, ``openai:<url>#<name>`` or ``tiny:<dir>``."""
    if not isinstance(v, str) or ":" not in v:
        return False
    kind, rest = v.split(":", 1)
    return kind.lower() in ("hf", "pretrained", "openai", "tiny") and bool(rest.strip())
