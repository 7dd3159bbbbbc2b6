"""Training small transformers from scratch on single-task ICL prompts (paper §3; spec §2.4 / §6).

Every training prompt holds examples of ONE task (task uniform over the family, m uniform in
``{m_min..m_max}``) and a query; the loss is the cross-entropy of every answer token and its terminator (examples
and query). Mixed-task prompts never appear in training: superposition at test time is emergent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from icml25.core.progress import progress
from icml25.core.validation import check_int, check_option, check_positive

from .prompts import _draw_prompt, build_prompt
from .tasks import TaskFamily

__all__ = ["MODEL_SIZES", "icl_training_batch", "train_icl_model", "single_task_accuracy",
           "single_task_correct"]

#: the spec's sizes (§6): (n_layer, n_head, n_embd)
MODEL_SIZES: dict[str, tuple[int, int, int]] = {"S": (1, 2, 32), "M": (2, 4, 64), "L": (4, 4, 128)}


def _tokenizer(family: TaskFamily) -> Any:
    from icml25.llm.tokenizers import CharTokenizer

    if not family.alphabet:
        raise ValueError(f"family {family.name!r} has no alphabet (train_icl_model needs a synthetic family with a "
                         "char vocabulary, e.g. synthetic_family('F-AB'))")
    return CharTokenizer(family.alphabet)


def icl_training_batch(family: TaskFamily, tokenizer: Any, rng: np.random.Generator, batch_size: int, m_min: int,
                       m_max: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One batch of single-task prompts as token ids.

    Returns
    -------
    x : int array, shape (B, T)
        Inputs ``[<eot>, text...]`` (right-padded).
    y : int array, shape (B, T)
        Next-token targets.
    mask : float array, shape (B, T)
        1 where the target is an answer character or the terminator after it.
    """
    batch_size = check_int(batch_size, "batch_size", low=1)
    m_max = check_int(m_max, "m_max", low=1)
    m_min = check_int(m_min, "m_min", low=0, high=m_max)
    char_ids = _char_ids(tokenizer)
    rows = []
    for _ in range(batch_size):
        k = int(rng.integers(family.K))
        m = int(rng.integers(m_min, m_max + 1))
        counts = np.zeros(family.K, dtype=int)
        counts[k] = m
        prompt, answers, _, _ = _draw_prompt(family, counts, rng, "random")
        answer = answers[k]
        lines = prompt.split(family.joiner) if m else [prompt]
        fast = None if char_ids is None else _encode_rows_chars(char_ids, tokenizer.eot_id, family, lines, answer)
        if fast is not None:
            rows.append(fast)
            continue
        ids, mask = [tokenizer.eot_id], [0]
        for j, line in enumerate(lines):
            if j < len(lines) - 1:
                head, _, ans = line.rpartition(family.sep)
                head += family.sep
                tail = ans + family.joiner
            else:
                head, tail = line, answer + family.joiner
            h, t = tokenizer.encode(head), tokenizer.encode(tail)
            ids += h + t
            mask += [0] * len(h) + [1] * len(t)
        rows.append((ids, mask))
    T = max(len(r[0]) for r in rows) - 1
    x = np.full((batch_size, T), tokenizer.pad_id, dtype=np.int64)
    y = np.full((batch_size, T), tokenizer.pad_id, dtype=np.int64)
    w = np.zeros((batch_size, T), dtype=np.float32)
    for r, (ids, mask) in enumerate(rows):
        n = len(ids) - 1
        x[r, :n], y[r, :n], w[r, :n] = ids[:-1], ids[1:], mask[1:]
    return x, y, w


def _char_ids(tokenizer: Any) -> tuple[dict[str, int], int, tuple[str, ...]] | None:
    """``(char -> id, unk id, special strings)`` of a :class:`~icml25.llm.tokenizers.CharTokenizer` (whose
    ``encode`` maps every character outside a special-token string to its id), else None."""
    from icml25.llm.tokenizers import CharTokenizer

    if type(tokenizer) is not CharTokenizer:
        return None
    specials = tuple(s for s in tokenizer.specials if len(s) > 1)
    return tokenizer.stoi, tokenizer.unk_id, specials


