"""The numbers printed in the abstract of Sorbet, each carried by a registered claim (issue 44)."""

#: the abstract's first words, to find its paragraph in the shared abstracts file (used by tests only)
OPENING = "For reasons such as privacy, there are use cases for language models at the edge"
#: claim id -> the number(s) as printed in the abstract; the claim's paper_value holds them, its source says "abstract"
ABSTRACT_NUMBERS: dict[str, float | tuple[float, ...]] = {
    "E1": 27.16,  # x energy savings compared to BERT (full scale: our trained model, the paper's MAC/AC accounting)
}
#: every other number token in the abstract (as re.findall(r"\d+(?:\.\d+)?", paragraph) extracts it), and what it is
NOT_RESULTS: dict[str, str] = {}
