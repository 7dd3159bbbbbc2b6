"""From-scratch training batches and task vectors (patching identities, geometry)."""

from __future__ import annotations

import numpy as np
import pytest

from icml25.task_superposition import (
    MixturePromptBuilder,
    TaskVectorExtractor,
    answer_probabilities,
    icl_training_batch,
    layer_hidden_states,
    official_setting,
    patch_and_score,
    synthetic_family,
)


def test_training_batch_masks_exactly_the_answers_and_terminators():
    from icml25.llm.tokenizers import CharTokenizer

    fam = synthetic_family("F-AB")
    tok = CharTokenizer(fam.alphabet)
    x, y, w = icl_training_batch(fam, tok, np.random.default_rng(0), 8, 1, 4)
    for r in range(8):
        text = tok.decode([int(i) for i in y[r] if i != tok.pad_id])
        lines = text.split("\n")[:-1]
        assert all(len(ln) == 4 and ln[2] == "=" for ln in lines)  # "ab=c" per example and the query
        # loss mask: the answer char (after '=') and the newline after it, nothing else
        assert w[r].sum() == 2 * len(lines)
        targets = [tok.decode([int(t)]) for t, m in zip(y[r], w[r]) if m]
        assert targets[1::2] == ["\n"] * len(lines)
        # one task per prompt: every answer is the same function of its input
        tasks = {next(k for k in range(3) if fam.tasks[k].fn((int(ln[0]), int(ln[1]))) == ln[3]) for ln in lines
                 if len({fam.tasks[k].fn((int(ln[0]), int(ln[1]))) for k in range(3)}) == 3}
        assert len(tasks) <= 1


def test_training_reduces_the_loss():
    import torch

    torch.set_num_threads(1)
    from icml25.task_superposition import train_icl_model

    _, hist = train_icl_model(synthetic_family("F-AB", ["copyA"]), size="S", steps=60, lr=1e-2, seed=1,
                              show_progress=False)
    assert np.mean(hist["loss"][-10:]) < 0.7 * np.mean(hist["loss"][:5])


@pytest.mark.parametrize("backend", ["tiny_fab", "random_gpt2"])
def test_patching_a_state_with_itself_changes_nothing(backend, request):
    model = request.getfixturevalue(backend)
    fam = synthetic_family("F-AB") if backend == "tiny_fab" else official_setting("country")
    items = MixturePromptBuilder(fam, m=3, random_state=0).sample(3)
    prompts, answers = [it.prompt for it in items], [list(it.answers) for it in items]
    p = answer_probabilities(model, prompts, answers)
    h = layer_hidden_states(model, prompts, 1)
    assert patch_and_score(model, prompts, answers, 1, h) == pytest.approx(p, rel=1e-4)
    moved = patch_and_score(model, prompts, answers, 1, h + 50.0 * np.sign(h))
    assert np.abs(np.log(moved) - np.log(p)).max() > 1e-3  # a different state does change the output


def test_task_vector_geometry_on_constructed_states(tiny_fab):
    tv = TaskVectorExtractor(tiny_fab, layer=1).fit([["12=", "34="], ["56=", "78="]])
    v = tv.vectors_
    lam = np.array([0.75, 0.25])
    h = np.stack([lam @ v, v[0], v[1]])
    assert tv.position(h) == pytest.approx([0.75, 1.0, 0.0])
    assert tv.mixture_coefficient(h[:1], lam) == pytest.approx([1.0])
    with pytest.raises(ValueError, match="weights must sum to 1"):
        tv.combination([0.5, 0.6])
