"""Task vectors (paper §5; the extraction/patching recipe of Hendel et al., 2023).

A task vector ``v_k(l)`` is the mean residual-stream state after decoder layer ``l`` at the last prompt token over
single-task prompts of task k. Mixed prompts are compared with the convex combination ``sum_k lambda_k v_k``;
patching replaces the state of a zero-shot query by ``sum_k w_k v_k`` and reads the answer probabilities.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from icml25.core.validation import check_array, check_int

__all__ = ["layer_hidden_states", "TaskVectorExtractor", "patch_and_score", "num_layers"]


def num_layers(model: Any) -> int:
    """Number of decoder layers of an HFModel or TinyGPT."""
    if type(model).__name__ == "TinyGPT":
        return len(model.module.blocks)
    if type(model).__name__ == "HFModel":
        from ._hf_prefix import decoder_layers

        return len(decoder_layers(model))
    raise TypeError(f"model must be an HFModel or a TinyGPT, got {type(model).__name__}")


def _check_layer(model: Any, layer: Any) -> int:
    return check_int(layer, "layer", low=1, high=num_layers(model))


class _Keep:
    """A hook that appends what it sees: the whole output (TinyGPT block hook) or the last row's state."""

    def __init__(self, into: list[Any], last: bool):
        self.into, self.last = into, last

    def __call__(self, *args: Any) -> None:
        if self.last:
            self.into.append(args[0][0, -1].float().cpu().numpy())
        else:
            self.into.append(args[-1])


def layer_hidden_states(model: Any, prompts: Sequence[str], layer: int | Sequence[int]) -> np.ndarray:
    """Residual-stream state after decoder layer ``layer`` (1-based) at each prompt's last token.

    Parameters
    ----------
    model : HFModel or TinyGPT
    prompts : list of str, length n
    layer : int or list of int
        1 .. number of decoder layers; a list reads several layers in the same forward passes.

    Returns
    -------
    ndarray, shape (n, d), or (len(layer), n, d) for a list of layers

    Examples
    --------
    >>> from icml25.task_superposition import synthetic_family, train_icl_model
    >>> model, _ = train_icl_model(synthetic_family("F-AB"), size="S", steps=1, show_progress=False)
    >>> layer_hidden_states(model, ["12=", "3="], layer=1).shape
    (2, 32)
    """
    import torch

    from icml25.llm.base import validate_prompts

    prompts = validate_prompts(list(prompts) if not isinstance(prompts, str) else prompts)
    many = isinstance(layer, Sequence) and not isinstance(layer, str)
    layers = [_check_layer(model, v) for v in (layer if many else [layer])]  # type: ignore[union-attr]
    if not layers:
        raise ValueError("layer must be an int or a non-empty list of ints")
    store: dict[int, list[Any]] = {v: [] for v in layers}
    if type(model).__name__ == "TinyGPT":
        seqs = [model._ids(p) for p in prompts]
        handles = [model.module.blocks[v - 1].register_forward_hook(_Keep(store[v], last=False)) for v in layers]
        try:
            with torch.inference_mode():
                model.module(model._right_padded(seqs))
        finally:
            for h in handles:
                h.remove()
        last = torch.tensor([len(s) - 1 for s in seqs])
        res = np.stack([store[v][0][torch.arange(len(seqs)), last].float().cpu().numpy() for v in layers])
    else:
        from contextlib import ExitStack

        from ._hf_prefix import layer_hook

        with torch.inference_mode(), ExitStack() as stack:
            for v in layers:
                stack.enter_context(layer_hook(model, v, _Keep(store[v], last=True)))
            for p in prompts:
                ids = torch.tensor([model._prompt_ids(p)], dtype=torch.long, device=model.device)
                model.model(input_ids=ids, **model._last_kw)
        res = np.stack([np.stack(store[v]) for v in layers])
    res = res.astype(np.float64)
    return res if many else res[0]


