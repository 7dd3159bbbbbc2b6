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
                                     ({"n_boot": 0}, "n_boot"), ({"n_boot": 2.5}, "n_boot"),
                                     ({"quantiles": (0.9, 0.1)}, "quantiles")])
def test_bad_input(kw, msg):
    with pytest.raises(ValueError, match=msg):
        bootstrap_ci(np.ones(4), **kw)


# -------------------------------------------------------- the schemes the papers used before they called core
def _croq_scheme(a, b, n_boot, level, seed):
    """croq's former paired_bootstrap_ci: mean of b - a, resampled 256 rows at a time."""
    d = np.asarray(b, float) - np.asarray(a, float)
    rng = np.random.default_rng(seed)
    means = np.empty(n_boot)
    for s in range(0, n_boot, 256):
        idx = rng.integers(0, d.size, size=(min(256, n_boot - s), d.size))
        means[s:s + idx.shape[0]] = d[idx].mean(axis=1)
    lo, hi = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return float(d.mean()), float(lo), float(hi)


def _hier_scheme(diff, n_boot, rng):
    """hier_decoding's former paired_bootstrap_low: 2.5 % quantile, one Generator shared across calls."""
    idx = rng.integers(0, len(diff), size=(n_boot, len(diff)))
    return float(np.quantile(diff[idx].mean(axis=1), 0.025))


@pytest.mark.parametrize("n", [3, 50, 333])
@pytest.mark.parametrize("n_boot", [1, 255, 257, 2000])
def test_croq_scheme_is_core_with_arguments_swapped(n, n_boot):
    rng = np.random.default_rng(n + n_boot)
    a, b = (rng.random(n) < 0.5).astype(float), (rng.random(n) < 0.6).astype(float)
    for seed in range(3):
        assert bootstrap_ci(b, a, n_boot=n_boot, level=0.9, seed=seed) == _croq_scheme(a, b, n_boot, 0.9, seed)


@pytest.mark.parametrize("n", [5, 200])
def test_hier_scheme_is_core_with_a_shared_generator_and_exact_quantiles(n):
    diffs = [np.random.default_rng(n + k).normal(size=n) for k in range(4)]
    old, new = np.random.default_rng(7), np.random.default_rng(7)
    for d in diffs:
        assert bootstrap_ci(d, n_boot=300, seed=new, quantiles=(0.025, 0.975))[1] == _hier_scheme(d, 300, old)


def test_chunked_resampling_draws_what_one_call_draws(monkeypatch):
    import icml25.core.stats as stats

    x = np.random.default_rng(0).normal(size=97)
    whole = bootstrap_ci(x, n_boot=1000, seed=4)
    monkeypatch.setattr(stats, "_CHUNK_ELEMENTS", 97 * 3)
    assert bootstrap_ci(x, n_boot=1000, seed=4) == whole
