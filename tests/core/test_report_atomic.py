"""``core.report.write_report`` writes atomically through a staging folder and cleans what killed writers left."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from icml25.core.claims import Report
from icml25.core.report import PARTIAL_PREFIX, _host, remove_stale_partials, write_index, write_report


def _report(value: float) -> Report:
    r = Report("demo", "Demo")
    r.add_claim("C1", "value is small", None, value, "<=", 1.0, kind="check")
    return r


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_stale_staging_folders_are_removed_and_live_ones_kept(tmp_path) -> None:
    here = _host()
    dead = tmp_path / f"{PARTIAL_PREFIX}{here}-{_dead_pid()}"
    mine = tmp_path / f"{PARTIAL_PREFIX}{here}-{os.getpid()}"  # a previous process that had our pid
    alive = tmp_path / f"{PARTIAL_PREFIX}{here}-{os.getppid()}"
    young_foreign = tmp_path / f"{PARTIAL_PREFIX}otherhost-123"
    old_foreign = tmp_path / f"{PARTIAL_PREFIX}otherhost-456"
    for p in (dead, mine, alive, young_foreign, old_foreign):
        (p / "report.json").parent.mkdir()
        (p / "report.json").write_text("{half")
    week_ago = time.time() - 7 * 24 * 3600
    os.utime(old_foreign, (week_ago, week_ago))
    removed = remove_stale_partials(tmp_path)
    assert sorted(removed) == sorted([dead, mine, old_foreign])
    assert alive.exists() and young_foreign.exists()


def test_write_report_replaces_the_report_and_leaves_no_staging(tmp_path) -> None:
    stale = tmp_path / f"{PARTIAL_PREFIX}{_host()}-{_dead_pid()}"
    stale.mkdir()
    (tmp_path / "state.json").write_text("resume state")  # a reproduction's own file: not touched
    write_report(_report(0.5), tmp_path)
    write_report(_report(0.25), tmp_path)
    assert json.loads((tmp_path / "report.json").read_text())["claims"][0]["measured"] == 0.25
    assert {p.name for p in tmp_path.iterdir()} == {"report.json", "report.md", "config.json", "state.json"}


def test_a_failure_while_writing_keeps_the_previous_report(tmp_path) -> None:
    write_report(_report(0.5), tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}

    class Broken:
        def __str__(self):
            raise RuntimeError("cannot write this")

    bad = _report(0.25)
    bad.config["x"] = Broken()
    with pytest.raises(RuntimeError, match="cannot write this"):
        write_report(bad, tmp_path)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_figure_paths_outside_the_folder_are_copied_in(tmp_path) -> None:
    src = tmp_path / "seed0"
    src.mkdir()
    (src / "curve.png").write_bytes(b"png bytes")
    out = tmp_path / "paper"
    rep = _report(0.5)
    rep.figures = {"curve": src / "curve.png"}
    write_report(rep, out)
    assert (out / "curve.png").read_bytes() == b"png bytes" and "![curve.png](curve.png)" in (
        out / "report.md").read_text()


def test_write_index_leaves_no_staging(tmp_path) -> None:
    write_report(_report(0.5), tmp_path / "demo")
    path = write_index(tmp_path)
    assert path.read_text().startswith("# icml25 reproduction index")
    assert not list(tmp_path.rglob(f"{PARTIAL_PREFIX}*"))


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="needs /proc")
def test_a_killed_but_unreaped_process_counts_as_gone(tmp_path) -> None:
    # kill(pid, 0) succeeds for a zombie; a worker killed with its parent stays one where init does not reap
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 30
    while open(f"/proc/{proc.pid}/stat").read().rpartition(")")[2].split()[0] != "Z":
        assert time.monotonic() < deadline, "the child did not exit"
        time.sleep(0.05)
    zombie = tmp_path / f"{PARTIAL_PREFIX}{_host()}-{proc.pid}"
    zombie.mkdir()
    try:
        assert remove_stale_partials(tmp_path) == [zombie] and not zombie.exists()
    finally:
        proc.wait()
