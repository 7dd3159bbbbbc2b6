"""Issue 19 for croq: infinite scores, overlapping train/cal, alpha left alone, numpy-only import, Config checks."""

from __future__ import annotations

import numpy as np
import pytest

from icml25.croq import CROQ, MCQ, AnswerOutput, SplitConformal, conformal_threshold
from icml25.testing import run_without


class Ranker:
    """Prefers later options (letter logit = option position)."""

    def answer(self, qs):
        z = np.full((len(qs), max(q.n_options for q in qs)), -np.inf)
        for i, q in enumerate(qs):
            z[i, :q.n_options] = np.arange(q.n_options, dtype=float) + 0.1 * (int(q.question) % 3)
        return AnswerOutput(z)


def _qs(start: int, n: int) -> list[MCQ]:
    return [MCQ(str(i), ("a", "b", "c", "d"), i % 4) for i in range(start, start + n)]


def test_infinite_scores_are_rejected() -> None:
    with pytest.raises(ValueError, match="conf must be finite"):
        conformal_threshold(np.r_[np.full(30, 0.5), np.inf], 0.1)
    cp = SplitConformal(0.1)
    with pytest.raises(ValueError, match="finite"):
        cp.calibrate(np.r_[np.full(30, 0.5), -np.inf])
    with pytest.raises(ValueError, match="scores must be finite"):
        cp.calibrate_from_scores(np.r_[np.full((30, 2), 0.5), [[np.inf, 0.0]]], np.zeros(31, dtype=int))
    cp.calibrate(np.linspace(0, 1, 30))
    with pytest.raises(ValueError, match="scores must be finite"):
        cp.predict_sets(np.array([[0.5, np.inf]]))
    # masked-out slots may hold -inf/NaN (padding of questions with fewer options)
    assert cp.predict_sets(np.array([[0.5, 0.6, -np.inf]]), np.array([2])).tolist() == [[True, True, False]]


def test_train_and_cal_must_be_disjoint() -> None:
    from icml25.croq import CPOptScorer

    train, cal = _qs(0, 40), _qs(30, 40)  # 10 questions shared
    with pytest.raises(ValueError, match="train and cal must be disjoint, but 10 question"):
        CROQ(Ranker(), CPOptScorer(epochs=2), alpha=0.2).fit(train, cal)
    CROQ(Ranker(), CPOptScorer(epochs=2), alpha=0.2).fit(_qs(0, 40), _qs(40, 40))  # disjoint: fine


def test_calibrate_and_alpha_sweep_leave_alpha_alone() -> None:
    cal, test = _qs(0, 60), _qs(60, 40)
    croq = CROQ(Ranker(), alpha=0.1).fit(None, cal)
    tau = croq.conformal_.tau_
    rows = croq.alpha_sweep([0.2, 0.3], cal, test)
    assert [r["alpha"] for r in rows] == [0.2, 0.3]
    assert croq.alpha == 0.1 and croq.conformal_.alpha == 0.1 and croq.conformal_.tau_ == tau
    croq.calibrate(cal, alpha=0.3)
    assert croq.alpha == 0.1 and croq.conformal_.alpha == 0.3
    assert croq.evaluate(test)["alpha"] == 0.3  # the level actually used is reported


def test_numpy_parts_import_without_torch_and_sklearn() -> None:
    code = ("import numpy as np\n"
            "import icml25.croq as c\n"
            "print(c.SplitConformal(0.25).calibrate(np.array([0.9, 0.2, 0.6, 0.4, 0.8, 0.7, 0.3])))\n"
            "try:\n"
            "    c.CPOptScorer\n"
            "except Exception as e:\n"
            "    print(type(e).__name__, 'pip install' in str(e))\n")
    res = run_without(("torch", "sklearn"), code)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["0.3", "MissingExtraError", "True"]


@pytest.mark.parametrize(("field", "value"), [("q1_n_cal", 5), ("q2_splits", 0), ("alphas", (0.3, 0.2)),
                                              ("q2_alphas", (0.05,)), ("claim_alpha", float("nan")),
                                              ("models", ("gpt-5",)), ("datasets", ("imagenet",)),
                                              ("premise_keep", 4), ("n_train", 2.5), ("alphas", ())])
def test_config_rejects_bad_fields(field: str, value) -> None:
    from icml25.croq.reproduce import Config

    with pytest.raises((ValueError, TypeError), match=field):
        Config(**{field: value})
    assert Config.quick() != Config.full()
