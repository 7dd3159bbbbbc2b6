"""CLI smoke test of ``icml25 sdp-crown verify``."""

from __future__ import annotations

import subprocess
import sys

import pytest


def test_cli_verify_runs_in_process(capsys) -> None:
    from icml25.sdp_crown.cli import main

    assert main(["verify", "--n", "3", "--method", "lipnaive", "--radius", "0.0"]) == 0
    out = capsys.readouterr().out
    assert "mnist_mlp" in out and "verified 3/3" in out  # ρ = 0: the 3 correctly classified images are verified


@pytest.mark.long  # over ~10 s: CI's second phase (make test-long)
def test_cli_verify_subprocess() -> None:
    res = subprocess.run([sys.executable, "-m", "icml25.run.cli", "sdp-crown", "verify", "--n", "2", "--iters", "2"],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert "sdp-crown: verified" in res.stdout


def test_cli_rejects_bad_method() -> None:
    from icml25.sdp_crown.cli import main

    with pytest.raises(SystemExit):
        main(["verify", "--method", "beta-crown"])


def test_cli_verify_cifar_model_at_the_paper_radius(capsys) -> None:
    """A CIFAR model with the paper's default radius 24/255 (the net normalises inside); clean 4/10 (Table 2
    data), and LipNaive verifies at most the clean ones."""
    from icml25.sdp_crown.cli import main

    assert main(["verify", "--model", "cifar10_cnn_c", "--n", "10", "--method", "lipnaive"]) == 0
    out = capsys.readouterr().out
    assert "cifar10_cnn_c ρ=0.09412" in out and "clean 4/10" in out
    with pytest.raises(SystemExit):
        main(["verify", "--model", "cifar10_convlarge"])
