"""HFModel: any transformers causal language model from a local folder, behind the ``icml25.llm`` interface.

Nothing is downloaded unless ``allow_download=True``. Llama, Qwen2 and Gemma 3 checkpoints stored as one
``model.safetensors`` run on :class:`~icml25.llm.native.NativeDecoder` (the transformers computation, loaded in a
fraction of a second without importing transformers, on memory-mapped weights and a preallocated KV cache); other
architectures, or ``backend="transformers"``, run on ``AutoModelForCausalLM``. ``model`` (the transformers network)
and ``tokenizer`` (the transformers tokenizer) are built when first used; from then on the network is the
transformers one, so hooks, adapters or edits that callers apply to ``model`` are always seen. Sampling uses the
shared batched decoding loop (:mod:`icml25.llm.sampling`): each prompt is encoded once for its ``n`` samples (its
KV cache rows are copied), with left padding, explicit position ids and an attention mask, so ``n``,
``temperature``, ``top_p``, ``stop`` and ``token_logprobs`` behave as for TinyGPT.
"""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from icml25.core.optional import require

from .base import Generation, validate_prompts
from .sampling import check_sampling_args, decode_loop, make_generator, to_generations

__all__ = ["HFModel", "save_random_gpt2", "BACKENDS"]

BACKENDS = ("auto", "native", "transformers")

_CHUNK = 32  # rows per forward pass when scoring
_MAX_LOGITS = 1 << 26  # at most this many logits (256 MB of float32) per scoring forward pass


_WEIGHTS = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin", "pytorch_model.bin.index.json")
_FOLDER = "a transformers model folder (config.json, model.safetensors or pytorch_model.bin, tokenizer files)"


def _check_folder(folder: Path) -> None:
    """config.json is a JSON object and some weights file exists (one-line errors naming the file)."""
    from icml25.core.files import FileFormatError, read_json

    cfg = read_json(folder / "config.json", f"the config.json of {_FOLDER}")
    if not isinstance(cfg, dict):
        raise FileFormatError(f"{folder / 'config.json'}: a JSON {type(cfg).__name__}; expected a JSON object")
    found = [f for f in _WEIGHTS if (folder / f).is_file()]
    if not found:
        raise FileNotFoundError(f"{folder}: no model.safetensors (nor pytorch_model.bin or a sharded index); "
                                f"expected {_FOLDER}")


@contextlib.contextmanager
def _folder_errors(folder: Path | None, what: str) -> Iterator[None]:
    """Turn transformers' errors on a damaged local folder into one line naming the folder and what it lacks."""
    if folder is None:
        yield
        return
    try:
        yield
    except MemoryError:
        raise
    except Exception as exc:  # noqa: BLE001 (transformers, tokenizers and safetensors raise many types)
        from icml25.core.files import FileFormatError

        detail = " ".join(str(exc).split())
        raise FileFormatError(f"{folder}: transformers could not load {what} ({type(exc).__name__}: "
                              f"{detail[:160]}); expected {_FOLDER}") from exc


