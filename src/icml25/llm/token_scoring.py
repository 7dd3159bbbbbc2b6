"""Scoring token-id sequences with reused KV caches: :class:`NextTokenLogprobs`, the next-token log-probabilities of
many id sequences (a served model as an oracle: De-mark's probes, which share a long chat template and grow one token
at a time), on an :class:`~icml25.llm.hf.HFModel` (either backend) or a bare transformers causal LM.

For the log-probabilities of several continuations of one prefix (answer scoring) see
:meth:`HFModel.score_continuations <icml25.llm.hf.HFModel.score_continuations>`.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np

__all__ = ["NextTokenLogprobs"]


def _log_softmax(x: np.ndarray) -> np.ndarray:
    x = x - x.max(axis=-1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))


class NextTokenLogprobs:
    """``oracle(batch)``: log-probabilities ``(len(batch), vocab)`` (float64) of the token after each id sequence.

    * A batch of more than ``incremental`` sequences runs in chunks of ``batch_size``; the longest prefix common to a
      chunk's rows (probe queries share the whole chat template and context) runs once and its keys and values are
      reused by every row; the output layer runs only at each row's last position.
    * A batch of at most ``incremental`` sequences runs one sequence at a time, each continuing the stored KV cache
      of the same sequence without its last token when there is one (decoding one token at a time); the last
      ``incremental`` caches are kept, and the answers of the last such batch are remembered (a repeated query is
      free).

    Results equal a plain forward pass of each sequence up to float rounding.

    Parameters
    ----------
    model : icml25.llm.HFModel or transformers PreTrainedModel
        The model (an ``HFModel`` keeps its backend: native or transformers, whichever runs it at the call).
    batch_size : int
        Sequences per forward pass.
    share_prefix : bool
        Run a common prefix once.
    incremental : int
        Batches this small use the per-sequence caches; 0 never does.
    """

    def __init__(self, model: Any, batch_size: int = 32, share_prefix: bool = True, incremental: int = 8):
        from icml25.core.validation import check_int

        self.batch_size = check_int(batch_size, "batch_size", low=1)
        self.incremental = check_int(incremental, "incremental", low=0)
        self.share_prefix = bool(share_prefix)
        if hasattr(model, "_engine") and hasattr(model, "_prompt_ids"):  # an HFModel
            self._lm, self._fixed = model, None
        elif hasattr(model, "get_output_embeddings") and hasattr(model, "config"):
            from .runners import TransformersRunner

            device = next(model.parameters()).device
            self._lm, self._fixed = None, TransformersRunner(model.eval(), pad_id=0, device=device)
        else:
            raise TypeError(f"model must be an icml25.llm.HFModel or a transformers causal LM, got "
                            f"{type(model).__name__}")
        self.vocab_size = int(self._runner().vocab_size())
        self._inc: OrderedDict[tuple[int, ...], Any] = OrderedDict()  # sequence -> its decoding state
        self._memo: dict[tuple[int, ...], np.ndarray] = {}
        self._engine_id = id(self._runner())

    def _runner(self) -> Any:
        return self._fixed if self._fixed is not None else self._lm._engine

    def __call__(self, batch: list[list[int]]) -> np.ndarray:
        import torch

        runner = self._runner()
        if id(runner) != self._engine_id:  # the HFModel switched backend: its stored caches are not this one's
            self._inc.clear()
            self._memo = {}
            self._engine_id = id(runner)
        keys = [tuple(s) for s in batch]
        if keys and all(k in self._memo for k in keys):
            return np.stack([self._memo[k] for k in keys])
        with torch.inference_mode():
            if len(batch) <= self.incremental:
                out = np.stack([self._one(runner, s) for s in batch])
            else:
                out = np.concatenate([runner.logits(batch[s:s + self.batch_size], keep=1,
                                                    share=self.share_prefix)[:, -1].float().cpu().numpy()
                                      for s in range(0, len(batch), self.batch_size)])
        out = _log_softmax(out.astype(np.float64))
        if len(batch) <= self.incremental:
            self._memo = dict(zip(keys, out))
        return out.copy()

    def _one(self, runner: Any, seq: list[int]) -> np.ndarray:
        import torch

        key = tuple(seq)
        state = self._inc.pop(key[:-1], None)
        if state is not None:
            logits = runner.step(state, torch.tensor([[seq[-1]]], dtype=torch.long))
        else:
            first, state = runner.prefill([list(seq)], extra=16, keep=1, share=False)
            logits = first[:, -1]
        self._inc[key] = state
        while len(self._inc) > self.incremental:
            self._inc.popitem(last=False)
        return logits[0].float().cpu().numpy()