def _encode_rows_chars(char_ids: tuple[dict[str, int], int, tuple[str, ...]], eot: int, family: TaskFamily,
                       lines: list[str], answer: str) -> tuple[list[int], list[int]] | None:
    """The ids and loss mask of the generic path (one ``encode`` per head and tail) with one dictionary look-up per
    character: the same lists for a character tokenizer; None when the text holds a special-token string (then
    the generic path decides)."""
    stoi, unk, specials = char_ids
    sep, joiner = family.sep, family.joiner
    parts, mask = [], [0]
    last = len(lines) - 1
    for j, line in enumerate(lines):
        if j < last:
            head, _, ans = line.rpartition(sep)
            head += sep
            tail = ans + joiner
        else:
            head, tail = line, answer + joiner
        parts.append(head)
        parts.append(tail)
        mask += [0] * len(head)
        mask += [1] * len(tail)
    text = "".join(parts)
    if any(s in text for s in specials):
        return None
    return [eot, *(stoi.get(c, unk) for c in text)], mask


def train_icl_model(family: TaskFamily, size: str = "M", steps: int = 800, seed: int = 0, lr: float = 3e-3,
                    batch_size: int = 32, m_min: int = 1, m_max: int = 8, include_zero_shot: bool = False,
                    check_every: int = 0, check: Callable[[Any], bool] | None = None,
                    show_progress: bool = True, schedule: str = "onecycle", init: str = "torch",
                    tie_embeddings: bool = False) -> tuple[Any, dict[str, Any]]:
    """Train a GPT-2-style :class:`~icml25.llm.tiny.TinyGPT` from scratch on single-task ICL prompts.

    Parameters
    ----------
    family : TaskFamily
        A synthetic family (char vocabulary = ``family.alphabet``).
    size : {"S", "M", "L"}
        Model size (spec §6): S = 1 layer d=32, M = 2 layers d=64, L = 4 layers d=128.
    steps : int
        Optimiser steps (fresh batches each step).
    seed : int
        Seeds the weights and the data stream.
    lr : float
        Peak learning rate of the one-cycle schedule (AdamW, weight decay 0.01).
    batch_size, m_min, m_max : int
        Prompts per step; examples per prompt uniform in ``{m_min..m_max}``.
    include_zero_shot : bool
        Also train on m = 0 prompts (needed for task-vector patching into zero-shot queries).
    check_every : int
        Every this many steps call ``check(model)``; training stops when it returns True (0 = never).
    check : callable, optional
    show_progress : bool
    schedule : {"onecycle", "constant"}
        One-cycle (warm-up 10 %, cosine decay) or warm-up then constant learning rate.
    init : {"torch", "gpt2"}
        Weight initialisation of the network (:class:`~icml25.llm.tiny_module.TinyGPTConfig`): PyTorch's default
        (the default here: in-context learning emerges with it, see the README's lever table) or GPT-2's N(0, 0.02).
    tie_embeddings : bool
        Tie the output layer to the token embedding (GPT-2). Default False (untied; needed for emergence together
        with ``init="torch"`` in our runs).

    Returns
    -------
    model : TinyGPT
    history : dict
        ``loss`` (per step), ``steps_run``, ``stopped_early``, ``first_below_0.6`` (first step whose running loss is
        < 0.6), ``emerged_at`` (first step whose running loss is below half the plateau ``ln(K) / 2`` of a model that
        only knows the answer is one of the K candidates, i.e. < ``ln(K) / 4``; None if never: the marker of
        in-context learning emerging), ``seconds``.

    Examples
    --------
    >>> from icml25.task_superposition import synthetic_family
    >>> model, hist = train_icl_model(synthetic_family("F-AB", ["copyA"]), size="S", steps=3, show_progress=False)
    >>> hist["steps_run"], model.config.n_layer
    (3, 1)
    """
    import time

    import torch

    from icml25.llm.tiny import TinyGPT
    from icml25.llm.tiny_module import TinyGPTConfig

    if not isinstance(family, TaskFamily):
        raise TypeError(f"family must be a TaskFamily, got {type(family).__name__}")
    check_option(size, "size", list(MODEL_SIZES))
    steps = check_int(steps, "steps", low=1)
    seed = check_int(seed, "seed", low=0)
    lr = check_positive(lr, "lr")
    batch_size = check_int(batch_size, "batch_size", low=1)
    m_max = check_int(m_max, "m_max", low=1)
    m_min = check_int(m_min, "m_min", low=0, high=m_max)
    check_every = check_int(check_every, "check_every", low=0)
    check_option(schedule, "schedule", ("onecycle", "constant"))
    check_option(init, "init", ("torch", "gpt2"))
    if not isinstance(tie_embeddings, bool):
        raise TypeError(f"tie_embeddings must be a bool, got {tie_embeddings!r}")
    if include_zero_shot:
        m_min = 0
    tok = _tokenizer(family)
    n_layer, n_head, n_embd = MODEL_SIZES[size]
    probe = build_prompt(family, np.eye(family.K, dtype=int)[0] * m_max, np.random.default_rng(0))
    longest = max(len(family.format_input(family.sample_input(np.random.default_rng(i)))) for i in range(50))
    block = 2 + len(probe.prompt) + m_max * 4 + longest + 16
    model = TinyGPT(TinyGPTConfig(n_layer=n_layer, n_head=n_head, n_embd=n_embd, block_size=int(block), init=init,
                                  tie_embeddings=tie_embeddings), tok, seed=seed)
    net = model.module
    decay = [p for p in net.parameters() if p.dim() >= 2]
    rest = [p for p in net.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": rest, "weight_decay": 0.0}], lr=lr)
    if schedule == "onecycle":
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps, pct_start=0.1)
    else:  # linear warm-up over 100 steps, then constant (keeps the step size up through a long plateau)
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 100))
    rng = np.random.default_rng(seed + 7919)
    losses: list[float] = []
    first_low, emerged, stopped, ema = None, None, False, None
    plateau = float(np.log(family.K)) / 2 if family.K > 1 else 0.0  # answer uniform over K, terminator known
    t0 = time.perf_counter()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        for step in progress(range(steps), f"training {size} on {family.name}", total=steps,
                             disable=not show_progress):
            net.train()
            x, y, w = (torch.from_numpy(a) for a in icl_training_batch(family, tok, rng, batch_size, m_min, m_max))
            logits = net(x)
            ce = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1),
                                                   reduction="none")
            loss = (ce * w.reshape(-1)).sum() / w.sum()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            opt.step()
            sched.step()
            losses.append(float(loss.detach()))
            ema = losses[-1] if ema is None else 0.9 * ema + 0.1 * losses[-1]
            if first_low is None and step >= 10 and ema < 0.6:
                first_low = step + 1
            if emerged is None and step >= 10 and ema < plateau / 2:
                emerged = step + 1
            if check is not None and check_every and (step + 1) % check_every == 0:
                net.eval()
                if check(model):
                    stopped = True
                    break
    net.eval()
    return model, {"loss": losses, "steps_run": len(losses), "stopped_early": stopped,
                   "first_below_0.6": first_low, "emerged_at": emerged, "seconds": time.perf_counter() - t0}


