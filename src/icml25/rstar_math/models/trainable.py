"""Trainable policy backends of self-evolution (spec §2.9-§2.10, §7): everything model-specific that
:class:`~icml25.rstar_math.pipeline.self_evolution.SelfEvolution` does, behind one protocol.

A round needs a fresh policy made from the base weights, SFT of it on ``(prompt, response)`` examples, the
policy as a :class:`~icml25.rstar_math.search.policies.StepPolicy` for the next round's search, a PPM built from the
policy (its trunk plus a scalar value head) and trained on :class:`~icml25.rstar_math.pipeline.extraction.PairRecord`
preference pairs, and save/load of the round's policy and PPM. :class:`TinyGPTBackend` does this for the
from-scratch :class:`icml25.llm.TinyGPT` of the CPU reproduction (deep copy, full fine-tuning);
:class:`~icml25.rstar_math.models.lora_backend.LoRABackend` for a pretrained transformers model with LoRA adapters.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ..search.policies import StepPolicy, StepScorer

__all__ = ["TrainableBackend", "TinyGPTBackend", "as_backend", "BACKEND_METHODS"]

#: the methods :class:`SelfEvolution` calls on a backend
BACKEND_METHODS = ("fresh_policy", "train_policy", "step_policy", "make_ppm", "train_ppm", "pair_accuracy",
                   "save_policy", "load_policy", "save_ppm", "load_ppm")


@runtime_checkable
class TrainableBackend(Protocol):
    """What :class:`~icml25.rstar_math.pipeline.self_evolution.SelfEvolution` needs of a policy model family.

    ``policy`` and ``ppm`` are the backend's own model objects (a TinyGPT and a
    :class:`~icml25.rstar_math.models.process_preference_model.PPMModel` for :class:`TinyGPTBackend`); the search only
    sees them through :meth:`step_policy` and the PPM's ``score`` (the :class:`StepScorer` protocol).
    """

    def fresh_policy(self) -> Any:
        """A new policy with the base weights (the base itself is never modified)."""
        ...

    def train_policy(self, policy: Any, examples: Sequence[tuple[str, str]], steps: int, batch_size: int,
                     lr: float, seed: int = 0) -> list[float]:
        """SFT ``policy`` in place on ``(prompt, response)`` pairs (response tokens only); the per-step loss."""
        ...

    def step_policy(self, policy: Any) -> StepPolicy:
        """``policy`` as a step generator for the search."""
        ...

    def make_ppm(self, policy: Any) -> StepScorer:
        """A PPM initialised from ``policy`` (its trunk + a fresh scalar value head); ``policy`` is not changed."""
        ...

    def train_ppm(self, ppm: Any, pairs: Sequence, steps: int, batch_size: int, lr: float, loss: str = "paper",
                  seed: int = 0) -> list[float]:
        """Train ``ppm`` in place with the pairwise loss of Eq. 4 on preference pairs; the per-step loss."""
        ...

    def pair_accuracy(self, ppm: Any, pairs: Sequence) -> float:
        """Share of ``pairs`` whose positive step gets the higher raw score."""
        ...

    def save_policy(self, policy: Any, directory: str | Path) -> Path:
        """Write ``policy`` to ``directory``."""
        ...

    def load_policy(self, directory: str | Path) -> Any:
        """A policy written by :meth:`save_policy`."""
        ...

    def save_ppm(self, ppm: Any, directory: str | Path) -> Path:
        """Write ``ppm`` to ``directory``."""
        ...

    def load_ppm(self, directory: str | Path, policy: Any) -> Any:
        """A PPM written by :meth:`save_ppm` (in eval mode); ``policy`` is the same round's policy."""
        ...


def as_backend(base: Any) -> TrainableBackend:
    """The backend of ``SelfEvolution(base_lm=base)``: ``base`` itself when it implements every method of
    :class:`TrainableBackend`, :class:`TinyGPTBackend` for a TinyGPT, else a ``TypeError`` saying what is missing."""
    present = [m for m in BACKEND_METHODS if callable(getattr(base, m, None))]
    if len(present) == len(BACKEND_METHODS):
        return base
    if present:
        missing = [m for m in BACKEND_METHODS if m not in present]
        raise TypeError(f"base_lm {type(base).__name__} looks like a trainable backend but lacks "
                        f"{', '.join(missing)}; a backend implements {', '.join(BACKEND_METHODS)} "
                        "(see icml25.rstar_math.models.trainable.TrainableBackend)")
    if _is_tiny_gpt(base):
        return TinyGPTBackend(base)
    if hasattr(base, "model") and hasattr(base, "hidden_states"):
        raise TypeError(f"base_lm is a {type(base).__name__} (a transformers model): wrap it in "
                        "icml25.rstar_math.LoRABackend(lm) to fine-tune it with LoRA adapters")
    raise TypeError(f"base_lm must be an icml25.llm.TinyGPT or a trainable backend implementing "
                    f"{', '.join(BACKEND_METHODS)}, got {type(base).__name__}")


