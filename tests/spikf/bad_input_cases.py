"""Bad-input registry of ``icml25.spikf`` for the fuzz contract (tests/core/test_bad_input.py)."""

from __future__ import annotations

import functools

import numpy as np

from icml25.testing import ARRAY, POSITIVE, PROB, REAL, SIZE, TEXT, BadInputCase


def _torch():
    import torch

    return torch


def _x():
    return _torch().randn(3, 16, 2, generator=_torch().Generator().manual_seed(0))


def _spikf():
    from icml25.spikf import SpikFForecaster

    _torch().manual_seed(0)
    return SpikFForecaster(seq_len=16, pred_len=4, n_vars=2, patch_num=4, patch_dim=4, T=2, hidden_dim=8)


def _dlinear():
    from icml25.spikf import DLinear

    return DLinear(16, 4, 2, kernel_size=5)


@functools.cache
def _series() -> np.ndarray:
    return np.random.default_rng(0).normal(size=(200, 2))


def _ds():
    from icml25.spikf import LTSFDataset

    return LTSFDataset(_series(), "train", 16, 4, "ratio")


def _windows():
    return _ds().windows(4)


def _regressor():
    from icml25.spikf import SpikFRegressor

    return SpikFRegressor(seq_len=16, pred_len=4, patch_num=4, patch_dim=4, T=2, hidden_dim=8, epochs=1, stride=8)


@functools.cache
def _fitted_regressor():
    return _regressor().fit(_series())


def _layer_kwargs():
    return {"name": "fc", "macs": 100.0, "n_inputs": 10, "n_outputs": 10, "input_rate": 0.2, "steps": 4,
            "spiking_output": True, "out_rate": 0.1, "params": 100}


def _layers():
    from icml25.spikf import LayerCost

    return [LayerCost(**_layer_kwargs())]


def _csv_path():
    from icml25.core.data import shipped_path

    return shipped_path("spikf", "ETTh2.csv")


