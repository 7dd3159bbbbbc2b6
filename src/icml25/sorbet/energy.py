"""Energy estimate of a spiking Sorbet model against its full-precision BERT teacher (spec §2, "Energy accounting").

ANN: multiply-accumulates x ``e_mac`` (4.6 pJ, 32-bit float at 45 nm, the SpikeLM / SpikingBERT convention).
Sorbet: synaptic accumulates (spikes x fan-out; binary weights make every one an add/subtract) x ``e_ac``
(0.9 pJ), plus the shift/add operations of PTsoftmax and BSPN x ``e_add``. Every constant is a parameter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from icml25.core.validation import check_int, check_positive

__all__ = ["ann_macs", "energy_report", "estimate_energy"]


def ann_macs(length: int, hidden: int, ffn: int, layers: int, num_labels: int = 2) -> dict[str, float]:
    """Multiply-accumulates of one BERT forward pass on a sentence of ``length`` tokens, per component.

    Per layer: Q, K, V, output projections ``4 L C^2``, FFN ``2 L C F``, attention products ``2 L^2 C``; plus the
    pooler ``C^2`` and the classifier ``C * num_labels``.

    >>> ann_macs(2, hidden=4, ffn=8, layers=1)["total"]  # 4*2*16 + 2*2*4*8 + 2*4*4 + 16 + 8
    312.0
    """
    L = check_int(length, "length", low=1)
    C = check_int(hidden, "hidden", low=1)
    F = check_int(ffn, "ffn", low=1)
    N = check_int(layers, "layers", low=1)
    check_int(num_labels, "num_labels", low=1)
    out = {"projections": float(N * 4 * L * C * C), "ffn": float(N * 2 * L * C * F),
           "attention": float(N * 2 * L * L * C), "pooler+classifier": float(C * C + C * num_labels)}
    out["total"] = sum(out.values())
    return out


def energy_report(stats: Mapping[str, Mapping[str, float]], lengths: Sequence[int], hidden: int, ffn: int,
                  layers: int, heads: int, num_labels: int = 2, T: int = 16, e_mac: float = 4.6e-12,
                  e_ac: float = 0.9e-12, e_add: float | None = None, ptsoftmax_ops: float = 3.0,
                  bspn_ops: float = 4.0) -> dict[str, Any]:
    """Per-population spikes, firing rates and energy of the spiking model, and the ANN's energy, per sentence.

    Parameters
    ----------
    stats : mapping
        ``SpikingSorbet(...)(...).stats`` summed over the sentences of ``lengths``: per population
        ``{"spikes", "neurons", "synaptic_ops"}``.
    lengths : sequence of int
        Real token counts of the sentences the stats cover.
    hidden, ffn, layers, heads, num_labels : int
        Model sizes.
    T : int
        Time steps (firing rate = spikes / (neurons * T)).
    e_mac, e_ac : float
        Joules per multiply-accumulate (ANN) and per synaptic accumulate (SNN).
    e_add : float, optional
        Joules per shift/add of PTsoftmax and BSPN (default ``e_ac``).
    ptsoftmax_ops, bspn_ops : float
        Shift/add operations per attention score and per normalised element.

    Returns
    -------
    dict
        ``rows`` (one per population: spikes, firing rate, synaptic ops and energy per sentence), ``e_snn``,
        ``e_ann`` (J per sentence), ``ratio`` (ANN / SNN), ``mean_rate``, ``sops``, ``macs``.

    Examples
    --------
    >>> r = energy_report({"fc": {"spikes": 10, "neurons": 20, "synaptic_ops": 40}}, [2], hidden=4, ffn=8,
    ...                   layers=1, heads=2, ptsoftmax_ops=0, bspn_ops=0)
    >>> round(r["e_snn"] * 1e12, 6), round(r["e_ann"] * 1e12, 6)   # 40 * 0.9 pJ; 320 MACs * 4.6 pJ
    (36.0, 1435.2)
    """
    if not isinstance(stats, Mapping) or not stats:
        raise TypeError(f"stats must be a non-empty mapping of populations to spike counts, got {type(stats).__name__}")
    try:
        lens = np.asarray(lengths, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"lengths must be a list of token counts, got {lengths!r}") from None
    if lens.ndim != 1 or len(lens) == 0 or not np.all(np.isfinite(lens)) or np.any(lens < 1):
        raise ValueError(f"lengths must be a non-empty list of token counts >= 1, got {lengths!r}")
    for name, v in (("e_mac", e_mac), ("e_ac", e_ac)):
        check_positive(v, name)
    e_add = e_ac if e_add is None else check_positive(e_add, "e_add")
    check_positive(ptsoftmax_ops, "ptsoftmax_ops", allow_zero=True)
    check_positive(bspn_ops, "bspn_ops", allow_zero=True)
    check_int(T, "T", low=1)
    for name, v in (("heads", heads), ("hidden", hidden), ("ffn", ffn), ("layers", layers), ("num_labels", num_labels)):
        check_int(v, name, low=1)
    n = len(lens)
    rows, sops, spikes, neurons = [], 0.0, 0.0, 0.0
    for name, s in stats.items():
        for key in ("spikes", "neurons", "synaptic_ops"):
            if key not in s or not np.isfinite(float(s[key])) or float(s[key]) < 0:
                raise ValueError(f"stats[{name!r}] must hold a finite non-negative {key!r}, got {s.get(key)!r}")
        rate = float(s["spikes"]) / max(float(s["neurons"]) * T, 1.0)
        rows.append({"population": name, "spikes / sentence": float(s["spikes"]) / n, "firing rate": rate,
                     "synaptic ops / sentence": float(s["synaptic_ops"]) / n,
                     "energy / sentence (nJ)": float(s["synaptic_ops"]) / n * e_ac * 1e9})
        sops += float(s["synaptic_ops"])
        spikes += float(s["spikes"])
        neurons += float(s["neurons"])
    scores = float(np.sum(heads * lens ** 2)) * layers          # attention scores through PTsoftmax
    normed = float(np.sum(lens)) * hidden * 2 * layers          # elements through BSPN
    shift_ops = (ptsoftmax_ops * scores + bspn_ops * normed) / n
    rows.append({"population": "PTsoftmax + BSPN (shifts/adds)", "spikes / sentence": 0.0, "firing rate": float("nan"),
                 "synaptic ops / sentence": shift_ops, "energy / sentence (nJ)": shift_ops * e_add * 1e9})
    e_snn = sops / n * e_ac + shift_ops * e_add
    macs = float(np.mean([ann_macs(int(L), hidden, ffn, layers, num_labels)["total"] for L in lens]))
    e_ann = macs * e_mac
    return {"rows": rows, "e_snn": e_snn, "e_ann": e_ann, "ratio": e_ann / e_snn if e_snn > 0 else float("inf"),
            "mean_rate": spikes / max(neurons * T, 1.0), "sops": sops / n, "macs": macs}


def estimate_energy(model: Any, data: Sequence[Mapping[str, Any]], T: int = 16, e_mac: float = 4.6e-12,
                    e_ac: float = 0.9e-12, e_add: float | None = None, ptsoftmax_ops: float = 3.0,
                    bspn_ops: float = 4.0) -> tuple[float, list[dict[str, Any]], float]:
    """Energy per sentence of a W1A4 Sorbet model run as a spiking network on ``data``, with the paper's accounting.

    Runs :class:`icml25.sorbet.SpikingSorbet` (``T`` steps) over the batches, counts every spiking population's
    spikes and synaptic operations (spikes x fan-out: binary weights make each one an add/subtract, ``e_ac``),
    adds PTsoftmax's and BSPN's shifts/adds (``e_add``, default ``e_ac``), and prices the dense full-precision
    model of the same sizes (BERT: every multiply-accumulate ``e_mac``) with :func:`ann_macs`
    (spec §2, "Energy accounting"; 45 nm: 4.6 pJ per MAC, 0.9 pJ per accumulate).

    Parameters
    ----------
    model : SorbetBertForSequenceClassification or SpikingSorbet
        A W1A4 Sorbet model (quantisers initialised) or its spiking form.
    data : list of dict
        Batches from :func:`icml25.sorbet.batches` (``input_ids``, ``attention_mask``, ``token_type_ids``).

    Returns
    -------
    (e_snn, rows, e_ann)
        Joules per sentence of the spiking model, the per-population table of :func:`energy_report`, and joules per
        sentence of the dense full-precision model of the same sizes.
    """
    import torch

    from .spiking import SpikingSorbet

    check_int(T, "T", low=2)
    for name, v in (("e_mac", e_mac), ("e_ac", e_ac)):
        check_positive(v, name)
    if e_add is not None:
        check_positive(e_add, "e_add")
    check_positive(ptsoftmax_ops, "ptsoftmax_ops", allow_zero=True)
    check_positive(bspn_ops, "bspn_ops", allow_zero=True)
    if not isinstance(data, Sequence) or isinstance(data, (str, bytes)) or not data or not all(
            isinstance(b, Mapping) and all(k in b for k in ("input_ids", "attention_mask", "token_type_ids"))
            for b in data):
        raise ValueError(f"data must be a non-empty list of batches from batches() (dicts with input_ids, "
                         f"attention_mask, token_type_ids), got {type(data).__name__}")
    snn = model if isinstance(model, SpikingSorbet) else SpikingSorbet(model, T=T)
    device = next(snn.ann.parameters()).device
    stats: dict[str, dict[str, float]] = {}
    lengths: list[int] = []
    with torch.no_grad():
        for b in data:
            out = snn(b["input_ids"].to(device), b["attention_mask"].to(device), b["token_type_ids"].to(device))
            for name, v in out.stats.items():
                acc = stats.setdefault(name, {"spikes": 0.0, "neurons": 0.0, "synaptic_ops": 0.0})
                for key in acc:
                    acc[key] += float(v[key])
            lengths += [int(n) for n in b["attention_mask"].sum(1).tolist()]
    d = snn.ann.dims
    r = energy_report(stats, lengths, hidden=d.hidden, ffn=d.ffn, layers=d.layers, heads=d.heads,
                      num_labels=d.num_labels, T=snn.T, e_mac=e_mac, e_ac=e_ac,
                      e_add=e_add, ptsoftmax_ops=ptsoftmax_ops, bspn_ops=bspn_ops)
    return float(r["e_snn"]), r["rows"], float(r["e_ann"])
