"""LoRA fine-tuning of a causal language model on (prompt, answer) pairs, loss on the answer tokens only.

:func:`finetune` is the one LoRA fine-tuning entry point of the package (TEDUO's LLM policy and rStar-Math's LoRA
policy SFT both run through it): it attaches a ``peft`` LoRA adapter (:func:`attach_lora`) to a causal LM, builds
right-padded ``prompt ⊕ answer`` batches whose targets are the answer tokens only (:func:`answer_batch`), and
trains the adapter's matrices alone with :func:`icml25.llm.training.train_loop` on the mean next-token
cross-entropy over those targets (:func:`answer_loss`). The base weights never change.

``peft`` is imported on first use (``pip install 'icml25[llm]'``).
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from icml25.core.optional import require
from icml25.core.validation import check_int, check_option, check_positive, check_probability, check_real

__all__ = ["finetune", "FineTuned", "attach_lora", "lora_parameters", "answer_batch", "answer_loss", "AnswerBatch"]

#: target value of a position without loss (prompt tokens, masked answer tokens, padding)
IGNORE = -100
#: how :func:`finetune` draws a batch
SAMPLERS = ("buckets", "uniform")


# ---------------------------------------------------------------------------------------------------- the network
def _network(model: Any, name: str = "model") -> torch.nn.Module:
    """The torch network of an :class:`~icml25.llm.HFModel`, a transformers model or a peft model."""
    if isinstance(model, torch.nn.Module):
        return model
    net = getattr(model, "model", None) if hasattr(model, "prompt_ids") else None  # an HFModel (builds the network)
    if isinstance(net, torch.nn.Module):
        return net
    raise TypeError(f"{name} must be an icml25.llm.HFModel, a transformers causal LM or a peft model (a "
                    f"torch.nn.Module), got {type(model).__name__}")


def _is_peft(net: Any) -> bool:
    return hasattr(net, "peft_config") and hasattr(net, "get_base_model")


def _forward_net(model: Any) -> torch.nn.Module:
    """The module to call: a peft model's base model (its LoRA layers are injected there), else the network."""
    net = _network(model)
    return net.get_base_model() if _is_peft(net) else net


def _check_adapter(adapter: Any) -> str:
    if not isinstance(adapter, str) or not adapter.strip() or "." in adapter:
        raise ValueError(f"adapter must be a non-empty name without '.', got {adapter!r}")
    return adapter


def attach_lora(model: Any, *, r: int = 16, alpha: float = 32.0, lora_dropout: float = 0.0,
                target_modules: str | Sequence[str] = "all-linear", adapter: str = "default", seed: int = 0,
                config: Any = None) -> Any:
    """Attach a new LoRA adapter to a causal LM; returns the peft model.

    The adapter's update of a weight ``W`` is ``(alpha / r) · B A`` with ``A`` drawn at random (torch's RNG forked
    and seeded with ``seed``, so the same seed gives the same adapter) and ``B = 0`` (the model is unchanged until
    trained). The LoRA layers are injected into ``model``'s network in place (``peft``), so an
    :class:`~icml25.llm.HFModel` whose network this is runs with the adapter afterwards; pass a copy to keep the
    original. On a peft model, the adapter is added next to the existing ones (``set_adapter`` switches).

    Parameters
    ----------
    model : icml25.llm.HFModel, transformers PreTrainedModel or peft.PeftModel
        The causal LM.
    r : int
        LoRA rank (``>= 1``).
    alpha : float
        Scaling numerator (``> 0``).
    lora_dropout : float
        Dropout on the LoRA input, in ``[0, 1)``.
    target_modules : str or list of str
        Modules that get adapters (peft's ``"all-linear"``: every linear layer but the output layer; or names such
        as ``["q_proj", "v_proj"]``).
    adapter : str
        Name of the new adapter.
    seed : int
        Seed of the adapter's random initialisation.
    config : peft.LoraConfig, optional
        A ready configuration (a copy is used); then ``r``, ``alpha``, ``lora_dropout`` and ``target_modules`` are not
        used.

    Returns
    -------
    peft.PeftModel
        The model with the adapter (the new adapter's parameters: :func:`lora_parameters`).
    """
    peft = require("peft", extra="llm")
    net = _network(model)
    adapter, seed = _check_adapter(adapter), check_int(seed, "seed", low=0)
    if config is None:
        cfg = _lora_config(peft, r, alpha, lora_dropout, target_modules)
    elif isinstance(config, peft.LoraConfig):
        cfg = copy.deepcopy(config)
    else:
        raise TypeError(f"config must be a peft.LoraConfig, got {type(config).__name__}")
    first = next(net.parameters(), None)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        if _is_peft(net):
            if adapter in net.peft_config:
                raise ValueError(f"adapter {adapter!r} already exists on this model")
            net.add_adapter(adapter, cfg)
            out = net
        else:
            out = peft.get_peft_model(net, cfg, adapter_name=adapter)
    if first is not None:
        out.get_base_model().to(first.device)
    lora_parameters(out, adapter)  # raises when target_modules matched no layer
    return out


