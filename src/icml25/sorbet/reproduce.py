"""Reproduction of Sorbet (spec §6, with the pretrained-models update): SST-2 with a fine-tuned MiniLM teacher,
multi-step distillation to PTsoftmax/BSPN and to W1A4, the exact spiking inference, baselines and the energy;
``Config.paper()`` is the paper's BERT-base setting on a GPU."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from icml25.core import Report, Scale, reproduction
from icml25.core.progress import progress
from icml25.core.registry import reproduction_stub
from icml25.core.threads import thread_limits
from icml25.core.validation import check_int, check_option, check_positive

TITLE = "Sorbet: A Neuromorphic Hardware-Compatible Transformer-Based Spiking Language Model"
#: abstract: "27.16x energy savings compared to BERT" (claim E1). The spec's "3.16x lower than SpikeLM" is not in
#: Sorbet's abstract (3.16x is the energy number of SpikF's abstract), so no claim carries it.
PAPER_ENERGY_RATIO_BERT = 27.16
#: tolerance of the energy claim: our estimate may fall 10 % short of the paper's ratio
ENERGY_TOLERANCE = 0.10
#: BiT paper (Liu et al. 2022) Table 1, BERT-base SST-2 dev accuracy, as recalled in the spec ("verify")
BERT_BASE_SST2 = 0.932
MAJORITY_SST2_DEV = 444 / 872


@dataclass(frozen=True)
class Config:
    task: str = "sst2"  # GLUE task (sst2, mrpc, rte, cola, stsb ship with icml25)
    encoder: str = "pretrained:all-minilm-l6-v2"  # pretrained BERT-family encoder of the teacher
    num_layers: int = 1  # encoder layers kept (MiniLM has 6; quick keeps the first one)
    pooling: str = "mean"  # pooler input: mean over tokens (MiniLM's native pooling) or [CLS]
    n_train: int = 2000  # random training sentences (drawn with the seed)
    max_length: int = 64  # WordPiece tokens per example (SST-2 setting of the paper's code)
    batch_size: int = 32
    teacher_epochs: int = 1  # step 0: fine-tuning the full-precision teacher
    teacher_lr: float = 3e-4
    kd1_epochs: int = 1  # step 1: ReLU + PTsoftmax + BSPN, full precision
    kd1_lr: float = 2e-4
    kd2_epochs: int = 1  # step 2: W1A4 (binary weights, 4-bit activations)
    kd2_lr: float = 5e-4
    step_lr: float = 1e-3  # learning rate of the LSQ step sizes
    n_seeds: int = 1  # seeds of step 2 (seed, seed+1, ...)
    baselines: bool = False  # also train the BiT-like W1A4 (softmax + LayerNorm) and the no-KD W1A4
    train_word_embeddings: bool = False  # train the latent word-embedding table (30k x C) in every step
    bspn_projected_shift: bool = True  # straight-through gradient for BSPN's rounded group-shift divisor
    binary_scale_grad: bool = False  # back-propagate through the binary weights' scale mean|W|
    attn_prob_step: str = "lsq"  # initial step of the attention-probability quantiser: "lsq" rule or "unit" (1/16)
    dev_batch: int = 64  # dev-set batch size (evaluation and spiking inference)
    threads: int = 1  # torch threads
    device: str = "cpu"  # torch device of the models ("cpu", "cuda" or "cuda:<k>")

    def __post_init__(self) -> None:
        check_option(self.task, "task", ("sst2", "mrpc", "rte", "cola", "stsb"))
        if not isinstance(self.encoder, str) or not self.encoder:
            raise TypeError(f"encoder must be a non-empty string, got {self.encoder!r}")
        check_option(self.pooling, "pooling", ("mean", "cls"))
        for name, low in (("num_layers", 1), ("n_train", 64), ("max_length", 8), ("batch_size", 2),
                          ("teacher_epochs", 1), ("kd1_epochs", 1), ("kd2_epochs", 1), ("n_seeds", 1),
                          ("dev_batch", 1), ("threads", 1)):
            check_int(getattr(self, name), name, low=low)
        for name in ("teacher_lr", "kd1_lr", "kd2_lr", "step_lr"):
            check_positive(getattr(self, name), name)
        check_option(self.baselines, "baselines", (True, False))
        check_option(self.train_word_embeddings, "train_word_embeddings", (True, False))
        check_option(self.bspn_projected_shift, "bspn_projected_shift", (True, False))
        check_option(self.binary_scale_grad, "binary_scale_grad", (True, False))
        check_option(self.attn_prob_step, "attn_prob_step", ("lsq", "unit"))
        dev = self.device
        if not isinstance(dev, str) or not (dev in ("cpu", "cuda") or (dev.startswith("cuda:") and dev[5:].isdigit())):
            raise ValueError(f"device must be 'cpu', 'cuda' or 'cuda:<index>', got {dev!r}")

    @classmethod
    def quick(cls) -> Config:
        return cls()

    @classmethod
    def full(cls) -> Config:
        return cls(num_layers=3, n_train=2000, teacher_epochs=2, teacher_lr=1e-4, n_seeds=2, baselines=True)

    @classmethod
    def paper(cls) -> Config:
        """The paper's setting for SST-2 (spec §2, from the released run_glue.sh; the PDF was not readable). The
        paper reports 7 GLUE tasks: run one per ``--set task=...`` (MNLI/QQP/QNLI need a glue_data folder)."""
        return cls(encoder="hf:bert-base-uncased",  # the paper's teacher: BERT-base (12 layers, hidden 768)
                   num_layers=12,  # all of BERT-base's layers
                   pooling="cls",  # BERT's pooler reads [CLS] (the paper's code)
                   n_train=67349,  # the whole SST-2 training set
                   max_length=64,  # SST-2 in the released scripts
                   batch_size=220,  # SST-2 batch of the released scripts (spec §2)
                   teacher_epochs=3, teacher_lr=2e-5,  # "standard" fine-tuning (spec); 3 epochs, 2e-5: our choice
                   kd1_epochs=200, kd1_lr=1e-6,  # SST-2: 200 epochs at 1e-6 in the released scripts (each KD step)
                   kd2_epochs=200, kd2_lr=1e-6,
                   step_lr=1e-4,  # the quantiser steps' learning rate (--clip_lr 1e-4)
                   n_seeds=1,  # the paper states no seed count: one
                   baselines=True,  # the paper's ablations (softmax/LayerNorm kept; no KD)
                   train_word_embeddings=True,  # the paper trains every weight
                   device="cuda")  # the paper's code runs on one GPU

    def plan(self) -> Any:
        """The dry-run plan (nothing is loaded, torch is not imported)."""
        from ._plan import sorbet_plan

        return sorbet_plan(self)


def _data(cfg: Config, seed: int, tok: Any) -> dict[str, Any]:
    from .data import batches, encode, load_glue_task

    train = load_glue_task(cfg.task, "train")
    dev = load_glue_task(cfg.task, "dev")
    idx = np.sort(np.random.default_rng(seed).choice(len(train), min(cfg.n_train, len(train)), replace=False))
    train = train.subset(idx)
    etr, edev = encode(train, tok, cfg.max_length), encode(dev, tok, cfg.max_length)
    return {"train": batches(etr, train.labels, cfg.batch_size, shuffle=True, seed=seed),
            "dev": batches(edev, dev.labels, cfg.dev_batch, sort_by_length=True),
            "dev_labels": dev.labels, "dev_lengths": [len(a) for a, _ in edev], "n_train": len(train)}


def _kd(teacher: Any, student: Any, d: dict[str, Any], cfg: Config, lr: float, epochs: int, seed: int, desc: str,
        kd: bool = True) -> Any:
    from .distill import DistillTrainer

    DistillTrainer(teacher, student, logits=kd, hidden=kd, labels=not kd, lr=lr, step_lr=cfg.step_lr,
                   epochs=epochs, seed=seed, train_word_embeddings=cfg.train_word_embeddings).fit(d["train"], desc)
    return student


def _spiking_eval(model: Any, d: dict[str, Any], cfg: Config) -> dict[str, Any]:
    import torch

    from .data import glue_metric
    from .spiking import SpikingSorbet

    snn = SpikingSorbet(model)
    dev = cfg.device
    logits, index, stats = [], [], {}
    for b in progress(d["dev"], "spiking inference (T=16)"):
        out = snn(b["input_ids"].to(dev), b["attention_mask"].to(dev), b["token_type_ids"].to(dev))
        logits.append(out.logits.cpu())
        index.append(b["index"])
        for k, v in out.stats.items():
            acc = stats.setdefault(k, {"spikes": 0.0, "neurons": 0.0, "synaptic_ops": 0.0})
            for kk in acc:
                acc[kk] += v[kk]
    lg = torch.cat(logits)[torch.argsort(torch.cat(index))]
    pred = (lg[:, 0] if lg.shape[-1] == 1 else lg.argmax(-1)).numpy()
    return {"logits": lg, "predictions": pred, "metric": glue_metric(cfg.task, pred, d["dev_labels"]), "stats": stats}


def _qk_grads(model: Any, batch: dict[str, Any], ste: bool) -> float:
    """Norm of the loss gradient w.r.t. the first layer's query and key weights (on a copy of ``model``)."""
    import torch

    from .distill import _label_loss
    from .model import convert

    dev = next(model.parameters()).device
    m = convert(model, "w1a4", ste=ste, pooling=model.options.pooling, bspn_warmup=0).to(dev).train()
    out = m(batch["input_ids"].to(dev), batch["attention_mask"].to(dev), batch["token_type_ids"].to(dev))
    _label_loss(out.logits, batch["labels"]).backward()
    lay = m.layers[0]
    g = [p.grad for p in (lay.query.weight, lay.key.weight) if p.grad is not None]  # None: no gradient reached it
    return float(torch.sqrt(sum((x.pow(2).sum() for x in g), torch.zeros(()))))


