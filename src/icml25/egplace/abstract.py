"""The numbers printed in the abstract of EGPlace, each carried by a registered claim (issue 44)."""

#: the abstract's first words, to find its paragraph in the shared abstracts file (used by tests only)
OPENING = "Macro placement, which involves optimizing the positions of modules"
#: claim id -> the number(s) as printed in the abstract; the claim's paper_value holds them, its source says "abstract"
ABSTRACT_NUMBERS: dict[str, float | tuple[float, ...]] = {
    "ispd_hpwl_ea": 10.8,  # HPWL −10.8 % vs WireMask-EA (ISPD2005; paper scale, the user's netlists)
    "ispd_hpwl_efficientplace": 9.3,  # HPWL −9.3 % vs EfficientPlace (paper scale, the user's EfficientPlace results)
    "ispd_speedup_ea": 7.8,  # 7.8x speed-up over WireMask-EA (loop-mask WireMask-EA run time / EGPlace's, same budget)
    "F_speedup_ea": 7.8,  # the same quantity measured on ibm01 at the full preset's budget (issue 50)
    "ispd_speedup_efficientplace": 2.8,  # 2.8x speed-up over EfficientPlace (the same)
}
#: every other number token in the abstract (as re.findall(r"\d+(?:\.\d+)?", paragraph) extracts it), and what it is
NOT_RESULTS: dict[str, str] = {
    "2005": "the benchmark suite's name 'ISPD2005' (a year in a name, not a result)",
}