def _lora_config(peft: Any, r: Any, alpha: Any, lora_dropout: Any, target_modules: Any) -> Any:
    r, alpha = check_int(r, "r", low=1), check_positive(alpha, "alpha")
    dropout = check_probability(lora_dropout, "lora_dropout", open_high=True)
    if isinstance(target_modules, str) and target_modules:
        modules: Any = target_modules
    elif (isinstance(target_modules, Sequence) and not isinstance(target_modules, str) and target_modules
          and all(isinstance(m, str) and m for m in target_modules)):
        modules = list(target_modules)
    else:
        raise TypeError(f"target_modules must be 'all-linear' or a non-empty list of module names, got "
                        f"{target_modules!r}")
    return peft.LoraConfig(r=r, lora_alpha=alpha, lora_dropout=dropout, target_modules=modules, bias="none",
                           task_type="CAUSAL_LM")


def lora_parameters(model: Any, adapter: str = "default") -> list[torch.nn.Parameter]:
    """The LoRA matrices (``lora_A``, ``lora_B``) of one adapter of a peft model, in module order."""
    net = _network(model)
    tail = f".{_check_adapter(adapter)}.weight"
    params = [p for n, p in net.named_parameters() if "lora_" in n and n.endswith(tail)]
    if not params:
        raise ValueError(f"adapter {adapter!r} has no LoRA parameters (not attached, or target_modules matched no "
                         f"layer)")
    return params


# ---------------------------------------------------------------------------------------------------- batches
@dataclass
class AnswerBatch:
    """Right-padded ``prompt ⊕ answer`` token ids and their next-token targets.

    Attributes
    ----------
    input_ids : torch.LongTensor, shape (B, T)
        Prompt then answer tokens, right-padded with ``pad_id``.
    attention_mask : torch.LongTensor, shape (B, T)
        1 on real tokens, 0 on padding.
    targets : torch.LongTensor, shape (B, T)
        ``targets[b, t]`` is the token the logits at position ``t`` must predict (``input_ids[b, t + 1]``) where
        that token is a trained answer token, else ``-100`` (prompt, masked answer tokens, padding).
    """

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    targets: torch.Tensor

    @property
    def n_targets(self) -> int:
        """Number of answer tokens the loss covers."""
        return int((self.targets != IGNORE).sum())


def _ids(x: Any, what: str) -> list[int]:
    if isinstance(x, (str, bytes)) or not isinstance(x, (Sequence, np.ndarray)):
        raise TypeError(f"{what} must be a sequence of token ids, got {type(x).__name__}")
    out = []
    for t in x:
        if isinstance(t, (bool, np.bool_)) or not isinstance(t, (int, np.integer)) or t < 0:
            raise ValueError(f"{what} must hold non-negative integer token ids, got {t!r}")
        out.append(int(t))
    return out


