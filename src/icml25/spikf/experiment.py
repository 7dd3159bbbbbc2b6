"""The SpikF experiment (spec §6): SpikF (or, for the stub, DLinear in its place) on every cell, the DLinear
reference, the all-ones-mask ablation, firing rates, mask statistics and the energy estimate, with the claims each
supports. One function per stage or claim group; ``reproduce.py`` calls them in order.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from icml25.core import Report, Scale
from icml25.core.progress import progress

from .data import BENCHMARKS, LTSFDataset, load_benchmark
from .energy import dense_layers, energy_table, estimate, spikf_layers

if TYPE_CHECKING:
    from .reproduce import Config

#: abstract: "lowering total energy consumption by 3.16x" (against the state-of-the-art models it compares with)
PAPER_ENERGY_RATIO = 3.16
#: abstract: "an averaged 1.9 % reduction in MAE compared to state-of-the-art models" (8 data sets)
PAPER_MAE_REDUCTION = 1.9
#: kept for users of the older name: the paper's MAE as a fraction of the best ANN's
PAPER_MAE_RATIO = 1 - PAPER_MAE_REDUCTION / 100
#: tolerance of the energy claim: our estimate may fall 10 % short of the paper's ratio
ENERGY_TOLERANCE = 0.10
#: the official scripts' per-data-set settings (spec §2), applied by ``Config.per_dataset`` (the paper preset)
PAPER_PER_DATASET: dict[str, dict[str, int]] = {
    "ETTm1": {"epochs": 5}, "ETTm2": {"epochs": 5},
    "electricity": {"batch_size": 8, "blocks": 2, "patch_dim": 16, "epochs": 15},
    "traffic": {"batch_size": 8, "blocks": 2, "patch_dim": 16, "epochs": 15},
}


def _cell_config(cfg: Config, cell: str) -> Config:
    """``cfg`` with the official per-data-set settings of ``cell``'s data set when ``cfg.per_dataset``."""
    name = cell.rsplit("-", 1)[0]
    return dataclasses.replace(cfg, **PAPER_PER_DATASET.get(name, {})) if cfg.per_dataset else cfg


def _load(name: str, cfg: Config, cache: dict[str, Any]) -> tuple[Any, list[str], str]:
    """The benchmark ``name`` (from ``cfg.data_dir`` when it holds the file, else the cache / shipped copy)."""
    from pathlib import Path

    from icml25.core.data import cache_dir
    from icml25.core.errors import DataNotFoundError

    if name not in cache:
        local = Path(cfg.data_dir) / BENCHMARKS[name][0] if cfg.data_dir else None
        try:
            cache[name] = load_benchmark(name, path=local if local is not None and local.is_file() else None)
        except DataNotFoundError as exc:
            raise DataNotFoundError(f"{exc} (or put {BENCHMARKS[name][0]} into {cache_dir('spikf')}, or pass "
                                    "--set data_dir=<folder with the benchmark CSVs>)") from None
    return cache[name]


def _splits(cell: str, cfg: Config, cache: dict[str, Any]) -> dict[str, Any]:
    name, horizon = cell.rsplit("-", 1)
    _load(name, cfg, cache)
    values, _, split = cache[name]
    ds = {f: LTSFDataset(values, f, cfg.seq_len, int(horizon), split) for f in ("train", "val", "test")}
    return {"train": ds["train"].windows(cfg.train_stride), "val": ds["val"].windows(cfg.val_stride),
            "test": ds["test"].windows(1, cfg.test_limit or None), "n_vars": ds["train"].n_vars,
            "horizon": int(horizon), "sizes": {f: len(d) for f, d in ds.items()}}



