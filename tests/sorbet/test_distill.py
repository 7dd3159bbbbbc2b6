"""Distillation: the loss against its formula, learning happens on a toy task, the multi-step chain."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")

from icml25.sorbet import DistillTrainer, convert, evaluate, kd_loss, multi_step  # noqa: E402


def test_kd_loss_formula():
    g = torch.Generator().manual_seed(0)
    zs, zt = torch.randn(3, 2, generator=g), torch.randn(3, 2, generator=g)
    hs = [torch.randn(3, 4, 5, generator=g) for _ in range(2)]
    ht = [torch.randn(3, 4, 5, generator=g) for _ in range(2)]
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0], [1, 0, 0, 0]], dtype=torch.float32)
    got = kd_loss(SimpleNamespace(logits=zs, hidden_states=hs), SimpleNamespace(logits=zt, hidden_states=ht), mask,
                  temperature=2.0)
    ce = -(torch.softmax(zt / 2, -1) * torch.log_softmax(zs / 2, -1)).sum(-1).mean()
    m = mask.bool()
    mse = sum(((a - b)[m] ** 2).mean() for a, b in zip(hs, ht))
    assert float(got) == pytest.approx(float(ce + mse), rel=1e-5)


def _kl(teacher, student, data):
    student.eval()
    tot = 0.0
    with torch.no_grad():
        for b in data:
            t = torch.log_softmax(teacher(b["input_ids"], b["attention_mask"]).logits, -1)
            s = torch.log_softmax(student(b["input_ids"], b["attention_mask"]).logits, -1)
            tot += float((t.exp() * (t - s)).sum(-1).mean())
    return tot / len(data)


def test_student_learns_teacher_on_toy(tiny):
    torch.manual_seed(0)
    teacher = convert(tiny.hf(0, layers=1), "fp")
    with torch.no_grad():
        teacher.classifier.weight.mul_(300)  # a confident teacher (random tiny BERTs output ~0 logits)
    data = [tiny.batch(s, B=8, L=6) for s in range(6)]
    student = convert(teacher, "ptsoftmax_bspn", bspn_warmup=5)
    before = _kl(teacher, student, data)
    DistillTrainer(teacher, student, lr=3e-3, epochs=6, seed=0, hidden=False).fit(data, desc="toy KD")
    assert _kl(teacher, student, data) < 0.5 * before  # measured: 0.133 -> 0.027


def test_multi_step_chain(tiny):
    teacher = convert(tiny.hf(1, layers=1), "fp")
    data = [tiny.batch(s, B=6, L=6) for s in range(2)]
    models = multi_step(teacher, data, stages=("ptsoftmax_bspn", "w1a4"), epochs=(1, 1), lr=(1e-3, 1e-3),
                        bspn_warmup=1)
    assert [m.options.weight_bits for m in models] == [32, 1]
    r = evaluate(models[-1], data)
    assert 0.0 <= r["metric"] <= 1.0 and r["logits"].shape == (12, 2)
