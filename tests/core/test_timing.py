"""icml25.core.timing: round-robin order, first results, least times, and which clock is read."""

import time

import pytest

from icml25.core.timing import time_interleaved


def _busy(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_round_robin_order_and_first_results() -> None:
    calls: list[str] = []

    def task(name: str):
        def run() -> int:
            calls.append(name)
            return len(calls)
        return run

    results, seconds = time_interleaved({"a": task("a"), "b": task("b")}, repeats=3)
    assert calls == ["a", "b"] * 3
    assert results == {"a": 1, "b": 2}  # the first call's value, not the last
    assert set(seconds) == {"a", "b"} and all(s >= 0 for s in seconds.values())


def test_least_time_is_kept() -> None:
    durations = iter([0.06, 0.01, 0.04])
    _, seconds = time_interleaved({"x": lambda: _busy(next(durations))}, repeats=3)
    assert 0.01 <= seconds["x"] < 0.035


def test_thread_clock_ignores_sleep_and_wall_clock_counts_it() -> None:
    _, thread = time_interleaved({"sleep": lambda: time.sleep(0.05), "busy": lambda: _busy(0.05)})
    assert thread["sleep"] < 0.02 and thread["busy"] >= 0.05
    _, wall = time_interleaved({"sleep": lambda: time.sleep(0.05)}, clock="wall")
    assert wall["sleep"] >= 0.05


@pytest.mark.parametrize("kwargs, match", [
    ({"tasks": {}}, "non-empty mapping"),
    ({"tasks": [lambda: 0]}, "non-empty mapping"),
    ({"tasks": {"a": 3}}, "zero-argument callable"),
    ({"tasks": {"a": lambda: 0}, "repeats": 0}, "repeats"),
    ({"tasks": {"a": lambda: 0}, "clock": "cpu"}, "clock must be one of"),
])
def test_bad_input(kwargs: dict, match: str) -> None:
    with pytest.raises((ValueError, TypeError), match=match):
        time_interleaved(**kwargs)
