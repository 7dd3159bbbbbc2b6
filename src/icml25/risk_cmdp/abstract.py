"""The numbers printed in the abstract of Online Learning in Risk Sensitive constrained MDP, each carried by a registered claim (issue 44)."""
#: the abstract's first words, to find its paragraph in the shared abstracts file (used by tests only)
OPENING = "We consider a setting in which the agent"
#: claim id -> the number(s) as printed in the abstract; the claim's paper_value holds them, its source says "abstract"
#: (the exponent 3/4 of K in the regret and violation bounds; the 3 of H³ and the 4 of H⁴ are the same tokens)
ABSTRACT_NUMBERS: dict[str, float | tuple[float, ...]] = {"V34": (3, 4), "R34": (3, 4)}
#: every other number token in the abstract (as re.findall(r"\d+(?:\.\d+)?", paragraph) extracts it), and what it is
NOT_RESULTS: dict[str, str] = {
    "2": "the exponent of S in the bounds' constants √(H⁴S²A …) and √(H³S²A …) (notation, not a result)",
    "1": "the 1 of log(1/δ), of 'probability at least 1−δ', of V_g,max = (1/|α|)(exp(|α|H) − 1) (notation)",
    "0": "the sign condition α < 0 on the risk-aversion parameter (the setting, not a result)",
}
