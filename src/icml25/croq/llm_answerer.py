"""LLMAnswerer: a real pretrained language model answers lettered MCQs from its next-token distribution.

The zero-shot prompt (question, lettered options, ``"Answer:"``; for an instruction-tuned model wrapped in its chat
template) is run once; at the answer position the log-probabilities of every option letter's tokens (``"A"`` and
``" A"`` by default, combined by log-sum-exp) are the letter logits ``z(x)`` of spec §2.1, and the last layer's
hidden state ``h(x)`` at that position is returned as CP-OPT's features. The same class runs on

* :class:`icml25.llm.HFModel` (and the ``"pretrained:<name>"`` models, which are HFModels): one batched forward
  pass per chunk of prompts gives both the letter logits and the hidden state;
* :class:`icml25.llm.OpenAIServer` (vLLM, llama.cpp server): the server's top-k next-token log-probabilities,
  letters missing from the top list get a floor (no hidden state, so CP-OPT runs on the letter logits only);
* any other :class:`icml25.llm.LanguageModel` with ``next_token_logits`` (and optionally ``hidden_states``), e.g.
  :class:`icml25.llm.TinyGPT`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from icml25.core.validation import check_int

from .answerers import AnswerOutput, _check_mcqs, letter_logits_from_top_logprobs
from .mcq import LETTERS, MCQ, render_prompt

__all__ = ["LLMAnswerer", "OptionTextAnswerer", "DEFAULT_INSTRUCTION"]

#: instruction put before the question in the chat (instruct-model) prompt
DEFAULT_INSTRUCTION = "Answer the following multiple choice question with the letter of the correct option."


def _encode_plain(tokenizer: Any, text: str) -> list[int]:
    """Token ids of ``text`` without special tokens (BOS), for transformers and icml25 tokenizers alike."""
    if callable(tokenizer) and hasattr(tokenizer, "convert_ids_to_tokens"):
        return list(tokenizer(text, add_special_tokens=False)["input_ids"])
    return list(tokenizer.encode(text))


class LLMAnswerer:
    """Answer lettered MCQs with a pretrained LLM, as in the 'Prune 'n Predict' (CROQ, ICML 2025) paper, §2.1.

    ``z_j(x) = log sum_{t in T(L_j)} p(t | prompt(x))`` for each option letter ``L_j`` (``T(L)`` = the single-token
    spellings of the letter, by default ``"A"`` and ``" A"``); standard inference is ``argmax_j z_j`` and the
    softmax of ``z`` over the question's letters is the logit score of CP (spec §2.1-2.2).

    Parameters
    ----------
    lm : LanguageModel or str
        An ``icml25.llm`` backend (:class:`~icml25.llm.HFModel`, :class:`~icml25.llm.OpenAIServer`, TinyGPT, ...)
        or a :func:`icml25.llm.load_model` spec such as ``"pretrained:smollm2-135m-instruct"``.
    chat : bool or "auto"
        Wrap the question in the tokenizer's chat template (instruction-tuned models). ``"auto"``: when the
        tokenizer has a chat template.
    instruction : str
        Text before the question in the chat prompt.
    template, option_format, separator : str
        Rendering of the question (:func:`~icml25.croq.mcq.render_prompt`); the plain prompt ends in ``"Answer:"``.
    answer_prefix : str
        Text appended after the chat template's assistant header (default ``"Answer:"``: the letter is then the
        next token, as in the plain prompt).
    letter_variants : tuple of str
        Prefixes of the letter whose single-token spellings are pooled (``("", " ")``: ``"A"`` and ``" A"``).
    batch_size : int
        Prompts per forward pass (prompts are sorted by length first, to waste little padding).
    top_k : int
        Top log-probabilities requested from an :class:`~icml25.llm.OpenAIServer`.
    examples : sequence of MCQ
        Solved demonstrations put before every question (few-shot; the paper is zero-shot, the default): in the
        plain prompt as ``<question> Answer: <letter>`` blocks, in the chat prompt as earlier user/assistant turns.

    Attributes
    ----------
    letter_token_ids : list of list of int
        The token ids pooled for each of the 15 letters (local backends).
    backend : str
        ``"hf"`` (one forward pass for logits and hidden state), ``"server"`` (top-k log-probabilities) or
        ``"generic"`` (``next_token_logits`` [+ ``hidden_states``]).

    Examples
    --------
    >>> import numpy as np
    >>> from icml25.croq import MCQ
    >>> class LM:  # a toy backend: next-token logits over 128 "byte" tokens, prefers "B"
    ...     class tokenizer:
    ...         @staticmethod
    ...         def encode(text): return [ord(c) for c in text]
    ...     def next_token_logits(self, prompts):
    ...         z = np.zeros((len(prompts), 128)); z[:, ord("B")] = 2.0; return z
    >>> out = LLMAnswerer(LM(), letter_variants=("",)).answer([MCQ("2 + 2 = ?", ("3", "4", "5"), 1)])
    >>> out.answers.tolist(), round(float(out.probabilities()[0, 1]), 3)
    ([1], 0.787)
    """

    def __init__(self, lm: Any, chat: bool | str = "auto", instruction: str = DEFAULT_INSTRUCTION,
                 template: str = "{question}\n{options}\nAnswer:", option_format: str = "{letter}. {text}",
                 separator: str = "\n", answer_prefix: str = "Answer:", letter_variants: tuple[str, ...] = ("", " "),
                 batch_size: int = 8, top_k: int = 20, examples: Sequence[MCQ] = ()) -> None:
        if isinstance(lm, str):
            from icml25.llm import load_model

            lm = load_model(lm)
        if not (hasattr(lm, "next_token_logits") or hasattr(lm, "top_logprobs")):
            raise TypeError(f"lm must be an icml25.llm backend with next_token_logits or top_logprobs, got "
                            f"{type(lm).__name__}")
        for name, val in (("instruction", instruction), ("template", template), ("option_format", option_format),
                          ("separator", separator), ("answer_prefix", answer_prefix)):
            if not isinstance(val, str):
                raise TypeError(f"{name} must be a string, got {type(val).__name__}")
        if "{options}" not in template:
            raise ValueError(f"template must contain the {{options}} field, got {template!r}")
        if (isinstance(letter_variants, str) or not isinstance(letter_variants, (tuple, list)) or not letter_variants
                or not all(isinstance(v, str) for v in letter_variants)):
            raise TypeError(f"letter_variants must be a non-empty tuple of strings, got {letter_variants!r}")
        if not (chat == "auto" or isinstance(chat, bool)):
            raise ValueError(f"chat must be True, False or 'auto', got {chat!r}")
        if isinstance(examples, MCQ) or not isinstance(examples, (list, tuple)):
            raise TypeError(f"examples must be a list of solved MCQs, got {type(examples).__name__}")
        for i, q in enumerate(examples):
            if not isinstance(q, MCQ) or q.answer is None:
                raise ValueError(f"examples[{i}] must be an MCQ with a known answer, got {q!r:.60}")
        self.examples = tuple(examples)
        self.lm = lm
        self.batch_size = int(check_int(batch_size, "batch_size", low=1))
        self.top_k = int(check_int(top_k, "top_k", low=1))
        self.instruction, self.template, self.option_format = instruction, template, option_format
        self.separator, self.answer_prefix, self.letter_variants = separator, answer_prefix, tuple(letter_variants)
        tok = getattr(lm, "tokenizer", None)
        has_template = getattr(tok, "chat_template", None) is not None and hasattr(lm, "chat_prompt")
        if chat is True and not has_template:
            raise ValueError(f"chat=True needs a backend whose tokenizer has a chat template; {type(lm).__name__} "
                             "has none (a base model): use chat=False")
        self.chat = has_template if chat == "auto" else bool(chat)
        if hasattr(lm, "model") and hasattr(lm, "pad_id") and callable(tok):
            self.backend = "hf"
        elif hasattr(lm, "top_logprobs"):
            self.backend = "server"
        else:
            self.backend = "generic"
        self.letter_token_ids: list[list[int]] = []
        if self.backend != "server":
            if tok is None:
                raise TypeError(f"lm must have a tokenizer to find the letter tokens, got {type(lm).__name__}")
            for L in LETTERS:
                ids = sorted({_encode_plain(tok, v + L)[0] for v in self.letter_variants
                              if len(_encode_plain(tok, v + L)) == 1})
                if not ids:
                    raise ValueError(f"no spelling of letter {L!r} with prefixes {self.letter_variants} is a single "
                                     "token of this tokenizer; pass other letter_variants")
                self.letter_token_ids.append(ids)
            owners: dict[int, str] = {}
            for L, ids in zip(LETTERS, self.letter_token_ids):
                for i in ids:
                    if i in owners:
                        raise ValueError(f"letters {owners[i]!r} and {L!r} share token {i}")
                    owners[i] = L

    # ------------------------------------------------------------------ prompts
    def prompt(self, mcq: MCQ) -> str:
        """The full text sent to the model for ``mcq`` (chat template applied when ``self.chat``)."""
        if not self.chat:
            shots = "".join(render_prompt(q, self.template, self.option_format, self.separator)
                            + f" {self._demo_answer(q)}\n\n" for q in self.examples)
            return shots + render_prompt(mcq, self.template, self.option_format, self.separator)
        plain = self.template.replace("\nAnswer:", "").rstrip()
        messages: list[dict[str, str]] = []
        for i, q in enumerate((*self.examples, mcq)):
            body = render_prompt(q, plain, self.option_format, self.separator)
            messages.append({"role": "user", "content": f"{self.instruction}\n\n{body}" if i == 0 else body})
            if q is not mcq:
                messages.append({"role": "assistant", "content": f"{self.answer_prefix} {self._demo_answer(q)}"})
        return self.lm.chat_prompt(messages) + self.answer_prefix

    def _demo_answer(self, q: MCQ) -> str:
        """The answer written after a few-shot demonstration: its letter."""
        return LETTERS[q.answer]  # type: ignore[index]

    def prompts(self, mcqs: Sequence[MCQ]) -> list[str]:
        """:meth:`prompt` of each question."""
        return [self.prompt(q) for q in _check_mcqs(mcqs)]

    # ------------------------------------------------------------------ forward passes
    def _hf_last(self, prompts: list[str], option_ids: list[list[list[int]]] | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
        """Log-softmax of the next-token logits at the letter ids ``(B, 15, n_var)`` pooled, and hidden ``(B, d)``,
        from ONE forward pass per chunk (the output layer runs on the last position only). ``option_ids[i][j]``:
        the token ids pooled for option ``j`` of prompt ``i`` instead of the letters."""
        import torch

        lm = self.lm
        tok = lm.tokenizer
        seqs = [list(tok(p, add_special_tokens=not self.chat)["input_ids"]) or [lm.pad_id] for p in prompts]
        order = np.argsort([len(s) for s in seqs], kind="stable")
        flat = sorted({i for ids in self.letter_token_ids for i in ids})
        col = {t: c for c, t in enumerate(flat)}
        z = np.empty((len(seqs), len(LETTERS)))
        hid: np.ndarray | None = None
        keep = {"logits_to_keep": 1} if getattr(lm, "_can_keep", False) else {}
        with torch.inference_mode():
            for s in range(0, len(seqs), self.batch_size):
                rows = order[s:s + self.batch_size]
                chunk = [seqs[r] for r in rows]
                T = max(len(c) for c in chunk)
                idx = torch.full((len(chunk), T), int(lm.pad_id), dtype=torch.long)
                mask = torch.zeros((len(chunk), T), dtype=torch.long)
                for r, c in enumerate(chunk):  # left padding: every prompt ends at the last position
                    idx[r, T - len(c):] = torch.tensor(c, dtype=torch.long)
                    mask[r, T - len(c):] = 1
                pos = (mask.cumsum(-1) - 1).clamp(min=0)
                dev = lm.device
                o = lm.model(input_ids=idx.to(dev), attention_mask=mask.to(dev), position_ids=pos.to(dev),
                             output_hidden_states=True, **keep)
                full = torch.log_softmax(o.logits[:, -1].float(), dim=-1)
                h = o.hidden_states[-1][:, -1].float().cpu().numpy()
                if hid is None:
                    hid = np.empty((len(seqs), h.shape[1]))
                hid[rows] = h
                if option_ids is not None:
                    for b, r in enumerate(rows):
                        z[r] = -np.inf
                        for j, ids in enumerate(option_ids[r]):
                            z[r, j] = float(torch.logsumexp(full[b, ids], dim=0))
                    continue
                logp = full[:, flat].cpu().numpy()
                for j, ids in enumerate(self.letter_token_ids):
                    z[rows, j] = np.logaddexp.reduce(logp[:, [col[i] for i in ids]], axis=1)
        assert hid is not None
        return z, hid

    def _generic_last(self, prompts: list[str]) -> tuple[np.ndarray, np.ndarray | None]:
        z, hidden = [], []
        has_hidden = hasattr(self.lm, "hidden_states")
        for s in range(0, len(prompts), self.batch_size):
            chunk = prompts[s:s + self.batch_size]
            full = np.asarray(self.lm.next_token_logits(chunk), dtype=float)
            full = full - np.logaddexp.reduce(full, axis=1, keepdims=True)
            z.append(np.stack([np.logaddexp.reduce(full[:, ids], axis=1) for ids in self.letter_token_ids], 1))
            if has_hidden:
                hidden.append(np.asarray(self.lm.hidden_states(chunk), dtype=float))
        return np.concatenate(z), (np.concatenate(hidden) if has_hidden else None)

    def _server_last(self, prompts: list[str], k: np.ndarray) -> np.ndarray:
        tops = self.lm.top_logprobs(prompts, self.top_k)
        if len(tops) != len(prompts):
            raise ValueError(f"the server returned {len(tops)} results for {len(prompts)} prompts")
        z = np.full((len(prompts), len(LETTERS)), -np.inf)
        for i, (top, m) in enumerate(zip(tops, k)):
            z[i, :m] = letter_logits_from_top_logprobs(top, int(m))
        return z

    def answer(self, mcqs: Sequence[MCQ]) -> AnswerOutput:
        """Letter log-probabilities ``(n, max options)`` (``-inf`` beyond each question's option count) and the
        last-layer hidden state ``(n, d)`` at the answer position (None for a server)."""
        qs = _check_mcqs(mcqs)
        prompts = [self.prompt(q) for q in qs]
        k = np.array([q.n_options for q in qs])
        m = int(k.max())
        hidden = None
        if self.backend == "server":
            z = self._server_last(prompts, k)
        elif self.backend == "hf":
            z, hidden = self._hf_last(prompts)
        else:
            z, hidden = self._generic_last(prompts)
        z = z[:, :m].copy()
        z[np.arange(m)[None, :] >= k[:, None]] = -np.inf
        return AnswerOutput(z, hidden)

    def letter_mass(self, mcqs: Sequence[MCQ]) -> np.ndarray:
        """Total next-token probability on the question's letters, ``(n,)`` (how much of the model's answer the
        letter distribution captures; not available from a server's top-k)."""
        z = self.answer(mcqs).letter_logits
        return np.exp(np.logaddexp.reduce(z, axis=1))


class OptionTextAnswerer(LLMAnswerer):
    """Answer MCQs by the log-probability of each option's *text* (its first token) after the listed options.

    Not the paper's scoring (which reads the option letters, :class:`LLMAnswerer`): small LLMs that cannot map a
    letter to an option still answer by naming it. The prompt is the same (question, lettered options,
    ``"Answer:"``); option ``j`` is scored ``z_j(x) = log p(t_j | prompt(x))`` with ``t_j`` the first token of
    ``option_prefix + text_j``. The model still reads every listed option, so CROQ's revised question (fewer
    options listed) changes its answer only through its context dependence, as with letters. Options whose first
    tokens coincide get the same score (:meth:`collisions` counts them). Local transformers backends only.

    Parameters
    ----------
    lm : LanguageModel or str
        An :class:`~icml25.llm.HFModel` (or a ``"pretrained:<name>"`` spec).
    option_prefix : str
        Text put before an option's text to find its first token (``" "``: the option follows ``"Answer:"``).
    instruction : str
        Chat-prompt instruction (instruct models).
    **kwargs
        The other :class:`LLMAnswerer` parameters (template, option_format, examples, batch_size, ...); few-shot
        demonstrations end in their answer's text.

    Examples
    --------
    >>> ans = OptionTextAnswerer("pretrained:gemma-3-270m")  # doctest: +SKIP
    >>> ans.answer(build_mcq("capitals", 4)[:8]).answers     # doctest: +SKIP
    """

    def __init__(self, lm: Any, option_prefix: str = " ",
                 instruction: str = "Answer the following multiple choice question with the correct option.",
                 **kwargs: Any) -> None:
        super().__init__(lm, instruction=instruction, **kwargs)
        if self.backend != "hf":
            raise ValueError(f"OptionTextAnswerer needs a local transformers backend (HFModel), got "
                             f"{type(self.lm).__name__}")
        if not isinstance(option_prefix, str):
            raise TypeError(f"option_prefix must be a string, got {type(option_prefix).__name__}")
        self.option_prefix = option_prefix
        self._tok_cache: dict[str, int] = {}

    def _demo_answer(self, q: MCQ) -> str:
        return q.options[q.answer]  # type: ignore[index]

    def option_token(self, text: str) -> int:
        """First token id of ``option_prefix + text``."""
        if text not in self._tok_cache:
            self._tok_cache[text] = _encode_plain(self.lm.tokenizer, self.option_prefix + text.strip())[0]
        return self._tok_cache[text]

    def collisions(self, mcqs: Sequence[MCQ]) -> float:
        """Share of questions in which two options start with the same token."""
        qs = _check_mcqs(mcqs)
        return float(np.mean([len({self.option_token(o) for o in q.options}) < q.n_options for q in qs]))

    def answer(self, mcqs: Sequence[MCQ]) -> AnswerOutput:
        """First-token log-probabilities of the options ``(n, max options)`` (``-inf`` padding) and the last-layer
        hidden state ``(n, d)`` at the answer position."""
        qs = _check_mcqs(mcqs)
        ids = [[[self.option_token(o)] for o in q.options] for q in qs]
        z, hidden = self._hf_last([self.prompt(q) for q in qs], option_ids=ids)
        m = max(q.n_options for q in qs)
        return AnswerOutput(z[:, :m].copy(), hidden)
