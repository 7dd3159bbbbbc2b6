"""Reproduction of SpikF (spec §6): ETTh1/ETTh2 forecasting with a CPU-sized SpikF, DLinear under the same protocol,
the all-ones-mask ablation, firing rates, mask statistics and the energy estimate; ``Config.paper()`` is the paper's
8 data sets x 4 horizons with the paper-size model on a GPU."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from icml25.core import Report, Scale, reproduction
from icml25.core.registry import reproduction_stub
from icml25.core.threads import thread_limits
from icml25.core.validation import check_device, check_int, check_option, check_positive, check_real

from . import experiment, peer_comparison

TITLE = "SpikF: Spiking Fourier Network for Efficient Long-term Prediction"
#: the paper's eight data sets (abstract; spec §3) and four horizons
DATASETS = ("ETTh1", "ETTh2", "ETTm1", "ETTm2", "weather", "electricity", "traffic", "exchange_rate")
HORIZONS = (96, 192, 336, 720)
_CELLS = tuple(f"{name}-{h}" for name in DATASETS for h in HORIZONS)


@dataclass(frozen=True)
class Config:
    cells: tuple[str, ...] = ("ETTh1-96",)  # data-horizon cells; the first one gets n_seeds seeds and the ablation
    n_seeds: int = 1  # seeds seed, seed+1, ... on the first cell
    seq_len: int = 96  # look-back L
    T: int = 4  # SNN steps
    patch_num: int = 16  # patches N (divides seq_len)
    patch_dim: int = 16  # embedding width C
    hidden_dim: int = 64  # head width Hd
    blocks: int = 1  # SFS blocks K
    tau: float = 2.0  # LIF time constant
    epochs: int = 3  # SpikF training epochs (early stopping may end sooner)
    train_stride: int = 8  # start stride of the training windows
    val_stride: int = 8  # start stride of the validation windows
    batch_size: int = 32  # training batch
    lr: float = 1e-3  # Adam learning rate (cosine schedule)
    patience: int = 3  # early-stopping patience in epochs
    test_limit: int = 0  # first test windows evaluated (0 = all)
    dlinear_epochs: int = 10  # DLinear training epochs (MSE loss)
    dlinear_lr: float = 5e-3  # DLinear learning rate
    ablation: bool = True  # also train the all-ones-mask ablation on the first cell
    energy_windows: int = 256  # test windows over which firing rates are measured (0 = all)
    threads: int = 1  # torch threads (1 is faster than 2 on these machines, see the README)
    per_dataset: bool = False  # apply the official scripts' per-data-set settings (experiment.PAPER_PER_DATASET)
    device: str = "cpu"  # torch device of the models ("cpu", "cuda" or "cuda:<k>")
    peers: tuple[str, ...] = ()  # neuralforecast peers of claim H2 (PatchTST, iTransformer, DLinear); () = no comparison
    peer_datasets: tuple[str, ...] = ()  # data sets of the SpikF-vs-peers comparison (each at every peer horizon)
    peer_horizons: tuple[int, ...] = (96, 336)  # horizons of the comparison
    peer_epochs: int = 3  # neuralforecast peers' training epochs (early stopping on validation MAE may end sooner)
    peer_windows: int = 0  # comparison: training windows per epoch at most (stride raised per data set; 0 = no cap)
    data_dir: str = ""  # folder holding the benchmark CSVs (searched first; "" = the cache and the shipped copies)

    def __post_init__(self) -> None:
        if not isinstance(self.cells, tuple) or not self.cells:
            raise TypeError(f"cells must be a non-empty tuple of names like 'ETTh1-96', got {self.cells!r}")
        for c in self.cells:
            check_option(c, "cells", _CELLS)
        for name, low in (("n_seeds", 1), ("seq_len", 2), ("T", 1), ("patch_num", 2), ("patch_dim", 1),
                          ("hidden_dim", 1), ("blocks", 1), ("epochs", 1), ("train_stride", 1), ("val_stride", 1),
                          ("batch_size", 2), ("patience", 1), ("test_limit", 0), ("dlinear_epochs", 1),
                          ("energy_windows", 0), ("threads", 1)):
            check_int(getattr(self, name), name, low=low)
        if self.energy_windows == 1:
            raise ValueError("energy_windows must be 0 (all test windows) or >= 2, got 1")
        if self.seq_len % self.patch_num:
            raise ValueError(f"patch_num must divide seq_len={self.seq_len}, got {self.patch_num}")
        for name in ("lr", "dlinear_lr"):
            check_positive(getattr(self, name), name)
        check_real(self.tau, "tau", low=1.0)
        for name in ("ablation", "per_dataset"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a bool, got {getattr(self, name)!r}")
        check_device(self.device)
        from .peers import PEERS

        for name, allowed in (("peers", PEERS), ("peer_datasets", DATASETS), ("peer_horizons", HORIZONS)):
            value = getattr(self, name)
            if not isinstance(value, tuple):
                raise TypeError(f"{name} must be a tuple, got {value!r}")
            for v in value:
                check_option(v, name, allowed)
        if self.peers and not (self.peer_datasets and self.peer_horizons):
            raise ValueError("peers need peer_datasets and peer_horizons (the comparison cells), got "
                             f"{self.peer_datasets!r} x {self.peer_horizons!r}")
        check_int(self.peer_epochs, "peer_epochs", low=1)
        check_int(self.peer_windows, "peer_windows", low=0)
        if not isinstance(self.data_dir, str):
            raise TypeError(f"data_dir must be a str (a folder path or ''), got {self.data_dir!r}")

    @classmethod
    def quick(cls) -> Config:
        # the full model and training windows on one cell and seed: with the default sizes (C 16, Hd 64, stride 8)
        # SpikF lost to DLinear on ETTh1-96 (MAE ratio 1.111; 1.085 with C 32/Hd 256/lr 5e-4 at stride 8), so the
        # quick comparison said nothing about the method (chosen on development seed 0; README "Knobs")
        return cls(patch_dim=32, hidden_dim=256, lr=5e-4, train_stride=2)

    @classmethod
    def full(cls) -> Config:
        # SpikF vs the neuralforecast peers on four shipped data sets x {96, 336}, all test windows; one epoch sees at
        # most 4,300 training windows (ETTh: stride 2 as SpikF's cells; ETTm1 stride 8; weather stride 9)
        return cls(cells=("ETTh1-96", "ETTh1-336", "ETTh2-96", "ETTh2-336"), n_seeds=3, patch_dim=32, hidden_dim=256,
                   train_stride=2, val_stride=1, lr=5e-4, test_limit=0, energy_windows=1024,
                   peers=("PatchTST", "iTransformer", "DLinear"), peer_datasets=("ETTh1", "ETTh2", "ETTm1", "exchange_rate"),
                   peer_horizons=(96, 336), peer_epochs=3, peer_windows=4300)

    @classmethod
    def paper(cls) -> Config:
        """The paper's setting (spec §2-3, from the official scripts and runner; the PDF was not readable)."""
        return cls(cells=_CELLS,  # abstract: eight data sets; L=96, H in {96, 192, 336, 720} (spec §2)
                   n_seeds=3,  # official runner: three seeds (0, 42, 79); we run seed, seed+1, seed+2
                   T=16, patch_num=48, patch_dim=32, hidden_dim=720,  # official ETT scripts (patch_num: runner default)
                   epochs=10,  # runner default (ETTh, Exchange; Weather: not stated, our choice); ETTm 5 and
                   #             ECL/Traffic 15 through per_dataset
                   train_stride=1, val_stride=1,  # every window (stride 1), as the Informer loaders
                   lr=5e-4,  # official scripts (Adam, cosine T_max 20, patience 3, batch 32: as full)
                   energy_windows=0,  # firing rates over the whole test set
                   per_dataset=True,  # ECL/Traffic: batch 8, 2 blocks, C=16; ETTm: 5 epochs (PAPER_PER_DATASET)
                   peers=("PatchTST", "iTransformer", "DLinear"),  # the state-of-the-art ANNs of the abstract's 1.9 %
                   peer_datasets=DATASETS, peer_horizons=HORIZONS,  # 8 data sets x 4 horizons (abstract)
                   peer_epochs=10, peer_windows=0,  # every training window, as SpikF here
                   device="cuda")  # the paper trains on one GPU (spec §4); GPU-only in practice

    def plan(self) -> Any:
        """The dry-run plan (no data is read, torch is not imported)."""
        from ._plan import spikf_plan

        return spikf_plan(self)


