"""The numbers printed in the abstract of SDP-CROWN, each carried by a registered claim (issue 44)."""

#: the abstract's first words, to find its paragraph in the shared abstracts file (used by tests only)
OPENING = "Neural network verifiers based on linear bound propagation"
#: claim id -> the number(s) as printed in the abstract; the claim's paper_value holds them, its source says "abstract"
ABSTRACT_NUMBERS: dict[str, float | tuple[float, ...]] = {
    # "markedly improved verification performance on large models with up to 65 thousand neurons and 2.47 million
    # parameters": CIFAR ConvLarge (65,536 neurons counting the inputs, 2,466,858 parameters), Table 1 63.5 %
    "convlarge": (65.0, 2.47),
}
#: every other number token in the abstract (as re.findall(r"\d+(?:\.\d+)?", paragraph) extracts it), and what it is
NOT_RESULTS: dict[str, str] = {
    "2": "the norm's index in '\\ell_{2}-norm-based inter-neuron coupling' (a name, not a result)",
}
