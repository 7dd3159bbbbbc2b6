"""The numbers printed in the abstract of Differentially Private Analysis for Binary Response Models, each carried by a
registered claim (issue 44)."""

#: the abstract's first words, to find its paragraph in the shared abstracts file (used by tests only)
OPENING = "Randomized response (RR) mechanisms constitute a fundamental and effective technique"
#: claim id -> the number(s) as printed in the abstract; the claim's paper_value holds them, its source says "abstract"
#: (the abstract prints no number: the headline claims carry its qualitative results, see experiment.py)
ABSTRACT_NUMBERS: dict[str, float | tuple[float, ...]] = {}
#: every other number token in the abstract (as re.findall(r"\d+(?:\.\d+)?", paragraph) extracts it), and what it is
NOT_RESULTS: dict[str, str] = {}