def _spikf(cfg: Config, d: dict[str, Any], seed: int, selection: bool, desc: str, rates: bool = True
           ) -> dict[str, Any]:
    import torch

    from .model import SpikFForecaster
    from .train import collect_firing_rates, evaluate, fit

    torch.manual_seed(seed)
    model = SpikFForecaster(cfg.seq_len, d["horizon"], d["n_vars"], patch_num=cfg.patch_num,
                            patch_dim=cfg.patch_dim, T=cfg.T, blocks=cfg.blocks, hidden_dim=cfg.hidden_dim,
                            tau=cfg.tau, frequency_selection=selection).to(cfg.device)
    t0 = time.perf_counter()
    res = fit(model, d["train"], d["val"], epochs=cfg.epochs, lr=cfg.lr, patience=cfg.patience,
              batch_size=cfg.batch_size, loss="mae", seed=seed, desc=desc)
    metrics = evaluate(model, d["test"])
    stats = collect_firing_rates(model, d["test"][0][:cfg.energy_windows or None]) if rates else None
    return {"model": model, "fit": res, **metrics, "stats": stats, "seconds": time.perf_counter() - t0}


def _dlinear(cfg: Config, d: dict[str, Any], seed: int) -> dict[str, Any]:
    import torch

    from .model import DLinear
    from .train import evaluate, fit

    torch.manual_seed(seed)
    model = DLinear(cfg.seq_len, d["horizon"], d["n_vars"]).to(cfg.device)
    t0 = time.perf_counter()
    res = fit(model, d["train"], d["val"], epochs=cfg.dlinear_epochs, lr=cfg.dlinear_lr, patience=cfg.patience,
              batch_size=cfg.batch_size, loss="mse", seed=seed, desc="DLinear")
    return {"model": model, "fit": res, **evaluate(model, d["test"]), "stats": None,
            "seconds": time.perf_counter() - t0}


@dataclass(frozen=True)
class Runs:
    """Every trained model of a run and the data it saw."""

    method: str  # "SpikF", or "DLinear (stub)"
    first: str  # the first cell (n_seeds seeds, the ablation, rates and energy)
    runs: dict[tuple[str, int], dict[str, Any]]  # (cell, seed) -> the method's run
    dl: dict[str, dict[str, Any]]  # cell -> the DLinear reference run (seed ``seed``)
    abl: dict[str, Any] | None  # the all-ones-mask ablation on the first cell (None: not run)
    data: dict[str, dict[str, Any]]  # cell -> windows and split sizes
    main: list[dict[str, Any]]  # the method's runs on the first cell, one per seed

    @property
    def r0(self) -> dict[str, Any]:
        """The method's run on the first cell at the run's seed."""
        return self.main[0]

    @property
    def n_test(self) -> int:
        """Test windows of the first cell."""
        return len(self.data[self.first]["test"][0])


def train_all(cfg: Config, seed: int, stub: bool) -> Runs:
    """SpikF (the stub: DLinear) on every cell and seed, DLinear on every cell, the ablation on the first cell."""
    cache: dict[str, Any] = {}
    first = cfg.cells[0]
    jobs = [(first, seed + k) for k in range(cfg.n_seeds)] + [(c, seed) for c in cfg.cells[1:]]
    runs: dict[tuple[str, int], dict[str, Any]] = {}
    data: dict[str, dict[str, Any]] = {}
    method = "DLinear (stub)" if stub else "SpikF"
    for cell, s in progress(jobs, f"{method} runs"):
        c = _cell_config(cfg, cell)
        data.setdefault(cell, _splits(cell, c, cache))
        runs[(cell, s)] = (_dlinear(c, data[cell], s) if stub
                           else _spikf(c, data[cell], s, True, f"SpikF {cell} seed {s}"))
    dl = {cell: _dlinear(_cell_config(cfg, cell), data[cell], seed) for cell in progress(cfg.cells, "DLinear runs")}
    abl = (_spikf(_cell_config(cfg, first), data[first], seed, False, "SpikF all-ones mask")
           if cfg.ablation and not stub else None)
    main = [runs[(first, seed + k)] for k in range(cfg.n_seeds)]
    return Runs(method, first, runs, dl, abl, data, main)


