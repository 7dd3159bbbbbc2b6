"""The numbers printed in the abstract of CAT, each carried by a registered claim (issue 44)."""

#: the abstract's first words, to find its paragraph in the shared abstracts file (used by tests only)
OPENING = "Latent diffusion models have recently demonstrated superior capabilities"
#: claim id -> the number(s) as printed in the abstract; the claim's paper_value holds them, its source says "abstract"
#: (the abstract prints no result number: its main results, "the primary reason adversarial examples are effective ...
#: is the distortion of their latent representations" and "CAT significantly reduces the effectiveness of protective
#: perturbations in customization", are carried by the headline claims Q1, C2b and sd_customisation)
ABSTRACT_NUMBERS: dict[str, float | tuple[float, ...]] = {}
#: every other number token in the abstract (as re.findall(r"\d+(?:\.\d+)?", paragraph) extracts it), and what it is
NOT_RESULTS: dict[str, str] = {
    "98": "part of the GitHub user name 'senp98' in the code URL (a name, not a result)",
}
