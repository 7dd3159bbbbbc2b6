"""CROQ's torch models run on the ``meta`` device (issue 45 item 3).

A tensor created on the CPU next to a meta network fails with "not on the expected device". :class:`CPOptScorer`
itself is not run: its ``fit`` starts ``tau`` at a quantile of the initial scores (``numpy``), which needs data.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

from icml25.croq.cp_opt import ScoreMLP, cp_opt_loss  # noqa: E402
from icml25.croq.knowledge_task import KnowledgeTask  # noqa: E402
from icml25.croq.mcq import answer_indices  # noqa: E402
from icml25.croq.mcq_reader import TinyMCQReader  # noqa: E402

META = torch.device("meta")


def test_score_mlp_and_cp_opt_loss_on_meta():
    with META:
        model = ScoreMLP(6, 4, (8,))
        x, mask = torch.randn(5, 6), torch.ones(5, 4, dtype=torch.bool)
        y = torch.zeros(5, dtype=torch.long)
        tau = torch.nn.Parameter(torch.tensor(0.3))
    scores = model(x, mask)
    assert scores.device.type == "meta" and scores.shape == (5, 4)
    loss = cp_opt_loss(scores, tau, y, mask, 0.1, 10.0, 1.0, lam_ce=0.5)
    assert loss.device.type == "meta" and loss.shape == ()
    loss.backward()
    assert tau.grad.device.type == "meta" and model.net[0].weight.grad.device.type == "meta"


def test_tiny_mcq_reader_letter_logits_on_meta():
    """The reader's prompt ids, positions and letter masks follow the network (``lm.to(device)``)."""
    task = KnowledgeTask(n_entities=10, n_values=20, seed=0)
    reader = TinyMCQReader(task, n_layer=1, n_head=2, n_embd=16)
    reader.lm.to(META)
    qs = task.sample(3, 4, np.random.default_rng(0))
    logits = reader.letter_logits_torch(qs)
    assert logits.device.type == "meta" and logits.shape == (3, 15)
    loss = F.cross_entropy(logits, torch.from_numpy(answer_indices(qs)).to(logits.device))
    loss.backward()
    assert all(p.grad.device.type == "meta" for p in reader.lm.module.parameters() if p.grad is not None)
