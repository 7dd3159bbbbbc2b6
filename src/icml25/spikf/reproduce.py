"""Reproduction of SpikF (spec §6): ETTh1/ETTh2 forecasting with a CPU-sized SpikF, DLinear under the same protocol,
the all-ones-mask ablation, firing rates, mask statistics and the energy estimate."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from icml25.core import Report, Scale, reproduction
from icml25.core.progress import progress
from icml25.core.registry import reproduction_stub
from icml25.core.threads import thread_limits
from icml25.core.validation import check_int, check_option, check_positive, check_real

from .data import LTSFDataset, load_benchmark
from .energy import estimate, spikf_layers

TITLE = "SpikF: Spiking Fourier Network for Efficient Long-term Prediction"
#: abstract: "3.16x lower total energy" than the ANN SOTA it is compared with (reported, not asserted)
PAPER_ENERGY_RATIO = 3.16
#: abstract: "-1.9 % MAE on average" against the best ANN SOTA over 8 data sets
PAPER_MAE_RATIO = 1 - 0.019
_CELLS = ("ETTh1-96", "ETTh1-192", "ETTh1-336", "ETTh1-720", "ETTh2-96", "ETTh2-192", "ETTh2-336", "ETTh2-720")


@dataclass(frozen=True)
class Config:
    cells: tuple[str, ...] = ("ETTh1-96",)  # data-horizon cells; the first one gets n_seeds seeds and the ablation
    n_seeds: int = 1  # seeds seed, seed+1, ... on the first cell
    seq_len: int = 96
    T: int = 4
    patch_num: int = 16
    patch_dim: int = 16
    hidden_dim: int = 64
    blocks: int = 1
    tau: float = 2.0
    epochs: int = 3
    train_stride: int = 8
    val_stride: int = 8
    batch_size: int = 32
    lr: float = 1e-3
    patience: int = 3
    test_limit: int = 1000  # first test windows evaluated (0 = all)
    dlinear_epochs: int = 10
    dlinear_lr: float = 5e-3
    ablation: bool = True
    energy_windows: int = 256  # test windows over which firing rates are measured
    threads: int = 1  # torch threads (1 is faster than 2 on these machines, see the README)

    def __post_init__(self) -> None:
        if not isinstance(self.cells, tuple) or not self.cells:
            raise TypeError(f"cells must be a non-empty tuple of names like 'ETTh1-96', got {self.cells!r}")
        for c in self.cells:
            check_option(c, "cells", _CELLS)
        for name, low in (("n_seeds", 1), ("seq_len", 2), ("T", 1), ("patch_num", 2), ("patch_dim", 1),
                          ("hidden_dim", 1), ("blocks", 1), ("epochs", 1), ("train_stride", 1), ("val_stride", 1),
                          ("batch_size", 2), ("patience", 1), ("test_limit", 0), ("dlinear_epochs", 1),
                          ("energy_windows", 2), ("threads", 1)):
            check_int(getattr(self, name), name, low=low)
        if self.seq_len % self.patch_num:
            raise ValueError(f"patch_num must divide seq_len={self.seq_len}, got {self.patch_num}")
        for name in ("lr", "dlinear_lr"):
            check_positive(getattr(self, name), name)
        check_real(self.tau, "tau", low=1.0)

    @classmethod
    def quick(cls) -> Config:
        return cls()

    @classmethod
    def full(cls) -> Config:
        return cls(cells=("ETTh1-96", "ETTh1-336", "ETTh2-96", "ETTh2-336"), n_seeds=3, patch_dim=32, hidden_dim=256,
                   train_stride=2, val_stride=1, lr=5e-4, test_limit=0, energy_windows=1024)


def _splits(cell: str, cfg: Config, cache: dict[str, Any]) -> dict[str, Any]:
    name, horizon = cell.split("-")
    if name not in cache:
        cache[name] = load_benchmark(name)
    values, _, split = cache[name]
    ds = {f: LTSFDataset(values, f, cfg.seq_len, int(horizon), split) for f in ("train", "val", "test")}
    return {"train": ds["train"].windows(cfg.train_stride), "val": ds["val"].windows(cfg.val_stride),
            "test": ds["test"].windows(1, cfg.test_limit or None), "n_vars": ds["train"].n_vars,
            "horizon": int(horizon), "sizes": {f: len(d) for f, d in ds.items()}}


def _spikf(cfg: Config, d: dict[str, Any], seed: int, selection: bool, train: bool, desc: str) -> dict[str, Any]:
    import torch

    from .model import SpikFForecaster
    from .train import collect_firing_rates, evaluate, fit

    torch.manual_seed(seed)
    model = SpikFForecaster(cfg.seq_len, d["horizon"], d["n_vars"], patch_num=cfg.patch_num,
                            patch_dim=cfg.patch_dim, T=cfg.T, blocks=cfg.blocks, hidden_dim=cfg.hidden_dim,
                            tau=cfg.tau, frequency_selection=selection)
    t0 = time.perf_counter()
    res = fit(model, d["train"], d["val"], epochs=cfg.epochs if train else 0, lr=cfg.lr, patience=cfg.patience,
              batch_size=cfg.batch_size, loss="mae", seed=seed, desc=desc)
    metrics = evaluate(model, d["test"])
    stats = collect_firing_rates(model, d["test"][0][:cfg.energy_windows])
    return {"model": model, "fit": res, **metrics, "stats": stats, "seconds": time.perf_counter() - t0}


def _dlinear(cfg: Config, d: dict[str, Any], seed: int) -> dict[str, Any]:
    import torch

    from .model import DLinear
    from .train import evaluate, fit

    torch.manual_seed(seed)
    model = DLinear(cfg.seq_len, d["horizon"], d["n_vars"])
    t0 = time.perf_counter()
    res = fit(model, d["train"], d["val"], epochs=cfg.dlinear_epochs, lr=cfg.dlinear_lr, patience=cfg.patience,
              batch_size=cfg.batch_size, loss="mse", seed=seed, desc="DLinear")
    return {"model": model, "fit": res, **evaluate(model, d["test"]), "seconds": time.perf_counter() - t0}


def _run_all(scale: Scale, seed: int, out: Path, cfg: Config, train_spikf: bool) -> Report:
    check_int(seed, "seed", low=0)
    with thread_limits(cfg.threads):
        return _experiments(seed, cfg, train_spikf)


def _experiments(seed: int, cfg: Config, train_spikf: bool) -> Report:
    rep = Report(slug="spikf", title=TITLE)
    cache: dict[str, Any] = {}
    first = cfg.cells[0]
    jobs = [(first, seed + k) for k in range(cfg.n_seeds)] + [(c, seed) for c in cfg.cells[1:]]
    runs: dict[tuple[str, int], dict[str, Any]] = {}
    data: dict[str, dict[str, Any]] = {}
    for cell, s in progress(jobs, "SpikF runs"):
        data.setdefault(cell, _splits(cell, cfg, cache))
        runs[(cell, s)] = _spikf(cfg, data[cell], s, True, train_spikf, f"SpikF {cell} seed {s}")
    dl = {cell: _dlinear(cfg, data[cell], seed) for cell in progress(cfg.cells, "DLinear runs")}
    abl = _spikf(cfg, data[first], seed, False, train_spikf, "SpikF all-ones mask") if cfg.ablation else None

    rows = []
    for (cell, s), r in runs.items():
        rows.append({"cell": cell, "seed": s, "SpikF MAE": r["mae"], "SpikF MSE": r["mse"],
                     "DLinear MAE": dl[cell]["mae"], "DLinear MSE": dl[cell]["mse"], "epochs run": len(r["fit"].val_loss),
                     "best epoch": r["fit"].best_epoch, "SpikF s": r["seconds"], "DLinear s": dl[cell]["seconds"],
                     "test windows": len(data[cell]["test"][0])})
    rep.add_table("test metrics (standardised scale, T-averaged predictions)", rows)
    rep.add_table("split sizes (windows, stride 1)", [{"cell": c, **d["sizes"]} for c, d in data.items()])

    main = [runs[(first, seed + k)] for k in range(cfg.n_seeds)]
    r0 = main[0]
    mae, mse = float(np.mean([r["mae"] for r in main])), float(np.mean([r["mse"] for r in main]))
    # fails if: the spiking pipeline does not learn (the stub: the untrained SpikF), a wrong split/scaler, or
    # metrics computed on per-step rather than T-averaged predictions
    rep.add_claim("Q1", f"SpikF test MAE on {first} (seed {seed}) <= 0.46", None, r0["mae"], "<=", 0.46,
                  kind="paper", reference_value=0.428, reference_source="spec §6 calibration (seed 0)",
                  note="the paper's claim is accuracy on par with ANN SOTA; the paper's own per-cell table was not "
                       "readable, so the threshold is the spec's")
    # fails if: as Q1 (an untrained model or a repeat-last-value forecaster gives MSE > 0.6)
    rep.add_claim("Q2", f"SpikF test MSE on {first} (seed {seed}) <= 0.45", None, r0["mse"], "<=", 0.45,
                  kind="paper", reference_value=0.400, reference_source="spec §6 calibration (seed 0)")
    rates = r0["stats"]["rates"]
    # fails if: a layer is silent (dead neurons, e.g. a threshold/tau mix-up) or saturated
    rep.add_claim("Q3", "every LIF layer fires: min firing rate > 0.01", None, min(rates.values()), ">", 0.01,
                  kind="mechanism")
    # fails if: a layer saturates (e.g. thresholds too low or the residual counts fed to a LIF as currents)
    rep.add_claim("Q4", "no LIF layer saturates: max firing rate < 0.9", None, max(rates.values()), "<", 0.9,
                  kind="mechanism")
    # fails if: the mask is taken from the analog selector output instead of the second LIF (non-binary values)
    rep.add_claim("Q5", "the frequency mask is binary", None, r0["stats"]["mask_binary"], "is_true", True,
                  kind="mechanism")
    # fails if: the mask collapses to all zeros (dead frequency path, spec §8) or keeps everything
    rep.add_claim("Q6", "the mask is non-trivial: fraction of kept frequency bins in [0.001, 0.999]", None,
                  r0["stats"]["mask_density"], "within", (0.001, 0.999), kind="mechanism")
    rep.add_table(f"firing rates ({first}, seed {seed}, {cfg.energy_windows} test windows)",
                  [{"layer": k, "rate": v} for k, v in rates.items()]
                  + [{"layer": f"sfs.{j} input (mean spike count)", "rate": v}
                     for j, v in enumerate(r0["stats"]["block_input"])]
                  + [{"layer": "head input (mean spike count)", "rate": r0["stats"]["head_input"]},
                     {"layer": "mask density", "rate": r0["stats"]["mask_density"]}])

    # ---- full-scale claims (measured on whatever cells the config has; asserted at full scale) ----
    # fails if: the model is weaker than the spec's calibration (e.g. a missing inter-step conv or per-step loss)
    rep.add_claim("C1a", f"{first} mean MAE over {cfg.n_seeds} seed(s) <= 0.410", None, mae, "<=", 0.410,
                  kind="paper", scale=Scale.FULL, reference_value=0.399, reference_source="spec §6 calibration",
                  note="third-party paper-size re-run (SpikingTSF): 0.392")
    # fails if: as C1a (MSE weighs the large errors of a poorly trained head)
    rep.add_claim("C1b", f"{first} mean MSE over {cfg.n_seeds} seed(s) <= 0.400", None, mse, "<=", 0.400,
                  kind="paper", scale=Scale.FULL, reference_value=0.386, reference_source="spec §6 calibration")
    e2 = runs.get(("ETTh2-96", seed))
    if e2 is not None:  # only when the config has the cell (the full preset); a NaN would break determinism checks
        # fails if: the model only works on ETTh1 (e.g. a scaler or split bug that favours one file)
        rep.add_claim("C1c", "ETTh2-96 MAE <= 0.38", None, e2["mae"], "<=", 0.38, kind="paper", scale=Scale.FULL,
                      note="spec §6: published ANN MAEs at L=96 are 0.35-0.39")
    wins = [runs[(c, seed)]["mae"] <= 1.02 * dl[c]["mae"] for c in cfg.cells]
    # fails if: SpikF is clearly worse than a linear model trained under the same protocol
    rep.add_claim("C2", "SpikF MAE <= 1.02 x DLinear MAE on >= 3 of 4 cells (fraction of cells)", None,
                  float(np.mean(wins)), ">=", 0.75, kind="paper", scale=Scale.FULL,
                  note=f"the paper: {PAPER_MAE_RATIO:.3f} x the best ANN's MAE on average (abstract); cells: "
                       + ", ".join(f"{c} {runs[(c, seed)]['mae']:.3f} vs {dl[c]['mae']:.3f}" for c in cfg.cells))
    if abl is not None:
        # fails if: the learned mask hurts (e.g. the selector drops the low frequencies)
        rep.add_claim("C4", f"learned mask not worse than the all-ones mask by > 0.01 MAE ({first}, seed {seed})",
                      None, r0["mae"] - abl["mae"], "<=", 0.01, kind="mechanism", scale=Scale.FULL,
                      note=f"learned {r0['mae']:.4f}, all-ones {abl['mae']:.4f}")
        rep.add_table("ablation (all-ones mask)", [{"variant": "learned mask", "MAE": r0["mae"], "MSE": r0["mse"]},
                                                   {"variant": "all-ones mask", "MAE": abl["mae"], "MSE": abl["mse"]}])

    energy_rows = []
    for detailed in (False, True):
        e = estimate(spikf_layers(r0["model"], r0["stats"]), detailed=detailed)
        energy_rows.append({"estimate": "detailed (Lemaire 2022)" if detailed else "simple (MAC/AC)",
                            "E_SNN (uJ)": e["e_snn"] * 1e6, "E_ANN (uJ)": e["e_ann"] * 1e6,
                            "E_ANN / E_SNN (ours)": e["ratio"], "paper (abstract)": PAPER_ENERGY_RATIO})
    rep.add_table(f"energy per sample ({first}, measured firing rates; paper: 3.16x lower total energy than ANN "
                  "SOTA, reported not asserted)", energy_rows)
    rep.notes.append(f"Energy: ours E_ANN/E_SNN = {energy_rows[0]['E_ANN / E_SNN (ours)']:.2f} (simple), "
                     f"{energy_rows[1]['E_ANN / E_SNN (ours)']:.2f} (detailed) against the dense equivalent of the "
                     "same network; the paper's 3.16x is against an ANN SOTA whose identity we could not read.")
    rep.notes.append("Metrics on the standardised scale (scaler fitted on the training rows); predictions averaged "
                     "over the T SNN steps before the metric; Time-Series-Library ETT splits (12/4/4 months).")
    rep.add_figure("forecast", _figure_forecast(r0["model"], dl[first]["model"], data[first]))
    rep.add_figure("firing_rates", _figure_rates(rates))
    return rep


def _figure_forecast(model: Any, dlinear: Any, d: dict[str, Any]) -> Any:
    import torch

    from icml25.core.plotting import new_figure

    x, y = d["test"][0][:1], d["test"][1][0]
    with torch.no_grad():
        model.eval()
        p = model.predict(torch.from_numpy(x))[0].numpy()
        q = dlinear.predict(torch.from_numpy(x))[0].numpy()
    fig, ax = new_figure()
    L, H = x.shape[1], len(y)
    ax.plot(range(L), x[0, :, -1], color="k", lw=1, label="look-back (OT)")
    ax.plot(range(L, L + H), y[:, -1], color="k", ls="--", lw=1, label="truth")
    ax.plot(range(L, L + H), p[:, -1], color="tab:red", label="SpikF")
    ax.plot(range(L, L + H), q[:, -1], color="tab:blue", label="DLinear")
    ax.set_xlabel("hour")
    ax.set_ylabel("OT (standardised)")
    ax.set_title("first test window, last variable")
    ax.legend()
    return fig


def _figure_rates(rates: dict[str, float]) -> Any:
    from icml25.core.plotting import new_figure

    fig, ax = new_figure()
    ax.barh(list(rates), list(rates.values()), color="tab:orange")
    ax.set_xlabel("firing rate (spikes per neuron per step)")
    ax.set_title("SpikF LIF layers")
    return fig


@reproduction(slug="spikf", title=TITLE, arxiv="PMLR 267:67342-67368", extras=("torch", "plot"), config=Config)
def reproduce(scale: Scale, seed: int, out: Path, config: Config) -> Report:
    """SpikF vs DLinear on ETTh1/ETTh2, the all-ones-mask ablation, firing rates, mask statistics and energy."""
    return _run_all(scale, seed, out, config, train_spikf=True)


@reproduction_stub(slug="spikf")
def reproduce_stub(scale: Scale, seed: int, out: Path, config: Config) -> Report:
    """The stub: SpikF left untrained (its naive baseline: the randomly initialised network), all else identical."""
    return _run_all(scale, seed, out, config, train_spikf=False)
