"""Levers against the chooser bias of a real model (issue 48): the same probe answers read as the paper's summed
ratio ("sum"), the symmetrised mean of the two orderings' log-ratios ("logmean") and, optionally, with contextual
calibration (the mean ratio matrix after random reference contexts subtracted, "+cal").

Per variant: sigma_base (std of R on the clean model over random pairs), green-list precision / recall at real
generation steps (scored with the true h and delta), h_hat (Algorithm 3, H_max 4, one context) and delta_hat at the
true h. KGW gamma 0.5, delta 2, h 3; 1 torch thread. A chat model gets the chat probe, a base model (no chat
template, e.g. Gemma-3-270M) the completion probe.

    python benchmarks/demark/chooser_levers.py --model gemma-3-270m [--pairs 20 --steps 4 --delta-contexts 3 --refs 3]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

from icml25.demark import (
    KGWWatermark,
    RandomSelectionProber,
    data,
    estimate_delta,
    estimate_prefix_length,
    identify_green_list,
    sample_topk,
)
from icml25.demark.experiment.simulated import prf
from icml25.demark.real_model import ChatDeployment, chat_prompt_ids, chooser_bias
from icml25.llm import load_model


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="smollm2-135m-instruct")
    ap.add_argument("--pairs", type=int, default=20)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--delta-contexts", type=int, default=3)
    ap.add_argument("--refs", type=int, default=3, help="reference contexts of the +cal variants (0: skip them)")
    ap.add_argument("--m", type=int, default=6)
    ap.add_argument("--budget-s", type=float, default=300.0, help="skip the +cal variants after this many seconds")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    torch.set_num_threads(1)
    t0 = time.time()
    model = load_model(f"pretrained:{a.model}", progress=False)
    V = int(model.model.config.vocab_size)
    wm = KGWWatermark(V, gamma=0.5, delta=2.0, h=3, key=int(np.random.default_rng(17).integers(1, 2 ** 31)))
    dep = ChatDeployment.from_hf(model, wm, corpus_words=data.english_words(1984), random_state=0)
    out: dict = {"model": a.model, "probe": "chat" if getattr(dep.tokenizer, "chat_template", None) else "completion"}
    clean = RandomSelectionProber(dep.clean_oracle, dep.template, top_k=20)
    wmp = RandomSelectionProber(dep.oracle, dep.template, top_k=20)
    prompt = chat_prompt_ids(dep.tokenizer, data.mmw_book_report_prompts()[0])
    gen = sample_topk(dep.oracle, [prompt], 8 + 4 * a.steps, 20, dep.eos_ids, random_state=0)[0]
    ctxs = [prompt + gen[: 4 + 4 * i] for i in range(a.steps)]
    cands = [dep.oracle.topk_logprobs([c], a.m)[0][0] for c in ctxs]
    refs = [tuple(np.random.default_rng(99 + i).choice(dep.words, 4).tolist()) for i in range(a.refs)]
    for variant in ("sum", "logmean") + (("sum+cal", "logmean+cal") if refs else ()):
        if variant.endswith("+cal") and time.time() - t0 > a.budget_s:
            continue
        clean.combine = wmp.combine = variant.split("+")[0]
        clean.reference_contexts = wmp.reference_contexts = refs if variant.endswith("+cal") else []
        r: dict = {"bias": chooser_bias(clean, dep.words, n_pairs=a.pairs, context_len=3, random_state=0)}
        truth, est = [], []
        for c, cand in zip(ctxs, cands):
            est.append(identify_green_list(wmp, c[-3:], cand, 2.0))
            truth.append(wm.green_mask(c)[cand])
        r["green_true_h_delta"] = prf(truth, est)
        h_hat, agr = estimate_prefix_length(wmp, dep.words, h_max=4, m=a.m, n_contexts=1, random_state=0)
        r["h_hat"], r["agreement"] = int(h_hat), [float(x) for x in np.asarray(agr).ravel()]
        r["delta_hat_at_true_h"] = float(estimate_delta(wmp, dep.words, 3, m=a.m, n_contexts=a.delta_contexts,
                                                        random_state=0)[0])
        out[variant] = r
        print(variant, json.dumps(r, default=float), f"{time.time() - t0:.0f} s", flush=True)
    out["probe_queries"], out["seconds"] = clean.n_probe_queries + wmp.n_probe_queries, time.time() - t0
    if a.out:
        with open(a.out, "w") as f:
            json.dump(out, f, indent=1, default=float)


if __name__ == "__main__":
    main()
