"""The code-augmented step format of rStar-Math (spec §2.2): tags, stop strings, prompts, step parsing.

A solution is ``<code>`` followed by steps; each step is comment lines (the natural-language thought) plus code
lines and ends with ``<end_of_step>``; the last code step prints the answer and ends with ``<end_of_code>``; the
executor's stdout is appended as ``<output>...<end_of_output>``; then ``<answer>... \\boxed{...}<end_of_answer>``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["TAGS", "STOP_STRINGS", "StepFormat", "Step", "parse_step", "extract_boxed", "step_code",
           "SFT_PROMPT", "FEW_SHOT_PROMPT"]

CODE, END_STEP, END_CODE = "<code>", "<end_of_step>", "<end_of_code>"
OUTPUT, END_OUTPUT = "<output>", "<end_of_output>"
ANSWER, END_ANSWER = "<answer>", "<end_of_answer>"
USER, ASSISTANT = "<|user|>", "<|assistant|>"
REFINE, END_REFINE = "<refine>", "<end_of_refine>"

#: the official tag vocabulary (added as special tokens to the tokenizer)
TAGS = (CODE, END_STEP, END_CODE, OUTPUT, END_OUTPUT, ANSWER, END_ANSWER, USER, ASSISTANT, REFINE, END_REFINE)
#: generation of one step stops at any of these (the stop string is appended to the step text)
STOP_STRINGS = (END_STEP, END_CODE, END_ANSWER)

#: official ``sft_prompt.json`` template for a trained policy
SFT_PROMPT = "<|user|>:\n{question}\n<|assistant|>: Let's think step by step and solve the problem with code."
#: a bootstrap prompt in the manner of ``mcts_prompt.json`` (instruction + demonstrations)
FEW_SHOT_PROMPT = ("You are a powerful agent with broad math knowledge and great python programming skills. "
                   "Solve the problem step by step: each step is a python comment with your reasoning followed by "
                   "code, ending with <end_of_step>; print the final answer and end the code with <end_of_code>; "
                   "then give the answer as \\boxed{{}} ending with <end_of_answer>.\n\n{examples}"
                   "<|user|>:\n{question}\n<|assistant|>: Let's think step by step and solve the problem with code.")


@dataclass(frozen=True)
class Step:
    """A parsed generated step.

    Attributes
    ----------
    kind : {"code", "answer", "invalid"}
        ``answer`` if the text contains ``boxed`` (official rule), ``code`` for a code action, ``invalid`` when
        the text is empty or has no stop tag.
    code : str
        The step's code with tags stripped (empty for answer/invalid steps).
    answer : str or None
        The ``\\boxed{}`` content of an answer step.
    closes_code : bool
        True when the step ends the code block (``<end_of_code>``), so its output is shown.
    """

    kind: str
    code: str = ""
    answer: str | None = None
    closes_code: bool = False

    def __post_init__(self) -> None:
        if self.kind not in ("code", "answer", "invalid"):
            raise ValueError(f"kind must be 'code', 'answer' or 'invalid', got {self.kind!r}")


def extract_boxed(text: str) -> str | None:
    """Content of the last ``\\boxed{...}`` in ``text`` (brace matching; ``\\text{}`` wrappers stripped).

    Parameters
    ----------
    text : str
        Any text.

    Returns
    -------
    str or None
        The stripped content, or None when there is no complete ``\\boxed{``.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    start = text.rfind("\\boxed")
    if start < 0:
        return None
    i = text.find("{", start)
    if i < 0:
        rest = text[start + len("\\boxed"):].strip().split()
        return rest[0].rstrip("$.") if rest else None
    depth, j = 0, i
    while j < len(text):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                break
        j += 1
    if depth != 0:
        return None
    content = text[i + 1:j].strip()
    while content.startswith("\\text{") and content.endswith("}"):
        content = content[len("\\text{"):-1].strip()
    return content


def step_code(text: str) -> str:
    """The executable code of a step: tags and any ``<output>`` block removed, lines left-stripped.

    Lines are left-stripped because the word-level synthetic format separates tokens by spaces; this never
    changes the meaning of flat (block-free) step code. Set ``keep_indent`` semantics through
    :meth:`StepFormat.code_of` for real Python code.
    """
    return StepFormat().code_of(text)


@dataclass(frozen=True)
class StepFormat:
    """Tag set, stop strings and prompt templates of the official implementation.

    Parameters
    ----------
    prompt_template : str
        Template with ``{question}``; default is the official SFT prompt.
    stop : tuple of str
        Stop strings of one step generation.
    dedent_lines : bool
        Left-strip every code line before execution (needed for the space-separated synthetic format; turn off
        for real model code with indented blocks).
    """

    prompt_template: str = SFT_PROMPT
    stop: tuple[str, ...] = STOP_STRINGS
    dedent_lines: bool = True
    examples: str = field(default="")
    output_sep: str = " "

    def __post_init__(self) -> None:
        from .._validation import check_text

        check_text(self.prompt_template, "prompt_template")
        if "{question}" not in self.prompt_template:
            raise ValueError(f"prompt_template must contain '{{question}}', got {self.prompt_template!r}")
        if isinstance(self.stop, str) or not self.stop or not all(isinstance(s, str) and s for s in self.stop):
            raise ValueError(f"stop must be a non-empty tuple of non-empty strings, got {self.stop!r}")

    def output_block(self, observation: str) -> str:
        """``<output>obs<end_of_output>`` appended to a step that closes the code block (word-level: spaced)."""
        sep = self.output_sep
        return f"{sep}{OUTPUT}{sep}{observation}{sep}{END_OUTPUT}"

    @classmethod
    def sft(cls) -> StepFormat:
        """Preset matching the official ``sft_prompt.json``."""
        return cls()

    @classmethod
    def few_shot(cls, examples: str) -> StepFormat:
        """Preset in the manner of ``mcts_prompt.json`` + ``few_shots.json`` (bootstrap round)."""
        return cls(prompt_template=FEW_SHOT_PROMPT, stop=STOP_STRINGS + (END_OUTPUT,), dedent_lines=False,
                   examples=examples, output_sep="")

    @classmethod
    def official(cls) -> StepFormat:
        """Official SFT prompt with real-Python code (indentation kept, ``<output>`` without spaces)."""
        return cls(dedent_lines=False, output_sep="")

    def prompt(self, question: str) -> str:
        """The question prompt (Eq. trajectory ``x``)."""
        if not isinstance(question, str) or not question.strip():
            raise ValueError(f"question must be a non-empty string, got {question!r}")
        return self.prompt_template.format(question=question, examples=self.examples)

    def render(self, question: str, steps: list[str]) -> str:
        """Full trajectory text ``x ⊕ s_1 ⊕ ... ⊕ s_d`` (string concatenation)."""
        return self.prompt(question) + "".join(steps)

    def question_of(self, prompt: str) -> str:
        """Recover the question from a prompt built by :meth:`prompt`."""
        head, _, tail = self.prompt_template.partition("{question}")
        head = head.format(examples=self.examples) if "{examples}" in head else head
        if not prompt.startswith(head):
            raise ValueError("prompt does not start with this format's template")
        cut = tail.split("{")[0] if tail else ""
        body = prompt[len(head):]
        end = body.find(cut) if cut else len(body)
        return body[:end if end >= 0 else len(body)]

    def parse(self, text: str) -> Step:
        """Parse one generated step (official rule: contains ``boxed`` -> answer, else code action)."""
        if not isinstance(text, str):
            raise TypeError(f"step text must be a str, got {type(text).__name__}")
        if "boxed" in text:
            ans = extract_boxed(text)
            if ans is None or ans == "":
                return Step("invalid")
            return Step("answer", answer=ans)
        if not text.strip() or not any(text.rstrip().endswith(s) for s in (END_STEP, END_CODE, END_OUTPUT)):
            return Step("invalid")
        if END_ANSWER in text or ANSWER in text:
            return Step("invalid")
        return Step("code", code=self.code_of(text), closes_code=END_CODE in text)

    def code_of(self, text: str) -> str:
        """Executable code of a step text (tags and output blocks removed)."""
        out_at = text.find(OUTPUT)
        if out_at >= 0:
            text = text[:out_at]
        for tag in (CODE, END_STEP, END_CODE, END_OUTPUT):
            text = text.replace(tag, "\n")
        lines = text.split("\n")
        if self.dedent_lines:
            lines = [ln.strip() for ln in lines]
        return "\n".join(ln for ln in lines if ln.strip())


def parse_step(text: str) -> Step:
    """Parse one generated step with the default :class:`StepFormat` (see :meth:`StepFormat.parse`).

    Examples
    --------
    >>> parse_step(" Ann = 3 <end_of_step>").kind
    'code'
    >>> parse_step(" <answer> $\\\\boxed{ 6 }$ <end_of_answer>").answer
    '6'
    >>> parse_step(" no stop tag").kind
    'invalid'
    """
    return StepFormat().parse(text)
