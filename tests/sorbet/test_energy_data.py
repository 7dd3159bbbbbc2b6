"""Energy accounting on a hand-computed toy; GLUE loaders, batching and metrics against the files and sklearn."""

from __future__ import annotations

import numpy as np
import pytest

from icml25.sorbet import ann_macs, energy_report, glue_metric, load_glue_task


def test_energy_hand_computed_one_layer_toy():
    # one population: 30 spikes, 20 neurons, fan-out 4 -> 120 SOPs over 2 sentences of 3 tokens
    stats = {"fc": {"spikes": 30.0, "neurons": 20.0, "synaptic_ops": 120.0}}
    r = energy_report(stats, [3, 3], hidden=4, ffn=8, layers=1, heads=2, T=16, e_mac=2.0, e_ac=1.0, e_add=0.5,
                      ptsoftmax_ops=3, bspn_ops=4)
    # per sentence: SOPs 60; shift/add ops = (3 * 2 heads * 9 scores + 4 * 3 tokens * 4 * 2 norms) = 54 + 96 = 150
    assert r["e_snn"] == pytest.approx(60 * 1.0 + 150 * 0.5)
    macs = 4 * 3 * 16 + 2 * 3 * 4 * 8 + 2 * 9 * 4 + 16 + 8
    assert r["macs"] == macs and r["e_ann"] == pytest.approx(macs * 2.0)
    assert r["mean_rate"] == pytest.approx(30 / (20 * 16))
    assert ann_macs(3, 4, 8, 1)["total"] == macs


def test_sst2_files():
    dev = load_glue_task("sst2", "dev")
    assert len(dev) == 872 and set(np.unique(dev.labels)) == {0, 1}
    tr = load_glue_task("sst2", "train")
    assert len(tr) == 67349
    assert dev.text_a[0].startswith("it 's a charming")
    with pytest.raises(ValueError, match="task"):
        load_glue_task("mnli")


def test_metrics_against_sklearn():
    from sklearn.metrics import f1_score, matthews_corrcoef

    rng = np.random.default_rng(0)
    y, p = rng.integers(0, 2, 50), rng.integers(0, 2, 50)
    assert glue_metric("mrpc", p, y) == pytest.approx(f1_score(y, p))
    assert glue_metric("cola", p, y) == pytest.approx(matthews_corrcoef(y, p))
    assert glue_metric("sst2", p, y) == pytest.approx(np.mean(p == y))


def test_batches_padding():
    pytest.importorskip("torch")
    from icml25.sorbet import batches

    enc = [([1, 5, 2], [0, 0, 0]), ([1, 2], [0, 0]), ([1, 7, 8, 9, 2], [0] * 5)]
    bs = batches(enc, np.array([0, 1, 1]), 2, sort_by_length=True)
    assert bs[0]["input_ids"].tolist() == [[1, 2, 0], [1, 5, 2]]
    assert bs[0]["attention_mask"].tolist() == [[1, 1, 0], [1, 1, 1]]
    assert bs[1]["index"].tolist() == [2]