def _row(prompt_ids: Any, answer_ids: Any, answer_mask: Any, eos: int | None, max_length: int | None,
         what: str) -> tuple[list[int], list[bool]]:
    """``(ids, trained)``: ``prompt ⊕ answer (⊕ eos)`` (first ``max_length`` tokens) and which are targets."""
    p, a = _ids(prompt_ids, f"{what} prompt ids"), _ids(answer_ids, f"{what} answer ids")
    if not p:
        raise ValueError(f"{what} has an empty prompt: the first answer token needs one token before it (e.g. BOS)")
    if not a:
        raise ValueError(f"{what} has an empty answer: there is nothing to train on")
    if answer_mask is None:
        keep = [True] * len(a)
    else:
        if isinstance(answer_mask, (str, bytes)) or not isinstance(answer_mask, (Sequence, np.ndarray)) or \
                len(answer_mask) != len(a):
            raise ValueError(f"{what} answer mask must be a sequence of {len(a)} booleans (one per answer token)")
        keep = [bool(m) for m in answer_mask]
    ids, trained = p + a, [False] * len(p) + keep
    if eos is not None:
        ids, trained = ids + [eos], trained + [True]
    if max_length is not None:
        ids, trained = ids[:max_length], trained[:max_length]
    if not any(trained):
        raise ValueError(f"{what} has no trained answer token"
                         + (f" within max_length={max_length}" if max_length is not None else ""))
    return ids, trained


def _pad(rows: Sequence[tuple[list[int], list[bool]]], pad_id: int, device: Any = None) -> AnswerBatch:
    T = max(len(ids) for ids, _ in rows)
    x = torch.full((len(rows), T), pad_id, dtype=torch.long)
    y = torch.full((len(rows), T), IGNORE, dtype=torch.long)
    mask = torch.zeros((len(rows), T), dtype=torch.long)
    for b, (ids, trained) in enumerate(rows):
        a = torch.tensor(ids, dtype=torch.long)
        x[b, :len(ids)], mask[b, :len(ids)] = a, 1
        y[b, :len(ids) - 1] = torch.where(torch.tensor(trained[1:], dtype=torch.bool), a[1:], IGNORE)
    return AnswerBatch(x.to(device), mask.to(device), y.to(device))


def answer_batch(pairs: Sequence[Any], pad_id: int = 0, eos: int | None = None, max_length: int | None = None,
                 device: Any = None) -> AnswerBatch:
    """Right-padded batch of ``prompt ⊕ answer`` token ids whose targets are the answer tokens only.

    Parameters
    ----------
    pairs : sequence of (prompt_ids, answer_ids) or (prompt_ids, answer_ids, answer_mask)
        Token ids (non-empty sequences of non-negative ints); the optional ``answer_mask`` (one bool per answer
        token) leaves the ``False`` answer tokens out of the loss (e.g. tool outputs inside an answer).
    pad_id : int
        Padding token (never a target; any value works with the attention mask).
    eos : int, optional
        A token appended to every answer and trained (the end-of-sequence token, so the model learns to stop).
    max_length : int, optional
        Keep the first ``max_length`` tokens of every ``prompt ⊕ answer``.
    device : torch.device or str, optional
        Where the tensors go.

    Returns
    -------
    AnswerBatch
        ``input_ids``, ``attention_mask`` and ``targets``, each of shape ``(len(pairs), longest)``.
    """
    pad_id = check_int(pad_id, "pad_id", low=0)
    eos = None if eos is None else check_int(eos, "eos", low=0)
    max_length = None if max_length is None else check_int(max_length, "max_length", low=2)
    if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Sequence) or not pairs:
        raise ValueError("pairs must be a non-empty list of (prompt_ids, answer_ids[, answer_mask])")
    return _pad([_row(*_unpack(pr, f"pairs[{i}]"), eos, max_length, f"pairs[{i}]") for i, pr in enumerate(pairs)],
                pad_id, device)


def _unpack(item: Any, what: str) -> tuple[Any, Any, Any]:
    if not isinstance(item, (tuple, list)) or len(item) not in (2, 3):
        raise ValueError(f"{what} must be a (prompt, answer) or (prompt_ids, answer_ids[, answer_mask]) pair, got "
                         f"{item!r:.80}")
    return item[0], item[1], item[2] if len(item) == 3 else None


