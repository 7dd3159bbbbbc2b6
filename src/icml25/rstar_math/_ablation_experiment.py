"""The reproduction's two ablations on the last round (spec §6 items 5 and 6), kept apart from the library.

- Reward models (paper Table 8): a PQM (Q-value regression) and an ORM (outcome BCE) are trained on the last round's
  trees from the same policy trunk and with the same step budget as that round's PPM, then compared with the PPM
  in BoN@N and MCTS@N on the same test problems and evaluation seeds.
- SFT data (paper Table 7): a policy fine-tuned from the base weights on as many randomly chosen *correct*
  samples of plain sampling (the round's generator at T=1, rejection sampling without Q ranking) as the round's
  verified top-2 set has trajectories, with the same SFT budget; compared in greedy accuracy.

``cfg.ablation_steps > 0`` shortens the ablation models' training (quick mode only, where every compared model is
at chance anyway); the full preset sets 0, i.e. equal budgets.
"""

from __future__ import annotations

import numpy as np

from .evaluation import evaluate, sample_chains
from .extraction import SFTRecord
from .mcts import MCTSConfig
from .reward_model_ablations import make_orm, make_pqm, orm_targets, pqm_targets, train_value_head
from .sft import sft_examples, train_sft
from .tiny_policy import TinyStepPolicy, clone_lm


def reward_model_ablation(cfg, seeds: list[int], trees, policy_lm, test, executor, fmt, n: int,
                          train_seed: int) -> dict:
    """Train PQM and ORM on ``trees`` from ``policy_lm``; evaluate both with BoN@n and MCTS@n per seed.

    ``seeds`` are the sampling seeds of the comparison (the PPM's evaluations with the same seeds are paired).
    Returns ``{"PQM": [eval per seed], "ORM": [...], "n_pqm_targets", "n_orm_targets", "losses": {...}}``; a model
    without training targets (no node visited twice, no answer trajectory) gets ``None`` instead of evaluations.
    """
    out: dict = {"losses": {}}
    data = {"PQM": pqm_targets(trees, fmt=fmt), "ORM": orm_targets(trees, fmt=fmt)}
    out["n_pqm_targets"], out["n_orm_targets"] = len(data["PQM"]), len(data["ORM"])
    mcfg = MCTSConfig(n_candidates=cfg.later_candidates, max_depth=cfg.max_depth, errors_threshold=1)
    for name, make in (("PQM", make_pqm), ("ORM", make_orm)):
        if not data[name]:
            out[name] = None
            continue
        head = make(policy_lm)
        out["losses"][name] = train_value_head(head, data[name], name.lower(),
                                               steps=cfg.ablation_steps or cfg.ppm_steps,
                                               batch_size=cfg.batch_size, lr=cfg.lr, seed=train_seed)
        head.eval()
        out[name] = [evaluate(test, TinyStepPolicy(policy_lm), executor, head, methods=("maj", "bon", "mcts"),
                              ns=(n,), seed=s, mcts_config=mcfg, max_depth=cfg.max_depth, fmt=fmt)
                     for s in seeds]
    return out


def rejection_sampled_sft(cfg, generator, pool, n_target: int, executor, fmt, seed: int) -> list[SFTRecord]:
    """Up to two random correct samples per problem from ``cfg.rejection_samples`` plain samples (T=1), then
    ``n_target`` of them drawn at random (all of them when fewer were found)."""
    chains = sample_chains(generator, executor, pool, cfg.rejection_samples, 1.0, cfg.max_depth, 1, 32,
                           seed=seed, fmt=fmt)
    rng = np.random.default_rng(seed)
    per_problem = []
    for p, row in zip(pool, chains):
        texts = sorted({"".join(c.steps) for c in row if c.correct})
        texts = [t for t in texts if "error" not in t.lower()]  # the same filter as the verified extraction
        pick = rng.permutation(len(texts))[:2]
        per_problem += [SFTRecord(p.question, texts[i], 0.0, 0.0) for i in pick]
    keep = rng.permutation(len(per_problem))[:n_target]
    return [per_problem[i] for i in sorted(keep)]


def data_ablation(cfg, generator, pool, n_verified: int, base_lm, test, executor, fmt, sample_seed: int,
                  train_seed: int) -> dict:
    """Greedy accuracy of a policy SFT'd (same steps, seed and renaming augmentation as the verified-data policy)
    on rejection-sampled data matched in size to the verified set (``n_verified`` trajectories).

    Returns ``{"n_verified", "n_rejection", "greedy_correct": list[bool] or None, "sft_losses"}``; ``None`` when
    plain sampling found no correct solution at all.
    """
    from .augment import augment_renamed

    records = rejection_sampled_sft(cfg, generator, pool, n_verified, executor, fmt, sample_seed)
    if not records:
        return {"n_verified": n_verified, "n_rejection": 0, "greedy_correct": None, "sft_losses": []}
    lm = clone_lm(base_lm)
    examples = augment_renamed(sft_examples(records, fmt), cfg.rename_copies, seed=train_seed)
    losses = train_sft(lm, examples, steps=cfg.ablation_steps or cfg.sft_steps, batch_size=cfg.batch_size,
                       lr=cfg.lr, seed=train_seed)
    greedy = sample_chains(TinyStepPolicy(lm), executor, test, 1, 0.0, cfg.max_depth, 1, 32, train_seed, fmt=fmt)
    return {"n_verified": n_verified, "n_rejection": len(records),
            "greedy_correct": [row[0].correct for row in greedy], "sft_losses": losses}
