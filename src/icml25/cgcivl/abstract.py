"""The numbers printed in the abstract of CGCIVL, each carried by a registered claim (issue 44)."""

#: the abstract's first words, to find its paragraph in the shared abstracts file (used by tests only)
OPENING = "Offline goal-conditioned reinforcement learning (GCRL) learns a goal-conditioned"
#: claim id -> the number(s) as printed in the abstract; the claim's paper_value holds them, its source says "abstract"
#: (the abstract prints no number: its main result, "CGCIVL consistently surpasses state-of-the-art methods" after
#: removing the "overestimation of values on unconnected pairs", is carried by the headline claims Q2b and F2)
ABSTRACT_NUMBERS: dict[str, float | tuple[float, ...]] = {}
#: every other number token in the abstract (as re.findall(r"\d+(?:\.\d+)?", paragraph) extracts it), and what it is
NOT_RESULTS: dict[str, str] = {}