def add_run_tables(rep: Report, tr: Runs) -> None:
    """The per-run test metrics and the split sizes."""
    rows = []
    for (cell, s), r in tr.runs.items():
        rows.append({"cell": cell, "seed": s, f"{tr.method} MAE": r["mae"], f"{tr.method} MSE": r["mse"],
                     "DLinear MAE": tr.dl[cell]["mae"], "DLinear MSE": tr.dl[cell]["mse"],
                     "epochs run": len(r["fit"].val_loss),
                     "best epoch": r["fit"].best_epoch, f"{tr.method} s": r["seconds"],
                     "DLinear s": tr.dl[cell]["seconds"], "test windows": len(tr.data[cell]["test"][0])})
    rep.add_table("test metrics (standardised scale, T-averaged predictions)", rows)
    rep.add_table("split sizes (windows, stride 1)", [{"cell": c, **d["sizes"]} for c, d in tr.data.items()])


def add_quick_claims(rep: Report, cfg: Config, seed: int, tr: Runs) -> None:
    """Q1-Q2 (against DLinear on the first cell), Q3-Q6 (firing rates and the mask) and the firing-rate table."""
    method, first, r0, dl, n_test = tr.method, tr.first, tr.r0, tr.dl, tr.n_test
    windows = "all" if not cfg.test_limit else f"the first {cfg.test_limit}"
    relative = ("looser than the paper's -1.9 % (vs the best ANN over 8 data sets): one peer, one cell, CPU budget; "
                "strict, so that DLinear itself (the stub) fails")
    # fails if: SpikF does not beat a linear model trained under the same protocol on the same windows (the stub,
    # DLinear in SpikF's place, gives exactly 1), a wrong split/scaler, or per-step instead of T-averaged metrics
    rep.add_claim("Q1", f"{method} test MAE / DLinear test MAE on {first} (seed {seed}, {windows} {n_test} test "
                  "windows) < 1", None, r0["mae"] / dl[first]["mae"], "<", 1.0, kind="paper",
                  threshold_reason=relative,
                  note=f"{method} MAE {r0['mae']:.4f}, DLinear MAE {dl[first]['mae']:.4f}; the paper's per-cell "
                       "table was not readable")
    # fails if: as Q1 (MSE weighs the large errors of a poorly trained head)
    rep.add_claim("Q2", f"{method} test MSE / DLinear test MSE on {first} (seed {seed}, {windows} {n_test} test "
                  "windows) < 1", None, r0["mse"] / dl[first]["mse"], "<", 1.0, kind="paper",
                  threshold_reason=relative, note=f"{method} MSE {r0['mse']:.4f}, DLinear MSE {dl[first]['mse']:.4f}")
    stats = r0["stats"]
    rates = stats["rates"] if stats is not None else {}
    nan = math.nan
    no_spikes = "" if stats is not None else "the stub (DLinear) has no spiking layers"
    # fails if: a layer is silent (dead neurons, e.g. a threshold/tau mix-up) or saturated
    rep.add_claim("Q3", "every LIF layer fires: min firing rate > 0.01", None, min(rates.values(), default=nan), ">",
                  0.01, kind="mechanism", note=no_spikes)
    # fails if: a layer saturates (e.g. thresholds too low or the residual counts fed to a LIF as currents)
    rep.add_claim("Q4", "no LIF layer saturates: max firing rate < 0.9", None, max(rates.values(), default=nan), "<",
                  0.9, kind="mechanism", note=no_spikes)
    # fails if: the mask is taken from the analog selector output instead of the second LIF (non-binary values)
    rep.add_claim("Q5", "the frequency mask is binary", None, bool(stats and stats["mask_binary"]), "is_true", True,
                  kind="mechanism", note=no_spikes)
    # fails if: the mask collapses to all zeros (dead frequency path, spec §8) or keeps everything
    rep.add_claim("Q6", "the mask is non-trivial: fraction of kept frequency bins in [0.001, 0.999]", None,
                  stats["mask_density"] if stats else nan, "within", (0.001, 0.999), kind="mechanism",
                  note=no_spikes)
    if stats is not None:
        rep.add_table(f"firing rates ({first}, seed {seed}, {_n_energy(cfg, tr)} test windows)",
                      [{"layer": k, "rate": v} for k, v in rates.items()]
                      + [{"layer": f"sfs.{j} input (mean spike count)", "rate": v}
                         for j, v in enumerate(stats["block_input"])]
                      + [{"layer": "head input (mean spike count)", "rate": stats["head_input"]},
                         {"layer": "mask density", "rate": stats["mask_density"]}])