def single_task_accuracy(model: Any, family: TaskFamily, task: int, m: int, n: int = 50, seed: int = 0) -> float:
    """Fraction of single-task prompts (``m`` examples of ``task``) whose greedy answer is exactly the task's answer.

    Parameters
    ----------
    model : LanguageModel (``generate``)
    family : TaskFamily
    task : int
        Task index.
    m : int
        Examples per prompt.
    n : int
        Prompts.
    seed : int

    Returns
    -------
    float in [0, 1]

    Examples
    --------
    >>> from icml25.task_superposition import synthetic_family
    >>> model, _ = train_icl_model(synthetic_family("F-AB", ["copyA"]), size="S", steps=2, show_progress=False)
    >>> 0.0 <= single_task_accuracy(model, synthetic_family("F-AB", ["copyA"]), 0, m=2, n=3) <= 1.0
    True
    """
    return float(np.mean(single_task_correct(model, family, task, m, n, seed)))


def single_task_correct(model: Any, family: TaskFamily, task: int, m: int, n: int = 50, seed: int = 0) -> np.ndarray:
    """Per prompt, whether the greedy answer to a single-task prompt (``m`` examples of ``task``) is exactly the task's
    answer: the items behind :func:`single_task_accuracy` (same prompts for the same arguments), for intervals.

    Returns
    -------
    ndarray of bool, shape (n,)
    """
    if not isinstance(family, TaskFamily):
        raise TypeError(f"family must be a TaskFamily, got {type(family).__name__}")
    task = check_int(task, "task", low=0, high=family.K - 1)
    m = check_int(m, "m", low=0)
    n = check_int(n, "n", low=1)
    rng = np.random.default_rng(check_int(seed, "seed", low=0))
    counts = np.zeros(family.K, dtype=int)
    counts[task] = m
    items = [build_prompt(family, counts, rng) for _ in range(n)]
    longest = max(len(it.answers[task]) for it in items)
    gens = model.generate([it.prompt for it in items], temperature=0.0, max_tokens=longest + 8,
                          stop=[family.joiner])
    return np.array([g[0].text.strip() == it.answers[task].strip() for g, it in zip(gens, items)], dtype=bool)
