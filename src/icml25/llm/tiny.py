"""TinyGPT: a small decoder-only transformer trained on CPU, implementing :class:`~icml25.llm.base.LanguageModel`.

Every sequence the model sees starts with ``<|eot|>`` (used as beginning-of-text, as GPT-2 does) and every
training text ends with it, so generation stops when the model writes ``<|eot|>``. Sampling is batched over
``prompts x n`` rows with left padding, per-row positions and a preallocated KV cache.
"""

from __future__ import annotations

import json
import os
import pickle
import warnings
import zipfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from icml25.core.files import FileFormatError, read_json
from icml25.core.validation import check_int, check_positive, check_probability, check_real

from .base import Generation, validate_prompts
from .sampling import check_sampling_args, decode_loop, left_pad, make_generator, to_generations
from .tiny_module import KVCache, TinyGPTConfig, TinyGPTModule
from .tokenizers import ByteTokenizer, CharTokenizer, load_tokenizer
from .training import train_loop

__all__ = ["TinyGPT", "TinyGPTConfig", "TinyGPTModule"]

_CHUNK = 64  # rows per forward pass when scoring


def _check_dir(directory: object, name: str) -> Path:
    """A non-empty folder path (str or os.PathLike), as a Path."""
    if not isinstance(directory, (str, os.PathLike)):
        raise TypeError(f"{name} must be a folder path (str or Path), got {type(directory).__name__}")
    if not str(directory).strip():
        raise ValueError(f"{name} must be a non-empty folder path, got {str(directory)!r}")
    return Path(directory)


