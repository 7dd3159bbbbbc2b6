"""The catalogue of the 19 ICML 2025 papers icml25 implements (slugs as in the specs)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Paper", "PAPERS", "paper"]


@dataclass(frozen=True)
class Paper:
    """One paper of the catalogue."""

    slug: str  # folder name under src/icml25/
    title: str  # the paper's title
    authors: str  # first author et al.
    ref: str  # arXiv id or PMLR/OpenReview reference
    summary: str  # one line: what the method does


PAPERS: tuple[Paper, ...] = (
    Paper("cat", "CAT: Contrastive Adversarial Training for Evaluating the Robustness of Protective "
          "Perturbations in Latent Diffusion Models", "Peng et al.", "arXiv:2502.07225",
          "Latent adapters trained contrastively to strip protective perturbations before fine-tuning."),
    Paper("cgcivl", "Conservative Offline Goal-Conditioned Implicit V-Learning", "Ke et al.", "PMLR v267 ke25a",
          "Offline goal-conditioned RL with a conservative penalty on cross-trajectory goal values."),
    Paper("croq", "Prune 'n Predict: Optimizing LLM Decision-making with Conformal Prediction",
          "Vishwakarma et al.", "arXiv:2501.00555",
          "Conformal prediction sets revise multiple-choice questions; CP-OPT learns scores with small sets."),
    Paper("demark", "De-mark: Watermark Removal in Large Language Models", "Chen et al.", "arXiv:2410.13808",
          "Estimates and removes n-gram LLM watermarks by random-selection probing."),
    Paper("egplace", "EGPlace: evolutionary macro placement with greedy-repositioning-guided mutation",
          "(unverified)", "ICML 2025 poster",
          "Evolutionary chip macro placement with greedy repositioning and fast wire masks."),
    Paper("hier_decoding", "To Each Metric Its Decoding: Post-Hoc Optimal Decision Rules of Probabilistic "
          "Hierarchical Classifiers", "Plaud et al.", "arXiv:2506.01552",
          "Bayes-optimal decoding of hierarchical classifier probabilities for any metric."),
    Paper("inference_scaling", "A Simple Model of Inference Scaling Laws", "Levi", "arXiv:2410.16377",
          "pass@k coverage laws from a memorisation ansatz with beta-distributed difficulty."),
    Paper("label_dp", "Differentially Private Analysis for Binary Response Models: Optimality, Estimation, "
          "and Inference", "Zhang et al.", "PMLR 267:74923-74937",
          "Optimal randomized-response label DP for logistic/probit regression with valid inference."),
    Paper("manifold_diffusion", "Riemannian Diffusion Adaptation for Distributed Optimization on Manifolds",
          "Wang et al.", "PMLR 267:62401-62422",
          "Adapt-then-combine diffusion over a network of agents on Riemannian manifolds."),
    Paper("mcmc_extrapolation", "Learning Extrapolative Sequence Transformations from Markov Chains",
          "Hager et al.", "arXiv:2505.20251",
          "Distils MCMC search chains into a model that extrapolates sequence properties."),
    Paper("median_of_means", "Uniform Mean Estimation for Heavy-Tailed Distributions via Median-of-Means",
          "Høgsgaard & Paudice", "arXiv:2506.14673",
          "Uniform median-of-means estimation, MoM k-means and MoM regression under heavy tails."),
    Paper("risk_cmdp", "Online Learning in Risk Sensitive constrained MDP", "Ghosh & Moharrami",
          "PMLR 267:19406-19425",
          "Optimistic primal-dual learning with an entropic-risk constraint on a budget-augmented MDP."),
    Paper("rstar_math", "rStar-Math: Small LLMs Can Master Math Reasoning with Self-Evolved Deep Thinking",
          "Guan et al.", "arXiv:2501.04519",
          "MCTS over code-verified reasoning steps guided by a process preference model, self-evolved."),
    Paper("sdp_crown", "SDP-CROWN: Efficient Bound Propagation for Neural Network Verification with Tightness "
          "of Semidefinite Programming", "Chiu et al.", "arXiv:2506.06665",
          "l2-ball neural network verification with SDP-tight offsets at bound-propagation cost."),
    Paper("sis_vaccination", "Learn to Vaccinate: Combining Structure Learning and Effective Vaccination for "
          "Epidemic and Outbreak Control", "Elahi et al.", "arXiv:2506.15397",
          "Learns a contact graph from SIS infection states, then vaccinates to minimise spectral radius."),
    Paper("sorbet", "Sorbet: A Neuromorphic Hardware-Compatible Transformer-Based Spiking Language Model",
          "Tang et al.", "arXiv:2409.15298",
          "Spiking transformer language model with shift-based softmax and power normalisation."),
    Paper("spikf", "SpikF: Spiking Fourier Network for Efficient Long-term Prediction", "Wu et al.",
          "PMLR 267:67342-67368", "Spiking Fourier network for long-term time-series forecasting."),
    Paper("task_superposition", "Everything Everywhere All at Once: LLMs can In-Context Learn Multiple Tasks "
          "in Superposition", "Xiong et al.", "arXiv:2410.05603",
          "LLMs run several in-context tasks at once; output distribution mixes tasks by prompt share."),
    Paper("teduo", "The Synergy of LLMs & RL Unlocks Offline Learning of Generalizable Language-Conditioned "
          "Policies with Low-fidelity Data", "Pouplin et al.", "arXiv:2412.06877",
          "Offline RL on unlabelled data with LLM goal labelling, distilled into a language-conditioned policy."),
)


def paper(slug: str) -> Paper:
    """The catalogue entry of ``slug`` (KeyError listing the known slugs otherwise)."""
    for p in PAPERS:
        if p.slug == slug:
            return p
    raise KeyError(f"unknown paper slug {slug!r}; known: {', '.join(p.slug for p in PAPERS)}")