@reproduction(slug="spikf", title=TITLE, arxiv="PMLR 267:67342-67368", extras=("torch", "plot"), config=Config)
def reproduce(scale: Scale, seed: int, out: Path, config: Config, stub: bool = False) -> Report:
    """SpikF vs DLinear on ETTh1/ETTh2, the all-ones-mask ablation, firing rates, mask statistics and energy, and
    (``config.peers``) SpikF vs the neuralforecast peers per cell (``stub``: DLinear in SpikF's place)."""
    check_int(seed, "seed", low=0)
    check_device(config.device, available=True)
    with thread_limits(config.threads):
        rep = Report(slug="spikf", title=TITLE, scale=Scale.parse(scale))
        runs = experiment.train_all(config, seed, stub)
        experiment.add_run_tables(rep, runs)
        experiment.add_quick_claims(rep, config, seed, runs)
        e_dlinear = experiment.add_headline_claims(rep, config, seed, runs)
        comp = peer_comparison.run_comparison(config, seed, stub, runs) if config.peers else None
        peer_comparison.add_comparison(rep, config, seed, runs.method, comp)
        experiment.add_full_claims(rep, config, seed, runs)
        experiment.add_energy_notes_figures(rep, runs, e_dlinear)
    return rep


@reproduction_stub(slug="spikf")
def reproduce_stub(scale: Scale, seed: int, out: Path, config: Config) -> Report:
    """The stub: SpikF replaced by the strongest simple baseline the paper's protocol has, DLinear (trained as the
    reference DLinear, so the relative claims compare it with itself), all else identical."""
    return reproduce(scale, seed, out, config, stub=True)
