"""The annotators of TEDUO step 1: who writes abstraction code and who judges "is goal g achieved in state s?".

* :class:`RuleBackend` — **not an LLM**: oracle templates. It answers from the symbolic state (minigrid's
  verifiers, optionally with label noise to mimic judging errors) and writes the A1 template code. Used by tests
  and by the quick reproduction.
* :class:`LLMAnnotator` — the real path: any :class:`icml25.llm.LanguageModel` (e.g.
  ``load_model("pretrained:smollm2-135m-instruct")``) prompted in batches. The judge reads yes/no from the
  log-probabilities of the label words (never from free generation): zero-shot after a chat prompt, or — with
  ``shots`` — after a few-shot completion prompt (:func:`few_shot_judge_prompt`), optionally calibrated on a
  content-free query. The abstraction writer either generates code greedily (``writer="free"``) or is constrained
  to the environment's vocabulary (``writer="constrained"``: the A1 code skeleton with its target object chosen
  among the colour x type pairs by log-probability, :meth:`LLMAnnotator.constrained_target`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from icml25.core.validation import check_int, check_probability

from .abstraction import STATE_FORMAT, template_abstraction_code
from .babyai import ACTIONS, COLOURS, TYPES, SymbolicState, describe_state, goal_reached, parse_goal

__all__ = ["RuleBackend", "LLMAnnotator", "parse_yes_no", "extract_code", "parse_action", "judge_prompt",
           "abstraction_prompt", "judge_view", "few_shot_judge_prompt", "judge_shots", "constrained_writer_prompt",
           "JUDGE_VIEWS", "WRITERS"]

#: what the judge is shown: the whole textual state, or only its goal-relevant part (the goal's objects, the cell
#: ahead, the carried object; spec §2.2 1b: "abstract or textual states")
JUDGE_VIEWS = ("raw", "goal")
#: how abstraction code is written: greedy free generation, or the A1 skeleton with the target chosen by log-prob
WRITERS = ("free", "constrained")
#: the label words of the few-shot judge (after "Achieved:")
LABELS = (" yes", " no")
JUDGE_RULES = ("An agent moves in a grid room. Positions are steps forward and to the left/right of the agent. "
               "'go to X' is achieved when X is 1 forward 0 side (right in front of the agent). "
               "'pick up X' is achieved when the agent is carrying X.")


def parse_yes_no(text: Any) -> bool | None:
    """Read a yes/no answer from a model reply: True, False, or None when it is neither.

    Examples
    --------
    >>> parse_yes_no(" Yes, it is."), parse_yes_no("no"), parse_yes_no("maybe")
    (True, False, None)
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    m = re.match(r"\W*(yes|no)\b", text.strip().lower())
    return None if m is None else m.group(1) == "yes"


