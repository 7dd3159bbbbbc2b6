"""CROQ's two LLM passes on SmolLM2-135M-Instruct: questions per CPU-second batched (length-sorted, one forward per
chunk giving letter log-probs and hidden state) vs one question at a time, on the same MMLU-Redux questions; the
final answers are compared. On one CPU thread the forward pass is compute-bound, so batching is not expected to
help much there (it does on a GPU: pass a CUDA HFModel to LLMAnswerer).

Run: PYTHONPATH=src .venv/bin/python benchmarks/croq/bench_llm_answerer.py [n_questions] [batch_size]
"""

from __future__ import annotations

import sys
import time

import numpy as np
import torch

from icml25.croq import CROQ, LLMAnswerer, build_mcq


def two_passes(ans: LLMAnswerer, cal: list, test: list, one_by_one: bool) -> tuple[float, np.ndarray, int]:
    """Wall time of the first pass on cal + test and the second pass on the revised test questions."""

    class OneByOne:
        def __init__(self, inner: LLMAnswerer) -> None:
            self.inner = inner

        def answer(self, qs: list):
            from icml25.croq import AnswerOutput

            outs = [self.inner.answer([q]) for q in qs]
            m = max(q.n_options for q in qs)
            z = np.full((len(qs), m), -np.inf)
            for i, o in enumerate(outs):
                z[i, :o.letter_logits.shape[1]] = o.letter_logits[0]
            return AnswerOutput(z, np.concatenate([o.hidden for o in outs]))

    runner = OneByOne(ans) if one_by_one else ans
    t = time.process_time()  # CPU time of this process: robust to other jobs on a shared machine
    croq = CROQ(runner, "logits", alpha=0.2).fit(None, cal)
    res = croq.predict(test)
    return time.process_time() - t, res.final_answer, int(res.revised.sum())


def main(n: int = 24, batch_size: int = 8) -> None:
    torch.set_num_threads(1)
    qs = build_mcq("mmlu", 10, seed=0)
    rng = np.random.default_rng(0)
    chosen = [qs[i] for i in rng.permutation(len(qs))[:2 * n]]
    cal, test = chosen[:n], chosen[n:]
    ans = LLMAnswerer("pretrained:smollm2-135m-instruct", batch_size=batch_size)
    ans.answer(cal[:2])  # warm-up (first-call allocations) outside the timings
    t_1, a_1, _ = two_passes(ans, cal, test, one_by_one=True)
    t_b, a_b, rev = two_passes(ans, cal, test, one_by_one=False)
    n_q = 2 * n + rev
    print(f"{n_q} LLM queries (first pass {2 * n}, second pass {rev} revised), 10-option MMLU-Redux, 1 thread, "
          "questions per CPU-second")
    print(f"batched (batch {batch_size}, length-sorted): {n_q / t_b:.2f} questions/s")
    print(f"one at a time:                   {n_q / t_1:.2f} questions/s")
    print(f"speed-up: {t_1 / t_b:.2f}x; same final answers: {bool(np.array_equal(a_b, a_1))}")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
