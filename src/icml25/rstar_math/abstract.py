"""The numbers printed in the abstract of rStar-Math, each carried by a registered claim (issue 44)."""

#: the abstract's first words, to find its paragraph in the shared abstracts file (used by tests only)
OPENING = "We present rStar-Math to demonstrate that small language models"
#: claim id -> the number(s) as printed in the abstract; the claim's paper_value holds them, its source says "abstract"
ABSTRACT_NUMBERS: dict[str, float | tuple[float, ...]] = {
    # "Through 4 rounds of self-evolution with millions of synthesized solutions for 747k math problems ... it improves
    # Qwen2.5-Math-7B from 58.8% to 90.0%" (MATH): the paper's models on MATH500, paper scale
    "math_qwen7b": (58.8, 90.0, 4.0, 747.0),
    "math_vs_o1": 4.5,  # "surpassing o1-preview by +4.5%"
    "aime": (53.3, 8.0, 15.0, 20.0),  # "an average of 53.3% (8/15) of problems, ranking among the top 20%"
}
#: every other number token in the abstract (as re.findall(r"\d+(?:\.\d+)?", paragraph) extracts it), and what it is
NOT_RESULTS: dict[str, str] = {
    "1": "the model names 'o1' and 'o1-preview' and the list marker '(1)' (names, not results)",
    "2": "the list marker '(2)'",
    "3": "the list marker '(3)'",
    "2.5": "the model family in 'Qwen2.5-Math-7B' (a name)",
    "7": "the model size in 'Qwen2.5-Math-7B' (a name)",
}