def answer_loss(model: Any, batch: AnswerBatch) -> torch.Tensor:
    """Mean next-token cross-entropy of ``model`` over the answer tokens of ``batch`` (a scalar tensor).

    ``loss = -mean over (b, t) with targets[b, t] != -100 of log softmax(logits[b, t])[targets[b, t]]``; prompt
    tokens and padding do not contribute. Only the positions where some row has a target are projected to the
    vocabulary (``logits_to_keep`` where the model accepts it).

    Parameters
    ----------
    model : icml25.llm.HFModel, transformers causal LM or peft model
        The network (its active adapter is used).
    batch : AnswerBatch
        From :func:`answer_batch`.

    Returns
    -------
    torch.Tensor
        Shape ``()``, differentiable.
    """
    if not isinstance(batch, AnswerBatch):
        raise TypeError(f"batch must be an AnswerBatch (answer_batch), got {type(batch).__name__}")
    net = _forward_net(model)
    pos = (batch.targets != IGNORE).any(0).nonzero().squeeze(1)
    if not len(pos):
        raise ValueError("batch has no answer token to train on")
    if "logits_to_keep" in inspect.signature(net.forward).parameters:
        logits = net(input_ids=batch.input_ids, attention_mask=batch.attention_mask, logits_to_keep=pos).logits
    else:
        logits = net(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits[:, pos]
    return F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), batch.targets[:, pos].reshape(-1),
                           ignore_index=IGNORE)


# ---------------------------------------------------------------------------------------------------- training
@dataclass
class FineTuned:
    """What :func:`finetune` returns.

    Attributes
    ----------
    model : peft.PeftModel
        The causal LM with the trained adapter active (eval mode).
    adapter : str
        The adapter's name.
    losses : list of float
        The loss of every optimiser step.
    tokens : int
        Real (non-padding) tokens in all training batches together.
    """

    model: Any
    adapter: str
    losses: list[float]
    tokens: int


class _Adapter(torch.nn.Module):
    """The adapter's parameters as one module for :func:`train_loop`; its train/eval mode is the network's."""

    def __init__(self, net: torch.nn.Module, params: list[torch.nn.Parameter]) -> None:
        super().__init__()
        self.lora = torch.nn.ParameterList(params)
        object.__setattr__(self, "_net", net)  # not a submodule: its base weights are not trained

    def train(self, mode: bool = True) -> _Adapter:
        super().train(mode)
        self._net.train(mode)
        return self


class _Encoder:
    """Token ids of a data item: ids as given, strings through the HFModel or tokenizer."""

    def __init__(self, model: Any, tokenizer: Any) -> None:
        self.prompt: Callable[[str], list[int]] | None = None
        self.answer: Callable[[str], list[int]] | None = None
        src = tokenizer if tokenizer is not None else model
        if hasattr(src, "prompt_ids") and hasattr(src, "continuation_ids"):  # an HFModel
            self.prompt, self.answer = src.prompt_ids, src.continuation_ids
        elif tokenizer is not None:
            if not callable(getattr(tokenizer, "encode", None)):
                raise TypeError(f"tokenizer must have encode(text, add_special_tokens=...) (a transformers "
                                f"tokenizer), got {type(tokenizer).__name__}")
            self.prompt = lambda s: list(tokenizer.encode(s, add_special_tokens=True))
            self.answer = lambda s: list(tokenizer.encode(s, add_special_tokens=False))

    def __call__(self, item: Any, what: str) -> tuple[Any, Any, Any]:
        p, a, m = _unpack(item, what)
        if isinstance(p, str) or isinstance(a, str):
            if not (isinstance(p, str) and isinstance(a, str)):
                raise TypeError(f"{what} must hold two strings or two id sequences, got {type(p).__name__} and "
                                f"{type(a).__name__}")
            if self.prompt is None or self.answer is None:
                raise TypeError(f"{what} holds text: pass an icml25.llm.HFModel as model, or a tokenizer")
            if not a.strip():
                raise ValueError(f"{what} has an empty answer: there is nothing to train on")
            return self.prompt(p), self.answer(a), m
        return p, a, m


