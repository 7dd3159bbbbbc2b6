"""The Sorbet experiment (spec §6, with the pretrained-models update): the fine-tuned teacher, the multi-step
distillation to PTsoftmax/BSPN and W1A4 (or, for the stub, the teacher binarised without distillation), the exact
spiking inference, the STE gradient checks, the baselines and the energy estimate, with the claims each supports.
One function per stage or claim group; ``reproduce.py`` calls them in order.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from icml25.core import Report, Scale
from icml25.core.progress import progress

if TYPE_CHECKING:
    from .reproduce import Config

#: abstract: "27.16x energy savings compared to BERT" (claim E1). The spec's "3.16x lower than SpikeLM" is not in
#: Sorbet's abstract (3.16x is the energy number of SpikF's abstract), so no claim carries it.
PAPER_ENERGY_RATIO_BERT = 27.16
#: tolerance of the energy claim: our estimate may fall 10 % short of the paper's ratio
ENERGY_TOLERANCE = 0.10
#: BiT paper (Liu et al. 2022) Table 1, BERT-base SST-2 dev accuracy, as recalled in the spec ("verify")
BERT_BASE_SST2 = 0.932
MAJORITY_SST2_DEV = 444 / 872
#: dev examples (the longest) that the spiking check also simulates step by step (T products per layer)
PER_STEP_EXAMPLES = 8
#: the Sorbet paper's main GLUE table per task (Sorbet W1A4 T=16 and its BERT-base): not readable here (the
#: stored copies of arXiv 2409.15298 give the abstract and introduction only), so every entry is None = "not read"
PAPER_GLUE: dict[str, dict[str, float | None]] = {t: {"sorbet": None, "bert": None}
                                                  for t in ("sst2", "mrpc", "rte", "cola", "stsb")}
NOT_READ = "not read"


@dataclass
class Run:
    """What the stages share: the configuration, the seed, the encoder, the data, the quantiser options, and the
    accuracies and wall times the stages add as they go."""

    cfg: Config
    seed: int
    hf: Any  # the pretrained transformers classifier the teacher is converted from
    spec: dict[str, Any]  # GLUE_TASKS entry of cfg.task
    d: dict[str, Any]  # the batches (_data)
    t_start: float  # perf_counter at the start of the experiment
    acc_t: float = math.nan  # the fine-tuned teacher's dev metric (train_teacher)
    accs_w: list[float] = field(default_factory=list)  # the W1A4 models' dev metrics, one per seed (distill)
    accs: dict[str, float] = field(default_factory=dict)  # model -> dev metric, in table order
    times: dict[str, float] = field(default_factory=dict)  # stage -> wall time (s)

    @property
    def metric(self) -> str:
        return "dev " + self.spec["metric"]

    @property
    def sst2(self) -> bool:
        return self.cfg.task == "sst2"

    @property
    def qopt(self) -> dict[str, Any]:
        """Options of the quantisers."""
        return {"binary_scale_grad": self.cfg.binary_scale_grad, "attn_prob_step": self.cfg.attn_prob_step}

    @property
    def sopt(self) -> dict[str, Any]:
        """Options of the Sorbet stages (BSPN warm-up: 10 % of a step's iterations, spec §8)."""
        cfg = self.cfg
        return {"bspn_warmup": max(1, len(self.d["train"]) // 10), "pooling": cfg.pooling,
                "bspn_projected_shift": cfg.bspn_projected_shift, **self.qopt}

    def convert(self, *args: Any, **kwargs: Any) -> Any:
        """:func:`icml25.sorbet.model.convert` onto the configured device (every stage)."""
        from .model import convert

        return convert(*args, **kwargs).to(self.cfg.device)



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


def load(cfg: Config, seed: int) -> Run:
    """Load the pretrained encoder (a missing or unusable one is a usage error) and the task's data."""
    from .data import GLUE_TASKS
    from .distill import load_teacher

    t_start = time.perf_counter()
    spec = GLUE_TASKS[cfg.task]
    try:
        tok, hf = load_teacher(cfg.encoder, num_labels=spec["num_labels"], num_layers=cfg.num_layers, seed=seed)
    except ValueError as exc:  # a missing or unusable encoder is the user's to fix (one line, exit 2)
        from icml25.core.errors import UsageError

        raise UsageError(f"encoder={cfg.encoder!r}: {exc}") from None
    return Run(cfg=cfg, seed=seed, hf=hf, spec=spec, d=_data(cfg, seed, tok), t_start=t_start)


def _kd(teacher: Any, student: Any, d: dict[str, Any], cfg: Config, lr: float, epochs: int, seed: int, desc: str,
        kd: bool = True) -> Any:
    from .distill import DistillTrainer

    DistillTrainer(teacher, student, logits=kd, hidden=kd, labels=not kd, lr=lr, step_lr=cfg.step_lr,
                   epochs=epochs, seed=seed, train_word_embeddings=cfg.train_word_embeddings).fit(d["train"], desc)
    return student


def train_teacher(run: Run) -> Any:
    """Step 0: fine-tune the full-precision teacher on the task."""
    from .distill import evaluate, fine_tune

    cfg = run.cfg
    t0 = time.perf_counter()
    teacher = run.convert(run.hf, "fp", pooling=cfg.pooling)
    fine_tune(teacher, run.d["train"], cfg.teacher_epochs, cfg.teacher_lr, seed=run.seed,
              desc="step 0: fine-tune teacher", train_word_embeddings=cfg.train_word_embeddings)
    run.acc_t = evaluate(teacher, run.d["dev"], cfg.task)["metric"]
    run.accs["teacher (FP, softmax, LayerNorm, GELU)"] = run.acc_t
    run.times["teacher"] = time.perf_counter() - t0
    return teacher


def distill(run: Run, teacher: Any, method: bool) -> tuple[list[Any], list[dict[str, Any]]]:
    """Steps 1 and 2: KD to PTsoftmax + BSPN, then to W1A4 for each seed (the stub, ``method=False``: the
    teacher binarised to W1A4 with no distillation). Returns the W1A4 models and their dev evaluations."""
    import torch

    from .distill import evaluate

    cfg, d, seed, sopt = run.cfg, run.d, run.seed, run.sopt
    t0 = time.perf_counter()
    s1 = run.convert(teacher, "ptsoftmax_bspn", **sopt)                                   # step 1
    if method:
        _kd(teacher, s1, d, cfg, cfg.kd1_lr, cfg.kd1_epochs, seed, "step 1: KD -> PTsoftmax + BSPN")
        run.accs["step 1: FP + ReLU + PTsoftmax + BSPN"] = evaluate(s1, d["dev"], cfg.task)["metric"]
    run.times["step 1"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    w1a4, res = [], []
    for k in range(cfg.n_seeds):                                                          # step 2
        s2 = run.convert(s1, "w1a4", **sopt)
        if method:
            torch.manual_seed(seed + k)
            _kd(s1, s2, d, cfg, cfg.kd2_lr, cfg.kd2_epochs, seed + k, f"step 2: KD -> W1A4 (seed {seed + k})")
        else:
            with torch.no_grad():  # initialise the quantisers on one batch, no training
                b = d["train"][0]
                s2.train()(*(b[k].to(cfg.device) for k in ("input_ids", "attention_mask", "token_type_ids")))
        w1a4.append(s2)
        res.append(evaluate(s2, d["dev"], cfg.task))
    run.times["step 2"] = time.perf_counter() - t0
    run.accs_w = [r["metric"] for r in res]
    run.accs["step 2: Sorbet W1A4 (ANN)"] = float(np.mean(run.accs_w))
    return w1a4, res


def _spiking_eval(model: Any, d: dict[str, Any], cfg: Config) -> dict[str, Any]:
    import torch

    from .data import glue_metric
    from .spiking import SpikingSorbet

    snn = SpikingSorbet(model, per_step=False)  # spike counts of the IF neurons, one product per layer
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
    # the step-by-step simulation (every time step's synaptic input computed separately, T times the cost) on the
    # longest dev examples (the last rows of the last length-sorted batch): the window-summed logits bit for bit
    b, rows = d["dev"][-1], slice(-PER_STEP_EXAMPLES, None)
    steps = SpikingSorbet(model, per_step=True)(b["input_ids"][rows].to(dev), b["attention_mask"][rows].to(dev),
                                                b["token_type_ids"][rows].to(dev))
    per_step_same = bool(torch.equal(steps.logits.cpu(), logits[-1][rows]))
    lg = torch.cat(logits)[torch.argsort(torch.cat(index))]
    pred = (lg[:, 0] if lg.shape[-1] == 1 else lg.argmax(-1)).numpy()
    return {"logits": lg, "predictions": pred, "metric": glue_metric(cfg.task, pred, d["dev_labels"]), "stats": stats,
            "per_step_same": per_step_same, "per_step_n": len(b["index"][rows])}


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


def spiking_checks(run: Run, model: Any, ann: dict[str, Any]) -> dict[str, Any]:
    """The exact spiking inference of the first W1A4 model against its ANN evaluation ``ann``, and the query/key
    gradients with and without STEs. Returns the spiking run (``snn``) and the measured quantities."""
    t0 = time.perf_counter()
    snn = _spiking_eval(model, run.d, run.cfg)
    run.times["spiking inference"] = time.perf_counter() - t0
    run.accs["Sorbet spiking (T=16)"] = snn["metric"]
    same = float(np.mean(snn["predictions"] == ann["predictions"]))
    ann_lg = ann["logits"]
    rel = float(((snn["logits"] - ann_lg).abs() / ann_lg.abs().clamp_min(1e-6)).max())
    b0 = run.d["train"][0]
    g_ste, g_rel = _qk_grads(model, b0, True), _qk_grads(model, b0, False)
    return {"snn": snn, "same": same, "rel": rel, "g_ste": g_ste, "g_rel": g_rel, "n_dev": len(snn["predictions"])}


def train_baselines(run: Run, teacher: Any) -> dict[str, float]:
    """When ``cfg.baselines``: the BiT-like W1A4 (softmax, LayerNorm, GELU) distilled from the teacher and the W1A4
    Sorbet trained on labels only; their dev metrics (``bit``, ``nokd``), else nothing."""
    from .distill import evaluate

    cfg, d, seed = run.cfg, run.d, run.seed
    extra: dict[str, float] = {}
    if not cfg.baselines:
        return extra
    t0 = time.perf_counter()
    bit = run.convert(teacher, "w1a4", attention="softmax", norm="layernorm", activation="gelu",
                      pooler_activation="tanh", pooling=cfg.pooling, pow2_step=False, **run.qopt)
    _kd(teacher, bit, d, cfg, cfg.kd2_lr, cfg.kd2_epochs, seed, "baseline: BiT-like W1A4 (softmax, LayerNorm)")
    extra["bit"] = evaluate(bit, d["dev"], cfg.task)["metric"]
    run.accs["baseline: BiT-like W1A4 (softmax, LayerNorm, GELU), KD from teacher"] = extra["bit"]
    nokd = run.convert(teacher, "w1a4", **run.sopt)
    _kd(None, nokd, d, cfg, cfg.kd2_lr, cfg.kd1_epochs + cfg.kd2_epochs, seed, "ablation: W1A4 on labels only",
        kd=False)
    extra["nokd"] = evaluate(nokd, d["dev"], cfg.task)["metric"]
    run.accs["ablation: Sorbet W1A4 trained on labels only (no KD)"] = extra["nokd"]
    run.times["baselines"] = time.perf_counter() - t0
    return extra


def _constant_metric(task: str, train_labels: Any, dev_labels: Any) -> float:
    """The dev metric of predicting the training set's majority class everywhere (NaN for regression)."""
    from .data import GLUE_TASKS, glue_metric

    if GLUE_TASKS[task]["num_labels"] == 1:
        return math.nan
    values, counts = np.unique(np.asarray(train_labels), return_counts=True)
    return glue_metric(task, np.full(len(dev_labels), values[np.argmax(counts)]), dev_labels)


def _glue_row(run: Run, cpu_s: float, wall_s: float) -> dict[str, Any]:
    """One row of the per-task GLUE table from a finished pipeline ``run``."""
    import torch

    task, d = run.cfg.task, run.d
    train_labels = torch.cat([b["labels"] for b in d["train"]]).numpy()
    step1 = next((v for k, v in run.accs.items() if k.startswith("step 1")), math.nan)
    w1a4 = float(np.mean(run.accs_w))
    paper = PAPER_GLUE.get(task, {})
    return {"task": task, "metric": run.spec["metric"], "train examples": d["n_train"],
            "dev examples": len(d["dev_labels"]),
            "constant prediction": _constant_metric(task, train_labels, d["dev_labels"]),
            "teacher (ours)": run.acc_t, "step 1: FP PTsoftmax + BSPN (ours)": step1,
            "Sorbet W1A4 (ours)": w1a4, "W1A4 - teacher": w1a4 - run.acc_t,
            "paper: Sorbet": NOT_READ if paper.get("sorbet") is None else paper["sorbet"],
            "paper: BERT": NOT_READ if paper.get("bert") is None else paper["bert"],
            "CPU (s)": cpu_s, "wall (s)": wall_s}


def glue_tasks(run: Run) -> list[dict[str, Any]]:
    """The per-task GLUE table (issue 47): for every task of ``cfg.glue_tasks`` other than ``cfg.task``, the same
    pipeline (teacher fine-tuning -> KD step 1 -> KD step 2 to W1A4, one seed, no baselines, no spiking run: the
    spiking model equals the W1A4 ANN, claims Q3/Q4 of the main task) on ``cfg.glue_n_train`` training examples.
    Returns one row per task (:func:`_glue_row`); the main task's row is added by :func:`add_glue_table`."""
    import dataclasses
    import gc

    cfg = run.cfg
    rows = []
    for task in cfg.glue_tasks:
        if task == cfg.task:
            continue
        sub = dataclasses.replace(cfg, task=task, n_train=cfg.glue_n_train, n_seeds=1, baselines=False,
                                  glue_tasks=())
        c0, t0 = time.process_time(), time.perf_counter()
        r = load(sub, run.seed)
        teacher = train_teacher(r)
        distill(r, teacher, method=True)
        rows.append(_glue_row(r, time.process_time() - c0, time.perf_counter() - t0))
        del r, teacher
        gc.collect()
    return rows


def add_glue_table(rep: Report, run: Run, rows: list[dict[str, Any]], main_cpu_s: float, main_wall_s: float) -> None:
    """The per-task table (the main task's row, its whole run's CPU and wall time, then :func:`glue_tasks`' rows)
    and its note; nothing without rows."""
    if not rows:
        return
    cfg = run.cfg
    rep.add_table("GLUE tasks: the same pipeline per task (teacher -> PTsoftmax/BSPN -> W1A4), dev metric; "
                  "paper columns: the Sorbet paper's main GLUE table", [_glue_row(run, main_cpu_s, main_wall_s)] + rows)
    rep.notes.append(
        f"GLUE per task ({', '.join([cfg.task] + [r['task'] for r in rows])}): teacher = the first "
        f"{cfg.num_layers} layer(s) of {cfg.encoder}; {cfg.glue_n_train} training examples per other task (the "
        f"main task: {run.d['n_train']}, with {cfg.n_seeds} step-2 seed(s), its spiking run and baselines in its "
        "CPU time), one step-2 seed and no baselines for the others. The paper's per-task numbers (its main GLUE "
        "table: Sorbet and BERT) were not readable here and are marked 'not read'; no claim is asserted on these "
        "tasks (the spec sets thresholds for SST-2 only); 'W1A4 - teacher' is a diagnostic beside C1's gap.")


def add_accuracy_tables(rep: Report, run: Run) -> None:
    """The dev-metric table of every model (with the paper's teacher and the majority class on SST-2), the step-2
    seeds, and the note of a non-SST-2 smoke run."""
    cfg, metric, d = run.cfg, run.metric, run.d
    context = ([{"model": "paper's BERT-base teacher (BiT Table 1, recalled in spec)", metric: BERT_BASE_SST2},
                {"model": "majority class", metric: MAJORITY_SST2_DEV}] if run.sst2 else [])
    rep.add_table(f"{cfg.task.upper()} {metric} ({len(d['dev_labels'])} dev examples); teacher = {cfg.encoder} "
                  f"(first {cfg.num_layers} layer(s)) fine-tuned on {d['n_train']} training examples",
                  [{"model": k, metric: v} for k, v in run.accs.items()] + context)
    if cfg.n_seeds > 1:
        rep.add_table("step 2 seeds", [{"seed": run.seed + k, f"W1A4 {metric}": a} for k, a in enumerate(run.accs_w)])
    if not run.sst2:
        rep.notes.append(f"{cfg.task.upper()}: a smoke run of the same pipeline; the spec sets no thresholds for "
                         "this task, so only the mechanism claims are asserted.")


def add_claims(rep: Report, run: Run, checks: dict[str, Any], extra: dict[str, float]) -> None:
    """The accuracy and mechanism claims of the run (``checks``: :func:`spiking_checks`, ``extra``:
    :func:`train_baselines`)."""
    _claims(rep, run.cfg, run.acc_t, run.accs_w, extra, checks["same"], checks["rel"], checks["g_ste"],
            checks["g_rel"], checks["n_dev"], run.sst2)
    snn = checks["snn"]
    rep.notes.append(f"Spiking inference: the IF neurons' spike counts over the T=16 window drive one product per "
                     f"layer on the whole dev set; the step-by-step simulation (each step's synaptic input computed "
                     f"separately) on the {snn['per_step_n']} longest dev examples gives the same logits bit for bit: "
                     f"{'yes' if snn['per_step_same'] else 'NO'}.")


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


def add_energy(rep: Report, run: Run, snn: dict[str, Any]) -> dict[str, Any]:
    """The energy estimate of the spiking run ``snn`` against the dense FP model of the same sizes (claim E1), its
    tables and note. Returns the :func:`icml25.sorbet.energy.energy_report`."""
    from .energy import energy_report

    cfg, hf, n_dev = run.cfg, run.hf, len(run.d["dev_labels"])
    e = energy_report(snn["stats"], run.d["dev_lengths"], hidden=hf.config.hidden_size,
                      ffn=hf.config.intermediate_size, layers=cfg.num_layers, heads=hf.config.num_attention_heads,
                      num_labels=run.spec["num_labels"])
    need = PAPER_ENERGY_RATIO_BERT * (1 - ENERGY_TOLERANCE)
    top = sorted(e["rows"], key=lambda row: -row["energy / sentence (nJ)"])[:3]
    total_nj = e["e_snn"] * 1e9
    # fails if: the spiking W1A4 model does not save the paper's factor against the dense full-precision model of
    # the same sizes at the measured spike counts (the signed codes' +8 offset alone costs ~8 spikes per activation)
    rep.add_claim("E1", "Sorbet saves 27.16x energy against BERT: E(dense FP model of the same sizes, MACs x 4.6 pJ) "
                  f"/ E(spiking W1A4, spikes x fan-out x 0.9 pJ + shifts), {n_dev} dev sentences",
                  PAPER_ENERGY_RATIO_BERT, e["ratio"], ">=", round(need, 3), kind="paper", scale=Scale.FULL,
                  unit="x", headline=True, source="abstract",
                  note=f"our trained model (first {cfg.num_layers} layer(s) of {cfg.encoder}; the paper: BERT-base); "
                       f"mean firing rate {e['mean_rate']:.3f}; tolerance 10 %; largest populations: "
                       + ", ".join(f"{row['population']} {100 * row['energy / sentence (nJ)'] / total_nj:.0f} %"
                                   for row in top))
    rep.add_table("spiking populations on the dev set (per sentence; E_AC = 0.9 pJ)", e["rows"])
    rep.add_table("energy per sentence (paper: 27.16x lower than BERT, claim E1)",
                  [{"model": "FP teacher (MACs x 4.6 pJ)", "energy (uJ)": e["e_ann"] * 1e6, "ops": e["macs"]},
                   {"model": "Sorbet SNN (SOPs x 0.9 pJ + shifts/adds)", "energy (uJ)": e["e_snn"] * 1e6,
                    "ops": e["sops"]},
                   {"model": "ratio ANN / SNN (ours)", "energy (uJ)": e["ratio"], "ops": math.nan},
                   {"model": "ratio vs BERT (paper, abstract)", "energy (uJ)": PAPER_ENERGY_RATIO_BERT,
                    "ops": math.nan}])
    rep.notes.append(f"Energy: ours ANN/SNN = {e['ratio']:.2f}x at mean firing rate {e['mean_rate']:.3f} (signed "
                     "4-bit codes are offset by +8, so every signed activation costs ~8 spikes); the paper's 27.16x "
                     "uses its own per-operation energies, which we could not read.")
    return e


def add_times_figures(rep: Report, run: Run, e: dict[str, Any]) -> None:
    """The wall-time note and the figures (dev metrics, firing rates)."""
    rep.notes.append("Wall time (s): " + ", ".join(f"{k} {v:.1f}" for k, v in run.times.items())
                     + f", total {time.perf_counter() - run.t_start:.1f}")
    rep.add_figure("accuracy", _figure_acc(run.accs, run.metric, run.sst2))
    rep.add_figure("firing_rates", _figure_rates(e["rows"]))


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