class HFModel:
    """A transformers causal LM with the common ``icml25.llm`` interface.

    Parameters
    ----------
    path : str or Path
        Local folder with ``config.json``, weights and tokenizer files (as written by ``save_pretrained`` or
        ``huggingface-cli download <repo> --local-dir <folder>``). A Hub repository id is accepted only with
        ``allow_download=True``.
    device : str
        Torch device, e.g. ``"cpu"`` or ``"cuda"``.
    dtype : torch.dtype or str, optional
        Weight dtype (e.g. ``torch.bfloat16`` or ``"bfloat16"``); default: as stored, float32 on CPU.
    trust_remote_code : bool
        Passed to transformers (needed by models with custom code).
    allow_download : bool
        Allow transformers to fetch ``path`` from the Hugging Face Hub.
    tokenizer : transformers tokenizer or str, optional
        A tokenizer object or folder to use instead of the one in ``path``.
    backend : {"auto", "native", "transformers"}
        ``"auto"``: :class:`~icml25.llm.native.NativeDecoder` when the folder's architecture is one it implements
        (Llama, Qwen2, Gemma 3 text in one ``model.safetensors``), else transformers; ``"native"`` requires it;
        ``"transformers"`` always builds ``AutoModelForCausalLM``.
    fast_tokenizer : bool, optional
        Encode and decode with the ``tokenizers`` library directly (no transformers import, a faster load) instead of
        transformers' tokenizer. Default: when the folder's ``icml25-cache.json`` says they agree (the icml25
        pretrained-model cache checks it when built); ``True`` asserts it for another folder
        (:func:`icml25.llm.fast_tokenizer.verify_fast_tokenizer` checks it).
    quantize : {None, "int8", "int4"}
        Native backend only: ``"int8"`` runs the projections and the output layer with int8 weights (per-row
        scales), ``"int4"`` with 4-bit weights (a scale and an offset per 32 inputs; CPU only), both with
        bfloat16 activations in the decoding steps' matrix products -- faster on a CPU limited by memory
        bandwidth, and less memory (see ``src/icml25/llm/README.md``), approximate: greedy text can differ from
        float32 after a few tokens. The transformers ``model`` (if built) stays in float32. Default None: exact.

    Attributes
    ----------
    model : transformers PreTrainedModel
        The transformers network, built on first access (a second or more: transformers is imported then); after
        that the model runs on it, so changes made to it (hooks, adapters, weights) take effect. Assignable.
    tokenizer : transformers tokenizer
        Built on first access (the model itself encodes with the ``tokenizers`` library when it can). Assignable.
    backend : str
        ``"native"`` or ``"transformers"``: what runs the network now.
    """

    def __init__(self, path: str | Path, device: str = "cpu", dtype: Any = None, trust_remote_code: bool = False,
                 allow_download: bool = False, tokenizer: Any = None, backend: str = "auto",
                 fast_tokenizer: bool | None = None, quantize: str | None = None):
        torch = require("torch", extra="torch")
        if not isinstance(path, (str, Path)):
            raise TypeError(f"path must be a folder path (str or Path), got {type(path).__name__}")
        if not str(path).strip():
            raise ValueError("path must be a non-empty folder path, got ''")
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
        from .native import check_quantize

        check_quantize(quantize, device)
        local = Path(path).expanduser()
        if not allow_download and not (local / "config.json").is_file():
            what = "does not exist" if not local.exists() else "has no config.json"
            raise FileNotFoundError(
                f"HFModel: the model folder {str(path)!r} {what}; pass the path of a local transformers model "
                "folder (save_pretrained output or `huggingface-cli download <repo> --local-dir <dir>`), "
                "or allow_download=True to fetch it from the Hugging Face Hub; expected config.json, the weights "
                "and the tokenizer files there")
        self._src = str(local) if local.exists() else str(path)
        self._folder = local if local.is_dir() else None
        self._kw = {"local_files_only": not allow_download, "trust_remote_code": trust_remote_code}
        if self._folder is not None:
            _check_folder(self._folder)
        self.device = torch.device(device)
        self._torch = torch
        self._dtype = getattr(torch, dtype) if isinstance(dtype, str) else dtype
        self._model: Any = None
        self._native: Any = None
        self._runner: Any = None
        self._rng = np.random.default_rng(0)
        # ---- the tokenizer: tokenizers (Rust) when it equals transformers' tokenizer, else transformers
        self._tokenizer: Any = tokenizer if tokenizer is not None and not isinstance(tokenizer, (str, Path)) else None
        self._tokenizer_src = str(tokenizer or self._src)
        self._fast = None
        if fast_tokenizer is None and self._folder is not None:
            fast_tokenizer = _read_json(self._folder / "icml25-cache.json").get("fast_tokenizer") is True
        if tokenizer is None and self._folder is not None and fast_tokenizer:
            from .fast_tokenizer import load_fast_tokenizer

            with _folder_errors(self._folder, "the tokenizer (tokenizer.json)"):
                self._fast = load_fast_tokenizer(self._folder)
        if self._fast is None and self._tokenizer is None:
            _ = self.tokenizer  # transformers' tokenizer, loaded now (errors at construction, as before)
        # ---- the network
        why = "backend='transformers' asked" if backend == "transformers" else (
            "not a local folder" if self._folder is None or trust_remote_code else None)
        if why is None:
            from .native import unsupported_reason

            why = unsupported_reason(self._folder)
        if why is None:
            from .native import NativeDecoder

            with _folder_errors(self._folder, "the model (weights that fit config.json)"):
                self._native = NativeDecoder.from_folder(self._folder, dtype=self._dtype, device=device,
                                                         quantize=quantize)
        elif backend == "native":
            raise ValueError(f"backend='native' cannot run {self._src}: {why}")
        elif quantize is not None:
            raise ValueError(f"quantize={quantize!r} needs the native backend, which cannot run {self._src}: {why}")
        else:
            _ = self.model  # transformers' network, loaded now
        self._set_special_ids()

    # ------------------------------------------------------------------ lazily built transformers objects
    @property
    def tokenizer(self) -> Any:
        if self._tokenizer is None:
            transformers = require("transformers", extra="llm")
            with _folder_errors(self._folder, "the tokenizer (tokenizer.json or tokenizer_config.json and "
                                "vocabulary files)"):
                self._tokenizer = transformers.AutoTokenizer.from_pretrained(self._tokenizer_src, **self._kw)
        return self._tokenizer

    @tokenizer.setter
    def tokenizer(self, value: Any) -> None:
        self._tokenizer, self._fast = value, None

    @property
    def model(self) -> Any:
        if self._model is None:
            transformers = require("transformers", extra="llm")
            with _folder_errors(self._folder, "the model (weights that fit config.json)"):
                model = transformers.AutoModelForCausalLM.from_pretrained(self._src, **self._kw)
            if self._dtype is not None:
                model = model.to(self._dtype)
            self._model = model.to(self.device).eval()
            self._native, self._runner = None, None  # from now on the transformers network runs the model
        return self._model

    @model.setter
    def model(self, value: Any) -> None:
        self._model, self._native, self._runner = value, None, None

    @property
    def backend(self) -> str:
        return "native" if self._native is not None else "transformers"

    @property
    def _engine(self) -> Any:
        if self._runner is None:
            from .runners import NativeRunner, TransformersRunner

            self._runner = NativeRunner(self._native, self.pad_id) if self._native is not None else \
                TransformersRunner(self.model, self.pad_id, self.device)
        return self._runner

    def _signature(self) -> Any:
        import inspect

        return inspect.signature(self.model.forward).parameters

    @property
    def _cache_kw(self) -> str:
        # transformers >= 5 names the KV cache argument ``cache``; 4.x calls it ``past_key_values``
        return "cache" if "cache" in self._signature() else "past_key_values"

    @property
    def _last_kw(self) -> dict[str, int]:
        return {"logits_to_keep": 1} if "logits_to_keep" in self._signature() else {}

    @property
    def _can_keep(self) -> bool:
        return "logits_to_keep" in self._signature()

    @property
    def hidden_size(self) -> int:
        """Width of the hidden states (without building the transformers network)."""
        if self._native is not None:
            return self._native.cfg.hidden_size
        return int(self.model.config.hidden_size)

    @property
    def num_layers(self) -> int:
        """Number of decoder layers (the range of ``score_continuations(..., hook=(layer, fn))``)."""
        if self._native is not None:
            return self._native.cfg.n_layer
        from .runners import decoder_layers

        return len(decoder_layers(self.model))

    def _set_special_ids(self) -> None:
        gen = _read_json(self._folder / "generation_config.json") if self._folder is not None else {}
        if self._model is not None:
            eos = getattr(getattr(self._model, "generation_config", None), "eos_token_id", None)
        else:
            eos = gen["eos_token_id"] if "eos_token_id" in gen else _read_json(self._folder / "config.json").get(
                "eos_token_id")
        tok = self._fast if self._fast is not None else self.tokenizer
        if eos is None:
            eos = tok.eos_token_id
        self.eos_ids: list[int] = [] if eos is None else ([int(eos)] if isinstance(eos, int) else [int(e) for e in eos])
        pad = tok.pad_token_id
        self.pad_id = int(pad if pad is not None else (self.eos_ids[0] if self.eos_ids else 0))
        bos = tok.bos_token_id
        self._start_id = int(bos if bos is not None else self.pad_id if not self.eos_ids else self.eos_ids[0])
        if self._fast is not None:
            self._special_text = dict(self._fast.special_text)
        else:
            special = {int(i) for i in (getattr(tok, "all_special_ids", None) or [])}
            for i, t in (getattr(tok, "added_tokens_decoder", None) or {}).items():
                if getattr(t, "special", False):
                    special.add(int(i))
            self._special_text = {i: str(tok.convert_ids_to_tokens(i)) for i in special}

    def __repr__(self) -> str:
        kind = self._native.cfg.model_type if self._native is not None else self.model.config.model_type
        return f"HFModel({kind}, params={self.num_parameters():,}, device={self.device}, backend={self.backend})"

    def num_parameters(self) -> int:
        """Number of parameters of the network."""
        if self._native is not None:
            return self._native.num_parameters()
        return sum(p.numel() for p in self.model.parameters())

    def prompt_ids(self, text: str) -> list[int]:
        """Token ids of ``text`` as a prompt, as :meth:`generate` and :meth:`logprobs` encode it: with the
        tokenizer's special tokens (e.g. BOS); an empty prompt is ``[BOS]`` (EOS when there is no BOS)."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        return self._prompt_ids(text)

    def continuation_ids(self, text: str) -> list[int]:
        """Token ids of ``text`` as a continuation (no special tokens added), as :meth:`logprobs` encodes it."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        return self._cont_ids(text)

    def with_model(self, model: Any, seed: int = 0) -> HFModel:
        """A copy of this HFModel (same tokenizer, special ids and device) that runs the transformers network
        ``model`` (e.g. a copy of :attr:`model` with adapters), with its own sampling RNG seeded by ``seed``;
        this one is unchanged."""
        from icml25.core.validation import check_int

        if not isinstance(model, self._torch.nn.Module):
            raise TypeError(f"model must be a torch.nn.Module (a transformers causal LM), got {type(model).__name__}")
        out = copy.copy(self)
        out.model, out._rng = model, np.random.default_rng(check_int(seed, "seed", low=0))
        return out

    # ------------------------------------------------------------------ helpers
    def _encode(self, text: str, special: bool) -> list[int]:
        if self._fast is not None:
            return self._fast.encode(text, add_special_tokens=special)
        return list(self.tokenizer(text, add_special_tokens=special)["input_ids"])

    def _prompt_ids(self, text: str) -> list[int]:
        return self._encode(text, True) or [self._start_id]  # an empty prompt starts from BOS (or EOS)

    def _cont_ids(self, text: str) -> list[int]:
        return self._encode(text, False)

    def _decode(self, ids: list[int]) -> str:
        if self._fast is not None:
            return self._fast.decode(ids, skip_special_tokens=True)
        return self.tokenizer.decode(ids, skip_special_tokens=True)

    def _decoder_for(self, stop: list[str]) -> Any:
        """The decoding function for a generation with stop strings ``stop``.

        Special tokens are dropped from the text (``skip_special_tokens``), except those whose text occurs in a
        stop string (e.g. ``"<|im_end|>"`` or ``"</answer>"`` registered as a special token): those are kept so
        that the stop string can be seen and the text cut before it.
        """
        keep = {i for i, t in self._special_text.items() if t and any(t in s for s in stop)}
        if not keep:
            return self._decode
        drop = set(self._special_text) - keep
        tok = self._fast if self._fast is not None else self.tokenizer

        def decode(ids: list[int]) -> str:
            return tok.decode([i for i in ids if i not in drop], skip_special_tokens=False)

        return decode

    def _pad(self, seqs: list[list[int]], left: bool) -> tuple[Any, Any]:
        torch = self._torch
        T = max(len(s) for s in seqs)
        idx = torch.full((len(seqs), T), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), T), dtype=torch.long)
        for r, s in enumerate(seqs):
            sl = slice(T - len(s), T) if left else slice(0, len(s))
            idx[r, sl] = torch.tensor(s, dtype=torch.long)
            mask[r, sl] = 1
        return idx.to(self.device), mask.to(self.device)

    def _cache_of(self, out: Any) -> Any:
        cache = getattr(out, "cache", None)
        return cache if cache is not None else out.past_key_values

    def _forward(self, idx: Any, mask: Any, **kw: Any) -> Any:
        """The transformers network on a padded batch (builds ``model`` if needed)."""
        pos = (mask.cumsum(-1) - 1).clamp(min=0)
        return self.model(input_ids=idx, attention_mask=mask, position_ids=pos, **kw)

    # ------------------------------------------------------------------ interface
    def generate(self, prompts: list[str], n: int = 1, temperature: float = 1.0, top_p: float = 1.0,
                 max_tokens: int = 64, stop: list[str] | None = None,
                 seed: int | None = None) -> list[list[Generation]]:
        """Sample ``n`` continuations of each prompt (``temperature=0`` is greedy).

        Each prompt is encoded once and its KV cache copied to its ``n`` samples. Rows stop at the model's
        end-of-sequence token(s) (``generation_config.eos_token_id``) or a stop string; the text is cut before the
        stop string. A stop string may be (or contain) a special token such as ``"<|im_end|>"``. Returns
        ``out[i][j]``, sample ``j`` of prompt ``i``.
        """
        prompts = validate_prompts(prompts)
        stop = check_sampling_args(n, temperature, top_p, max_tokens, stop)
        return self._generate_ids([self._prompt_ids(p) for p in prompts], n, temperature, top_p, max_tokens, stop,
                                  seed)

    def expand(self, prefixes: list[str] | list[list[int]], n_children: int = 1, max_tokens: int = 32,
               stop: list[str] | None = None, temperature: float = 1.0, top_p: float = 1.0,
               seed: int | None = None) -> list[list[Generation]]:
        """Tree search: ``n_children`` continuations of every prefix in one batched decoding pass.

        Parameters
        ----------
        prefixes : list of str or list of list of int
            Node texts (encoded like prompts, with BOS) or token-id lists (used as they are).
        n_children, max_tokens, stop, temperature, top_p, seed
            As ``n``, ... in :meth:`generate`.

        Returns
        -------
        list of list of Generation
            ``out[i][j]``: child ``j`` of prefix ``i``; ``Generation.token_ids`` holds its token ids (without the
            end-of-sequence token).

        Notes
        -----
        Every distinct prefix is run once (duplicates share it) and its KV cache rows are copied to its children;
        with the native backend a prefix common to all prefixes (the question of a search tree) is run once for
        the whole batch.
        """
        from icml25.core.validation import check_int

        _check_children(n_children)
        stop = check_sampling_args(n_children, temperature, top_p, max_tokens, stop)
        if isinstance(prefixes, (str, bytes)) or not isinstance(prefixes, (list, tuple)) or not prefixes:
            raise TypeError("prefixes must be a non-empty list of strings or of token-id lists")
        vocab = self._engine.vocab_size()
        rows = []
        for i, p in enumerate(prefixes):
            if isinstance(p, str):
                rows.append(self._prompt_ids(p))
            elif isinstance(p, (list, tuple)) and p:
                rows.append([check_int(t, f"prefixes[{i}] token", low=0, high=vocab - 1) for t in p])
            else:
                raise TypeError(f"prefixes[{i}] must be a string or a non-empty list of token ids, got {p!r:.60}")
        return self._generate_ids(rows, n_children, temperature, top_p, max_tokens, stop, seed, with_ids=True)

    def _generate_ids(self, seqs: list[list[int]], n: int, temperature: float, top_p: float, max_tokens: int,
                      stop: list[str], seed: int | None, with_ids: bool = False) -> list[list[Generation]]:
        torch = self._torch
        gen = make_generator(seed, self._rng)
        decode = self._decoder_for(stop) if stop else self._decode
        eng = self._engine
        uniq: dict[tuple[int, ...], int] = {}
        for s in seqs:
            uniq.setdefault(tuple(s), len(uniq))
        with torch.inference_mode():
            first, state = eng.prefill([list(u) for u in uniq], max(max_tokens, 1), keep=1)
            rep = torch.tensor([uniq[tuple(s)] for s in seqs], dtype=torch.long).repeat_interleave(n)
            if len(rep) != len(uniq) or bool((rep != torch.arange(len(rep))).any()):
                eng.select(state, rep)  # one prefill per distinct prompt, its cache rows copied to its samples
            R = len(rep)
            live = torch.arange(R)  # the batch row (of all R) of each row still in the decoding state

            def step(new: Any, done: Any) -> Any:
                nonlocal live
                keep = (~done[live]).nonzero().flatten()
                if len(keep) < 0.75 * len(live):  # compact when enough rows finished (copying costs)
                    eng.select(state, keep)
                    live = live[keep]
                logits = eng.step(state, new[live]).cpu()
                if len(live) == R:
                    return logits
                full = torch.zeros((R, logits.shape[1]), dtype=logits.dtype)
                full[live] = logits
                return full

            ids, lps, finish = decode_loop(first[:, -1].cpu()[rep], step, max_tokens, float(temperature),
                                           float(top_p), stop, self.eos_ids, self.pad_id, decode, gen,
                                           pass_done=True, method="cdf")
        gens = to_generations(ids, lps, finish, decode, stop, n)
        if with_ids:
            for r, g in enumerate(x for row in gens for x in row):
                g.token_ids = list(ids[r])
        if decode is not self._decode:  # special tokens kept for the stop check are dropped from the text
            kept = [t for i, t in self._special_text.items() if t and any(t in s for s in stop)]
            for row in gens:
                for g in row:
                    for t in kept:
                        g.text = g.text.replace(t, "")
        return gens

    # ------------------------------------------------------------------ chat
    def chat_prompt(self, messages: list[dict[str, str]], add_generation_prompt: bool = True) -> str:
        """The text of one conversation in the model's chat format (the tokenizer's chat template).

        Parameters
        ----------
        messages : list of dict
            ``[{"role": "system" | "user" | "assistant", "content": str}, ...]``.
        add_generation_prompt : bool
            Append the header of the assistant's turn (what :meth:`chat` generates after).

        Raises
        ------
        ValueError
            The tokenizer has no chat template (a base model such as ``gemma-3-270m``: prompt it with plain
            few-shot text through :meth:`generate` instead).
        """
        if self._tokenizer is None and self._folder is not None and not self._has_template_file():
            template = None
        else:
            template = getattr(self.tokenizer, "chat_template", None)
        if template is None:
            raise ValueError(f"{self!r} has no chat template (a base, not instruction-tuned, model); use generate() "
                             "with a plain (few-shot) prompt, or an instruct model such as "
                             "'pretrained:smollm2-135m-instruct'")
        _check_messages(messages)
        return self.tokenizer.apply_chat_template(messages, tokenize=False,
                                                  add_generation_prompt=add_generation_prompt)

    def _has_template_file(self) -> bool:
        """Whether the folder holds a chat template (so that a base model need not build its tokenizer to say no)."""
        f = self._folder
        assert f is not None
        if (f / "chat_template.jinja").is_file() or (f / "chat_template.json").is_file():
            return True
        return bool(_read_json(f / "tokenizer_config.json").get("chat_template"))

    def chat(self, conversations: list[dict[str, str]] | list[list[dict[str, str]]], n: int = 1,
             temperature: float = 1.0, top_p: float = 1.0, max_tokens: int = 64, stop: list[str] | None = None,
             seed: int | None = None) -> list[list[Generation]]:
        """Sample the assistant's reply to each conversation, formatted with the tokenizer's chat template.

        Parameters
        ----------
        conversations : list of dict, or list of lists of dict
            One conversation (``[{"role": "user", "content": "..."}]``) or a list of them.
        n, temperature, top_p, max_tokens, stop, seed
            As in :meth:`generate`; generation ends at the end-of-turn token.

        Returns
        -------
        list of list of Generation
            ``out[i][j]``: reply ``j`` to conversation ``i`` (one conversation gives ``len(out) == 1``).
        """
        if isinstance(conversations, list) and conversations and isinstance(conversations[0], dict):
            conversations = [conversations]  # type: ignore[list-item]
        if not isinstance(conversations, list) or not conversations:
            raise ValueError("conversations must be a non-empty list of messages [{'role': ..., 'content': ...}] "
                             f"or a list of such lists, got {conversations!r:.80}")
        stop = check_sampling_args(n, temperature, top_p, max_tokens, stop)
        texts = [self.chat_prompt(c) for c in conversations]  # type: ignore[arg-type]
        seqs = [self._encode(t, False) for t in texts]
        return self._generate_ids(seqs, n, temperature, top_p, max_tokens, stop, seed)

    # ------------------------------------------------------------------ scoring
    def logprobs(self, prompts: list[str], continuations: list[str], fast: bool = True) -> list[np.ndarray]:
        """Log-probability of each token of ``continuations[i]`` given ``prompts[i]``.

        The prompt is encoded with the tokenizer's special tokens (e.g. BOS), the continuation without, and the
        two id lists are concatenated. Returns one float64 array per pair (one entry per continuation token).

        With ``fast=True`` (default) the rows are left-padded so that every continuation ends at the last position,
        the transformer body runs on the whole sequence (a prefix common to the rows of a chunk, e.g. one prompt
        with several answers, only once with the native backend), and the output layer (``lm_head``, for Gemma-3 a
        262k x 640 matrix, ~60 % of the parameters) and the log-softmax run only on the last
        ``max(len(continuation)) + 1`` positions. ``fast=False`` is the plain computation (full logits of every
        position, right padding); both agree to float rounding (tested to 1e-4).
        """
        torch = self._torch
        prompts = validate_prompts(prompts)
        continuations = validate_prompts(continuations, "continuations")
        if len(prompts) != len(continuations):
            raise ValueError(f"prompts and continuations must have the same length, got {len(prompts)} and "
                             f"{len(continuations)}")
        pairs = [(self._prompt_ids(p), self._cont_ids(c)) for p, c in zip(prompts, continuations)]
        for i, (_, c) in enumerate(pairs):
            if not c:
                raise ValueError(f"continuations[{i}] = {continuations[i]!r} has no tokens; every continuation must "
                                 "be a non-empty string (there is nothing to score)")
        eng = self._engine
        fast = fast and (self._native is not None or self._can_keep)
        width = max(len(c) for _, c in pairs) + 1 if fast else max(len(p) + len(c) for p, c in pairs)
        vocab = eng.vocab_size()
        chunk_rows = max(1, min(_CHUNK, _MAX_LOGITS // max(1, width * vocab)))
        out: list[np.ndarray] = []
        with torch.inference_mode():
            for s in range(0, len(pairs), chunk_rows):
                chunk = pairs[s:s + chunk_rows]
                if fast:
                    k = max(len(c) for _, c in chunk) + 1
                    logits = eng.logits([p + c for p, c in chunk], keep=k)
                    logp = torch.log_softmax(logits.float(), dim=-1).cpu()
                    for r, (_, c) in enumerate(chunk):
                        pos = torch.arange(k - len(c) - 1, k - 1)
                        out.append(logp[r, pos, torch.tensor(c, dtype=torch.long)].numpy().astype(np.float64))
                else:
                    logp = torch.log_softmax(eng.logits_right_padded([p + c for p, c in chunk]).float(), dim=-1).cpu()
                    for r, (p, c) in enumerate(chunk):
                        pos = torch.arange(len(p) - 1, len(p) + len(c) - 1)
                        out.append(logp[r, pos, torch.tensor(c, dtype=torch.long)].numpy().astype(np.float64))
        return out

    def score_continuations(self, prefix: str | list[int], continuations: list[str] | list[list[int]],
                            hook: Any = None) -> list[np.ndarray]:
        """Log-probability of each token of several continuations of one prefix (answer scoring).

        The prefix runs once; its KV cache is copied to one row per continuation and the continuations run as one
        batch on top (no padding inside the prefix: exact up to float rounding); the first token of every
        continuation is scored from the prefix's last position.

        Parameters
        ----------
        prefix : str or list of int
            Text (encoded with special tokens, like a prompt) or token ids.
        continuations : list of str or list of list of int
            Texts (encoded without special tokens) or token ids; each non-empty.
        hook : (int, callable), optional
            ``(layer, fn)``: while the prefix runs, ``fn(hidden)`` (hidden ``(1, T, hidden_size)``) is applied to the
            output of decoder layer ``layer`` (1-based) and may return a replacement (task-vector patching).

        Returns
        -------
        list of float64 arrays, one per continuation, one entry per token.
        """
        from icml25.core.validation import check_int

        torch = self._torch
        vocab = self._engine.vocab_size()

        def ids_of(x: Any, name: str, cont: bool) -> list[int]:
            if isinstance(x, str):
                out = self._cont_ids(x) if cont else self._prompt_ids(x)
            elif isinstance(x, (list, tuple)):
                out = [check_int(t, f"{name} token", low=0, high=vocab - 1) for t in x]
            else:
                raise TypeError(f"{name} must be a string or a list of token ids, got {type(x).__name__}")
            if not out:
                raise ValueError(f"{name} = {x!r:.60} has no tokens; it must be non-empty")
            return out

        p = ids_of(prefix, "prefix", cont=False)
        if isinstance(continuations, (str, bytes)) or not isinstance(continuations, (list, tuple)) \
                or not continuations:
            raise TypeError("continuations must be a non-empty list of strings or of token-id lists")
        conts = [ids_of(c, f"continuations[{i}]", cont=True) for i, c in enumerate(continuations)]
        eng = self._engine
        K, longest = len(conts), max(len(c) for c in conts)
        with torch.inference_mode():
            first, st = eng.prefill([p], extra=max(longest - 1, 1), keep=1, share=False, hook=hook)
            lp0 = torch.log_softmax(first[0, -1].double(), -1).cpu()
            out = [[float(lp0[c[0]])] for c in conts]
            if longest > 1:
                eng.select(st, torch.zeros(K, dtype=torch.long))
                x = torch.full((K, longest - 1), self.pad_id, dtype=torch.long)
                for r, c in enumerate(conts):
                    x[r, :len(c) - 1] = torch.tensor(c[:-1], dtype=torch.long)
                lp = torch.log_softmax(eng.extend(st, x).double(), -1).cpu()
                for r, c in enumerate(conts):
                    if len(c) > 1:
                        out[r] += lp[r, torch.arange(len(c) - 1), torch.tensor(c[1:])].tolist()
        return [np.array(o, dtype=np.float64) for o in out]

    def _last(self, prompts: list[str], hidden: bool) -> np.ndarray:
        torch = self._torch
        seqs = [self._prompt_ids(p) for p in validate_prompts(prompts)]
        eng = self._engine
        res = []
        with torch.inference_mode():
            for s in range(0, len(seqs), _CHUNK):
                out = eng.logits(seqs[s:s + _CHUNK], keep=1, hidden=hidden)  # every prompt ends at the last position
                res.append(out[:, -1].float().cpu().numpy())
        return np.concatenate(res, axis=0)

    def next_token_logits(self, prompts: list[str]) -> np.ndarray:
        """Logits of the token after each prompt, shape ``(len(prompts), model vocab size)``."""
        return self._last(prompts, hidden=False)

    def hidden_states(self, prompts: list[str]) -> np.ndarray:
        """Last layer's hidden state (``hidden_states[-1]`` as transformers reports it, i.e. after the final norm)
        at each prompt's last token, shape ``(len(prompts), hidden_size)``."""
        return self._last(prompts, hidden=True)


def _check_children(n_children: Any) -> int:
    from icml25.core.validation import check_int

    if isinstance(n_children, (float, np.floating)):
        raise TypeError(f"n_children must be an integer, got {n_children!r}")
    return check_int(n_children, "n_children", low=1)


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _check_messages(messages: Any) -> None:
    if not isinstance(messages, list) or not messages:
        raise ValueError(f"messages must be a non-empty list of {{'role': ..., 'content': ...}} dicts, got "
                         f"{messages!r:.80}")
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or not isinstance(m.get("role"), str) or not isinstance(m.get("content"), str):
            raise ValueError(f"messages[{i}] must be a dict with string 'role' and 'content', got {m!r:.80}")


def save_random_gpt2(directory: str | Path, corpus: list[str], n_layer: int = 2, n_embd: int = 32, n_head: int = 2,
                     n_positions: int = 128, vocab_size: int = 300, initializer_range: float = 0.02,
                     seed: int = 0) -> Path:
    """Write a tiny randomly initialised GPT-2 with a byte-level BPE tokenizer trained on ``corpus`` to
    ``directory`` (a transformers checkpoint folder that :class:`HFModel` loads offline).

    For testing pipelines on the real-model path without downloading weights.

    Returns
    -------
    Path
        ``directory``.
    """
    from icml25.core.validation import check_int, check_positive

    if not isinstance(directory, (str, Path)):
        raise TypeError(f"directory must be a folder path (str or Path), got {type(directory).__name__}")
    if not str(directory).strip():
        raise ValueError("directory must be a non-empty folder path, got ''")
    for name, value, low in (("n_layer", n_layer, 1), ("n_embd", n_embd, 1), ("n_head", n_head, 1),
                             ("n_positions", n_positions, 1), ("vocab_size", vocab_size, 1), ("seed", seed, 0)):
        if isinstance(value, float):
            raise TypeError(f"{name} must be an integer, got {value!r}")
        check_int(value, name, low=low)
    if n_embd % n_head:
        raise ValueError(f"n_embd ({n_embd}) must be divisible by n_head ({n_head})")
    check_positive(initializer_range, "initializer_range")
    if isinstance(corpus, str) or not all(isinstance(t, str) for t in corpus):
        raise TypeError("corpus must be a list of strings")
    require("torch", extra="torch")
    require("transformers", extra="llm")
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    if not corpus:
        raise ValueError("corpus must contain at least one text to train the tokenizer on")
    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tk.train_from_iterator(list(corpus), trainer)
    hf_tok = PreTrainedTokenizerFast(tokenizer_object=tk, eos_token="<|endoftext|>", bos_token="<|endoftext|>")
    torch.manual_seed(seed)
    cfg = GPT2Config(vocab_size=len(hf_tok), n_layer=n_layer, n_embd=n_embd, n_head=n_head, n_positions=n_positions,
                     initializer_range=initializer_range, bos_token_id=hf_tok.eos_token_id,
                     eos_token_id=hf_tok.eos_token_id)
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    GPT2LMHeadModel(cfg).save_pretrained(d)
    hf_tok.save_pretrained(d)
    return d
