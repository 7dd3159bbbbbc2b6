"""Fine-tuning, evaluation and the multi-step knowledge distillation of Sorbet (spec §2, Algorithm 3)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from icml25.core.progress import progress
from icml25.core.validation import check_int, check_option, check_positive, check_real

from .data import glue_metric

__all__ = ["load_teacher", "fine_tune", "evaluate", "DistillTrainer", "multi_step", "kd_loss"]

_TEACHER_HINT = ("the paper's teacher is BERT-base: save 'bert-base-uncased' (transformers save_pretrained) on a "
                 "machine with internet and pass --set encoder=hf:/path/to/bert-base-uncased, or use "
                 "pretrained:all-minilm-l6-v2")


def load_teacher(spec: str = "pretrained:all-minilm-l6-v2", num_labels: int = 2, num_layers: int | None = None,
                 seed: int = 0) -> tuple[Any, Any]:
    """A pretrained BERT-family encoder with a fresh classification head, and its WordPiece tokenizer.

    Parameters
    ----------
    spec : str
        An icml25 pretrained encoder (``"pretrained:all-minilm-l6-v2"``: 6 layers, hidden 384, 12 heads) or a
        local transformers folder.
    num_labels : int
        Classes (1 = regression).
    num_layers : int, optional
        Keep only the first ``num_layers`` encoder layers (a shallower model for quick runs).
    seed : int
        Seed of the classification head's initialisation.

    Returns
    -------
    (tokenizer, transformers.BertForSequenceClassification)
    """
    from icml25.llm.transformers_models import load_transformers

    check_int(num_labels, "num_labels", low=1)
    if num_layers is not None:
        check_int(num_layers, "num_layers", low=1)
    if not isinstance(spec, str) or not spec:
        raise TypeError(f"spec must be 'pretrained:<name>' or a folder path, got {type(spec).__name__}")
    kw: dict[str, Any] = {"num_labels": num_labels}
    if num_layers is not None:
        kw["num_hidden_layers"] = check_int(num_layers, "num_layers", low=1)
    # seeded right before the model is built (the fresh head's initialisation); its "newly initialized" note is
    # expected, not a warning
    return load_transformers(spec, "sequence-classification", field="spec", hint=_TEACHER_HINT, model_type="bert",
                             seed=seed, quiet=True, **kw)


def _device(model: Any) -> torch.device:
    """The device of the model's parameters."""
    p = next(iter(model.parameters()), None)
    return p.device if p is not None else torch.device("cpu")


def _forward(model: Any, b: dict[str, Any], hidden: bool = False) -> Any:
    kw = {"output_hidden_states": True} if hidden and not hasattr(model, "options") else {}
    dev = _device(model)
    return model(input_ids=b["input_ids"].to(dev), attention_mask=b["attention_mask"].to(dev),
                 token_type_ids=b["token_type_ids"].to(dev), **kw)


def _optimizer(model: Any, lr: float, step_lr: float, weight_decay: float, total: int,
               train_word_embeddings: bool = True) -> tuple[Any, Any]:
    decay, no_decay, steps = [], [], []
    for name, p in model.named_parameters():
        if "word_embeddings" in name and not train_word_embeddings:
            p.requires_grad_(False)
        if not p.requires_grad:
            continue
        if name.endswith("alpha"):
            steps.append(p)
        elif p.dim() < 2 or "norm" in name.lower() or name.endswith("move"):
            no_decay.append(p)
        else:
            decay.append(p)
    groups = [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    if steps:
        groups.append({"params": steps, "weight_decay": 0.0, "lr": step_lr})
    opt = torch.optim.AdamW(groups, lr=lr)
    warm = max(1, int(0.1 * total))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (total - s) / max(1, total - warm))))
    return opt, sched


def _label_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    labels = labels.to(logits.device)
    if logits.shape[-1] == 1:
        return F.mse_loss(logits[:, 0], labels.float())
    return F.cross_entropy(logits, labels)