def _n_energy(cfg: Config, tr: Runs) -> int:
    """Test windows over which the firing rates (and so the energy) are measured."""
    return min(cfg.energy_windows or tr.n_test, tr.n_test)


def add_headline_claims(rep: Report, cfg: Config, seed: int, tr: Runs) -> float:
    """The abstract's numbers: H1 (MAE reduction against DLinear), E1 (energy ratio) and the per-layer energy table
    (H2, against the state-of-the-art peers, is in ``peer_comparison``). Returns DLinear's energy per sample (J)."""
    method, first, r0, stats = tr.method, tr.first, tr.r0, tr.r0["stats"]
    reductions = {c: 100.0 * (1.0 - tr.runs[(c, seed)]["mae"] / tr.dl[c]["mae"]) for c in cfg.cells}
    # fails if: SpikF is not better than DLinear on average over the cells by the paper's margin (the stub: 0 %)
    rep.add_claim("H1", f"{method} lowers MAE by >= 1.9 % against the best peer, averaged over the cells "
                  f"({len(cfg.cells)}: {', '.join(cfg.cells[:4])}{', ...' if len(cfg.cells) > 4 else ''}); peer here: "
                  "our DLinear", PAPER_MAE_REDUCTION, float(np.mean(list(reductions.values()))), ">=",
                  PAPER_MAE_REDUCTION, kind="paper", scale=Scale.FULL, unit="%", headline=True,
                  source="abstract (8 data sets, vs state-of-the-art models)",
                  note="our DLinear only (claim H2: against the neuralforecast state-of-the-art peers); per cell: "
                       + ", ".join(f"{c} {v:+.1f} %" for c, v in reductions.items()))
    n_energy = _n_energy(cfg, tr)
    test_x = tr.data[first]["test"][0][:n_energy]
    e_method, e_rows = energy_table(spikf_layers(r0["model"], stats) if stats is not None
                                    else dense_layers(r0["model"], test_x))
    e_dense = estimate(spikf_layers(r0["model"], stats))["e_ann"] if stats is not None else e_method
    e_dlinear, _ = energy_table(dense_layers(tr.dl[first]["model"], test_x))
    need = PAPER_ENERGY_RATIO * (1 - ENERGY_TOLERANCE)
    top = sorted(e_rows, key=lambda row: -row["energy (J)"])[:3]
    # fails if: the spiking layers do not save energy by the paper's factor at the measured firing rates (the stub:
    # DLinear against itself, 1x)
    rep.add_claim("E1", f"{method} lowers energy per sample by 3.16x: E(non-spiking equivalent) / E({method}), "
                  f"45 nm MAC/AC accounting, firing rates on {n_energy} test windows of {first}",
                  PAPER_ENERGY_RATIO, e_dense / e_method, ">=", round(need, 3), kind="paper", scale=Scale.FULL,
                  unit="x", headline=True, source="abstract (total energy vs state-of-the-art models)",
                  note="the paper's comparison model could not be read (spec §2); ours is the dense (non-spiking) "
                       "equivalent of the same trained network; tolerance 10 %. Largest layers: "
                       + ", ".join(f"{row['layer']} {100 * row['share']:.0f} %" for row in top))
    rep.add_table(f"energy per sample by layer ({method}, {first}, simple MAC/AC estimate)",
                  [{**{k: v for k, v in row.items() if k != "energy (J)"}, "energy (uJ)": row["energy (J)"] * 1e6}
                   for row in e_rows])
    return e_dlinear


