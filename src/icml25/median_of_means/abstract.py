"""The numbers printed in the abstract of Uniform Mean Estimation via Median-of-Means, each carried by a registered claim (issue 44)."""
#: the abstract's first words, to find its paragraph in the shared abstracts file (used by tests only)
OPENING = "The Median of Means (MoM) is a"
#: claim id -> the number(s) as printed in the abstract; the claim's paper_value holds them, its source says "abstract"
#: (none: the abstract states its results without numbers; the headline claims are Q2a, Q2b, F5a and Q3a)
ABSTRACT_NUMBERS: dict[str, float | tuple[float, ...]] = {}
#: every other number token in the abstract (as re.findall(r"\d+(?:\.\d+)?", paragraph) extracts it), and what it is
NOT_RESULTS: dict[str, str] = {
    "1": "the lower end of the moment range p ∈ (1,2] (the setting: more than one finite moment, not a result)",
    "2": "the upper end of the moment range p ∈ (1,2] (the setting: possibly no finite variance, not a result)",
}
