from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from icml25.core.config import ConfigError, apply_overrides, parse_set_args
from icml25.core.data import DataNotFoundError, resolve_data
from icml25.core.optional import MissingExtraError, require
from icml25.core.seeding import check_random_state, seed_everything, spawn_seeds


@dataclass(frozen=True)
class Cfg:
    n: int = 3  # count
    lr: float = 0.1  # step
    name: str = "a"  # label
    flag: bool = False  # switch
    sizes: tuple[int, ...] = (1, 2)  # list
    opt: float | None = None  # optional


@dataclass(frozen=True)
class BareCfg:
    alphas: tuple = (0.05, 0.1)  # a bare tuple of floats
    ks: tuple = (1, 2)  # a bare tuple of ints
    names: tuple = ("a", "b")  # strings stay strings


def test_bare_tuple_fields_take_their_defaults_element_type() -> None:
    c = apply_overrides(BareCfg(), parse_set_args(["alphas=0.05,0.2", "ks=3,4", "names=x,1"]))
    assert c.alphas == (0.05, 0.2) and c.ks == (3, 4) and c.names == ("x", "1")
    with pytest.raises(ConfigError, match="alphas"):
        apply_overrides(BareCfg(), parse_set_args(["alphas=0.1,abc"]))


def test_overrides_coerce_types() -> None:
    c = apply_overrides(Cfg(), parse_set_args(["n=5", "lr=1e-3", "name=b", "flag=true", "sizes=4,5,6", "opt=2"]))
    assert c == Cfg(n=5, lr=1e-3, name="b", flag=True, sizes=(4, 5, 6), opt=2.0)
    assert apply_overrides(Cfg(), {"opt": "none"}).opt is None


@pytest.mark.parametrize("item,msg", [("bogus=1", "unknown key"), ("n=abc", "integer"), ("lr=x", "number"),
                                      ("flag=maybe", "boolean")])
def test_bad_overrides(item: str, msg: str) -> None:
    with pytest.raises(ConfigError, match=msg):
        apply_overrides(Cfg(), parse_set_args([item]))
    with pytest.raises(ConfigError, match="key=value"):
        parse_set_args(["novalue"])


def test_seeding_is_reproducible() -> None:
    a = check_random_state(3).normal(size=4)
    b = check_random_state(3).normal(size=4)
    np.testing.assert_array_equal(a, b)
    g = np.random.default_rng(1)
    assert check_random_state(g) is g
    with pytest.raises(TypeError):
        check_random_state("x")
    assert spawn_seeds(0, 3) == spawn_seeds(0, 3) and len(set(spawn_seeds(0, 3))) == 3
    seed_everything(5)
    x = np.random.rand()
    seed_everything(5)
    assert np.random.rand() == x


def test_require_names_the_extra() -> None:
    with pytest.raises(MissingExtraError, match=r"pip install 'icml25\[nope\]'"):
        require("definitely_not_a_module_xyz", extra="nope")


def test_resolve_data_order(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ICML25_CACHE", str(tmp_path / "cache"))
    user = tmp_path / "mine.csv"
    user.write_text("1")
    assert resolve_data("demo", "x.csv", path=user) == user
    with pytest.raises(DataNotFoundError, match="does not exist"):
        resolve_data("demo", "x.csv", path=tmp_path / "missing.csv")
    with pytest.raises(DataNotFoundError, match="--allow-download"):
        resolve_data("demo", "x.csv", url="https://example.invalid/x.csv", allow_download=False)
    cached = tmp_path / "cache" / "demo" / "x.csv"
    cached.parent.mkdir(parents=True)
    cached.write_text("2")
    assert resolve_data("demo", "x.csv") == cached


def test_config_validation_becomes_config_error_naming_the_field() -> None:
    from dataclasses import dataclass

    from icml25.core.config import validate_fields

    @dataclass(frozen=True)
    class Cfg:
        n: int = 10
        n_cal: int = 5
        alpha: float = 0.1
        kind: str = "a"
        budget: float | None = None

        def __post_init__(self) -> None:
            validate_fields(self, n=dict(int=True, low=1), n_cal=dict(int=True, low=1),
                            alpha=dict(low=0, high=1, low_open=True, high_open=True), kind=dict(options=["a", "b"]),
                            budget=dict(low=0, none=True))
            if self.n_cal >= self.n:
                raise ValueError(f"n_cal must be < n, got n_cal={self.n_cal} and n={self.n}")

    base = Cfg()
    assert apply_overrides(base, {"alpha": "0.2", "budget": "none"}).alpha == 0.2
    for overrides, msg in [({"n": "0"}, "--set n: n must be >= 1, got 0"),
                           ({"alpha": "nan"}, "--set alpha: alpha must be a finite number, got nan"),
                           ({"alpha": "1"}, "--set alpha: alpha must be < 1"),
                           ({"kind": "c"}, "--set kind: kind must be one of 'a', 'b'; got 'c'"),
                           ({"budget": "-1"}, "--set budget: budget must be >= 0"),
                           ({"n_cal": "20", "alpha": "0.3"}, "--set n_cal: n_cal must be < n"),
                           ({"n_cal": "4", "n": "4"}, "--set n_cal, n: n_cal must be < n")]:
        with pytest.raises(ConfigError) as info:
            apply_overrides(base, overrides)
        assert str(info.value).startswith(msg), (str(info.value), msg)
    with pytest.raises(TypeError, match="unknown rule keys"):
        validate_fields(base, n=dict(int=True, bogus=1))