def add_full_claims(rep: Report, cfg: Config, seed: int, tr: Runs) -> None:
    """C1a-C1c (absolute errors), C2 (against DLinear per cell), C4 (the all-ones-mask ablation) and its table;
    measured on whatever cells the config has, asserted at full scale."""
    first, r0, abl, runs, dl = tr.first, tr.r0, tr.abl, tr.runs, tr.dl
    mae, mse = float(np.mean([r["mae"] for r in tr.main])), float(np.mean([r["mse"] for r in tr.main]))
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
    if cfg.ablation:
        # fails if: the learned mask hurts (e.g. the selector drops the low frequencies)
        rep.add_claim("C4", f"learned mask not worse than the all-ones mask by > 0.01 MAE ({first}, seed {seed})",
                      None, r0["mae"] - abl["mae"] if abl is not None else math.nan, "<=", 0.01, kind="mechanism",
                      scale=Scale.FULL, note=(f"learned {r0['mae']:.4f}, all-ones {abl['mae']:.4f}" if abl is not None
                                              else "the stub (DLinear) has no mask"))
        if abl is not None:
            rep.add_table("ablation (all-ones mask)",
                          [{"variant": "learned mask", "MAE": r0["mae"], "MSE": r0["mse"]},
                           {"variant": "all-ones mask", "MAE": abl["mae"], "MSE": abl["mse"]}])


def add_energy_notes_figures(rep: Report, tr: Runs, e_dlinear: float) -> None:
    """The energy table (simple and detailed estimates), the closing notes and the figures."""
    first, r0, stats = tr.first, tr.r0, tr.r0["stats"]
    energy_rows = []
    if stats is not None:
        for detailed in (False, True):
            e = estimate(spikf_layers(r0["model"], stats), detailed=detailed)
            energy_rows.append({"estimate": "detailed (Lemaire 2022)" if detailed else "simple (MAC/AC)",
                                "E_SNN (uJ)": e["e_snn"] * 1e6, "E_ANN (uJ)": e["e_ann"] * 1e6,
                                "E_ANN / E_SNN (ours)": e["ratio"], "E_DLinear (uJ)": e_dlinear * 1e6,
                                "paper (abstract)": PAPER_ENERGY_RATIO})
        rep.add_table(f"energy per sample ({first}, measured firing rates; E_ANN: the dense equivalent of the same "
                      "network; paper: 3.16x lower total energy than the state-of-the-art models)", energy_rows)
        rep.notes.append(f"Energy: ours E_ANN/E_SNN = {energy_rows[0]['E_ANN / E_SNN (ours)']:.2f} (simple, claim "
                         f"E1), {energy_rows[1]['E_ANN / E_SNN (ours)']:.2f} (detailed) against the dense equivalent "
                         f"of the same network; our DLinear costs {e_dlinear * 1e6:.3g} uJ per sample. The paper's "
                         "3.16x is against a state-of-the-art model whose identity we could not read.")
    rep.notes.append("Metrics on the standardised scale (scaler fitted on the training rows); predictions averaged "
                     "over the T SNN steps before the metric; Time-Series-Library ETT splits (12/4/4 months).")
    rep.add_figure("forecast", _figure_forecast(r0["model"], tr.dl[first]["model"], tr.data[first], tr.method))
    if stats is not None:
        rep.add_figure("firing_rates", _figure_rates(stats["rates"]))


def _figure_forecast(model: Any, dlinear: Any, d: dict[str, Any], label: str = "SpikF") -> Any:
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
    ax.plot(range(L, L + H), p[:, -1], color="tab:red", label=label)
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
