"""bootstrap_ci against closed forms and properties."""

import numpy as np
import pytest

from icml25.core.stats import bootstrap_ci


def test_constant_data_has_degenerate_interval():
    assert bootstrap_ci(np.ones(50)) == (1.0, 1.0, 1.0)


def test_interval_matches_normal_approximation_for_a_proportion():
    rng = np.random.default_rng(1)
    x = rng.random(2000) < 0.3
    est, lo, hi = bootstrap_ci(x, n_boot=4000, seed=2)
    se = np.sqrt(est * (1 - est) / x.size)
    assert est == pytest.approx(x.mean())
    assert lo == pytest.approx(est - 1.96 * se, abs=0.004)
    assert hi == pytest.approx(est + 1.96 * se, abs=0.004)


def test_paired_difference_and_run_averaging():
    a = np.array([[1, 1, 0, 0], [1, 0, 0, 0]])
    b = np.array([[0, 1, 0, 0], [0, 1, 0, 0]])
    est, lo, hi = bootstrap_ci(a, b, seed=0)
    assert est == pytest.approx(np.mean(a.mean(0) - b.mean(0)))
    assert lo <= est <= hi
    assert bootstrap_ci(a, b, seed=3) == bootstrap_ci(a, b, seed=3)


@pytest.mark.parametrize("kw, msg", [({"b": np.ones(3)}, "same shape"), ({"level": 1.0}, "level"),
                                     ({"n_boot": 10}, "n_boot")])
def test_bad_input(kw, msg):
    with pytest.raises(ValueError, match=msg):
        bootstrap_ci(np.ones(4), **kw)
