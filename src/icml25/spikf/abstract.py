"""The numbers printed in the abstract of SpikF, each carried by a registered claim (issue 44)."""

#: the abstract's first words, to find its paragraph in the shared abstracts file (used by tests only)
OPENING = "Spiking Neural Networks (SNNs) have demonstrated remarkable potential"
#: claim id -> the number(s) as printed in the abstract; the claim's paper_value holds them, its source says "abstract"
ABSTRACT_NUMBERS: dict[str, float | tuple[float, ...]] = {
    "H1": 1.9,  # % MAE reduction, measured here against the only peer we train (DLinear), full scale
    "H2": 1.9,  # the same against the best state-of-the-art peer per cell (neuralforecast PatchTST, iTransformer,
    #             DLinear and ours): full scale on 4 data sets x {96, 336}; the paper preset runs 8 x 4
    "E1": 3.16,  # x lower energy (MAC/AC accounting against the non-spiking equivalent), full scale
}
#: every other number token in the abstract (as re.findall(r"\d+(?:\.\d+)?", paragraph) extracts it), and what it is
NOT_RESULTS: dict[str, str] = {
    "1": "the enumeration '(1)' of the first challenge (SNN encodings of long sequences)",
    "2": "the enumeration '(2)' of the second challenge (positional encoding in spiking self-attention)",
}