class TaskVectorExtractor:
    """Task vectors of K tasks at one layer, and the mixture geometry of mixed-prompt states (paper §5).

    Parameters
    ----------
    model : HFModel or TinyGPT
    layer : int
        Decoder layer (1-based) whose output is read and patched.

    Attributes
    ----------
    vectors_ : ndarray, shape (K, d)
        ``v_k``: mean state over task k's single-task prompts (after :meth:`fit`).

    Examples
    --------
    >>> from icml25.task_superposition import synthetic_family, train_icl_model
    >>> model, _ = train_icl_model(synthetic_family("F-AB"), size="S", steps=1, show_progress=False)
    >>> tv = TaskVectorExtractor(model, layer=1).fit([["12=", "34="], ["56=", "78="]])
    >>> tv.vectors_.shape, tv.position(tv.vectors_).round(6).tolist()
    ((2, 32), [1.0, 0.0])
    """

    def __init__(self, model: Any, layer: int):
        self.model = model
        self.layer = _check_layer(model, layer)
        self.vectors_: np.ndarray | None = None

    def fit(self, prompts_by_task: Sequence[Sequence[str]]) -> TaskVectorExtractor:
        """Average the states of each task's single-task prompts: ``prompts_by_task[k]`` is a list of prompts."""
        if isinstance(prompts_by_task, str) or not isinstance(prompts_by_task, Sequence) or not prompts_by_task:
            raise ValueError("prompts_by_task must be a non-empty list (one list of prompts per task)")
        self.vectors_ = np.stack([layer_hidden_states(self.model, list(ps), self.layer).mean(axis=0)
                                  for ps in prompts_by_task])
        return self

    def _v(self) -> np.ndarray:
        if self.vectors_ is None:
            raise ValueError("TaskVectorExtractor is not fitted; call fit(prompts_by_task) first")
        return self.vectors_

    def combination(self, weights: Any) -> np.ndarray:
        """``sum_k w_k v_k`` for convex weights ``w`` (shape (K,) -> (d,), or (n, K) -> (n, d))."""
        v = self._v()
        w = check_array(weights, "weights", ndim=1, low=0.0, high=1.0)
        if w.shape[-1] != v.shape[0]:
            raise ValueError(f"weights must have K={v.shape[0]} entries per row, got {w.shape[-1]}")
        if not np.allclose(w.sum(axis=-1), 1.0, atol=1e-6):
            raise ValueError("weights must sum to 1 (convex combination)")
        return w @ v

    def mixture_coefficient(self, h: Any, lam: Any) -> np.ndarray:
        """Projection coefficient ``kappa = <h - c, vbar - c> / ||vbar - c||^2`` with ``vbar = sum_k lam_k v_k``
        and ``c = mean_k v_k`` (spec §2.6; kappa = 1: the state lies on the convex prediction's direction).

        Parameters
        ----------
        h : array, shape (n, d)
        lam : array, shape (K,)

        Returns
        -------
        ndarray, shape (n,)
        """
        v = self._v()
        h = check_array(h, "h", ndim=2)
        lam = check_array(lam, "lam", ndim=1, low=0.0, high=1.0)
        if lam.shape[0] != v.shape[0] or not np.isclose(lam.sum(), 1.0, atol=1e-6):
            raise ValueError(f"lam must be K={v.shape[0]} proportions summing to 1, got {lam.tolist()}")
        vbar = self.combination(lam)
        c = v.mean(axis=0)
        d = vbar - c
        nd = float(d @ d)
        if nd == 0:
            raise ValueError("lam gives the centroid of the task vectors (e.g. uniform); kappa is undefined there")
        return (h - c) @ d / nd

    def position(self, h: Any) -> np.ndarray:
        """For K = 2: ``t = <h - v_2, v_1 - v_2> / ||v_1 - v_2||^2`` (1 at v_1, 0 at v_2), shape (n,)."""
        v = self._v()
        if v.shape[0] != 2:
            raise ValueError(f"position() needs K = 2 task vectors, got {v.shape[0]}")
        h = check_array(h, "h", ndim=2)
        d = v[0] - v[1]
        return (h - v[1]) @ d / float(d @ d)


def patch_and_score(model: Any, prompts: Sequence[str], answers: Sequence[Sequence[str]], layer: int,
                    vector: Any, terminator: str = "\n") -> np.ndarray:
    """Answer probabilities after replacing the layer-``layer`` state at each prompt's last token by ``vector``
    (paper §5; patching by replacement as in Hendel et al.).

    Parameters
    ----------
    model : HFModel or TinyGPT
    prompts : list of str, length n
        Usually zero-shot queries (``"{x}{sep}"``).
    answers : list of list of str, shape (n, K)
    layer : int
    vector : array, shape (d,) or (n, d)
        E.g. ``TaskVectorExtractor.combination(w)``.

    Returns
    -------
    ndarray, shape (n, K)

    Examples
    --------
    >>> from icml25.task_superposition import synthetic_family, train_icl_model
    >>> model, _ = train_icl_model(synthetic_family("F-AB"), size="S", steps=1, show_progress=False)
    >>> patch_and_score(model, ["12="], [["1", "2"]], layer=1, vector=np.zeros(32)).shape
    (1, 2)
    """
    from .scoring import answer_probabilities

    layer = _check_layer(model, layer)
    v = check_array(vector, "vector", ndim=(1, 2))
    return answer_probabilities(model, list(prompts), answers, terminator=terminator, patch=(layer, v))


def _tiny_patched_scores(model: Any, prompts: list[str], answers: list[list[str]], terminator: str,
                         patch: Any) -> np.ndarray:
    """TinyGPT scoring with the layer output at the last prompt token replaced (all pairs in one batch)."""
    import torch

    layer, vectors = patch
    vectors = np.asarray(vectors, dtype=np.float32)
    n, K = len(prompts), len(answers[0])
    if vectors.ndim == 1:
        vectors = np.array(np.broadcast_to(vectors, (n, vectors.shape[0])))
    d = model.config.n_embd
    if vectors.shape != (n, d):
        raise ValueError(f"vector must have shape ({n}, {d}) or ({d},), got {vectors.shape}")
    pairs, rows, cut = [], [], []
    for i in range(n):
        p = model._ids(prompts[i])
        for a in answers[i]:
            c = model.tokenizer.encode(a + terminator)
            pairs.append((p, c))
            rows.append(i)
            cut.append(len(p) - 1)
    vt = torch.as_tensor(np.ascontiguousarray(vectors))[torch.tensor(rows)]
    cut_t = torch.tensor(cut)

    def put(_m: Any, _i: Any, h: Any) -> Any:
        h = h.clone()
        h[torch.arange(h.shape[0]), cut_t] = vt.to(h.dtype)
        return h

    handle = model.module.blocks[int(layer) - 1].register_forward_hook(put)
    try:
        with torch.inference_mode():
            logp = torch.log_softmax(model.module(model._right_padded([p + c for p, c in pairs])).float(), -1)
    finally:
        handle.remove()
    out = np.zeros(len(pairs))
    for r, (p, c) in enumerate(pairs):
        pos = torch.arange(len(p) - 1, len(p) + len(c) - 1)
        out[r] = float(logp[r, pos, torch.tensor(c)].sum())
    return np.exp(out).reshape(n, K)
