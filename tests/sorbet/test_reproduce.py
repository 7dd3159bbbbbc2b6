"""The reproduction's configuration and its quick claims (the report itself runs in tests/core)."""

from __future__ import annotations

import math

import pytest

from icml25.sorbet.reproduce import Config


def test_config_presets_and_validation():
    assert Config.quick().num_layers == 1
    assert Config.full().num_layers == 6 and Config.full().baselines
    with pytest.raises(ValueError, match="kd2_lr"):
        Config(kd2_lr=math.nan)
    with pytest.raises(ValueError, match="task"):
        Config(task="mnli")
    with pytest.raises(ValueError, match="pooling"):
        Config(pooling="max")
