"""An independent KGW detector: MarkLLM's (PyPI ``markllm``, THU-BPM/MarkLLM) scorer configured like a
:class:`KGWWatermark` that uses one of the ``markllm-*`` seeding schemes.

MarkLLM is optional (install it with ``pip install --no-deps markllm==0.1.5``: its KGW module needs only torch and
transformers). Its own ``detect_watermark(text)`` re-tokenises a string and scores every token after the first
``prefix_length`` ones, the prompt included (MarkLLM issue #65); :meth:`MarkLLMDetector.detect` instead hands its
scorer the generated ids with their ``h`` context ids, so that both detectors score the same tokens.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from typing import Any

from icml25.core.validation import check_int

from ._ids import check_ids
from .watermark import Detection, KGWWatermark

__all__ = ["MarkLLMDetector", "markllm_available"]


def markllm_available() -> bool:
    """Whether MarkLLM's KGW module imports."""
    try:
        import markllm.watermark.kgw.kgw  # noqa: F401
    except Exception:  # noqa: BLE001 (any import failure means: not usable here)
        return False
    return True


class MarkLLMDetector:
    """MarkLLM's KGW (``window_scheme="left"``) with the parameters of ``watermark``.

    Parameters
    ----------
    watermark : KGWWatermark
        Must use ``prf="markllm-time"``, ``"markllm-additive"``, ``"markllm-skip"`` or ``"markllm-min"``; its gamma,
        delta, key and h become MarkLLM's gamma, delta, hash_key and prefix_length.

    Attributes
    ----------
    kgw : markllm.watermark.kgw.KGW
        The MarkLLM object (``.utils.get_greenlist_ids``, ``.logits_processor``).

    Raises
    ------
    ImportError
        When MarkLLM is not installed.
    """

    def __init__(self, watermark: KGWWatermark):
        if not isinstance(watermark, KGWWatermark):
            raise TypeError(f"watermark must be a KGWWatermark, got {type(watermark).__name__}")
        if not (isinstance(watermark.prf, str) and watermark.prf.startswith("markllm-")):
            raise ValueError(f"watermark.prf must be one of the markllm-* schemes, got {watermark.prf!r}")
        from markllm.utils.transformers_config import TransformersConfig
        from markllm.watermark.kgw.kgw import KGW

        self.watermark = watermark
        cfg = {"algorithm_name": "KGW", "gamma": watermark.gamma, "delta": watermark.delta,
               "hash_key": watermark.key, "prefix_length": watermark.h, "z_threshold": 4.0,
               "f_scheme": watermark.prf.split("-", 1)[1], "window_scheme": "left"}
        fd, path = tempfile.mkstemp(suffix=".json")
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(cfg, f)
            self.kgw = KGW(path, TransformersConfig(None, None, vocab_size=watermark.vocab_size, device="cpu"))
        finally:
            os.unlink(path)

    def detect(self, ids: Any, prompt_len: int = 0) -> Detection:
        """MarkLLM's z-score of the tokens after ``prompt_len`` (each with its ``h`` preceding ids as context)."""
        import torch

        seq = check_ids(ids, "ids", self.watermark.vocab_size)
        prompt_len = check_int(prompt_len, "prompt_len", low=0)
        h = self.watermark.h
        part = seq[max(prompt_len - h, 0):]
        if len(part) <= h:
            return Detection(float("nan"), float("nan"), 0, 0)
        z, flags = self.kgw.utils.score_sequence(torch.as_tensor(part, dtype=torch.long))
        n_green = sum(1 for f in flags if f == 1)
        n = len(part) - h
        return Detection(float(z), 0.5 * math.erfc(float(z) / math.sqrt(2.0)), n_green, n)
