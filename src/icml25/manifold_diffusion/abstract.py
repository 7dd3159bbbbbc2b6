"""The numbers printed in the abstract of Riemannian Diffusion Adaptation, each carried by a registered claim (issue 44)."""
#: the abstract's first words, to find its paragraph in the shared abstracts file (used by tests only)
OPENING = "Online distributed optimization is particularly useful for solving"
#: claim id -> the number(s) as printed in the abstract; the claim's paper_value holds them, its source says "abstract"
#: (none: the abstract prints no number; the headline claims are Q1 (network agreement), Q2 (online decentralized
#: PCA), F8 (Gaussian mixture inference) and F10 (real data))
ABSTRACT_NUMBERS: dict[str, float | tuple[float, ...]] = {}
#: every other number token in the abstract (as re.findall(r"\d+(?:\.\d+)?", paragraph) extracts it), and what it is
NOT_RESULTS: dict[str, str] = {}
