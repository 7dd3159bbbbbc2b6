"""Reproduction of SDP-CROWN (ICML 2025): theorem checks, MNIST MLP/ConvSmall verification, radius sweep, tightness."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from icml25.core import Report, Scale, reproduction
from icml25.core.plan import Plan
from icml25.core.registry import reproduction_stub

from ._plan import _SHIPPED_N, _TABLE1_N, sdp_crown_plan

_PAPER_TITLE = ("SDP-CROWN: Efficient Bound Propagation for Neural Network Verification with Tightness of "
                "Semidefinite Programming")


@dataclass(frozen=True)
class Config:
    n_draws: int = 1000  # random (c, g, x̂, ρ, λ) draws for the Theorem 4.1 / 5.2 checks
    n_points: int = 10_000  # sampled ball points per Theorem 4.1 draw
    mlp_images: int = 10  # first MNIST test images for the MNIST MLP comparison
    mlp_iters: int = 30  # Adam iterations of α-CROWN / SDP-CROWN on the MNIST MLP
    mlp_radius: float = 1.0  # ℓ2 radius for the MNIST MLP (paper: 1.0)
    pgd_steps: int = 100  # PGD steps (step 2.5ρ/steps; paper setting 200)
    pgd_restarts: int = 2  # PGD random restarts (plus the clean start; paper setting 5)
    sweep_images: int = 4  # correctly classified MNIST images in the radius sweep (paper: 10)
    sweep_iters: int = 10  # Adam iterations per radius in the sweep
    sweep_radii: tuple = (0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0)  # sweep radii
    table1_models: tuple = ()  # conv models of Table 1 verified on their first images (full: all five shipped)
    n_images: int = 0  # images per Table 1 model (0 = the per-model N of _TABLE1_N, from measured times; 200 = paper)
    table1_iters: int = 20  # Adam iterations of α-CROWN / SDP-CROWN on the conv models (paper: 300)
    table1_batch: int = 10  # images per batch on the conv models
    tight_images: int = 1  # correctly classified digits test images for the exact/SDP tightness check
    tight_radius: float = 0.5  # ℓ2 radius of the tightness check
    tight_hidden: tuple = (8, 8)  # hidden widths of the digits MLP
    tight_sdp: int = 0  # instances on which the full-network SDP (cvxpy/Clarabel, slow) is also solved
    tight_iters: int = 50  # Adam iterations in the tightness check
    timing_repeats: int = 5  # round-robin runs of the MNIST MLP methods; the least CPU time is reported
    optimize_all: bool = False  # conv models: optimise α/λ of every layer (paper) instead of the final spec only
    weights_dir: str = ""  # folder holding the user's weights of USER_MODELS (<name>.pth or .npz); "" = the cache
    device: str = "cpu"  # torch device of the bound computations ("cuda" in paper(); weights and inputs move there)

    def __post_init__(self) -> None:
        from icml25.core.validation import check_int, check_positive

        for name in ("n_draws", "n_points", "mlp_images", "sweep_images", "tight_images", "timing_repeats"):
            check_int(getattr(self, name), name, low=1)
        for name in ("mlp_iters", "pgd_steps", "pgd_restarts", "sweep_iters", "n_images", "table1_iters",
                     "tight_sdp", "tight_iters"):
            check_int(getattr(self, name), name, low=0)
        check_int(self.table1_batch, "table1_batch", low=1)
        check_int(self.mlp_images, "mlp_images", high=200)
        check_int(self.n_images, "n_images", high=200)
        if not isinstance(self.table1_models, (tuple, list)) or any(m not in _TABLE1_N for m in self.table1_models):
            raise ValueError(f"table1_models must be a tuple of names among {tuple(_TABLE1_N)}, got "
                             f"{self.table1_models!r}")
        if not isinstance(self.device, str) or not (self.device in ("cpu", "cuda") or self.device.startswith("cuda:")):
            raise ValueError(f"device must be 'cpu', 'cuda' or 'cuda:<index>', got {self.device!r}")
        if not isinstance(self.weights_dir, str):
            raise TypeError(f"weights_dir must be a folder path (str), got {type(self.weights_dir).__name__}")
        for name in ("mlp_radius", "tight_radius"):
            check_positive(getattr(self, name), name)
        if not isinstance(self.sweep_radii, (tuple, list)) or len(self.sweep_radii) < 2:
            raise ValueError(f"sweep_radii must be a tuple of at least 2 radii, got {self.sweep_radii!r}")
        radii = [check_positive(r, "sweep_radii") for r in self.sweep_radii]
        if any(b <= a for a, b in zip(radii, radii[1:])):
            raise ValueError(f"sweep_radii must be increasing, got {self.sweep_radii!r}")
        if not isinstance(self.tight_hidden, (tuple, list)) or not self.tight_hidden:
            raise ValueError(f"tight_hidden must be a non-empty tuple of widths, got {self.tight_hidden!r}")
        for w in self.tight_hidden:
            check_int(w, "tight_hidden", low=1)

    @classmethod
    def quick(cls) -> Config:
        return cls()

    @classmethod
    def full(cls) -> Config:
        return cls(pgd_steps=200, pgd_restarts=5, mlp_images=100, mlp_iters=150, sweep_images=10, sweep_iters=100,
                   table1_models=tuple(_SHIPPED_N), tight_images=20, tight_iters=150, tight_hidden=(16, 16),
                   tight_sdp=9)

    @classmethod
    def paper(cls) -> Config:
        """Table 1 as the paper ran it: all nine models on their first 200 test images, 300 iterations, on a GPU."""
        return cls(
            pgd_steps=200, pgd_restarts=5,  # as full (spec §2.5: 200 steps, 5 restarts; the paper cites Madry et al.)
            mlp_images=200, n_images=200,  # Table 1: the first 200 test images of every model
            mlp_iters=300, table1_iters=300,  # App. A: 300 Adam iterations
            sweep_images=10, sweep_iters=300,  # Fig. 3: 90 instances = 10 correct images × 9 specs; 300 iterations
            table1_models=tuple(_TABLE1_N),  # Table 1's eight conv models (the three not shipped from weights_dir)
            optimize_all=True,  # App. A: α/λ of every layer optimised (full fixes the conv layers' bounds)
            tight_images=20, tight_iters=300, tight_hidden=(16, 16), tight_sdp=20,  # not in the paper: as full,
            # with the full SDP on 20 instances (Table 1's BM-Full column is on the MLP only; ours is a digits MLP)
            device="cuda",  # Table 1 times: one V100
        )

    def plan(self) -> Plan:
        """The dry run: sections, models and the CPU time estimate from the measured per-image costs (README)."""
        return sdp_crown_plan(self)



@reproduction(slug="sdp_crown", title="SDP-CROWN: Efficient Bound Propagation for Neural Network Verification with "
              "Tightness of Semidefinite Programming", arxiv="2506.06665", extras=("torch", "opt", "stats"), config=Config)
def reproduce(scale: Scale, seed: int, out: Path, config: Config, stub: bool = False) -> Report:
    """Run the spec's §6 checks at ``scale`` and return the claim report (``stub``: plain CROWN for SDP-CROWN)."""
    from . import experiment as ex

    scale = Scale.parse(scale)
    sub = ex.start(config, seed, stub)
    report = Report(slug="sdp_crown", title=_PAPER_TITLE)
    clock = ex.Clock()
    ex.add_worked_example(report, sub)  # 1. Appendix B.3 and Theorems 4.1 / 5.2
    ex.add_theorem_checks(report, config, seed)
    clock.lap("theorems")
    mlp = ex.run_mnist_mlp(report, config, seed, sub)  # 2. the paper's MNIST MLP at ρ = 1.0
    ex.add_mlp_claims(report, scale, mlp)
    ex.add_mlp_200_claims(report, config, mlp)
    clock.lap("mnist_mlp")
    ex.add_radius_sweep(report, config, seed, sub, mlp)  # 3. Figure 3
    clock.lap("radius_sweep")
    t1rows = ex.add_table1(report, scale, config, seed, sub, mlp)  # 4. Table 1 / Table 2 of every shipped model
    ex.add_speed_claims(report, config, mlp, t1rows)
    clock.lap("table1")
    ex.add_tightness(report, config, seed, sub)  # 5. exact minimum and full SDP on a digits MLP
    clock.lap("tightness")
    ex.add_timings(report, clock, mlp)
    return report


@reproduction_stub(slug="sdp_crown")
def reproduce_stub(scale: Scale, seed: int, out: Path, config: Config) -> Report:
    """The reproduction with plain CROWN (no SDP offsets, no optimisation) in place of SDP-CROWN."""
    return reproduce(scale, seed, out, config, stub=True)
