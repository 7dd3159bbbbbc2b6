"""A pretrained transformers policy for self-evolution, fine-tuned with LoRA adapters (``peft``).

:class:`LoRABackend` implements :class:`~icml25.rstar_math.models.trainable.TrainableBackend` over an
:class:`icml25.llm.HFModel` (e.g. ``load_model("pretrained:smollm2-135m-instruct")``). The backend holds one frozen
copy of the base weights; every policy and PPM is a LoRA adapter on it (``set_adapter`` switches between them), so
a round costs adapter-sized memory and files, never a model copy:

- every adapter is attached by :func:`icml25.llm.attach_lora`; policy SFT (spec §2.9) is
  :func:`icml25.llm.finetune` (the package's LoRA fine-tuning): only the adapter's ``lora_A``/``lora_B`` matrices
  train, with the loss on the response tokens (prompt and ``<output>...<end_of_output>`` executor-output tokens
  masked, the paper-specific part kept here) and the end-of-sequence token;
- the PPM (spec §2.8) is a copy of the policy's adapter plus ``dropout -> Linear(hidden, 1)`` on the final hidden
  state at the last token of ``prefix ⊕ step``; adapter and head train with the pairwise Bradley-Terry loss of
  Eq. 4 (:func:`~icml25.rstar_math.models.process_preference_model.ppm_pair_loss`; a value head with a pairwise
  loss is not an answer-only LM loss, so its training stays here); the search score is ``tanh(h / 5)``;
- a saved policy is ``adapter_config.json`` + ``adapter_model.safetensors`` (the ``peft`` layout,
  ``PeftModel.from_pretrained(base, dir)`` reads it) + ``lora_backend.json`` naming the base; a PPM adds
  ``value_head.bin`` with the official key names.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from icml25.core.optional import require
from icml25.llm.lora import attach_lora, lora_parameters

from ..domain.step_format import OUTPUT
from .sft import split_outputs

__all__ = ["LoRABackend", "LoRAPolicy", "LoRAPPM"]

_WEIGHTS, _META = "adapter_model.safetensors", "lora_backend.json"


class LoRAPolicy(nn.Module):
    """One LoRA adapter of a :class:`LoRABackend` used as a language model (``generate``, ``logprobs``,
    ``next_token_logits``, ``hidden_states`` of the base model with this adapter active).

    Its parameters are the adapter's LoRA matrices only (``train()`` also switches the shared model's mode).
    """

    def __init__(self, backend: LoRABackend, adapter: str) -> None:
        super().__init__()
        self.backend, self.adapter = backend, adapter
        self.lora = nn.ParameterList(lora_parameters(backend._model, adapter))

    @property
    def tokenizer(self) -> Any:
        """The base model's tokenizer."""
        return self.backend.lm.tokenizer

    def train(self, mode: bool = True) -> LoRAPolicy:
        """Set the train/eval mode of this module and of the shared base model."""
        super().train(mode)
        self.backend._model.train(mode)
        return self

    def _hf(self) -> Any:
        self.backend.activate(self.adapter)
        return self.backend._hf

    def generate(self, prompts: list[str], **kwargs: Any) -> list:
        """:meth:`icml25.llm.HFModel.generate` with this adapter."""
        return self._hf().generate(prompts, **kwargs)

    def logprobs(self, prompts: list[str], continuations: list[str]) -> list[np.ndarray]:
        """:meth:`icml25.llm.HFModel.logprobs` with this adapter."""
        return self._hf().logprobs(prompts, continuations)

    def next_token_logits(self, prompts: list[str]) -> np.ndarray:
        """:meth:`icml25.llm.HFModel.next_token_logits` with this adapter."""
        return self._hf().next_token_logits(prompts)

    def hidden_states(self, prompts: list[str]) -> np.ndarray:
        """:meth:`icml25.llm.HFModel.hidden_states` with this adapter, shape ``(len(prompts), hidden)``."""
        return self._hf().hidden_states(prompts)