def parse_action(text: Any) -> int | None:
    """Index (into :data:`~icml25.teduo.babyai.ACTIONS`) of the action word a reply starts with, or None
    (an invalid action).

    Examples
    --------
    >>> parse_action(" forward\\n"), parse_action("Pick up"), parse_action("jump")
    (2, 3, None)
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    w = re.sub(r"[^a-z ]", " ", text.lower()).split()
    if not w:
        return None
    first = "pickup" if w[:2] == ["pick", "up"] else w[0]
    return ACTIONS.index(first) if first in ACTIONS else None


def extract_code(text: Any, name: str = "abstract") -> str | None:
    """The Python source of ``def <name>(...)`` in a model reply (inside a ``` fence if there is one), or None."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    fences = re.findall(r"```(?:python)?\n(.*?)(?:```|$)", text, flags=re.S)
    for block in fences + [text]:
        i = block.find(f"def {name}(")
        if i >= 0:
            return block[i:].rstrip() + "\n"
    return None


def judge_prompt(state: SymbolicState, goal: str) -> list[dict[str, str]]:
    """Chat messages asking whether ``goal`` is achieved in ``state`` (answer yes/no)."""
    g = parse_goal(goal)
    return [{"role": "system", "content": "You check whether an agent in a grid world has achieved its goal. "
                                          "'go to X' is achieved when X is 1 step forward and 0 steps to the side; "
                                          "'pick up X' is achieved when the agent is carrying X."},
            {"role": "user", "content": f"State: {describe_state(state)}.\nGoal: {g.text}.\n"
                                        "Is the goal achieved? Answer yes or no."}]


def judge_view(state: SymbolicState, goal: str, view: str = "raw") -> str:
    """The text the judge sees: :func:`describe_state` (``view="raw"``) or, with ``view="goal"``, the same rendering
    restricted to the goal's objects (the cell ahead and the carried object are always shown).

    Examples
    --------
    >>> s = SymbolicState(2, 3, 0, None, (("blue", "ball", 3, 3), ("red", "key", 4, 2)))
    >>> judge_view(s, "go to the red key", "goal")
    'red key 2 forward 1 left; ahead object; carrying nothing'
    """
    from icml25.core.validation import check_option

    check_option(view, "view", JUDGE_VIEWS)
    if view == "raw":
        return describe_state(state)
    g = parse_goal(goal)
    keep = tuple(o for o in state.objects if (o[0], o[1]) == (g.colour, g.type))
    full = describe_state(state).split("; ")
    return "; ".join(describe_state(state._replace(objects=keep)).split("; ")[:-2] + full[-2:])


def _judge_item(state: SymbolicState, goal: str, view: str) -> str:
    return f"State: {judge_view(state, goal, view)}\nGoal: {parse_goal(goal).text}\nAchieved:"


def few_shot_judge_prompt(state: SymbolicState | None, goal: str | None,
                          shots: Sequence[tuple[SymbolicState, str, bool]], view: str = "raw") -> str:
    """A completion-style few-shot prompt: the rules, one ``State/Goal/Achieved: yes|no`` block per shot, then the
    query block ending in ``Achieved:`` (its label word is scored). ``state=None`` gives the content-free query
    ``State: N/A`` / ``Goal: N/A`` used for calibration."""
    blocks = [JUDGE_RULES]
    for s, g, y in shots:
        blocks.append(_judge_item(s, g, view) + (LABELS[0] if y else LABELS[1]))
    blocks.append("State: N/A\nGoal: N/A\nAchieved:" if state is None else _judge_item(state, str(goal), view))
    return "\n\n".join(blocks)


def judge_shots(states: Sequence[SymbolicState], goals: Sequence[str], k: int,
                rng: np.random.Generator | int = 0) -> list[tuple[SymbolicState, str, bool]]:
    """``k`` demonstration examples (state, goal, label) for the few-shot judge, labelled by the environment's rule
    (as a person writing the prompt would): alternately reached and not reached where both exist, in a random
    order, drawn from the given pairs (pass pairs disjoint from those judged)."""
    k = check_int(k, "k", low=1)
    rng = np.random.default_rng(rng) if not isinstance(rng, np.random.Generator) else rng
    lab = [goal_reached(s, g) for s, g in zip(states, goals)]
    pos = [i for i in rng.permutation(len(lab)) if lab[i]]
    neg = [i for i in rng.permutation(len(lab)) if not lab[i]]
    pick: list[int] = []
    while len(pick) < k and (pos or neg):
        for pool in (pos, neg):
            if pool and len(pick) < k:
                pick.append(pool.pop())
    if len(pick) < k:
        raise ValueError(f"judge_shots needs at least k={k} (state, goal) pairs, got {len(lab)}")
    pick = [pick[i] for i in rng.permutation(len(pick))]
    return [(states[i], parse_goal(goals[i]).text, bool(lab[i])) for i in pick]


_EXAMPLE_GOAL = ("go to the green box", "go to the red key")
_SLOT = 'carried = state.carrying == ("'


def constrained_writer_prompt(goal: str, content_free: bool = False
                              ) -> tuple[str, list[str], list[tuple[str, str]]]:
    """The constrained abstraction writer's completion prompt (the state format, the A1 code for another goal, then
    the code for ``goal`` up to its first target literal), the candidate continuations (one per colour x type pair
    of the environment) and those pairs. ``content_free``: the query goal reads 'N/A' (for calibration)."""
    g = parse_goal(goal)
    other = _EXAMPLE_GOAL[1] if (g.colour, g.type) == ("green", "box") else _EXAMPLE_GOAL[0]
    code = template_abstraction_code(goal)
    prefix = code[:code.index(_SLOT) + len(_SLOT)]
    prompt = (f"# {STATE_FORMAT}\n# abstract(state) keeps only what matters for the goal '{other}':\n"
              f"{template_abstraction_code(other)}\n# abstract(state) keeps only what matters for the goal "
              f"'{'N/A' if content_free else g.text}':\n{prefix}")
    pairs = [(c, t) for c in COLOURS for t in TYPES]
    return prompt, [f'{c}", "{t}")' for c, t in pairs], pairs


def abstraction_prompt(goal: str) -> list[dict[str, str]]:
    """Chat messages asking for ``abstract(state)`` for ``goal``, with the template for another goal as example."""
    g = parse_goal(goal)
    other = "go to the green box" if (g.colour, g.type) != ("green", "box") else "go to the red key"
    return [{"role": "system", "content": "You write short deterministic Python functions. No imports."},
            {"role": "user", "content": f"{STATE_FORMAT}\nWrite abstract(state) keeping only what matters for the "
                                        f"goal '{other}'."},
            {"role": "assistant", "content": f"```python\n{template_abstraction_code(other)}```"},
            {"role": "user", "content": f"Now write abstract(state) for the goal '{g.text}'."}]


class RuleBackend:
    """Oracle templates — **not an LLM**: the rule-based stand-in for the annotator (spec §5, backend 1).

    ``judge`` answers from the symbolic state with minigrid's verifier semantics, flipping each answer with
    probability ``noise``; ``abstraction_code`` returns the A1 template.

    Parameters
    ----------
    noise : float
        Label-flip probability epsilon (mimics LLM judging errors).
    random_state : int
        Seed of the flips.

    Examples
    --------
    >>> s = SymbolicState(1, 1, 0, ("red", "key"), ())
    >>> RuleBackend().judge([s, s], ["pick up the red key", "go to the red key"]).tolist()
    [True, False]
    """

    is_llm = False
    name = "rule-based oracle templates (not an LLM)"

    def __init__(self, noise: float = 0.0, random_state: int = 0):
        self.noise = check_probability(noise, "noise")
        self.random_state = check_int(random_state, "random_state", low=0)
        self._rng = np.random.default_rng(random_state)

    def judge(self, states: Sequence[SymbolicState], goals: Sequence[str]) -> np.ndarray:
        """Boolean array: is ``goals[i]`` achieved in ``states[i]`` (with flips at rate ``noise``)."""
        if len(states) != len(goals):
            raise ValueError(f"states and goals must have the same length, got {len(states)} and {len(goals)}")
        y = np.array([goal_reached(s, g) for s, g in zip(states, goals)], dtype=bool)
        if self.noise > 0:
            y ^= self._rng.random(len(y)) < self.noise
        return y

    def abstraction_code(self, goal: str) -> str:
        """The A1 template code for ``goal``."""
        return template_abstraction_code(goal)


class LLMAnnotator:
    """A language model as annotator (TEDUO step 1): batched yes/no judging and abstraction-code writing.

    Parameters
    ----------
    model : icml25.llm.LanguageModel
        A backend with ``logprobs`` and ``generate`` (``chat_prompt`` is used when it has one).
    batch_size : int
        Prompts per batched call.
    max_code_tokens : int
        Token budget of an abstraction reply (``writer="free"``).
    shots : sequence of (state, goal, bool), optional
        Few-shot demonstrations (:func:`judge_shots`). Given: the judge scores the label words " yes"/" no" after
        :func:`few_shot_judge_prompt` (works for base and chat models alike). None: zero-shot chat prompt
        (:func:`judge_prompt`), "yes" vs "no".
    view : {"raw", "goal"}
        What the few-shot judge is shown (:func:`judge_view`).
    calibrate : bool
        With ``shots``: subtract the label-word margin of the content-free query (contextual calibration) before
        thresholding at 0 (ignored by the zero-shot judge). The constrained writer likewise subtracts each
        literal's score for the goal 'N/A'.
    writer : {"free", "constrained"}
        How :meth:`abstraction_code` writes code: greedy generation, or constrained to the environment's
        vocabulary (:meth:`constrained_target`).
    """

    is_llm = True

    def __init__(self, model: Any, batch_size: int = 16, max_code_tokens: int = 400,
                 shots: Sequence[tuple[SymbolicState, str, bool]] | None = None, view: str = "raw",
                 calibrate: bool = False, writer: str = "free"):
        from icml25.core.validation import check_option

        if not hasattr(model, "logprobs") or not hasattr(model, "generate"):
            raise TypeError(f"model must be an icml25.llm LanguageModel, got {type(model).__name__}")
        self.model = model
        self.batch_size = check_int(batch_size, "batch_size", low=1)
        self.max_code_tokens = check_int(max_code_tokens, "max_code_tokens", low=16)
        if shots is not None:
            shots = [(s, parse_goal(g).text, bool(y)) for s, g, y in shots]
            if not shots:
                raise ValueError("shots must hold at least one (state, goal, label) example, or be None")
        self.shots = shots
        self.view = check_option(view, "view", JUDGE_VIEWS)
        if not isinstance(calibrate, bool):
            raise TypeError(f"calibrate must be a bool, got {calibrate!r}")
        self.calibrate = calibrate
        self.writer = check_option(writer, "writer", WRITERS)
        self.name = repr(model)
        self.bias_ = 0.0
        self._writer_prior: np.ndarray | None = None

    def _text(self, messages: list[dict[str, str]]) -> str:
        if hasattr(self.model, "chat_prompt") and getattr(self.model.tokenizer, "chat_template", None):
            return self.model.chat_prompt(messages)
        return "\n".join(m["content"] for m in messages) + "\nAnswer:"

    def _label_ids(self, words: Sequence[str]) -> list[int] | None:
        """First token of each label word when every word is one token of a model with next-token logits."""
        tok = getattr(self.model, "tokenizer", None)
        if tok is None or not hasattr(self.model, "next_token_logits"):
            return None
        ids = [tok.encode(w, add_special_tokens=False) for w in words]
        return [i[0] for i in ids] if all(len(i) == 1 for i in ids) else None

    def _margins(self, prompts: list[str], yes: Sequence[str], no: Sequence[str]) -> np.ndarray:
        """max log p(yes word) - max log p(no word) after every prompt (next-token log-softmax when the words are
        single tokens, else the continuations' summed log-probabilities)."""
        out = np.zeros(len(prompts))
        ids = self._label_ids(list(yes) + list(no))
        for i in range(0, len(prompts), self.batch_size):
            chunk = prompts[i:i + self.batch_size]
            if ids is not None:
                z = np.asarray(self.model.next_token_logits(chunk), dtype=np.float64)
                z = z - z.max(-1, keepdims=True)
                lp = z - np.log(np.exp(z).sum(-1, keepdims=True))
                out[i:i + len(chunk)] = lp[:, ids[:len(yes)]].max(-1) - lp[:, ids[len(yes):]].max(-1)
                continue
            a = np.max([[float(np.sum(v)) for v in self.model.logprobs(chunk, [w] * len(chunk))] for w in yes], 0)
            b = np.max([[float(np.sum(v)) for v in self.model.logprobs(chunk, [w] * len(chunk))] for w in no], 0)
            out[i:i + len(chunk)] = a - b
        return out

    def judge_margins(self, states: Sequence[SymbolicState], goals: Sequence[str]) -> np.ndarray:
        """log p(yes) - log p(no) per (state, goal) pair (minus the content-free margin when ``calibrate``)."""
        if len(states) != len(goals):
            raise ValueError(f"states and goals must have the same length, got {len(states)} and {len(goals)}")
        if self.shots is None:
            prompts = [self._text(judge_prompt(s, g)) for s, g in zip(states, goals)]
            words: tuple[Sequence[str], Sequence[str]] = (("yes", "Yes"), ("no", "No"))
            if self._label_ids(["yes", "Yes", "no", "No"]) is None:
                words = (("yes",), ("no",))
            m = self._margins(prompts, *words)
            free = None
        else:
            prompts = [few_shot_judge_prompt(s, g, self.shots, self.view) for s, g in zip(states, goals)]
            words = ((LABELS[0],), (LABELS[1],))
            m = self._margins(prompts, *words)
            free = few_shot_judge_prompt(None, None, self.shots, self.view) if self.calibrate else None
        if free is not None:
            self.bias_ = float(self._margins([free], *words)[0])
            m = m - self.bias_
        return m

    def judge(self, states: Sequence[SymbolicState], goals: Sequence[str]) -> np.ndarray:
        """Boolean array: the label word "yes" outscores "no" (log-probabilities; see :meth:`judge_margins`)."""
        return self.judge_margins(states, goals) > 0

    def constrained_target(self, goal: str) -> tuple[tuple[str, str], np.ndarray]:
        """The object the constrained writer keeps for ``goal``: the colour x type pair whose literal scores highest
        (summed token log-probabilities) after :func:`constrained_writer_prompt`, and the scores of all pairs."""
        prompt, conts, pairs = constrained_writer_prompt(goal)
        scores = self._continuation_scores(prompt, conts)
        if self.calibrate:  # contextual calibration: minus each literal's score for a content-free goal
            if self._writer_prior is None:
                self._writer_prior = self._continuation_scores(constrained_writer_prompt(goal, content_free=True)[0],
                                                               conts)
            scores = scores - self._writer_prior
        return pairs[int(np.argmax(scores))], scores

    def _continuation_scores(self, prompt: str, conts: list[str]) -> np.ndarray:
        if hasattr(self.model, "score_continuations"):
            lps = self.model.score_continuations(prompt, conts)
        else:
            lps = self.model.logprobs([prompt] * len(conts), conts)
        return np.array([float(np.sum(v)) for v in lps])

    def abstraction_code(self, goal: str) -> str:
        """Abstraction code for ``goal``. ``writer="free"``: the model's reply to :func:`abstraction_prompt` (greedy),
        reduced to the function's source when found; ``writer="constrained"``: the A1 code for the object chosen by
        :meth:`constrained_target` (valid by construction; it is right when that object is the goal's)."""
        if self.writer == "constrained":
            c, t = self.constrained_target(goal)[0]
            return template_abstraction_code(f"go to the {c} {t}")
        reply = self.model.generate([self._text(abstraction_prompt(goal))], temperature=0.0,
                                    max_tokens=self.max_code_tokens, stop=["<|im_end|>"])[0][0].text
        code = extract_code(reply)
        return reply if code is None else code