def _special(model: Any, net: torch.nn.Module, tokenizer: Any, attr: str) -> int | None:
    """The model's eos / pad id: the HFModel's, else the tokenizer's, else the network config's."""
    if attr == "eos" and getattr(model, "eos_ids", None):
        return int(model.eos_ids[0])
    if attr == "pad" and getattr(model, "pad_id", None) is not None:
        return int(model.pad_id)
    tid = getattr(tokenizer, f"{attr}_token_id", None)
    if tid is None:
        tid = getattr(getattr(net, "config", None), f"{attr}_token_id", None)
    if isinstance(tid, (list, tuple)):
        tid = tid[0] if tid else None
    return None if tid is None else int(tid)


def finetune(model: Any, data: Sequence[Any], *, steps: int = 100, lr: float = 2e-4, batch_size: int = 8,
             r: int = 16, alpha: float = 32.0, lora_dropout: float = 0.0,
             target_modules: str | Sequence[str] = "all-linear", adapter: str = "default", tokenizer: Any = None,
             eos: bool | int = True, pad_id: int | None = None, max_length: int | None = None,
             sampler: str = "buckets", warmup: int = 0, min_lr_ratio: float = 0.1, weight_decay: float = 0.0,
             grad_clip: float = 1.0, seed: int = 0, progress: bool = False,
             desc: str = "LoRA fine-tuning", stop: Any = None) -> FineTuned:
    """LoRA fine-tuning of a causal LM on (prompt, answer) pairs with the loss on the answer tokens only.

    Attaches a LoRA adapter (:func:`attach_lora`, or trains the existing adapter ``adapter`` of a peft model) and
    runs :func:`~icml25.llm.training.train_loop` over its matrices only (AdamW, warm-up + cosine decay to
    ``min_lr_ratio * lr``, gradient clipping, every parameter decayed): each step draws ``batch_size`` examples,
    right-pads ``prompt ⊕ answer (⊕ eos)`` (:func:`answer_batch`) and minimises the mean next-token cross-entropy
    over the answer tokens (:func:`answer_loss`). The base weights never change; the LoRA layers are injected
    into ``model``'s network in place (pass a copy to keep the original). Seeded: the same ``seed`` and data give
    the same adapter (the LoRA initialisation, the batches and dropout all follow from it).

    Parameters
    ----------
    model : icml25.llm.HFModel, transformers causal LM or peft.PeftModel
        The model to adapt (an HFModel also tokenizes text pairs, and gives the pad and end-of-sequence ids).
    data : sequence
        Non-empty; each item is ``(prompt, answer)`` strings (tokenized with ``model``'s :meth:`prompt_ids` /
        :meth:`continuation_ids`, or ``tokenizer``), or ``(prompt_ids, answer_ids)`` / ``(prompt_ids, answer_ids,
        answer_mask)`` token ids (``answer_mask``: one bool per answer token, ``False`` = no loss there). Items are
        tokenized on first use, so a lazy sequence works (with ``sampler="uniform"`` only drawn items are read).
    steps, lr, batch_size : int, float, int
        Optimiser steps, peak learning rate, examples per step.
    r, alpha, lora_dropout, target_modules : int, float, float, str or list of str
        The adapter (:func:`attach_lora`); not used when ``adapter`` already exists on a peft ``model``.
    adapter : str
        Name of the adapter to attach (or to train, if ``model`` is a peft model that has it).
    tokenizer : transformers tokenizer, optional
        Tokenizes text pairs when ``model`` is not an HFModel.
    eos : bool or int
        Append an end-of-sequence token to every answer (trained, so the model learns to stop): ``True`` the
        model's (an error if it has none), an int that token id, ``False`` none.
    pad_id : int, optional
        Padding id (default: the model's; any value works, padding is masked).
    max_length : int, optional
        Keep the first ``max_length`` tokens of every example.
    sampler : {"buckets", "uniform"}
        ``"buckets"``: :class:`~icml25.llm.training.LengthBuckets` (similar lengths, less padding; every item is
        tokenized up front); ``"uniform"``: ``min(batch_size, len(data))`` distinct items uniformly at random.
    warmup, min_lr_ratio, weight_decay, grad_clip : int, float, float, float
        The :func:`train_loop` schedule (``grad_clip=0``: no clipping; ``min_lr_ratio=1``: constant rate).
    seed : int
        Seed of the adapter initialisation, the batches and dropout.
    progress : bool
        Show a progress bar labelled ``desc``.
    desc : str
        Label of the progress bar.
    stop : callable, optional
        ``stop(losses) -> bool`` after every step; True ends training early (:func:`train_loop`).

    Returns
    -------
    FineTuned
        ``model`` (the peft model, adapter active, eval mode), ``adapter``, ``losses`` (one per step) and
        ``tokens`` (real tokens trained on).
    """
    from .training import LengthBuckets, train_loop

    steps, batch_size = check_int(steps, "steps", low=1), check_int(batch_size, "batch_size", low=1)
    lr = check_positive(lr, "lr")
    warmup = check_int(warmup, "warmup", low=0)
    min_lr_ratio = check_probability(min_lr_ratio, "min_lr_ratio")
    weight_decay, grad_clip = check_real(weight_decay, "weight_decay", low=0.0), check_real(grad_clip, "grad_clip",
                                                                                            low=0.0)
    seed, adapter = check_int(seed, "seed", low=0), _check_adapter(adapter)
    check_option(sampler, "sampler", SAMPLERS)
    max_length = None if max_length is None else check_int(max_length, "max_length", low=2)
    if isinstance(data, (str, bytes)) or not isinstance(data, Sequence):
        raise TypeError(f"data must be a sequence of (prompt, answer) pairs, got {type(data).__name__}")
    if not len(data):
        raise ValueError("data must be a non-empty sequence of (prompt, answer) pairs")
    net = _network(model)
    encode = _Encoder(model, tokenizer)
    if isinstance(eos, (bool, np.bool_)):
        eos_id = _special(model, net, tokenizer, "eos") if eos else None
        if eos and eos_id is None:
            raise ValueError("eos=True but the model has no end-of-sequence id: pass eos=<token id> or eos=False")
    else:
        eos_id = check_int(eos, "eos", low=0)
    pad = check_int(pad_id, "pad_id", low=0) if pad_id is not None else (_special(model, net, tokenizer, "pad")
                                                                          or 0)
    if not (_is_peft(net) and adapter in net.peft_config):
        peft = require("peft", extra="llm")
        cfg = _lora_config(peft, r, alpha, lora_dropout, target_modules)
        net = attach_lora(net, adapter=adapter, seed=seed, config=cfg)
    net.set_adapter(adapter)
    params = lora_parameters(net, adapter)
    for p in params:
        p.requires_grad_(True)
    device = params[0].device

    cache: dict[int, tuple[list[int], list[bool]]] = {}

    def row(i: int) -> tuple[list[int], list[bool]]:
        if i not in cache:
            what = f"data[{i}]"
            cache[i] = _row(*encode(data[i], what), eos_id, max_length, what)
        return cache[i]

    rng = np.random.default_rng(seed)
    n = len(data)
    if sampler == "buckets":
        draw = LengthBuckets([len(row(i)[0]) for i in range(n)], batch_size, rng).draw
    else:
        def draw() -> np.ndarray:
            return rng.choice(n, min(batch_size, n), replace=False)
    torch_seed = int(rng.integers(0, 2**31))
    tokens = [0]

    def batch_loss(pick: np.ndarray) -> torch.Tensor:
        batch = _pad([row(int(i)) for i in pick], pad, device)
        tokens[0] += int(batch.attention_mask.sum())
        return answer_loss(net, batch)

    losses = train_loop(_Adapter(net, params), batch_loss, draw, steps, lr, warmup=warmup, min_lr_ratio=min_lr_ratio,
                        weight_decay=weight_decay, decay="all", grad_clip=grad_clip, torch_seed=torch_seed,
                        progress=progress, desc=desc, stop=stop)
    return FineTuned(net, adapter, losses, tokens[0])