def fine_tune(model: Any, train: list[dict[str, Any]], epochs: int = 1, lr: float = 5e-5, weight_decay: float = 0.01,
              seed: int = 0, desc: str = "fine-tune", train_word_embeddings: bool = True) -> list[float]:
    """Standard fine-tuning on labels (step 0 of the pipeline): AdamW, 10 % linear warm-up, linear decay.

    Parameters
    ----------
    model : nn.Module
        A transformers or Sorbet classifier.
    train : list of dict
        Batches from :func:`icml25.sorbet.data.batches` (re-shuffled each epoch with ``seed + epoch``).
    epochs, lr, weight_decay, seed
        Optimisation settings.
    train_word_embeddings : bool
        False freezes the word-embedding table (30k x C for WordPiece models: most of the optimiser's cost).

    Returns
    -------
    list of float
        Training loss per step.
    """
    check_int(epochs, "epochs", low=1)
    check_positive(lr, "lr")
    check_real(weight_decay, "weight_decay", low=0.0)
    torch.manual_seed(seed)
    total = epochs * len(train)
    opt, sched = _optimizer(model, lr, lr, weight_decay, total, train_word_embeddings)
    model.train()
    losses = []
    rng = np.random.default_rng(seed)
    for _ in range(epochs):
        for j in progress(rng.permutation(len(train)), desc, total=len(train)):
            b = train[j]
            loss = _label_loss(_forward(model, b).logits, b["labels"])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            losses.append(float(loss.detach()))
    return losses


@torch.inference_mode()
def evaluate(model: Any, data: list[dict[str, Any]], task: str = "sst2") -> dict[str, Any]:
    """Dev metric, predictions and logits (in the original example order) of ``model`` on ``data`` batches."""
    check_option(task, "task", ("sst2", "mrpc", "rte", "cola", "stsb"))
    if not isinstance(data, list) or not data:
        raise ValueError(f"data must be a non-empty list of batches from batches(), got {type(data).__name__}")
    model.eval()
    logits, index, labels = [], [], []
    for b in data:
        logits.append(_forward(model, b).logits.float().cpu())
        index.append(b["index"])
        labels.append(b["labels"])
    order = torch.argsort(torch.cat(index))
    lg, y = torch.cat(logits)[order], torch.cat(labels)[order]
    pred = lg[:, 0] if lg.shape[-1] == 1 else lg.argmax(-1)
    return {"metric": glue_metric(task, pred.numpy(), y.numpy()), "predictions": pred.numpy(), "logits": lg}


def kd_loss(student: Any, teacher: Any, mask: torch.Tensor, temperature: float = 1.0, logits: bool = True,
            hidden: bool = True) -> torch.Tensor:
    r"""Distillation loss of one batch: soft cross-entropy of the logits plus the MSE of every hidden state.

    :math:`L = \mathrm{CE}(\mathrm{softmax}(z_T/\tau), z_S/\tau) + \sum_{l=0}^{N} \mathrm{MSE}(h_l^S, h_l^T)`
    (MSE on the logit for regression), the MSE over real tokens only. ``student`` / ``teacher`` are the model
    outputs (``.logits``, ``.hidden_states``).
    """
    check_positive(temperature, "temperature")
    loss = torch.zeros((), device=student.logits.device)
    if logits:
        zs, zt = student.logits, teacher.logits
        if zs.shape[-1] == 1:
            loss = loss + F.mse_loss(zs, zt)
        else:
            p = F.softmax(zt / temperature, -1)
            loss = loss - (p * F.log_softmax(zs / temperature, -1)).sum(-1).mean()
    if hidden:
        m = mask.to(device=student.hidden_states[0].device, dtype=torch.float32).unsqueeze(-1)
        denom = m.sum() * student.hidden_states[0].shape[-1]
        for hs, ht in zip(student.hidden_states, teacher.hidden_states):
            loss = loss + (((hs - ht) ** 2) * m).sum() / denom
    return loss


