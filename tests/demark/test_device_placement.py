"""De-mark's torch paths keep their tensors on the model's device (issue 45 item 3).

No GPU is lent to the test machines, so the check runs on the CPU with ``meta`` as torch's *default* device: any
tensor the code creates without naming the device of its inputs lands on meta, and the next operation with a CPU
tensor (or ``.numpy()``) fails. The values must equal those of a plain CPU run.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from icml25.demark import DeMark, KGWWatermark, LocalLM, RandomSelectionProber, WatermarkedOracle  # noqa: E402

META = torch.device("meta")
V = 12


def _net() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Embedding(V, 8), torch.nn.Linear(8, V))


def _on_meta_default(fn):
    torch.set_default_device(META)
    try:
        return fn()
    finally:
        torch.set_default_device("cpu")


def test_meta_default_device_catches_a_stray_tensor():
    with pytest.raises((RuntimeError, NotImplementedError)):
        _on_meta_default(lambda: (torch.zeros(3) + torch.ones(3, device="cpu")).numpy())


def test_local_lm_builds_its_ids_on_the_module_device():
    lm = LocalLM(_net(), vocab_size=V, batch_size=2)
    batch = [[1, 2, 3], [4], [5, 6]]
    want = lm.next_logprobs(batch)
    got = _on_meta_default(lambda: lm.next_logprobs(batch))
    np.testing.assert_array_equal(got, want)


def test_demark_logits_processor_keeps_the_scores_device(deployment):
    d = deployment
    dm = DeMark(RandomSelectionProber(d["oracle"], d["template"]), h_hat=2, delta_hat=1.9, top_k=6, random_state=0)
    proc = dm.as_logits_processor()
    ids = torch.tensor([d["tok"].encode("what say you to this , my lord")])
    scores = torch.randn(1, d["tok"].vocab_size, generator=torch.Generator().manual_seed(1))
    want = proc(ids, scores.clone())
    got = _on_meta_default(lambda: proc(ids, scores.clone()))
    assert got.device.type == "cpu"
    torch.testing.assert_close(got, want)


def test_watermark_processor_on_a_watermarked_local_model():
    wm = KGWWatermark(V, delta=2.0, h=1, key=3)
    oracle = WatermarkedOracle(LocalLM(_net(), V), wm)
    want = oracle.topk_logprobs([[1, 2, 3]], k=4)
    got = _on_meta_default(lambda: oracle.topk_logprobs([[1, 2, 3]], k=4))
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1])
    scores = torch.zeros(1, V)
    out = _on_meta_default(lambda: wm.as_logits_processor()(torch.tensor([[1, 2]], device="cpu"), scores))
    assert out.device.type == "cpu" and float(out.max()) == 2.0
