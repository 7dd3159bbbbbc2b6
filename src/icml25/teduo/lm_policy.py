"""TEDUO step 3 with a pretrained LLM (§4.3): LoRA fine-tuning of an instruction model on D_SFT as a
goal-conditioned policy, run closed loop (re-queried at every step with the current textual state).

Prompt = the model's chat template with a system line (environment and action vocabulary) and a user turn
``Goal: <goal>. Observation: <text state>.``; target = the action word, loss on the answer tokens only.
Decoding is constrained to the four action words (argmax of their first-token logits); the unconstrained argmax is
checked too and counted as invalid when it is not one of them (the invalid-action rate of the paper).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from icml25.core.validation import check_int, check_positive, check_probability

from .babyai import ACTIONS, SymbolicState, describe_state, parse_goal
from .sft import SFTExample

__all__ = ["LoRAPolicy", "policy_messages", "loss_converged", "window_means"]

SYSTEM = ("You control an agent in a grid room. Reply with one action: left, right, forward or pickup. "
          "Positions are steps forward and to the left/right of the agent.")


def policy_messages(state: SymbolicState, goal: str) -> list[dict[str, str]]:
    """Chat messages of one policy query."""
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"Goal: {parse_goal(goal).text}. Observation: {describe_state(state)}."}]


def window_means(losses: Sequence[float], window: int) -> list[float]:
    """Mean training loss of consecutive windows of ``window`` steps (the last, partial window dropped).

    Examples
    --------
    >>> window_means([4, 2, 3, 1, 9], 2)
    [3.0, 2.0]
    """
    window = check_int(window, "window", low=1)
    return [float(sum(losses[i:i + window]) / window) for i in range(0, len(losses) - window + 1, window)]


def loss_converged(losses: Sequence[float], window: int, tol: float) -> bool:
    """The convergence test of :class:`LoRAPolicy`: at least two full windows, and the mean loss of the last
    ``window`` steps has fallen by less than a fraction ``tol`` from the mean of the ``window`` steps before
    (tested only at window boundaries).

    Examples
    --------
    >>> loss_converged([1.0] * 4, 2, 0.05), loss_converged([2.0, 2.0, 1.0, 1.0], 2, 0.05)
    (True, False)
    """
    window = check_int(window, "window", low=1)
    n = len(losses)
    if n < 2 * window or n % window:
        return False
    last = sum(losses[n - window:]) / window
    prev = sum(losses[n - 2 * window:n - window]) / window
    return last >= (1.0 - tol) * prev


class _PolicyPairs(Sequence):
    """(prompt ids, answer ids) of the SFT examples, tokenized when drawn; the answer is the action word and the
    chat model's end-of-turn token (SmolLM2: ``<|im_end|>``, Llama-3-Instruct: ``<|eot_id|>``)."""

    def __init__(self, policy: LoRAPolicy, examples: Sequence[SFTExample]) -> None:
        tok = policy.lm.tokenizer
        self.policy, self.examples, self.tok = policy, examples, tok
        self.end = tok.encode(tok.eos_token or "<|im_end|>", add_special_tokens=False)

    def __len__(self) -> int:
        return len(self.examples)

    def __getitem__(self, i: Any) -> tuple[list[int], list[int]]:
        e = self.examples[i]
        return (self.tok.encode(self.policy._prompt(e.state, e.goal), add_special_tokens=False),
                self.tok.encode(ACTIONS[e.action], add_special_tokens=False) + self.end)


