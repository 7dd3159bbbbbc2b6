"""The real-LLM path: any ``icml25.llm`` language model (transformers weights, an OpenAI-compatible completions
server such as vLLM, or TinyGPT) as the step policy, a value head on its hidden states as the PPM, and an
evaluation command on the official benchmark files.

Command line::

    icml25 rstar-math eval --data math500 --policy hf:/path/to/policy --ppm /path/to/ppm --method mcts --n 8

``--policy`` takes the ``icml25.llm.load_model`` specs ``hf:<dir>``, ``openai:<base_url>#<model>`` or
``tiny:<dir>``. ``--ppm DIR`` is a PPM in the official layout (a transformers model directory holding the backbone,
plus ``value_head.bin`` in the same directory); ``--ppm-head FILE`` with ``--ppm-model SPEC`` (default: the
policy) names the two parts separately. ``--out FILE`` writes per-problem outcomes as JSON (never over an existing
file).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..domain.benchmarks_data import BENCHMARK_FILES, load_benchmark
from ..domain.step_format import StepFormat
from ..execution.sandbox import SubprocessExecutor
from ..pipeline.evaluation import evaluate
from ..search.mcts import MCTSConfig

__all__ = ["LMStepPolicy", "HiddenStateValueHead", "ppm_parts", "run_eval", "main"]


class LMStepPolicy:
    """Step policy over any ``icml25.llm`` model: one batched ``generate`` call with ``n`` and stop strings.

    Returned steps are the raw continuation with the stop string that ended it appended (none if the model ran
    out of tokens, which the search treats as an unparsable step).
    """

    def __init__(self, lm) -> None:
        if not hasattr(lm, "generate"):
            raise TypeError(f"lm must implement generate(prompts, n, temperature, ...), got {type(lm).__name__}")
        self.lm = lm
        self.calls = 0

    def sample_steps(self, prompts: list[str], n: int = 1, temperature: float = 1.0,
                     stop: Sequence[str] | None = None, max_tokens: int = 256,
                     seed: int | None = None) -> list[list[str]]:
        """``n`` steps per prompt."""
        from .._validation import check_sampling

        n, temperature, max_tokens = check_sampling(n, temperature, max_tokens)
        self.calls += 1
        gens = self.lm.generate(list(prompts), n=n, temperature=temperature, max_tokens=max_tokens,
                                stop=list(stop or []), seed=seed)
        return [[g.text + (g.stop or "") for g in row] for row in gens]


class HiddenStateValueHead:
    """PPM scorer for a real model: ``tanh((w · h_last + b) / 5)`` with ``h_last`` the model's final hidden
    state at the last token of ``prefix ⊕ step`` (``lm.hidden_states``) and the head from ``value_head.bin``.

    Parameters
    ----------
    lm : object
        Model with ``hidden_states(prompts) -> (B, H)`` (HFModel, TinyGPT).
    head : path or dict
        A torch file (or dict) holding a weight of shape ``(1, H)`` or ``(H,)`` and a bias, under keys ending
        in ``weight`` / ``bias`` (official: ``v_head.summary.weight``, ``v_head.summary.bias``).
    scale : float
        The 5 of ``tanh(h / 5)``.
    """

    def __init__(self, lm, head, scale: float = 5.0) -> None:
        from icml25.core.validation import check_positive

        scale = check_positive(scale, "scale")
        if not hasattr(lm, "hidden_states"):
            raise TypeError("lm must provide hidden_states(prompts) (HFModel or TinyGPT)")
        if not isinstance(head, dict):
            p = Path(head)
            if not p.is_file():
                raise FileNotFoundError(f"value head file not found: {p} (expected value_head.bin)")
            import torch

            head = torch.load(p, map_location="cpu", weights_only=True)
        w = [v for k, v in head.items() if k.endswith("weight")]
        b = [v for k, v in head.items() if k.endswith("bias")]
        if len(w) != 1 or len(b) != 1:
            raise ValueError(f"value head must hold one '*weight' and one '*bias' entry, got keys {sorted(head)}")
        self.w = np.asarray(w[0], dtype=np.float64).reshape(-1)
        self.b = float(np.asarray(b[0], dtype=np.float64).reshape(-1)[0])
        self.lm, self.scale = lm, float(scale)

    def score(self, prefixes: list[str], steps: list[str]) -> np.ndarray:
        """Scores in [-1, 1]."""
        h = np.asarray(self.lm.hidden_states([p + s for p, s in zip(prefixes, steps)]), dtype=np.float64)
        if h.shape[1] != self.w.shape[0]:
            raise ValueError(f"value head has {self.w.shape[0]} inputs but the model's hidden size is {h.shape[1]}")
        return np.tanh((h @ self.w + self.b) / self.scale)


def ppm_parts(ppm_dir: str | Path) -> tuple[str, Path]:
    """``(backbone spec, value-head path)`` of a PPM directory in the official layout (model + ``value_head.bin``)."""
    d = Path(ppm_dir).expanduser()
    if not d.is_dir():
        raise FileNotFoundError(f"PPM directory not found: {d} (expected a transformers model directory holding "
                                "value_head.bin)")
    head = d / "value_head.bin"
    if not head.is_file():
        raise FileNotFoundError(f"{d} has no value_head.bin; pass --ppm-head FILE and --ppm-model SPEC instead")
    return f"hf:{d}", head


def run_eval(data: str, policy: str, ppm_head: str | None = None, ppm_model: str | None = None,
             method: str = "mcts", n: int = 8, limit: int | None = None, data_path: str | None = None,
             n_candidates: int = 8, max_depth: int = 16, max_tokens: int = 256, timeout_s: float = 10.0,
             seed: int = 0, ppm: str | None = None) -> dict:
    """Evaluate a real policy (and PPM) on an official benchmark file; returns accuracies per method.

    ``method`` is one of ``greedy``, ``maj``, ``bon`` (needs the PPM), ``mcts`` (needs the PPM). The PPM is
    ``ppm`` (a directory in the official layout) or ``ppm_head`` + ``ppm_model``. Each method's entry holds
    ``acc``, ``steps`` and the per-problem ``correct`` list.
    """
    from icml25.core.validation import check_int, check_positive
    from icml25.llm import load_model

    from .._validation import check_text

    check_text(data, "data")
    check_text(policy, "policy")
    check_int(n, "n", low=1)
    if limit is not None:
        check_int(limit, "limit", low=1)
    for name, value in (("n_candidates", n_candidates), ("max_depth", max_depth), ("max_tokens", max_tokens)):
        check_int(value, name, low=1)
    check_positive(timeout_s, "timeout_s")
    if ppm is not None:
        if ppm_head is not None or ppm_model is not None:
            raise ValueError("give either --ppm DIR or --ppm-head/--ppm-model, not both")
        ppm_model, head_path = ppm_parts(ppm)
        ppm_head = str(head_path)
    if method not in ("greedy", "maj", "bon", "mcts"):
        raise ValueError(f"method must be greedy, maj, bon or mcts, got {method!r}")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if method in ("bon", "mcts") and ppm_head is None:
        raise ValueError(f"method {method!r} needs a PPM: --ppm DIR or --ppm-head value_head.bin")
    records = load_benchmark(data, path=data_path)
    if limit is not None:
        records = records[:limit]
    lm = load_model(policy)
    scorer = None
    if method in ("bon", "mcts"):
        scorer = HiddenStateValueHead(load_model(ppm_model) if ppm_model else lm, ppm_head)
    fmt = StepFormat.official()
    cfg = MCTSConfig(n_candidates=n_candidates, max_depth=max_depth, errors_threshold=1, mode="inference")
    res = evaluate(records, LMStepPolicy(lm), SubprocessExecutor(timeout_s=timeout_s), scorer,
                   methods=(method,), ns=(n,), seed=seed, mcts_config=cfg, max_depth=max_depth,
                   max_tokens=max_tokens, fmt=fmt)
    res["n_problems"] = len(records)
    return res


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point (see the module docstring)."""
    ap = argparse.ArgumentParser(prog="python -m icml25.rstar_math.models.real_llm",
                                 description="Evaluate an rStar-Math policy (+PPM) on a benchmark file.")
    ap.add_argument("--data", required=True, choices=sorted(BENCHMARK_FILES))
    ap.add_argument("--data-path", default=None, help="local file in the official eval format")
    ap.add_argument("--policy", required=True, help="hf:<dir> | openai:<base_url>#<model> | tiny:<dir>")
    ap.add_argument("--ppm", default=None, help="PPM directory (transformers model + value_head.bin)")
    ap.add_argument("--ppm-head", default=None, help="value_head.bin of the PPM")
    ap.add_argument("--ppm-model", default=None, help="PPM backbone spec (default: the policy)")
    ap.add_argument("--method", default="mcts", choices=["greedy", "maj", "bon", "mcts"])
    ap.add_argument("--n", type=int, default=8)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="write per-problem outcomes to this JSON file (must not exist)")
    a = ap.parse_args(argv)
    out = Path(a.out).expanduser() if a.out else None
    if out is not None and out.exists():
        print(f"error: {out} exists; choose a new --out file (results are never written over a file)",
              file=sys.stderr)
        return 2
    from icml25.llm.openai_server import OpenAIServerError

    try:
        res = run_eval(a.data, a.policy, a.ppm_head, a.ppm_model, a.method, a.n, a.limit, a.data_path,
                       max_tokens=a.max_tokens, seed=a.seed, ppm=a.ppm)
    except (ValueError, FileNotFoundError, TypeError, OSError, OpenAIServerError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(res, indent=1))
    print(json.dumps({k: ({m: v for m, v in r.items() if m != "correct"} if isinstance(r, dict) else r)
                      for k, r in res.items()}, indent=1))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
