"""The numbers printed in the abstract of The Synergy of LLMs & RL (TEDUO), each carried by a registered claim (issue 44)."""
#: the abstract's first words, to find its paragraph in the shared abstracts file (used by tests only)
OPENING = "Developing autonomous agents capable of performing complex, multi-step decision-making tasks"
#: claim id -> the number(s) as printed in the abstract; the claim's paper_value holds them, its source says "abstract"
ABSTRACT_NUMBERS: dict[str, float | tuple[float, ...]] = {}
#: every other number token in the abstract (as re.findall(r"\d+(?:\.\d+)?", paragraph) extracts it), and what it is
NOT_RESULTS: dict[str, str] = {}