CASES = [
    BadInputCase("LIF", lambda: {"tau": 2.0, "v_threshold": 1.0, "detach_reset": True, "surrogate_alpha": 4.0},
                 bad={"tau": POSITIVE, "v_threshold": POSITIVE, "surrogate_alpha": POSITIVE}),
    BadInputCase("spike", lambda: {"x": _torch().randn(5), "alpha": 4.0}, bad={"alpha": POSITIVE}),
    BadInputCase("RevIN", lambda: {"eps": 1e-5}, bad={"eps": POSITIVE}),
    BadInputCase("SFSBlock", lambda: {"patch_num": 4, "patch_dim": 4, "tau": 2.0, "selector_threshold": 0.1},
                 bad={"patch_num": SIZE, "patch_dim": SIZE, "tau": POSITIVE, "selector_threshold": POSITIVE}),
    BadInputCase("SpikFForecaster", lambda: {"seq_len": 16, "pred_len": 4, "n_vars": 2, "patch_num": 4,
                                             "patch_dim": 4, "T": 2, "blocks": 1, "hidden_dim": 8, "tau": 2.0,
                                             "selector_threshold": 0.1},
                 bad={"seq_len": SIZE, "pred_len": SIZE, "n_vars": SIZE, "patch_num": SIZE, "patch_dim": SIZE,
                      "T": SIZE, "blocks": SIZE, "hidden_dim": SIZE, "tau": POSITIVE,
                      "selector_threshold": POSITIVE}),
    BadInputCase("SpikFForecaster.forward", lambda: {"x": _x()}, obj=_spikf, bad={"x": ARRAY}),
    BadInputCase("SpikFForecaster.predict", lambda: {"x": _x()}, obj=_spikf, bad={"x": ARRAY}),
    BadInputCase("DLinear", lambda: {"seq_len": 16, "pred_len": 4, "n_vars": 2, "kernel_size": 5},
                 bad={"seq_len": SIZE, "pred_len": SIZE, "n_vars": SIZE, "kernel_size": SIZE}),
    BadInputCase("DLinear.forward", lambda: {"x": _x()}, obj=_dlinear, bad={"x": ARRAY}),
    BadInputCase("LTSFDataset", lambda: {"data": _series(), "flag": "val", "seq_len": 16, "pred_len": 4,
                                         "split": "ratio"},
                 bad={"data": ARRAY, "flag": TEXT, "seq_len": SIZE, "pred_len": SIZE, "split": TEXT}),
    BadInputCase("LTSFDataset.windows", lambda: {"stride": 2, "limit": 5}, obj=_ds,
                 bad={"stride": SIZE, "limit": SIZE}),
    BadInputCase("LTSFDataset.inverse_transform", lambda: {"x": np.zeros((3, 4, 2))}, obj=_ds, bad={"x": ARRAY}),
    BadInputCase("load_benchmark", lambda: {"name": "ETTh2"}, bad={"name": TEXT}),
    BadInputCase("read_csv_series", lambda: {"path": _csv_path(), "n_columns": 7}, bad={"n_columns": SIZE}),
    BadInputCase("split_borders", lambda: {"n_rows": 17420, "seq_len": 96, "split": "ett_hour"},
                 bad={"n_rows": SIZE, "seq_len": SIZE, "split": TEXT}),
    BadInputCase("fit", lambda: {"model": _dlinear(), "train": _windows(), "val": _windows(), "epochs": 1,
                                 "lr": 1e-3, "patience": 2, "batch_size": 16, "min_delta": 1e-4, "t_max": 5},
                 bad={"lr": POSITIVE, "patience": SIZE, "batch_size": SIZE, "min_delta": REAL, "t_max": SIZE}),
    BadInputCase("evaluate", lambda: {"model": _dlinear(), "data": _windows(), "batch_size": 8},
                 bad={"batch_size": SIZE}),
    BadInputCase("FitResult", skip="a result container returned by fit(), not built from user numbers"),
    BadInputCase("fit_peer", skip="trains a neuralforecast model (extra 'forecast'); its argument checks are tested in "
                 "tests/spikf/test_peers.py::test_bad_arguments"),
    BadInputCase("PeerResult", skip="a result container returned by fit_peer(), not built from user numbers"),
    BadInputCase("collect_firing_rates", lambda: {"model": _spikf(), "X": _windows()[0], "batch_size": 8},
                 bad={"X": ARRAY, "batch_size": SIZE}),
    BadInputCase("SpikFRegressor", lambda: {"seq_len": 16, "pred_len": 4, "patch_num": 4, "patch_dim": 4, "T": 2,
                                            "hidden_dim": 8, "epochs": 1, "lr": 1e-3, "batch_size": 16,
                                            "stride": 4, "val_fraction": 0.2, "tau": 2.0},
                 bad={"seq_len": SIZE, "pred_len": SIZE, "patch_num": SIZE, "patch_dim": SIZE, "T": SIZE,
                      "hidden_dim": SIZE, "epochs": SIZE, "lr": POSITIVE, "batch_size": SIZE, "stride": SIZE,
                      "val_fraction": PROB, "tau": POSITIVE}),
    BadInputCase("SpikFRegressor.fit", lambda: {"X": _series()}, obj=_regressor, bad={"X": ARRAY}),
    BadInputCase("SpikFRegressor.predict", lambda: {"window": np.stack([_series()[:16], _series()[1:17]])},
                 obj=_fitted_regressor,
                 bad={"window": ARRAY}),
    BadInputCase("LayerCost", _layer_kwargs, bad={"macs": REAL, "n_inputs": SIZE, "n_outputs": SIZE,
                                                  "input_rate": REAL, "steps": SIZE, "out_rate": PROB}),
    BadInputCase("estimate", lambda: {"layers": _layers(), "e_mac": 4.6e-12, "e_ac": 0.9e-12},
                 bad={"e_mac": POSITIVE, "e_ac": POSITIVE}),
    BadInputCase("memory_access_energy", lambda: {"n_bytes": 4096.0}, bad={"n_bytes": POSITIVE}),
    BadInputCase("spikf_layers", skip="takes a built SpikFForecaster and the dict of collect_firing_rates"),
    BadInputCase("estimate_energy", lambda: {"model": _dlinear(), "data": _windows()[0], "e_mac": 4.6e-12,
                                             "e_ac": 0.9e-12, "batch_size": 8},
                 bad={"data": ARRAY, "e_mac": POSITIVE, "e_ac": POSITIVE, "batch_size": SIZE}),
    BadInputCase("energy_table", lambda: {"layers": _layers(), "e_mac": 4.6e-12, "e_ac": 0.9e-12},
                 bad={"e_mac": POSITIVE, "e_ac": POSITIVE}),
    BadInputCase("dense_layers", lambda: {"model": _dlinear(), "X": _windows()[0], "batch_size": 8},
                 bad={"X": ARRAY, "batch_size": SIZE}),
]