def _run(scale: Scale, seed: int, out: Path, cfg: Config, method: bool) -> Report:
    import torch

    from icml25.core.errors import UsageError

    check_int(seed, "seed", low=0)
    if cfg.device.startswith("cuda") and not torch.cuda.is_available():
        raise UsageError(f"device={cfg.device!r} needs a CUDA GPU and a CUDA build of torch, and none is available; "
                         "pass --set device=cpu to run on the CPU (see --dry-run for how long that takes)")
    with thread_limits(cfg.threads):
        return _experiments(Scale.parse(scale), seed, cfg, method)


def _experiments(scale: Scale, seed: int, cfg: Config, method: bool) -> Report:
    import torch

    from .distill import evaluate, fine_tune, load_teacher
    from .energy import energy_report
    from .model import convert as _convert

    def convert(*args: Any, **kwargs: Any) -> Any:  # every stage on the configured device
        return _convert(*args, **kwargs).to(cfg.device)

    rep = Report(slug="sorbet", title=TITLE, scale=scale)
    t_start = time.perf_counter()
    from .data import GLUE_TASKS

    spec = GLUE_TASKS[cfg.task]
    try:
        tok, hf = load_teacher(cfg.encoder, num_labels=spec["num_labels"], num_layers=cfg.num_layers, seed=seed)
    except ValueError as exc:  # a missing or unusable encoder is the user's to fix (one line, exit 2)
        from icml25.core.errors import UsageError

        raise UsageError(f"encoder={cfg.encoder!r}: {exc}") from None
    metric = "dev " + spec["metric"]
    sst2 = cfg.task == "sst2"
    d = _data(cfg, seed, tok)
    warm = max(1, len(d["train"]) // 10)  # BSPN warm-up: 10 % of a step's iterations (spec §8)
    times: dict[str, float] = {}
    qopt = {"binary_scale_grad": cfg.binary_scale_grad, "attn_prob_step": cfg.attn_prob_step}
    sopt = {"bspn_warmup": warm, "pooling": cfg.pooling, "bspn_projected_shift": cfg.bspn_projected_shift, **qopt}

    t0 = time.perf_counter()
    teacher = convert(hf, "fp", pooling=cfg.pooling)                                  # step 0
    fine_tune(teacher, d["train"], cfg.teacher_epochs, cfg.teacher_lr, seed=seed, desc="step 0: fine-tune teacher",
              train_word_embeddings=cfg.train_word_embeddings)
    acc_t = evaluate(teacher, d["dev"], cfg.task)["metric"]
    times["teacher"] = time.perf_counter() - t0

    accs: dict[str, float] = {"teacher (FP, softmax, LayerNorm, GELU)": acc_t}
    t0 = time.perf_counter()
    if method:
        s1 = convert(teacher, "ptsoftmax_bspn", **sopt)                                  # step 1
        _kd(teacher, s1, d, cfg, cfg.kd1_lr, cfg.kd1_epochs, seed, "step 1: KD -> PTsoftmax + BSPN")
        accs["step 1: FP + ReLU + PTsoftmax + BSPN"] = evaluate(s1, d["dev"], cfg.task)["metric"]
    else:  # the stub: the naive baseline, post-training binarisation of the teacher with no distillation
        s1 = convert(teacher, "ptsoftmax_bspn", **sopt)
    times["step 1"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    w1a4, res = [], []
    for k in range(cfg.n_seeds):
        s2 = convert(s1, "w1a4", **sopt)
        if method:
            torch.manual_seed(seed + k)
            _kd(s1, s2, d, cfg, cfg.kd2_lr, cfg.kd2_epochs, seed + k, f"step 2: KD -> W1A4 (seed {seed + k})")
        else:
            with torch.no_grad():  # initialise the quantisers on one batch, no training
                b = d["train"][0]
                s2.train()(*(b[k].to(cfg.device) for k in ("input_ids", "attention_mask", "token_type_ids")))
        w1a4.append(s2)
        res.append(evaluate(s2, d["dev"], cfg.task))
    times["step 2"] = time.perf_counter() - t0
    accs_w = [r["metric"] for r in res]
    accs["step 2: Sorbet W1A4 (ANN)"] = float(np.mean(accs_w))

    t0 = time.perf_counter()
    snn = _spiking_eval(w1a4[0], d, cfg)
    times["spiking inference"] = time.perf_counter() - t0
    accs["Sorbet spiking (T=16)"] = snn["metric"]
    same = float(np.mean(snn["predictions"] == res[0]["predictions"]))
    ann_lg = res[0]["logits"]
    rel = float(((snn["logits"] - ann_lg).abs() / ann_lg.abs().clamp_min(1e-6)).max())

    b0 = d["train"][0]
    g_ste, g_rel = _qk_grads(w1a4[0], b0, True), _qk_grads(w1a4[0], b0, False)

    extra: dict[str, float] = {}
    if cfg.baselines:
        t0 = time.perf_counter()
        bit = convert(teacher, "w1a4", attention="softmax", norm="layernorm", activation="gelu", pooler_activation="tanh",
                      pooling=cfg.pooling, pow2_step=False, **qopt)
        _kd(teacher, bit, d, cfg, cfg.kd2_lr, cfg.kd2_epochs, seed, "baseline: BiT-like W1A4 (softmax, LayerNorm)")
        extra["bit"] = evaluate(bit, d["dev"], cfg.task)["metric"]
        accs["baseline: BiT-like W1A4 (softmax, LayerNorm, GELU), KD from teacher"] = extra["bit"]
        nokd = convert(teacher, "w1a4", **sopt)
        _kd(None, nokd, d, cfg, cfg.kd2_lr, cfg.kd1_epochs + cfg.kd2_epochs, seed, "ablation: W1A4 on labels only",
            kd=False)
        extra["nokd"] = evaluate(nokd, d["dev"], cfg.task)["metric"]
        accs["ablation: Sorbet W1A4 trained on labels only (no KD)"] = extra["nokd"]
        times["baselines"] = time.perf_counter() - t0

    context = ([{"model": "paper's BERT-base teacher (BiT Table 1, recalled in spec)", metric: BERT_BASE_SST2},
                {"model": "majority class", metric: MAJORITY_SST2_DEV}] if sst2 else [])
    rep.add_table(f"{cfg.task.upper()} {metric} ({len(d['dev_labels'])} dev examples); teacher = {cfg.encoder} "
                  f"(first {cfg.num_layers} layer(s)) fine-tuned on {d['n_train']} training examples",
                  [{"model": k, metric: v} for k, v in accs.items()] + context)
    if cfg.n_seeds > 1:
        rep.add_table("step 2 seeds", [{"seed": seed + k, f"W1A4 {metric}": a} for k, a in enumerate(accs_w)])
    if not sst2:
        rep.notes.append(f"{cfg.task.upper()}: a smoke run of the same pipeline; the spec sets no thresholds for "
                         "this task, so only the mechanism claims are asserted.")
    _claims(rep, cfg, acc_t, accs_w, extra, same, rel, g_ste, g_rel, len(snn["predictions"]), sst2)

    e = energy_report(snn["stats"], d["dev_lengths"], hidden=hf.config.hidden_size, ffn=hf.config.intermediate_size,
                      layers=cfg.num_layers, heads=hf.config.num_attention_heads, num_labels=spec["num_labels"])
    need = PAPER_ENERGY_RATIO_BERT * (1 - ENERGY_TOLERANCE)
    top = sorted(e["rows"], key=lambda row: -row["energy / sentence (nJ)"])[:3]
    total_nj = e["e_snn"] * 1e9
    # fails if: the spiking W1A4 model does not save the paper's factor against the dense full-precision model of
    # the same sizes at the measured spike counts (the signed codes' +8 offset alone costs ~8 spikes per activation)
    rep.add_claim("E1", "Sorbet saves 27.16x energy against BERT: E(dense FP model of the same sizes, MACs x 4.6 pJ) "
                  f"/ E(spiking W1A4, spikes x fan-out x 0.9 pJ + shifts), {len(d['dev_labels'])} dev sentences",
                  PAPER_ENERGY_RATIO_BERT, e["ratio"], ">=", round(need, 3), kind="paper", scale=Scale.FULL,
                  unit="x", headline=True, source="abstract",
                  note=f"our trained model (first {cfg.num_layers} layer(s) of {cfg.encoder}; the paper: BERT-base); "
                       f"mean firing rate {e['mean_rate']:.3f}; tolerance 10 %; largest populations: "
                       + ", ".join(f"{row['population']} {100 * row['energy / sentence (nJ)'] / total_nj:.0f} %"
                                   for row in top))
    rep.add_table("spiking populations on the dev set (per sentence; E_AC = 0.9 pJ)", e["rows"])
    rep.add_table("energy per sentence (paper: 27.16x lower than BERT, claim E1)",
                  [{"model": "FP teacher (MACs x 4.6 pJ)", "energy (uJ)": e["e_ann"] * 1e6,
                                 "ops": e["macs"]},
                                {"model": "Sorbet SNN (SOPs x 0.9 pJ + shifts/adds)", "energy (uJ)": e["e_snn"] * 1e6,
                                 "ops": e["sops"]},
                                {"model": "ratio ANN / SNN (ours)", "energy (uJ)": e["ratio"], "ops": math.nan},
                                {"model": "ratio vs BERT (paper, abstract)", "energy (uJ)": PAPER_ENERGY_RATIO_BERT,
                                 "ops": math.nan}])
    rep.notes.append(f"Energy: ours ANN/SNN = {e['ratio']:.2f}x at mean firing rate {e['mean_rate']:.3f} (signed "
                     "4-bit codes are offset by +8, so every signed activation costs ~8 spikes); the paper's 27.16x "
                     "uses its own per-operation energies, which we could not read.")
    rep.notes.append("Wall time (s): " + ", ".join(f"{k} {v:.1f}" for k, v in times.items())
                     + f", total {time.perf_counter() - t_start:.1f}")
    rep.add_figure("accuracy", _figure_acc(accs, metric, sst2))
    rep.add_figure("firing_rates", _figure_rates(e["rows"]))
    return rep


def _claims(rep: Report, cfg: Config, acc_t: float, accs_w: list[float], extra: dict[str, float], same: float,
            rel: float, g_ste: float, g_rel: float, n_dev: int, sst2: bool) -> None:
    """The claims (accuracy ones on SST-2 only: the spec sets thresholds for SST-2 alone)."""
    if sst2:
        # fails if: the teacher pipeline is broken (tokeniser/label mix-up, a collapsed pooled representation)
        rep.add_claim("Q1", "fine-tuned teacher dev accuracy >= 0.58 (spec quick floor)", None, acc_t, ">=", 0.58,
                      kind="check", note=f"majority class {MAJORITY_SST2_DEV:.3f}; the paper's BERT-base teacher: "
                                         f"{BERT_BASE_SST2} (BiT Table 1, recalled in the spec)")
        # fails if: the distillation chain does not transfer (the stub: the teacher binarised to W1A4 without
        # distillation loses ~0.13), the STEs are missing (Q/K and everything before a BSPN frozen) or the quantisers
        # are mis-initialised
        rep.add_claim("Q2", "Sorbet W1A4 dev accuracy - teacher's >= -0.06 (spec §6 C1 gap)", None, accs_w[0] - acc_t,
                      ">=", -0.06, kind="paper", headline=True, note=f"W1A4 {accs_w[0]:.4f}, teacher {acc_t:.4f}; the paper: "
                                                      "'competitive performance' of the W1A4, T=16 model (per-task "
                                                      "numbers not readable)")
        # fails if: the W1A4 model does not learn at all (majority class 0.509); the pretrained teacher makes even the
        # undistilled W1A4 model pass this floor, so it is a sanity check, not the paper claim
        rep.add_claim("Q2b", "Sorbet W1A4 dev accuracy >= 0.55 (spec quick floor)", None, accs_w[0], ">=", 0.55,
                      kind="check", note="majority class 0.509")
    # fails if: the IF neuron does not emit exactly q spikes, the +8 offset of signed codes or the unsigned
    # offset is mishandled, or the spiking path uses a different quantiser state than the ANN
    rep.add_claim("Q3", f"spiking inference (T=16) gives the W1A4 ANN's prediction on all {n_dev} "
                        "dev examples (fraction identical)", None, same, ">=", 1.0, kind="mechanism")
    # fails if: as Q3, or the accumulation order/scales differ (non-power-of-two steps break exactness)
    rep.add_claim("Q4", "spiking logits equal the W1A4 ANN logits: max relative difference <= 1e-4", None, rel,
                  "<=", 1e-4, kind="mechanism", requires=("Q3",))
    # fails if: PTsoftmax's ceil / power-of-two normaliser has no straight-through gradient (the released code)
    rep.add_claim("Q5", "with STEs the loss gradient w.r.t. the query/key weights is non-zero (norm)", None, g_ste,
                  ">", 0.0, kind="mechanism")
    # fails if: the ste=False flag does not reproduce the released behaviour (it would then not be an ablation)
    rep.add_claim("Q6", "with ste=False (released code) the query/key gradient is exactly zero", None, g_rel, "<=",
                  0.0, kind="check")

    if cfg.baselines and sst2:
        mean_w = float(np.mean(accs_w))
        # fails if: binarisation + 4-bit + PTsoftmax/BSPN lose more than the spec's allowed gap to the teacher
        rep.add_claim("C1", f"Sorbet W1A4 (mean of {cfg.n_seeds} seeds) >= teacher - 0.06", None, mean_w - acc_t,
                      ">=", -0.06, kind="paper", scale=Scale.FULL, headline=True,
                      note=f"teacher {acc_t:.4f}, Sorbet {mean_w:.4f}; spec §6 C1 (paper's own gap not readable)")
        # fails if: PTsoftmax/BSPN (with shifts only) cost clearly more than keeping softmax and LayerNorm
        rep.add_claim("C2", "Sorbet W1A4 >= BiT-like W1A4 (softmax + LayerNorm) - 0.03", None, mean_w - extra["bit"],
                      ">=", -0.03, kind="paper", scale=Scale.FULL,
                      note=f"Sorbet {mean_w:.4f}, BiT-like {extra['bit']:.4f}")
        # fails if: distillation does not help over training the W1A4 model on labels only
        rep.add_claim("C3", "KD ablation: Sorbet with KD - W1A4 on labels only >= 0", None, accs_w[0] - extra["nokd"],
                      ">=", 0.0, kind="paper", scale=Scale.FULL,
                      note=f"with KD {accs_w[0]:.4f}, labels only {extra['nokd']:.4f}; spec: report (the paper's KD "
                           "gain relies on a strong teacher)")


def _figure_acc(accs: dict[str, float], metric: str = "dev accuracy", sst2: bool = True) -> Any:
    from icml25.core.plotting import new_figure

    fig, ax = new_figure()
    names = list(accs)
    ax.barh(range(len(names)), [accs[n] for n in names], color="tab:blue")
    ax.set_yticks(range(len(names)), [n[:40] for n in names], fontsize=7)
    if sst2:
        ax.axvline(MAJORITY_SST2_DEV, color="k", ls=":", label="majority class")
        ax.axvline(BERT_BASE_SST2, color="tab:red", ls="--", label="paper's BERT-base teacher")
        ax.set_xlim(0.4, 1.0)
        ax.legend(fontsize=7)
    ax.set_xlabel(metric)
    return fig


def _figure_rates(rows: list[dict[str, Any]]) -> Any:
    from icml25.core.plotting import new_figure

    fig, ax = new_figure()
    rows = [r for r in rows if np.isfinite(r["firing rate"])]
    ax.barh([r["population"] for r in rows], [r["firing rate"] for r in rows], color="tab:orange")
    ax.set_xlabel("firing rate (spikes per neuron per step)")
    ax.tick_params(axis="y", labelsize=6)
    ax.set_title("Sorbet spiking populations (dev set)")
    return fig


@reproduction(slug="sorbet", title=TITLE, arxiv="2409.15298", extras=("torch", "llm", "models", "plot"),
              config=Config, threads=1)
def reproduce(scale: Scale, seed: int, out: Path, config: Config) -> Report:
    """MiniLM teacher -> PTsoftmax/BSPN -> W1A4 by multi-step KD on SST-2, exact spiking inference, energy."""
    return _run(scale, seed, out, config, method=True)


@reproduction_stub(slug="sorbet")
def reproduce_stub(scale: Scale, seed: int, out: Path, config: Config) -> Report:
    """The stub: the fine-tuned teacher binarised to W1A4 without distillation (post-training quantisation)."""
    return _run(scale, seed, out, config, method=False)


