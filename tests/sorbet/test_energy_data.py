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


def test_shipped_glue_files_are_byte_identical_and_parse(tmp_path):
    import hashlib

    from icml25.core.data import shipped_path

    sums = shipped_path("sorbet", "SHA256SUMS").read_text().split("\n")
    rows = [line.split() for line in sums if line.strip()]
    assert len(rows) == 11  # train + dev of 5 tasks + the STS-B licence
    for digest, name in rows:
        assert hashlib.sha256(shipped_path("sorbet", name).read_bytes()).hexdigest() == digest, name
    # example counts and label sets of the GLUE files (counts from the files' line numbers, independent of the parser)
    expect = {"mrpc": (3667, 408, {0, 1}), "rte": (2490, 277, {0, 1}), "cola": (8551, 1043, {0, 1})}
    for task, (n_tr, n_dev, labels) in expect.items():
        tr, dev = load_glue_task(task, "train"), load_glue_task(task, "dev")
        assert (len(tr), len(dev)) == (n_tr, n_dev) and set(np.unique(dev.labels)) == labels
        assert (tr.text_b is None) == (task == "cola")
    sts = load_glue_task("stsb", "dev")
    assert len(sts) == 1500 and sts.labels.dtype.kind == "f" and 0 <= sts.labels.min() < sts.labels.max() <= 5
    # a user root takes precedence over the shipped copy, a missing file there is a clear error
    (tmp_path / "RTE").mkdir()
    (tmp_path / "RTE" / "dev.tsv").write_text("index\tsentence1\tsentence2\tlabel\n0\ta\tb\tentailment\n")
    assert load_glue_task("rte", "dev", root=tmp_path).labels.tolist() == [0]
    from icml25.core.data import DataNotFoundError

    with pytest.raises(DataNotFoundError, match="root"):
        load_glue_task("mrpc", "dev", root=tmp_path)