class TinyGPT:
    """A trainable GPT-style language model with the common ``icml25.llm`` interface.

    Parameters
    ----------
    config : TinyGPTConfig
        Sizes of the network.
    tokenizer : CharTokenizer or ByteTokenizer
        Text <-> ids; must provide ``eot_id`` and ``pad_id``.
    seed : int
        Seeds the weight initialisation and the default sampling stream.

    Attributes
    ----------
    module : TinyGPTModule
        The torch network (``forward(idx, return_hidden=False)``).
    """

    def __init__(self, config: TinyGPTConfig, tokenizer: CharTokenizer | ByteTokenizer, seed: int = 0):
        if not isinstance(config, TinyGPTConfig):
            raise TypeError(f"config must be a TinyGPTConfig, got {type(config).__name__}")
        for attr in ("encode", "decode", "vocab_size", "eot_id", "pad_id"):
            if not hasattr(tokenizer, attr):
                raise TypeError(f"tokenizer must have {attr!r} (use CharTokenizer or ByteTokenizer), "
                                f"got {type(tokenizer).__name__}")
        seed = check_int(seed, "seed", low=0)
        self.config, self.tokenizer = config, tokenizer
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(seed))
            self.module = TinyGPTModule(config, tokenizer.vocab_size)
        self.module.eval()
        self._rng = np.random.default_rng(int(seed))

    # ------------------------------------------------------------------ basics
    @property
    def device(self) -> torch.device:
        """Device of the network's parameters."""
        return next(self.module.parameters()).device

    def to(self, device: str | torch.device) -> TinyGPT:
        """Move the network to ``device`` (e.g. ``"cuda"``); returns ``self``."""
        self.module.to(device)
        return self

    def num_parameters(self) -> int:
        """Number of trainable parameters (tied embedding counted once)."""
        return sum(p.numel() for p in self.module.parameters())

    def __repr__(self) -> str:
        c = self.config
        return (f"TinyGPT(n_layer={c.n_layer}, n_head={c.n_head}, n_embd={c.n_embd}, block_size={c.block_size}, "
                f"vocab={self.tokenizer.vocab_size}, params={self.num_parameters():,})")

    def _ids(self, text: str) -> list[int]:
        return [self.tokenizer.eot_id, *self.tokenizer.encode(text)]

    def _decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(ids)

    def _fit_context(self, ids: list[int], room: int, what: str) -> list[int]:
        limit = self.config.block_size - room
        if len(ids) > limit:
            warnings.warn(f"{what} has {len(ids)} tokens; keeping the last {limit} (block_size "
                          f"{self.config.block_size})", stacklevel=3)
            ids = ids[-limit:]
        return ids

    # ------------------------------------------------------------------ training
    def fit(self, texts: Sequence[str], steps: int = 2000, batch_size: int = 32, lr: float = 3e-3,
            warmup: int = 100, weight_decay: float = 0.1, grad_clip: float = 1.0, seed: int | None = 0,
            prompt_chars: Sequence[int] | None = None, progress: bool = True, min_lr_ratio: float = 0.1,
            ) -> list[float]:
        """Train by next-token prediction (AdamW, linear warm-up then cosine decay, gradient clipping; the loop is
        :func:`icml25.llm.training.train_loop`, with the fused AdamW kernel where torch has one).

        Parameters
        ----------
        texts : list of str
            Training documents; each is framed as ``<|eot|> text <|eot|>``. Documents longer than
            ``block_size + 1`` tokens are cut into overlapping windows (stride ``block_size // 2``).
        steps, batch_size : int
            Optimiser steps and documents (windows) per step, drawn uniformly with replacement.
        lr, warmup, min_lr_ratio : float, int, float
            Peak learning rate, linear warm-up steps, final learning rate as a fraction of ``lr``.
        weight_decay : float
            AdamW decoupled weight decay, applied to matrices only (not to biases and LayerNorm gains).
        grad_clip : float
            Maximum global gradient norm (``0`` disables clipping).
        seed : int or None
            Seeds batch order and dropout (None: drawn from the model's generator).
        prompt_chars : list of int, optional
            ``prompt_chars[i]`` leading characters of ``texts[i]`` get no loss (supervised fine-tuning on
            completions only).
        progress : bool
            Show a progress bar.

        Returns
        -------
        list of float
            Training loss (mean cross-entropy in nats per predicted token) at every step.
        """
        texts = validate_prompts(texts, "texts")
        for name, v, lo in (("steps", steps, 1), ("batch_size", batch_size, 1), ("warmup", warmup, 0)):
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
                raise TypeError(f"{name} must be an integer >= {lo}, got {v!r}")
            check_int(v, name, low=lo)
        steps, batch_size, warmup = int(steps), int(batch_size), int(warmup)
        lr = check_positive(lr, "lr")
        weight_decay = check_real(weight_decay, "weight_decay", low=0.0)
        grad_clip = check_real(grad_clip, "grad_clip", low=0.0)
        min_lr_ratio = check_probability(min_lr_ratio, "min_lr_ratio")
        if seed is not None:
            seed = check_int(seed, "seed", low=0)
        if prompt_chars is not None:
            prompt_chars = list(prompt_chars)
            if len(prompt_chars) != len(texts):
                raise ValueError(f"prompt_chars must have one entry per text ({len(texts)}), got {len(prompt_chars)}")
        windows, masks = self._windows(texts, prompt_chars)
        if not windows:
            raise ValueError("texts give no trainable tokens (every token is masked by prompt_chars)")
        all_x, all_y, lengths = self._arrays(windows, masks)
        rng = np.random.default_rng(int(self._rng.integers(0, 2**62)) if seed is None else int(seed))
        torch_seed = int(rng.integers(0, 2**62))  # drawn before the batches (the stream's first number)
        model = self.module

        def sample() -> np.ndarray:
            return rng.integers(0, len(windows), size=batch_size)

        def batch_loss(pick: np.ndarray) -> torch.Tensor:
            T = int(lengths[pick].max())
            x = torch.from_numpy(all_x[pick, :T]).to(self.device)
            y = torch.from_numpy(all_y[pick, :T]).to(self.device)
            logits = model(x)
            return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), ignore_index=-100)

        return train_loop(model, batch_loss, sample, steps, lr, warmup=warmup, min_lr_ratio=min_lr_ratio,
                          weight_decay=weight_decay, decay="matrices", grad_clip=grad_clip, torch_seed=torch_seed,
                          fused=True, progress=progress, desc="TinyGPT fit")

    def _windows(self, texts: list[str], prompt_chars: list[int] | None) -> tuple[list[list[int]], list[list[bool]]]:
        """Token windows of length <= block_size + 1 and, per window, which targets get a loss."""
        bs = self.config.block_size
        windows, masks = [], []
        for i, t in enumerate(texts):
            ids = [*self._ids(t), self.tokenizer.eot_id]
            n_prompt = 1
            if prompt_chars is not None:
                k = prompt_chars[i]
                if not isinstance(k, (int, np.integer)) or not 0 <= k <= len(t):
                    raise ValueError(f"prompt_chars[{i}] must be an int in [0, {len(t)}], got {k!r}")
                n_prompt = 1 + len(self.tokenizer.encode(t[:k]))
            train = [j >= n_prompt for j in range(len(ids))]  # whether token j is a target
            starts = [0] if len(ids) <= bs + 1 else list(range(0, len(ids) - bs - 1, bs // 2 or 1)) + [len(ids) - bs - 1]
            for s in starts:
                w, m = ids[s:s + bs + 1], train[s + 1:s + bs + 1]
                if any(m):
                    windows.append(w)
                    masks.append(m)
        return windows, masks

    def _arrays(self, ws: list[list[int]], ms: list[list[bool]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Inputs ``(N, L)`` (pad-filled), targets ``(N, L)`` (-100 where no loss) and lengths of the windows."""
        L = max(len(w) for w in ws) - 1
        x = np.full((len(ws), L), self.tokenizer.pad_id, dtype=np.int64)
        y = np.full((len(ws), L), -100, dtype=np.int64)
        for r, (w, m) in enumerate(zip(ws, ms)):
            a = np.asarray(w, dtype=np.int64)
            x[r, :len(w) - 1] = a[:-1]
            y[r, :len(w) - 1] = np.where(np.asarray(m, dtype=bool), a[1:], -100)
        return x, y, np.array([len(w) - 1 for w in ws])

    # ------------------------------------------------------------------ sampling
    @torch.inference_mode()
    def generate(self, prompts: list[str], n: int = 1, temperature: float = 1.0, top_p: float = 1.0,
                 max_tokens: int = 64, stop: list[str] | None = None, seed: int | None = None,
                 use_cache: bool = True) -> list[list[Generation]]:
        """Sample ``n`` continuations of each prompt.

        Parameters
        ----------
        prompts : list of str
            Prompts (a single string is wrapped). Prompts longer than ``block_size - max_tokens`` tokens keep
            their last tokens (with a warning).
        n : int
            Samples per prompt.
        temperature : float
            0 = greedy; otherwise softmax temperature.
        top_p : float
            Nucleus sampling mass.
        max_tokens : int
            Maximum new tokens per sample (< ``block_size``).
        stop : list of str, optional
            Generation of a row ends when its text contains one of these; the text is cut before it.
        seed : int, optional
            Seed of the sampling stream (None: drawn from the model's generator).
        use_cache : bool
            Use the KV cache (False recomputes the whole sequence every step; for testing).

        Returns
        -------
        list of list of Generation
            ``out[i][j]`` is sample ``j`` of prompt ``i``; ``token_logprobs`` holds the model's log-probability of
            each sampled token (including a final ``<|eot|>``).
        """
        prompts = validate_prompts(prompts)
        stop = check_sampling_args(n, temperature, top_p, max_tokens, stop)
        if max_tokens >= self.config.block_size:
            raise ValueError(f"max_tokens must be < block_size ({self.config.block_size}), got {max_tokens}")
        gen = make_generator(seed, self._rng)
        tok = self.tokenizer
        rows = [self._fit_context(self._ids(p), max_tokens, f"prompt {i}") for i, p in enumerate(prompts)]
        if not use_cache:
            rows = [r for r in rows for _ in range(n)]
        dev = self.device
        idx, n_pad, valid, positions, padded = left_pad(rows, tok.pad_id, max_tokens, dev)
        R, Tp = idx.shape
        total = Tp + max_tokens
        causal = torch.ones(total, total, dtype=torch.bool, device=dev).tril()
        eye = torch.eye(total, dtype=torch.bool, device=dev)

        def full_mask(T: int) -> torch.Tensor | None:
            if not padded:
                return None
            return ((causal[:T, :T] & valid[:, None, :T]) | eye[:T, :T])[:, None]

        model = self.module
        if use_cache:
            cache = KVCache(self.config, R, total, next(model.parameters()).dtype, dev)
            first = model(idx, positions=positions[:, :Tp], attn_mask=full_mask(Tp), cache=cache, last_only=True)
            if n > 1:  # each prompt is encoded once; its cache rows are copied to its n samples
                rep = torch.arange(R, device=dev).repeat_interleave(n)
                cache.select_rows(rep)
                first, valid, positions = first[rep], valid[rep], positions[rep]
            state = {"t": Tp}

            def step(new: torch.Tensor) -> torch.Tensor:
                t, new = state["t"], new.to(dev)
                mask = valid[:, None, None, :t + 1] if padded else None
                out = model(new, positions=positions[:, t:t + 1], attn_mask=mask, cache=cache, last_only=True)
                state["t"] = t + 1
                return out[:, -1].float().cpu()
        else:
            seq = {"idx": idx}
            first = model(idx, positions=positions[:, :Tp], attn_mask=full_mask(Tp), last_only=True)

            def step(new: torch.Tensor) -> torch.Tensor:
                seq["idx"] = x = torch.cat([seq["idx"], new.to(dev)], dim=1)
                T = x.shape[1]
                logits = model(x, positions=positions[:, :T], attn_mask=full_mask(T), last_only=True)
                return logits[:, -1].float().cpu()

        ids, lps, finish = decode_loop(first[:, -1].float().cpu(), step, max_tokens, float(temperature), float(top_p), stop,
                                       tok.eot_id, tok.pad_id, self._decode, gen)
        return to_generations(ids, lps, finish, self._decode, stop, n)

    # ------------------------------------------------------------------ scoring
    def _right_padded(self, seqs: list[list[int]]) -> torch.Tensor:
        x = torch.full((len(seqs), max(len(s) for s in seqs)), self.tokenizer.pad_id, dtype=torch.long)
        for r, s in enumerate(seqs):
            x[r, :len(s)] = torch.tensor(s)
        return x.to(self.device)

    @torch.inference_mode()
    def logprobs(self, prompts: list[str], continuations: list[str]) -> list[np.ndarray]:
        """Log-probability of each token of ``continuations[i]`` given ``prompts[i]``.

        Returns
        -------
        list of ndarray
            ``out[i]`` has one float per continuation token (natural log); ``out[i].sum()`` is
            ``log p(continuation | prompt)``.
        """
        prompts = validate_prompts(prompts)
        continuations = validate_prompts(continuations, "continuations")
        if len(prompts) != len(continuations):
            raise ValueError(f"prompts and continuations must have the same length, got {len(prompts)} and "
                             f"{len(continuations)}")
        pairs = []
        for i, (p, c) in enumerate(zip(prompts, continuations)):
            cont = self.tokenizer.encode(c)
            if len(cont) >= self.config.block_size:
                raise ValueError(f"continuations[{i}] has {len(cont)} tokens; block_size is {self.config.block_size}")
            pairs.append((self._fit_context(self._ids(p), len(cont), f"prompt {i}"), cont))
        out: list[np.ndarray] = []
        for s in range(0, len(pairs), _CHUNK):
            chunk = pairs[s:s + _CHUNK]
            x = self._right_padded([p + c for p, c in chunk])
            logp = torch.log_softmax(self.module(x).float(), dim=-1).cpu()
            for r, (p, c) in enumerate(chunk):
                pos = torch.arange(len(p) - 1, len(p) + len(c) - 1)
                out.append(logp[r, pos, torch.tensor(c, dtype=torch.long)].numpy().astype(np.float64))
        return out

    @torch.inference_mode()
    def _last(self, prompts: list[str], hidden: bool) -> np.ndarray:
        prompts = validate_prompts(prompts)
        seqs = [self._fit_context(self._ids(p), 0, f"prompt {i}") for i, p in enumerate(prompts)]
        out = []
        for s in range(0, len(seqs), _CHUNK):
            chunk = seqs[s:s + _CHUNK]
            logits, h = self.module(self._right_padded(chunk), return_hidden=True)
            last = torch.tensor([len(q) - 1 for q in chunk])
            src = (h if hidden else logits).cpu()
            out.append(src[torch.arange(len(chunk)), last].float().numpy())
        return np.concatenate(out, axis=0)

    def next_token_logits(self, prompts: list[str]) -> np.ndarray:
        """Logits of the token after each prompt, shape ``(len(prompts), vocab_size)``."""
        return self._last(prompts, hidden=False)

    def hidden_states(self, prompts: list[str]) -> np.ndarray:
        """Final-layer hidden state (after the last LayerNorm) at each prompt's last token, ``(B, n_embd)``."""
        return self._last(prompts, hidden=True)

    # ------------------------------------------------------------------ persistence
    def save(self, directory: str | Path) -> Path:
        """Write ``config.json``, ``tokenizer.json`` and ``model.pt`` (state dict) into ``directory``."""
        d = _check_dir(directory, "directory")
        d.mkdir(parents=True, exist_ok=True)
        meta = {"format": "icml25-tinygpt", "version": 1, "config": self.config.to_dict(),
                "vocab_size": self.tokenizer.vocab_size}
        (d / "config.json").write_text(json.dumps(meta, indent=1))
        self.tokenizer.save(d / "tokenizer.json")
        torch.save(self.module.state_dict(), d / "model.pt")
        return d

    @classmethod
    def load(cls, directory: str | Path) -> TinyGPT:
        """Load a model written by :meth:`save`.

        A missing file raises ``FileNotFoundError`` naming it; a malformed ``config.json``, ``tokenizer.json`` or
        ``model.pt`` raises ``ValueError`` with one line naming the file and what was expected.
        """
        d = _check_dir(directory, "directory")
        missing = [f for f in ("config.json", "tokenizer.json", "model.pt") if not (d / f).is_file()]
        if missing:
            raise FileNotFoundError(f"no TinyGPT model in {d}: {missing[0]} is missing; expected config.json, "
                                    "tokenizer.json and model.pt written by TinyGPT.save(dir)")
        what = "the config.json of TinyGPT.save ({'format': 'icml25-tinygpt', 'config': {...}, 'vocab_size': n})"
        meta = read_json(d / "config.json", what)
        try:
            if not isinstance(meta, dict) or meta.get("format", "icml25-tinygpt") != "icml25-tinygpt":
                raise ValueError("not a TinyGPT config")
            config = TinyGPTConfig(**meta["config"])
            vocab_size = int(meta["vocab_size"])
        except (KeyError, TypeError, ValueError) as exc:
            detail = f"no {exc} entry" if isinstance(exc, KeyError) else " ".join(str(exc).split())[:100]
            raise FileFormatError(f"{d / 'config.json'}: {detail}; expected {what}") from None
        tokenizer = load_tokenizer(d / "tokenizer.json")
        if tokenizer.vocab_size != vocab_size:
            raise FileFormatError(f"{d / 'tokenizer.json'}: {tokenizer.vocab_size} tokens; expected the vocab_size "
                                  f"{vocab_size} of config.json (files of two different models?)")
        lm = cls(config, tokenizer)
        try:
            state = torch.load(d / "model.pt", map_location="cpu", weights_only=True)
            lm.module.load_state_dict(state)
        except (EOFError, OSError, RuntimeError, ValueError, TypeError, AttributeError, pickle.UnpicklingError,
                zipfile.BadZipFile) as exc:
            raise FileFormatError(f"{d / 'model.pt'}: not a state dict of this config ({type(exc).__name__}: "
                                  f"{' '.join(str(exc).split())[:80]}); expected the model.pt of TinyGPT.save") from None
        lm.module.eval()
        return lm