def _is_tiny_gpt(lm: Any) -> bool:
    return all(hasattr(lm, a) for a in ("module", "tokenizer", "config", "generate", "save")) and hasattr(
        getattr(lm, "config", None), "block_size")


class TinyGPTBackend:
    """The backend of the CPU reproduction: a from-scratch :class:`icml25.llm.TinyGPT`, fully fine-tuned.

    A fresh policy is a deep copy of ``base_lm``; SFT is :func:`~icml25.rstar_math.models.sft.train_sft`; the step
    policy is :class:`~icml25.rstar_math.models.tiny_policy.TinyStepPolicy`; the PPM is
    :meth:`PPMModel.from_policy <icml25.rstar_math.models.process_preference_model.PPMModel.from_policy>` trained by
    :func:`~icml25.rstar_math.models.process_preference_model.train_ppm`; a policy is saved as a ``TinyGPT.save`` folder
    and a PPM with :meth:`PPMModel.save` (``trunk.pt`` + ``value_head.bin``).

    Parameters
    ----------
    base_lm : icml25.llm.TinyGPT
        The base model (never modified).
    ppm_dropout : float
        Dropout before the PPM head.
    score_transform : str
        Raw head output -> search score (see :class:`PPMModel`; official ``"tanh5"``).
    """

    def __init__(self, base_lm: Any, ppm_dropout: float = 0.1, score_transform: str = "tanh5") -> None:
        from icml25.core.validation import check_option, check_probability

        if not _is_tiny_gpt(base_lm):
            raise TypeError(f"base_lm must be an icml25.llm.TinyGPT (module, tokenizer, config.block_size), got "
                            f"{type(base_lm).__name__}")
        self.ppm_dropout = check_probability(ppm_dropout, "ppm_dropout", open_high=True)
        self.score_transform = check_option(score_transform, "score_transform", ("tanh5", "tanh", "tanh_half",
                                                                                 "clip"))
        self.base_lm = base_lm

    def fresh_policy(self) -> Any:
        """A deep copy of the base model."""
        from .tiny_policy import clone_lm

        return clone_lm(self.base_lm)

    def train_policy(self, policy: Any, examples: Sequence[tuple[str, str]], steps: int, batch_size: int,
                     lr: float, seed: int = 0) -> list[float]:
        """:func:`~icml25.rstar_math.models.sft.train_sft` (prompt and executor-output tokens masked)."""
        from .sft import train_sft

        return train_sft(policy, examples, steps=steps, batch_size=batch_size, lr=lr, seed=seed)

    def step_policy(self, policy: Any) -> StepPolicy:
        """:class:`~icml25.rstar_math.models.tiny_policy.TinyStepPolicy` over ``policy``."""
        from .tiny_policy import TinyStepPolicy

        return TinyStepPolicy(policy)

    def make_ppm(self, policy: Any) -> Any:
        """``PPMModel.from_policy(policy)`` (its own copy of the trunk)."""
        from .process_preference_model import PPMModel

        return PPMModel.from_policy(policy, self.ppm_dropout, self.score_transform)

    def train_ppm(self, ppm: Any, pairs: Sequence, steps: int, batch_size: int, lr: float, loss: str = "paper",
                  seed: int = 0) -> list[float]:
        """:func:`~icml25.rstar_math.models.process_preference_model.train_ppm`."""
        from .process_preference_model import train_ppm

        return train_ppm(ppm, pairs, steps=steps, batch_size=batch_size, lr=lr, loss=loss, seed=seed)

    def pair_accuracy(self, ppm: Any, pairs: Sequence) -> float:
        """:func:`~icml25.rstar_math.models.process_preference_model.pair_accuracy`."""
        from .process_preference_model import pair_accuracy

        return pair_accuracy(ppm, pairs)

    def save_policy(self, policy: Any, directory: str | Path) -> Path:
        """``policy.save(directory)`` (:meth:`icml25.llm.TinyGPT.save`; ``load_model("tiny:<dir>")`` reads it)."""
        return policy.save(directory)

    def load_policy(self, directory: str | Path) -> Any:
        """:meth:`icml25.llm.TinyGPT.load`."""
        from icml25.llm import TinyGPT

        return TinyGPT.load(directory)

    def save_ppm(self, ppm: Any, directory: str | Path) -> Path:
        """``ppm.save(directory)`` (``trunk.pt``, ``value_head.bin``, ``ppm.json``)."""
        from .._validation import check_path

        return ppm.save(Path(check_path(directory, "directory")))

    def load_ppm(self, directory: str | Path, policy: Any) -> Any:
        """A PPM of ``policy``'s shape with the weights of ``directory``, in eval mode."""
        from .._validation import check_path

        ppm = self.make_ppm(policy)
        ppm.load_weights(Path(check_path(directory, "directory")))
        ppm.eval()
        return ppm
