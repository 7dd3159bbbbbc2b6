"""De-mark (Chen, Wu, Guo & Huang, ICML 2025): removing and spoofing n-gram (KGW) watermarks by random selection
probing, without the key.

Library: the watermark (:class:`KGWWatermark`, z-test :meth:`KGWWatermark.detect`), what the attacker may call
(:class:`LMOracle`, :class:`WatermarkedOracle`, :class:`HFCausalLMOracle`, :class:`OpenAICompatibleOracle` over a
:class:`NextTokenLM` such as :class:`HFNextTokenLM` or :class:`LocalLM`), probing (:class:`ProbeTemplate`,
:class:`RandomSelectionProber`, :func:`token_scores`), estimation (:func:`estimate_prefix_length`,
:func:`estimate_delta`, :func:`identify_green_list`), the attacks (:class:`DeMark`, :class:`Spoofer`, the
:class:`RandomScrubber` baseline), evaluation (:func:`tpr_at_fpr`, :func:`median_p`, :func:`topk_kl`,
:func:`perplexity`) and simulators (:class:`InstructionFollowingLM`, :class:`SimulatedProbeOracle`, a word-level
:class:`NGramLM`). Torch and transformers are imported only inside the functions that need them.
"""

from .attack import DeMark, RandomScrubber, Spoofer, StepRecord, sample_topk
from .estimation import estimate_delta, estimate_prefix_length, identify_green_list, pair_scores
from .metrics import median_p, perplexity, topk_kl, tpr_at_fpr
from .oracles import (
                      HFCausalLMOracle,
                      HFNextTokenLM,
                      LMOracle,
                      LocalLM,
                      NextTokenLM,
                      OpenAICompatibleOracle,
                      WatermarkedOracle,
)
from .probing import DEFAULT_INSTRUCTION, ProbeTemplate, RandomSelectionProber, token_scores
from .simulators import InstructionFollowingLM, SimulatedProbeOracle
from .text_lm import NGramLM, WordTokenizer
from .watermark import PRF_SCHEMES, Detection, KGWWatermark, kgw_z_score

__all__ = ["KGWWatermark", "Detection", "PRF_SCHEMES", "kgw_z_score", "NextTokenLM", "LocalLM", "HFNextTokenLM",
           "LMOracle", "WatermarkedOracle", "HFCausalLMOracle", "OpenAICompatibleOracle", "ProbeTemplate",
           "RandomSelectionProber", "token_scores", "DEFAULT_INSTRUCTION", "estimate_prefix_length",
           "estimate_delta", "identify_green_list", "pair_scores", "DeMark", "Spoofer", "RandomScrubber",
           "StepRecord", "sample_topk", "tpr_at_fpr", "median_p", "topk_kl", "perplexity",
           "InstructionFollowingLM", "SimulatedProbeOracle", "WordTokenizer", "NGramLM"]
