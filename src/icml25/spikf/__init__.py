"""SpikF (Wu, Huo & Chen, ICML 2025): spiking Fourier network for efficient long-term time-series forecasting.

Library: the multi-step neuron :class:`LIF`, :class:`SpikFForecaster` (spiking patch encoding, spiking
frequency-selection blocks with a learned binary spectrum mask), :class:`RevIN`, the :class:`DLinear` baseline,
the data layer (:class:`LTSFDataset`, :func:`load_benchmark`), training (:func:`fit`, :func:`evaluate`) and the
energy estimate (:func:`estimate_energy`, :func:`estimate`, :func:`spikf_layers`), and the state-of-the-art peers
from ``neuralforecast`` on the same windows (:func:`fit_peer`, extra ``forecast``). The torch parts are imported on
first use.
"""

from typing import Any

from .data import BENCHMARKS, LTSFDataset, load_benchmark, read_csv_series, split_borders
from .energy import (
    LayerCost,
    dense_layers,
    energy_table,
    estimate,
    estimate_energy,
    memory_access_energy,
    spikf_layers,
)
from .peers import PEERS, PeerResult, fit_peer

__all__ = ["LIF", "spike", "RevIN", "SFSBlock", "SpikFForecaster", "DLinear", "LTSFDataset", "load_benchmark",
           "read_csv_series", "split_borders", "BENCHMARKS", "fit", "evaluate", "FitResult",
           "collect_firing_rates", "SpikFRegressor", "LayerCost", "estimate", "estimate_energy", "energy_table",
           "dense_layers", "memory_access_energy", "spikf_layers", "fit_peer", "PeerResult", "PEERS"]

_LAZY = {"LIF": "lif", "spike": "lif", "RevIN": "model", "SFSBlock": "model", "SpikFForecaster": "model",
         "DLinear": "model", "fit": "train", "evaluate": "train", "FitResult": "train",
         "collect_firing_rates": "train", "SpikFRegressor": "estimator"}


def __getattr__(name: str) -> Any:  # torch modules are imported on first use
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'icml25.spikf' has no attribute {name!r}")
