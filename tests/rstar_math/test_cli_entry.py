"""``icml25 rstar-math eval`` is reachable from the main CLI and fails cleanly on a missing model."""

from __future__ import annotations

from icml25.run.cli import main


def test_rstar_math_eval_via_main_cli(capsys, tmp_path) -> None:
    assert main(["rstar-math", "--help"]) == 0
    assert "icml25 rstar-math eval" in capsys.readouterr().out
    assert main(["rstar-math", "nosuch"]) == 2
    code = main(["rstar-math", "eval", "--data", "math500", "--policy", f"hf:{tmp_path / 'missing'}", "--limit", "1"])
    assert code == 2
    err = capsys.readouterr().err
    assert "error" in err and "Traceback" not in err