class LoRAPolicy:
    """A pretrained causal LM (an :class:`icml25.llm.HFModel`) fine-tuned with LoRA (``peft``) as the policy.

    Parameters
    ----------
    model : icml25.llm.HFModel
        E.g. ``load_model("pretrained:smollm2-135m-instruct")`` (needs a chat template).
    r, alpha : int
        LoRA rank and scaling (spec: 16, 32).
    lr : float
        AdamW learning rate (2e-4).
    steps, batch_size : int
        Optimiser steps (the most, when ``converge_window`` is set) and examples per step.
    random_state : int
    converge_window : int
        0: train ``steps`` steps. > 0: stop early once the training loss has converged (:func:`loss_converged`:
        the mean loss of the last ``converge_window`` steps fell by less than ``converge_tol`` relative to the
        window before); ``converged_`` says whether it did within ``steps``.
    converge_tol : float
        Relative improvement below which the loss counts as converged.
    """

    def __init__(self, model: Any, r: int = 16, alpha: int = 32, lr: float = 2e-4, steps: int = 100,
                 batch_size: int = 8, random_state: int = 0, converge_window: int = 0, converge_tol: float = 0.02):
        if not hasattr(model, "model") or not hasattr(model, "tokenizer"):
            raise TypeError(f"model must be an icml25.llm.HFModel, got {type(model).__name__}")
        self.lm = model
        self.r = check_int(r, "r", low=1)
        self.alpha = check_int(alpha, "alpha", low=1)
        self.lr = check_positive(lr, "lr")
        self.steps = check_int(steps, "steps", low=0)
        self.batch_size = check_int(batch_size, "batch_size", low=1)
        self.random_state = check_int(random_state, "random_state", low=0)
        self.converge_window = check_int(converge_window, "converge_window", low=0)
        self.converge_tol = check_probability(converge_tol, "converge_tol")
        self.converged_: bool | None = None
        tok = model.tokenizer
        self.action_ids = [tok.encode(a, add_special_tokens=False)[0] for a in ACTIONS]
        if len(set(self.action_ids)) != len(ACTIONS):
            raise ValueError("the tokenizer gives two actions the same first token; constrained decoding needs "
                             "distinct first tokens")
        self.net = model.model
        self.losses_: list[float] = []
        self.n_invalid = 0
        self.tokens_trained_ = 0

    def _prompt(self, state: SymbolicState, goal: str) -> str:
        return self.lm.chat_prompt(policy_messages(state, goal))

    def fit(self, examples: Sequence[SFTExample], desc: str = "LoRA fine-tuning") -> LoRAPolicy:
        """LoRA SFT on (prompt, action word) pairs, loss on the answer tokens (action word + end of turn), by
        :func:`icml25.llm.finetune` (uniformly drawn batches, constant learning rate, no clipping), for ``steps``
        steps or until the loss has converged (``converge_window``)."""
        from icml25.llm import finetune

        if not examples:
            raise ValueError("examples must be a non-empty list of SFTExample (build_sft_dataset)")
        if not self.steps:
            return self
        w, tol = self.converge_window, self.converge_tol
        stop = (lambda losses: loss_converged(losses, w, tol)) if w else None
        out = finetune(self.lm, _PolicyPairs(self, examples), steps=self.steps, lr=self.lr, batch_size=self.batch_size,
                       r=self.r, alpha=self.alpha, target_modules=["q_proj", "k_proj", "v_proj", "o_proj"], eos=False,
                       sampler="uniform", min_lr_ratio=1.0, weight_decay=0.01, grad_clip=0.0, seed=self.random_state,
                       progress=True, desc=desc, stop=stop)
        self.converged_ = loss_converged(out.losses, w, tol) if w else None
        self.net = out.model
        self.losses_ += out.losses
        self.tokens_trained_ += out.tokens
        return self

    def act_batch(self, states: Sequence[SymbolicState], goals: Sequence[str], rng: Any = None) -> list[int]:
        """Constrained greedy action per (state, goal); unconstrained invalid argmaxes are counted."""
        import torch

        tok = self.lm.tokenizer
        seqs = [tok.encode(self._prompt(s, g), add_special_tokens=False) for s, g in zip(states, goals)]
        width = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), width), self.lm.pad_id)
        mask = torch.zeros((len(seqs), width), dtype=torch.long)
        for k, s in enumerate(seqs):  # left padding: every prompt ends at the last position
            ids[k, width - len(s):] = torch.tensor(s)
            mask[k, width - len(s):] = 1
        dev = next(self.net.parameters()).device
        with torch.inference_mode():
            pos = (mask.cumsum(-1) - 1).clamp(min=0)
            logits = self.net(input_ids=ids.to(dev), attention_mask=mask.to(dev),
                              position_ids=pos.to(dev)).logits[:, -1].float().cpu()
        free = logits.argmax(-1).tolist()
        self.n_invalid += sum(f not in self.action_ids for f in free)
        return logits[:, self.action_ids].argmax(-1).tolist()
