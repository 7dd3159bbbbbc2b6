"""The small MCQ reader trained here (spec §6): a :class:`icml25.llm.TinyGPT` on the synthetic knowledge task.

It reads every option in its prompt and answers with a letter, so, like an LLM, its answer depends on which
options it is shown. Training is supervised on the answer letter only: cross-entropy over the ``k`` valid letter
logits at the position after ``"="``, Adam, early-stopped once its 15-option accuracy on fresh questions reaches a
target.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from icml25.core.progress import progress
from icml25.llm import CharTokenizer, TinyGPT, TinyGPTConfig

from .answerers import LMAnswerer
from .knowledge_task import TASK_OPTION_FORMAT, TASK_SEPARATOR, TASK_TEMPLATE, KnowledgeTask
from .mcq import MCQ, answer_indices

__all__ = ["TinyMCQReader"]


class TinyMCQReader(LMAnswerer):
    """A TinyGPT answerer for :class:`~icml25.croq.knowledge_task.KnowledgeTask` questions.

    Parameters
    ----------
    task : KnowledgeTask
        The fact table (its symbols form the character vocabulary).
    n_layer, n_head, n_embd : int
        Transformer size (spec: 2 layers, 4 heads, width 64).
    seed : int
        Initialisation seed.

    Attributes
    ----------
    lm : TinyGPT
        The language model (``lm.module`` is the torch network).
    history_ : list of dict
        ``{"step", "loss", "acc15"}`` at each evaluation during :meth:`train`.
    """

    def __init__(self, task: KnowledgeTask, n_layer: int = 2, n_head: int = 4, n_embd: int = 64,
                 seed: int = 0) -> None:
        self.task = task
        tok = CharTokenizer.from_texts(["".join(task.symbols())])
        cfg = TinyGPTConfig(n_layer=n_layer, n_head=n_head, n_embd=n_embd, block_size=64, dropout=0.0)
        super().__init__(TinyGPT(cfg, tok, seed=seed), template=TASK_TEMPLATE, option_format=TASK_OPTION_FORMAT,
                         separator=TASK_SEPARATOR, letter_prefix="", batch_size=512)
        self.history_: list[dict[str, Any]] = []

    def _encode(self, mcqs: list[MCQ]) -> tuple[torch.Tensor, torch.Tensor]:
        """Right-padded ids ``(B, T)`` exactly as TinyGPT sees a prompt (leading ``<|eot|>``) and last positions."""
        tok = self.lm.tokenizer
        seqs = [[tok.eot_id, *tok.encode(p)] for p in self.prompts(mcqs)]
        T = max(len(s) for s in seqs)
        x = torch.full((len(seqs), T), tok.pad_id, dtype=torch.long)
        for i, s in enumerate(seqs):
            x[i, :len(s)] = torch.tensor(s)
        return x, torch.tensor([len(s) - 1 for s in seqs])

    def letter_logits_torch(self, mcqs: list[MCQ]) -> torch.Tensor:
        """Differentiable letter logits ``(B, 15)`` with ``-inf`` beyond each question's option count."""
        dev = self.lm.device  # the network's device (cpu, cuda after ``lm.to``): every index tensor goes there
        x, last = (t.to(dev) for t in self._encode(mcqs))
        rows, letters = torch.arange(len(mcqs), device=dev), torch.from_numpy(self.letter_ids).to(dev)
        logits = self.lm.module(x)[rows, last][:, letters]
        k = torch.tensor([q.n_options for q in mcqs], device=dev)
        return logits.masked_fill(torch.arange(logits.shape[1], device=dev)[None, :] >= k[:, None], float("-inf"))

    def accuracy(self, mcqs: list[MCQ]) -> float:
        """Fraction of ``mcqs`` answered correctly."""
        return float((self.answer(mcqs).answers == answer_indices(mcqs)).mean())

    def train(self, max_steps: int = 3000, batch_size: int = 64, lr: float = 1e-3, eval_every: int = 250,
              target_acc: float = 0.6, n_eval: int = 400, n_options: tuple[int, int] = (2, 15),
              seed: int = 0, show_progress: bool = True) -> TinyMCQReader:
        """Train on fresh questions until the 15-option accuracy on ``n_eval`` fresh questions reaches
        ``target_acc`` (checked every ``eval_every`` steps) or ``max_steps`` is reached.

        Parameters
        ----------
        max_steps, batch_size, lr, eval_every : int, int, float, int
            Adam steps, questions per step, learning rate, evaluation period.
        target_acc : float
            Early-stopping accuracy on 15-option questions.
        n_eval : int
            Fresh 15-option questions per evaluation.
        n_options : (low, high)
            Option counts drawn uniformly per training question.
        seed : int
            Seed of the question stream.
        """
        rng = np.random.default_rng(seed)
        eval_qs = self.task.sample(n_eval, len(self.letter_ids), np.random.default_rng(seed + 10_000))
        model = self.lm.module
        opt = torch.optim.Adam(model.parameters(), lr=lr)
        self.history_ = []
        running = []
        steps = progress(range(1, int(max_steps) + 1), "MCQ reader", total=int(max_steps)) if show_progress \
            else range(1, int(max_steps) + 1)
        for step in steps:
            batch = self.task.sample(batch_size, n_options, rng)
            model.train()
            logits = self.letter_logits_torch(batch)
            loss = F.cross_entropy(logits, torch.from_numpy(answer_indices(batch)).to(logits.device))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            model.eval()
            running.append(float(loss.detach()))
            if step % eval_every == 0 or step == max_steps:
                acc = self.accuracy(eval_qs)
                self.history_.append({"step": step, "loss": float(np.mean(running)), "acc15": acc})
                running = []
                if acc >= target_acc:
                    break
        model.eval()
        return self
