"""The shared training loop (``icml25.llm.training``): against a hand-written AdamW loop, seeding, batches."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from icml25.llm.training import LengthBuckets, train_loop  # noqa: E402


def _problem(seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(64, 5, generator=g)
    y = x @ torch.randn(5, 1, generator=g) + 0.1 * torch.randn(64, 1, generator=g)
    net = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Dropout(0.2), torch.nn.Linear(8, 1))
    return x, y, net


def _reference(net, x, y, picks, steps, lr, warmup, wd, clip, torch_seed):
    """The loop written out by hand: matrices decayed, linear warm-up, cosine to 10 %, clipping, seeded dropout."""
    decay = [p for p in net.parameters() if p.dim() >= 2]
    rest = [p for p in net.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": wd}, {"params": rest, "weight_decay": 0.0}], lr=lr,
                            betas=(0.9, 0.95))
    losses = []
    net.train()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(torch_seed)
        for step in range(steps):
            if step < warmup:
                cur = lr * (step + 1) / warmup
            else:
                frac = (step - warmup) / (steps - warmup)
                cur = lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac)))
            for g in opt.param_groups:
                g["lr"] = cur
            pick = picks[step]
            loss = torch.nn.functional.mse_loss(net(x[pick]), y[pick])
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), clip)
            opt.step()
            losses.append(float(loss))
    net.eval()
    return losses


def test_train_loop_matches_a_hand_written_adamw_loop_and_leaves_eval_mode():
    steps = 40
    picks = [np.random.default_rng(s).integers(0, 64, size=16) for s in range(steps)]
    x, y, net = _problem()
    ref_net = _problem()[2]
    ref_net.load_state_dict(net.state_dict())
    it = iter(picks)
    losses = train_loop(net, lambda p: torch.nn.functional.mse_loss(net(x[p]), y[p]), lambda: next(it), steps, 1e-2,
                        warmup=5, weight_decay=0.1, grad_clip=0.5, torch_seed=7)
    ref = _reference(ref_net, x, y, picks, steps, 1e-2, 5, 0.1, 0.5, 7)
    assert losses == ref
    assert np.mean(losses[-5:]) < 0.5 * np.mean(losses[:5])
    assert not net.training


def test_train_loop_seeds_dropout_and_keeps_the_callers_rng():
    torch.manual_seed(0)
    problems = [_problem() for _ in range(3)]
    for _, _, net in problems[1:]:
        net.load_state_dict(problems[0][2].state_dict())

    def run(problem, torch_seed):
        x, y, net = problem
        rng = np.random.default_rng(0)
        return train_loop(net, lambda p: torch.nn.functional.mse_loss(net(x[p]), y[p]),
                          lambda: rng.integers(0, 64, size=8), 10, 1e-2, torch_seed=torch_seed)

    before = torch.get_rng_state()
    a, b, c = run(problems[0], 1), run(problems[1], 1), run(problems[2], 2)
    assert torch.equal(torch.get_rng_state(), before)
    assert a == b and a != c  # dropout masks come from torch_seed only


def test_decay_all_also_shrinks_biases():
    x, y, net = _problem()
    for p in net.parameters():
        torch.nn.init.constant_(p, 1.0)
    zero = lambda p: (net(x[p]) * 0.0).sum()  # noqa: E731  (no gradient: only the weight decay moves a weight)
    pick = lambda: np.arange(4)  # noqa: E731
    train_loop(net, zero, pick, 3, 1e-1, weight_decay=0.5, decay="matrices")
    assert torch.all(net[0].bias == 1.0) and torch.all(net[0].weight < 1.0)
    train_loop(net, zero, pick, 3, 1e-1, weight_decay=0.5, decay="all")
    assert torch.all(net[0].bias < 1.0)


def test_length_buckets_draw_neighbours_in_length_and_cover_every_sequence():
    lengths = np.random.default_rng(3).integers(1, 200, size=50)
    buckets = LengthBuckets(lengths, 8, np.random.default_rng(0))
    sorted_len = np.sort(lengths)
    counts = np.zeros(50)
    for _ in range(3000):
        pick = buckets.draw()
        assert len(pick) == 8 and len(set(pick.tolist())) == 8
        got = np.sort(lengths[pick])
        # 8 consecutive sequences of the length order: some window of the sorted lengths equals them
        assert any(np.array_equal(got, sorted_len[s:s + 8]) for s in range(50 - 7))
        counts[pick] += 1
    assert counts.min() > 0  # every sequence is drawn
    small = LengthBuckets([3, 4], 5, np.random.default_rng(0)).draw()
    assert len(small) == 5 and set(small.tolist()) <= {0, 1}


def test_stop_ends_training_early_with_the_same_losses_so_far():
    x, y, net = _problem()
    twin = _problem()[2]
    twin.load_state_dict(net.state_dict())
    picks = [np.random.default_rng(s).integers(0, 64, size=16) for s in range(20)]
    full = train_loop(net, lambda p: torch.nn.functional.mse_loss(net(x[p]), y[p]), iter(picks).__next__, 20, 1e-2,
                      min_lr_ratio=1.0)
    short = train_loop(twin, lambda p: torch.nn.functional.mse_loss(twin(x[p]), y[p]), iter(picks).__next__, 20, 1e-2,
                       min_lr_ratio=1.0, stop=lambda losses: len(losses) == 7)
    assert short == full[:7] and not twin.training


def test_bad_inputs_name_the_argument():
    x, y, net = _problem()
    ok = dict(module=net, batch_loss=lambda p: net(x[p]).sum(), sample=lambda: np.arange(2), steps=1, lr=1e-3)
    with pytest.raises(TypeError, match="module"):
        train_loop(**{**ok, "module": "net"})
    with pytest.raises(TypeError, match="sample"):
        train_loop(**{**ok, "sample": 3})
    with pytest.raises(TypeError, match="stop"):
        train_loop(**ok, stop=3)
    with pytest.raises(ValueError, match="decay"):
        train_loop(**ok, decay="biases")
    with pytest.raises(ValueError, match="lengths"):
        LengthBuckets([1.5, 2], 2, np.random.default_rng(0))
    with pytest.raises(TypeError, match="rng"):
        LengthBuckets([1, 2], 2, 0)
