"""The numbers printed in the abstract of Learn to Vaccinate, each carried by a registered claim (issue 44)."""
#: the abstract's first words, to find its paragraph in the shared abstracts file (used by tests only)
OPENING = "The Susceptible-Infected-Susceptible (SIS) model is a widely"
#: claim id -> the number(s) as printed in the abstract; the claim's paper_value holds them, its source says "abstract"
#: (none: the abstract prints no number; the headline claims are Q3_sislearn_f1, Q4_dp_exact, Q5_greedy_ratio and
#: F_vac_time, its four qualitative results: graph recovery, an optimal SRM algorithm, an effective greedy
#: heuristic, vaccination on the learned graph that shortens the outbreak)
ABSTRACT_NUMBERS: dict[str, float | tuple[float, ...]] = {}
#: every other number token in the abstract (as re.findall(r"\d+(?:\.\d+)?", paragraph) extracts it), and what it is
NOT_RESULTS: dict[str, str] = {}
