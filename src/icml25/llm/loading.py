"""One string names any backend: ``tiny:<dir>``, ``hf:<path>``, ``pretrained:<name>`` or
``openai:<base_url>#<model>``."""

from __future__ import annotations

from typing import Any

from .base import LanguageModel

__all__ = ["load_model", "load_configured_model", "SPEC_FORMS"]

SPEC_FORMS = ("tiny:<dir saved by TinyGPT.save>", "hf:<local transformers model folder>",
              "pretrained:<name>  (gemma-3-270m, smollm2-135m-instruct; see `icml25 models`)",
              "openai:<base_url>#<model>  (e.g. openai:http://localhost:8000/v1#Qwen/Qwen2.5-0.5B-Instruct)")


def load_model(spec: str, **kwargs: Any) -> LanguageModel:
    """Build a language model from a spec string.

    Parameters
    ----------
    spec : str
        ``"tiny:<dir>"`` loads :class:`~icml25.llm.tiny.TinyGPT` from a folder written by ``TinyGPT.save``;
        ``"hf:<path>"`` a :class:`~icml25.llm.hf.HFModel` from a local transformers folder;
        ``"pretrained:<name>"`` an :class:`~icml25.llm.hf.HFModel` of a pretrained model installed from PyPI
        (:mod:`icml25.llm.pretrained`; de-quantised and cached on first use);
        ``"openai:<base_url>#<model>"`` an :class:`~icml25.llm.openai_server.OpenAIServer` client.
    **kwargs
        Passed to the backend's constructor (e.g. ``device="cuda"`` for ``hf:``, ``api_key=...`` for ``openai:``).

    Returns
    -------
    LanguageModel
    """
    if not isinstance(spec, str):
        raise TypeError(f"spec must be a string, got {type(spec).__name__}")
    kind, sep, rest = spec.partition(":")
    kind = kind.strip().lower()
    if not sep or not rest.strip():
        raise ValueError(f"model spec {spec!r} is not one of: " + "; ".join(SPEC_FORMS))
    rest = rest.strip()
    if kind == "tiny":
        from .tiny import TinyGPT

        if kwargs:
            raise TypeError(f"tiny: specs take no keyword arguments, got {sorted(kwargs)}")
        return TinyGPT.load(rest)
    if kind == "hf":
        from .hf import HFModel

        return HFModel(rest, **kwargs)
    if kind == "pretrained":
        from .pretrained import load_pretrained

        return load_pretrained(rest, **kwargs)
    if kind == "openai":
        from .openai_server import OpenAIServer

        base_url, hash_, model = rest.rpartition("#")
        if not hash_ or not base_url or not model:
            raise ValueError(f"model spec {spec!r}: expected openai:<base_url>#<model>, "
                             "e.g. openai:http://localhost:8000/v1#my-model")
        return OpenAIServer(base_url, model, **kwargs)
    raise ValueError(f"unknown model kind {kind!r} in spec {spec!r}; use one of: " + "; ".join(SPEC_FORMS))


def load_configured_model(spec: str, *, field: str, paper: str, device: str = "cpu", hint: str = "",
                          **kwargs: Any) -> LanguageModel:
    """Load the model a reproduction's config names; any failure becomes one :class:`~icml25.core.errors.UsageError`
    line that names the config field to change (what a CLI user can act on, instead of a traceback).

    Parameters
    ----------
    spec : str
        A :func:`load_model` spec.
    field : str
        The config field that holds ``spec`` (the message says ``--set <field>=...``).
    paper : str
        The paper's slug, which starts the message.
    device : str
        Torch device for ``hf:`` / ``pretrained:`` models (ignored by the other kinds).
    hint : str
        What the model is used for, appended to the message (e.g. "the watermark is applied to its logits").
    **kwargs
        Passed to :func:`load_model`; ``pretrained:`` models load without progress output unless ``progress`` is
        given.
    """
    from icml25.core.errors import UsageError

    kind = spec.partition(":")[0].strip().lower() if isinstance(spec, str) else ""
    kw = dict(kwargs)
    if kind == "pretrained":
        kw.setdefault("progress", False)
    if kind in ("hf", "pretrained") and device != "cpu":
        kw["device"] = device
    try:
        return load_model(spec, **kw)
    except (OSError, ValueError, TypeError, ImportError, RuntimeError) as exc:
        why = " ".join(str(exc).split())[:300]
        raise UsageError(f"{paper}: cannot load model {spec!r} ({why}); pass --set {field}=hf:/path/to/local/weights "
                         "or openai:http://host:8000/v1#<served name> (an OpenAI-compatible server such as vLLM)"
                         + (f"; {hint}" if hint else "")) from exc