class LoRAPPM(nn.Module):
    """The PPM of a :class:`LoRABackend`: a LoRA adapter (initialised from a policy's) + scalar value head.

    ``r_θ(x ⊕ s_1 ⊕ ... ⊕ s_i) = w · h_T + b`` with ``h_T`` the base model's final hidden state (after the last
    norm, as ``hidden_states[-1]``) at the last token, the adapter active; head initialisation as the official code
    (weight ~ N(5e-7, 1e-6), bias 1e-6). :meth:`score` is ``tanh(h / scale)`` (the :class:`StepScorer` protocol).

    Shapes: :meth:`forward` maps right-padded ids ``(B, T)`` and lengths ``(B,)`` to raw scores ``(B,)``.
    """

    def __init__(self, backend: LoRABackend, adapter: str, dropout: float = 0.1, scale: float = 5.0) -> None:
        super().__init__()
        self.backend, self.adapter, self.scale = backend, adapter, float(scale)
        self.lora = nn.ParameterList(lora_parameters(backend._model, adapter))
        self.dropout = nn.Dropout(dropout)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(backend.seed)
            self.summary = nn.Linear(backend.hidden_size, 1)
            with torch.no_grad():
                self.summary.weight.normal_(5e-7, 1e-6)
                self.summary.bias.fill_(1e-6)
        self.summary.to(backend.lm.device)

    def train(self, mode: bool = True) -> LoRAPPM:
        """Set the train/eval mode of this module (head dropout) and of the shared base model."""
        super().train(mode)
        self.backend._model.train(mode)
        return self

    def encode(self, prefixes: Sequence[str], steps: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor]:
        """Right-padded ids of ``prefix + step`` (tokenised as the policy's prompts, left-truncated to
        ``max_length``) and their lengths."""
        if len(prefixes) != len(steps):
            raise ValueError(f"prefixes and steps must have the same length, got {len(prefixes)} and {len(steps)}")
        hf, L = self.backend._hf, self.backend.max_length
        seqs = [hf.prompt_ids(p + s)[-L:] for p, s in zip(prefixes, steps)]
        x = torch.full((len(seqs), max(len(s) for s in seqs)), hf.pad_id, dtype=torch.long)
        for r, s in enumerate(seqs):
            x[r, :len(s)] = torch.tensor(s, dtype=torch.long)
        return x.to(hf.device), torch.tensor([len(s) for s in seqs], device=hf.device)

    def forward(self, idx: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """Raw scores ``h`` of right-padded ``idx`` ``(B, T)`` with true ``lengths`` ``(B,)``."""
        self.backend.activate(self.adapter)
        mask = (torch.arange(idx.shape[1], device=idx.device)[None, :] < lengths[:, None]).long()
        hidden = self.backend._model.get_decoder()(input_ids=idx, attention_mask=mask).last_hidden_state
        last = hidden[torch.arange(idx.shape[0], device=idx.device), lengths - 1]
        return self.summary(self.dropout(last.float())).squeeze(-1)

    @torch.no_grad()
    def raw_scores(self, prefixes: Sequence[str], steps: Sequence[str], chunk: int = 16) -> np.ndarray:
        """Raw head outputs ``h`` of ``prefix ⊕ step`` (eval mode), shape ``(len(steps),)``."""
        prefixes, steps = list(prefixes), list(steps)
        if len(prefixes) != len(steps):
            raise ValueError(f"prefixes and steps must have the same length, got {len(prefixes)} and {len(steps)}")
        was = self.training
        self.eval()
        out = np.zeros(len(steps))
        order = np.argsort([len(p) + len(s) for p, s in zip(prefixes, steps)], kind="stable")  # less padding
        for s in range(0, len(order), chunk):
            idx = order[s:s + chunk]
            x, lens = self.encode([prefixes[i] for i in idx], [steps[i] for i in idx])
            out[idx] = self(x, lens).float().cpu().numpy()
        self.train(was)
        return out

    def score(self, prefixes: Sequence[str], steps: Sequence[str]) -> np.ndarray:
        """Search scores ``tanh(h / scale)`` in [-1, 1]."""
        return np.tanh(self.raw_scores(prefixes, steps) / self.scale)

    def head_state(self) -> dict[str, torch.Tensor]:
        """The value head under the official ``value_head.bin`` keys."""
        return {"v_head.summary.weight": self.summary.weight.detach().cpu().clone(),
                "v_head.summary.bias": self.summary.bias.detach().cpu().clone()}


class LoRABackend:
    """Trainable backend over a pretrained transformers causal LM with LoRA adapters (see the module docstring).

    Parameters
    ----------
    lm : icml25.llm.HFModel or str
        The base model, or a ``load_model`` spec (``"pretrained:smollm2-135m-instruct"``, ``"hf:<dir>"``). It is
        never modified: the backend works on its own copy of the weights.
    r, alpha : int, float
        LoRA rank and scaling numerator (update ``(alpha / r) · B A``).
    lora_dropout : float
        Dropout on the LoRA input.
    target_modules : str or list of str
        Modules that get adapters (peft's ``"all-linear"``: every linear layer but the output layer).
    max_length : int
        Token limit of a training / scoring sequence (SFT keeps the first tokens, the PPM the last ones).
    warmup, weight_decay, grad_clip : int, float, float
        AdamW schedule of both trainings (linear warm-up then cosine decay to 10 %, as the TinyGPT loops).
    ppm_dropout, score_scale : float
        Dropout before the PPM head; the 5 of ``tanh(h / 5)``.
    seed : int
        Seed of every new adapter's LoRA-A initialisation and of the PPM head (so each round starts the same).
    """

    def __init__(self, lm: Any, r: int = 16, alpha: float = 32.0, lora_dropout: float = 0.0,
                 target_modules: str | Sequence[str] = "all-linear", max_length: int = 1024, warmup: int = 10,
                 weight_decay: float = 0.0, grad_clip: float = 1.0, ppm_dropout: float = 0.1,
                 score_scale: float = 5.0, seed: int = 0) -> None:
        from icml25.core.validation import check_int, check_positive, check_probability, check_real

        self._peft_lib = require("peft", extra="llm")
        r, max_length, warmup = check_int(r, "r", low=1), check_int(max_length, "max_length", low=2), \
            check_int(warmup, "warmup", low=0)
        alpha, grad_clip, score_scale = (check_positive(alpha, "alpha"), check_positive(grad_clip, "grad_clip"),
                                         check_positive(score_scale, "score_scale"))
        lora_dropout = check_probability(lora_dropout, "lora_dropout", open_high=True)
        ppm_dropout = check_probability(ppm_dropout, "ppm_dropout", open_high=True)
        weight_decay = check_real(weight_decay, "weight_decay", low=0.0)
        self.seed = check_int(seed, "seed", low=0)
        if isinstance(target_modules, str):
            modules: Any = target_modules
        elif isinstance(target_modules, Sequence) and target_modules and all(
                isinstance(m, str) and m for m in target_modules):
            modules = list(target_modules)
        else:
            raise TypeError(f"target_modules must be 'all-linear' or a non-empty list of module names, got "
                            f"{target_modules!r}")
        if isinstance(lm, str):
            from icml25.llm import load_model

            lm = load_model(lm)
        from icml25.llm.hf import HFModel

        if not isinstance(lm, HFModel):
            raise TypeError(f"lm must be an icml25.llm.HFModel (a transformers model: load_model('hf:<dir>') or "
                            f"'pretrained:<name>'), got {type(lm).__name__}")
        self.lm, self.max_length, self.warmup, self.grad_clip = lm, max_length, warmup, grad_clip
        self.weight_decay, self.ppm_dropout, self.score_scale = weight_decay, ppm_dropout, score_scale
        self._model = copy.deepcopy(lm.model).eval()
        self._model.requires_grad_(False)
        self._hf = lm.with_model(self._model, self.seed)  # the HFModel decoding/scoring code, on the copy
        self.config = self._peft_lib.LoraConfig(r=r, lora_alpha=alpha, lora_dropout=lora_dropout,
                                                target_modules=modules, bias="none")
        self.hidden_size = int(self._model.get_input_embeddings().weight.shape[1])
        self._peft: Any = None
        self._active: str | None = None
        self._count = 0

    def __repr__(self) -> str:
        return (f"LoRABackend({self._model.config.model_type}, r={self.config.r}, alpha={self.config.lora_alpha}, "
                f"adapters={self._count})")

    # ------------------------------------------------------------------ adapters
    def _new_adapter(self, kind: str, config: Any = None) -> str:
        name = f"{kind}_{self._count}"
        self._count += 1
        first = self._peft is None
        self._peft = attach_lora(self._model if first else self._peft, adapter=name, seed=self.seed,
                                 config=config if config is not None else self.config)
        if first:
            self._active = name
        return name

    def activate(self, name: str) -> None:
        """Make adapter ``name`` (a policy's or PPM's ``adapter``) the one the shared base model runs with."""
        if self._active != name:
            self._peft.set_adapter(name)
            self._active = name

    def _adapter_state(self, name: str) -> dict[str, torch.Tensor]:
        from peft import get_peft_model_state_dict

        return {k: v.detach().clone() for k, v in get_peft_model_state_dict(self._peft, adapter_name=name).items()}

    def _set_adapter_state(self, name: str, state: dict[str, torch.Tensor]) -> None:
        from peft import set_peft_model_state_dict

        expected = set(self._adapter_state(name))
        if set(state) != expected:
            raise ValueError(f"adapter weights do not fit this base model: {len(set(state) - expected)} unexpected "
                             f"and {len(expected - set(state))} missing tensors (e.g. "
                             f"{sorted(set(state) ^ expected)[:2]})")
        set_peft_model_state_dict(self._peft, state, adapter_name=name)

    def _own(self, model: Any, cls: type, name: str) -> Any:
        if not isinstance(model, cls) or model.backend is not self:
            raise TypeError(f"{name} must be a {cls.__name__} made by this LoRABackend, got {type(model).__name__}")
        return model

    # ------------------------------------------------------------------ policy
    def fresh_policy(self) -> LoRAPolicy:
        """A new adapter (LoRA B = 0, so the model equals the base) as a policy."""
        return LoRAPolicy(self, self._new_adapter("policy"))

    def step_policy(self, policy: LoRAPolicy) -> Any:
        """:class:`~icml25.rstar_math.models.real_llm.LMStepPolicy` over ``policy`` (raw text steps + stop string)."""
        from .real_llm import LMStepPolicy

        return LMStepPolicy(self._own(policy, LoRAPolicy, "policy"))

    def _sft_rows(self, examples: Sequence[tuple[str, str]]) -> list[tuple[list[int], list[int], list[bool]]]:
        """Per example: prompt ids, response ids and which response tokens are trained (not ``<output>`` ones)."""
        hf = self._hf
        rows = []
        for i, ex in enumerate(examples):
            if not (isinstance(ex, (tuple, list)) and len(ex) == 2 and all(isinstance(t, str) for t in ex)
                    and ex[1].strip()):
                raise ValueError(f"examples[{i}] must be a (prompt, response) pair of strings with a non-empty "
                                 f"response, got {ex!r:.80}")
            ids: list[int] = []
            train: list[bool] = []
            for piece in split_outputs(ex[1]):
                t = hf.continuation_ids(piece)
                ids, train = ids + t, train + [not piece.startswith(OUTPUT)] * len(t)
            rows.append((hf.prompt_ids(ex[0]), ids, train))
        return rows

    def train_policy(self, policy: LoRAPolicy, examples: Sequence[tuple[str, str]], steps: int, batch_size: int,
                     lr: float, seed: int = 0) -> list[float]:
        """SFT of the adapter only by :func:`icml25.llm.finetune`: mean next-token cross-entropy over response
        tokens and the end-of-sequence token (prompt and ``<output>`` tokens masked; the first ``max_length``
        tokens), length-bucketed batches, AdamW with warm-up + cosine decay; returns the per-step loss."""
        from icml25.llm import finetune

        from .._validation import check_training

        self._own(policy, LoRAPolicy, "policy")
        if not isinstance(examples, Sequence) or not examples:
            raise ValueError("examples must be a non-empty list of (prompt, response) pairs")
        check_training(steps, batch_size, lr, self.warmup, self.weight_decay, self.grad_clip)
        rows = self._sft_rows(examples)
        self.activate(policy.adapter)
        hf = self._hf
        return finetune(self._peft, rows, adapter=policy.adapter, steps=steps, lr=lr, batch_size=batch_size,
                        eos=hf.eos_ids[0] if hf.eos_ids else False, pad_id=hf.pad_id, max_length=self.max_length,
                        sampler="buckets", warmup=self.warmup, weight_decay=self.weight_decay,
                        grad_clip=self.grad_clip, seed=seed).losses

    # ------------------------------------------------------------------ PPM
    def make_ppm(self, policy: LoRAPolicy) -> LoRAPPM:
        """A PPM whose adapter is a copy of ``policy``'s and whose head is freshly initialised."""
        self._own(policy, LoRAPolicy, "policy")
        name = self._new_adapter("ppm", self._peft.peft_config[policy.adapter])
        self._set_adapter_state(name, self._adapter_state(policy.adapter))
        return LoRAPPM(self, name, self.ppm_dropout, self.score_scale)

    def train_ppm(self, ppm: LoRAPPM, pairs: Sequence, steps: int, batch_size: int, lr: float, loss: str = "paper",
                  seed: int = 0) -> list[float]:
        """Train the PPM's adapter and head on preference pairs with Eq. 4 (``loss="paper"``: mean
        ``-log σ(h⁺ - h⁻)``; ``"official"``: weighted by ``1/(pos_count·neg_count)``); the per-step loss."""
        from .process_preference_model import train_ppm

        self._own(ppm, LoRAPPM, "ppm")
        self.activate(ppm.adapter)
        # the TinyGPT PPM's loop: it needs only ppm.encode, ppm(x, lengths) and the parameters
        return train_ppm(ppm, pairs, steps=steps, batch_size=batch_size, lr=lr, warmup=self.warmup,
                         weight_decay=self.weight_decay, grad_clip=self.grad_clip, loss=loss, seed=seed)

    def pair_accuracy(self, ppm: LoRAPPM, pairs: Sequence) -> float:
        """:func:`~icml25.rstar_math.models.process_preference_model.pair_accuracy` of ``ppm``."""
        from .process_preference_model import pair_accuracy

        return pair_accuracy(self._own(ppm, LoRAPPM, "ppm"), pairs)

    # ------------------------------------------------------------------ save / load
    def _base_id(self) -> dict[str, Any]:
        cfg = self._model.config
        return {"model_type": cfg.model_type, "name_or_path": str(getattr(cfg, "_name_or_path", "")),
                "hidden_size": self.hidden_size, "num_parameters": int(self.lm.num_parameters())}

    def _save_adapter(self, name: str, directory: Any) -> Path:
        from safetensors.torch import save_file

        from .._validation import check_path

        d = Path(check_path(directory, "directory"))
        d.mkdir(parents=True, exist_ok=True)
        save_file({k: v.cpu().contiguous() for k, v in self._adapter_state(name).items()}, str(d / _WEIGHTS))
        self._peft.peft_config[name].save_pretrained(str(d))
        (d / _META).write_text(json.dumps({"base": self._base_id()}))
        return d

    def _load_adapter(self, directory: Any, kind: str) -> tuple[str, Path]:
        from safetensors.torch import load_file

        from .._validation import check_path

        d = Path(check_path(directory, "directory"))
        for f in (_WEIGHTS, "adapter_config.json", _META):
            if not (d / f).is_file():
                raise FileNotFoundError(f"{d / f} not found: a LoRABackend folder holds {_WEIGHTS}, "
                                        f"adapter_config.json and {_META}")
        saved, here = json.loads((d / _META).read_text())["base"], self._base_id()
        diff = [f"{k}: {saved.get(k)} vs {here[k]}" for k in ("model_type", "hidden_size", "num_parameters")
                if saved.get(k) != here[k]]
        if diff:
            raise ValueError(f"{d} holds an adapter of another base model (saved vs this one: {'; '.join(diff)})")
        name = self._new_adapter(kind, self._peft_lib.LoraConfig.from_pretrained(str(d)))
        self._set_adapter_state(name, load_file(str(d / _WEIGHTS), device=str(self.lm.device)))
        return name, d

    def save_policy(self, policy: LoRAPolicy, directory: str | Path) -> Path:
        """Write the policy's adapter (peft layout) and ``lora_backend.json``; not the base weights."""
        return self._save_adapter(self._own(policy, LoRAPolicy, "policy").adapter, directory)

    def load_policy(self, directory: str | Path) -> LoRAPolicy:
        """A policy written by :meth:`save_policy` (on this backend's base model)."""
        return LoRAPolicy(self, self._load_adapter(directory, "policy")[0])

    def save_ppm(self, ppm: LoRAPPM, directory: str | Path) -> Path:
        """Write the PPM's adapter, ``value_head.bin`` (official keys) and ``ppm.json``."""
        d = self._save_adapter(self._own(ppm, LoRAPPM, "ppm").adapter, directory)
        torch.save(ppm.head_state(), d / "value_head.bin")
        (d / "ppm.json").write_text(json.dumps({"kind": "lora", "dropout": ppm.dropout.p, "score_scale": ppm.scale}))
        return d

    def load_ppm(self, directory: str | Path, policy: Any = None) -> LoRAPPM:
        """A PPM written by :meth:`save_ppm`, in eval mode (``policy`` is not needed: the adapter is saved)."""
        name, d = self._load_adapter(directory, "ppm")
        for f in ("value_head.bin", "ppm.json"):
            if not (d / f).is_file():
                raise FileNotFoundError(f"{d / f} not found: a LoRA PPM folder also holds value_head.bin and ppm.json")
        meta = json.loads((d / "ppm.json").read_text())
        ppm = LoRAPPM(self, name, float(meta["dropout"]), float(meta["score_scale"]))
        head = torch.load(d / "value_head.bin", map_location="cpu", weights_only=True)
        if set(head) != {"v_head.summary.weight", "v_head.summary.bias"}:
            raise ValueError(f"{d / 'value_head.bin'} must hold v_head.summary.weight and v_head.summary.bias, got "
                             f"{sorted(head)}")
        with torch.no_grad():
            ppm.summary.weight.copy_(head["v_head.summary.weight"])
            ppm.summary.bias.copy_(head["v_head.summary.bias"])
        return ppm.eval()
