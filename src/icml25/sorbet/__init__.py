"""Sorbet (Tang, Yan & Wong, ICML 2025): a neuromorphic-hardware-compatible transformer-based spiking language model.

Library: :class:`PTSoftmax` (power-of-two softmax), :class:`BSPN` (bit-shift PowerNorm, with ``fold()``),
:class:`BinaryLinear`, :class:`LSQQuantizer` (4-bit, power-of-two steps), :class:`AverageIF` (rate-coding neuron),
:func:`convert` (a transformers BERT-family classifier -> Sorbet stages ``fp`` / ``ptsoftmax_bspn`` / ``w1a4`` /
``snn``), the multi-step distillation (:class:`DistillTrainer`, :func:`multi_step`), the exact spiking simulator
(:class:`SpikingSorbet`), the energy estimate (:func:`estimate_energy`, :func:`energy_report`) and GLUE loaders. Torch parts are imported
on first use.
"""

from typing import Any

from .data import GLUE_TASKS, GlueData, batches, encode, glue_metric, load_glue_task
from .energy import ann_macs, energy_report, estimate_energy

__all__ = ["PTSoftmax", "pt_softmax", "BSPN", "group_shift", "BinaryLinear", "BinaryEmbedding", "LSQQuantizer",
           "pow2_round", "nearest_pow2", "AverageIF", "SpikingSorbet", "SorbetOptions", "STAGES",
           "SorbetBertForSequenceClassification", "convert", "load_teacher", "fine_tune", "evaluate",
           "DistillTrainer", "multi_step", "kd_loss", "GLUE_TASKS", "GlueData", "load_glue_task", "encode",
           "batches", "glue_metric", "ann_macs", "energy_report", "estimate_energy"]

_LAZY = {"PTSoftmax": "ptsoftmax", "pt_softmax": "ptsoftmax", "BSPN": "bspn", "group_shift": "bspn",
         "BinaryLinear": "quantizers", "BinaryEmbedding": "quantizers", "LSQQuantizer": "quantizers",
         "pow2_round": "quantizers", "nearest_pow2": "quantizers", "AverageIF": "spiking",
         "SpikingSorbet": "spiking", "SorbetOptions": "model", "STAGES": "model",
         "SorbetBertForSequenceClassification": "model", "convert": "model", "load_teacher": "distill",
         "fine_tune": "distill", "evaluate": "distill", "DistillTrainer": "distill", "multi_step": "distill",
         "kd_loss": "distill"}


def __getattr__(name: str) -> Any:  # torch modules are imported on first use
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'icml25.sorbet' has no attribute {name!r}")