@dataclass
class DistillTrainer:
    """One teacher -> student step of Sorbet's multi-step knowledge distillation.

    Parameters
    ----------
    teacher, student : nn.Module
        Classifiers with the same number of layers (the student usually from :func:`convert` of the teacher).
    temperature : float
        Softmax temperature of the logit loss (1 in the paper's code).
    logits, hidden : bool
        Which terms of :func:`kd_loss` to use; with both False the student trains on labels only (the no-KD
        ablation).
    labels : bool
        Add the cross-entropy on the labels.
    lr, step_lr, weight_decay : float
        Learning rate of the weights, of the quantiser step sizes (1e-4 in the paper's code), decoupled decay.
    epochs, seed : int
    train_word_embeddings : bool
        False keeps the latent word-embedding table fixed (its binarisation is still applied).

    Examples
    --------
    >>> DistillTrainer(teacher=None, student=None, epochs=2).epochs
    2
    """

    teacher: Any
    student: Any
    temperature: float = 1.0
    logits: bool = True
    hidden: bool = True
    labels: bool = False
    lr: float = 5e-4
    step_lr: float = 1e-4
    weight_decay: float = 0.01
    epochs: int = 1
    seed: int = 0
    train_word_embeddings: bool = True
    losses: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        check_positive(self.temperature, "temperature")
        check_positive(self.lr, "lr")
        check_positive(self.step_lr, "step_lr")
        check_real(self.weight_decay, "weight_decay", low=0.0)
        check_int(self.epochs, "epochs", low=1)
        check_int(self.seed, "seed", low=0)
        if not (self.logits or self.hidden or self.labels):
            raise ValueError("at least one of logits, hidden, labels must be True")

    def fit(self, train: list[dict[str, Any]], desc: str = "distill") -> DistillTrainer:
        """Train the student on the batches ``train`` for ``epochs`` epochs; returns ``self``."""
        torch.manual_seed(self.seed)
        total = self.epochs * len(train)
        opt, sched = _optimizer(self.student, self.lr, self.step_lr, self.weight_decay, total,
                                self.train_word_embeddings)
        if self.teacher is not None:
            self.teacher.eval()
        self.student.train()
        rng = np.random.default_rng(self.seed)
        need_teacher = self.logits or self.hidden
        for _ in range(self.epochs):
            for j in progress(rng.permutation(len(train)), desc, total=len(train)):
                b = train[j]
                out = _forward(self.student, b, hidden=True)
                loss = torch.zeros((), device=_device(self.student))
                if need_teacher:
                    with torch.no_grad():
                        t = _forward(self.teacher, b, hidden=True)
                    loss = kd_loss(out, t, b["attention_mask"], self.temperature, self.logits, self.hidden)
                if self.labels:
                    loss = loss + _label_loss(out.logits, b["labels"])
                opt.zero_grad()
                loss.backward()
                opt.step()
                sched.step()
                self.losses.append(float(loss.detach()))
        return self


def multi_step(teacher: Any, train: list[dict[str, Any]], stages: tuple[str, ...] = ("ptsoftmax_bspn", "w1a4"),
               epochs: tuple[int, ...] = (1, 1), lr: tuple[float, ...] = (5e-4, 5e-4), seed: int = 0,
               train_word_embeddings: bool = True, **options: Any) -> list[Any]:
    """Sorbet's chain of distillation steps: each student is :func:`convert` of its teacher and learns from it.

    Parameters
    ----------
    teacher : nn.Module
        The fine-tuned full-precision classifier (transformers BERT or Sorbet ``"fp"``).
    train : list of dict
        Training batches.
    stages : tuple of str
        Stages of :func:`convert` in order (default: FP with PTsoftmax/BSPN, then W1A4).
    epochs, lr : tuples
        Per stage.
    seed : int
    train_word_embeddings : bool
        Train the latent word-embedding table in every step.
    **options
        Passed to :func:`convert` (e.g. ``bspn_warmup``).

    Returns
    -------
    list
        The student of every stage (the last one is the final Sorbet model).
    """
    from .model import convert

    if not (len(stages) == len(epochs) == len(lr)) or not stages:
        raise ValueError(f"stages, epochs and lr must have the same non-zero length, got {len(stages)}, "
                         f"{len(epochs)}, {len(lr)}")
    models, t = [], teacher
    for k, (stage, ep, rate) in enumerate(zip(stages, epochs, lr)):
        s = convert(t, stage, **options)
        DistillTrainer(t, s, lr=rate, epochs=ep, seed=seed + k,
                       train_word_embeddings=train_word_embeddings).fit(train, desc=f"KD step {k + 1} ({stage})")
        models.append(s)
        t = s
    return models
