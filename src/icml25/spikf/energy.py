"""Energy estimates of a spiking network from measured firing rates, against its dense ANN equivalent (spec §2).

*Simple* (the common SNN accounting): a layer with analog input costs ``E_MAC`` per multiply-accumulate at every
step it runs; a layer with spike input costs ``E_AC`` per synaptic operation, ``SOPs = rate * steps * MACs``
(``rate`` = input events per input element per step; the residual sums of SpikF count as multi-spike events,
``rate`` = mean input value). The ANN equivalent runs each layer once with MACs.

*Detailed* (after Lemaire et al. 2022): operations (synaptic, plus per neuron and step a leak MAC and a bias add,
plus a reset add per output spike), addressing (one add per input event) and memory (one weight read, one potential
read and one write per synaptic event, a potential read and write per neuron and step; an analog layer reads a
weight and an input per MAC and writes each output), each access costing the SRAM energy of a memory the size of
the layer's weights (interpolated in log size between 10 pJ at 8 KiB, 20 pJ at 32 KiB and 100 pJ at 1 MiB). The
ANN equivalent pays MACs and the same memory model. BatchNorm (foldable) and GELU are not counted.

Examples
--------
>>> layers = [LayerCost("fc1", macs=100, n_inputs=10, n_outputs=10, input_rate=None, steps=1),
...           LayerCost("fc2", macs=50, n_inputs=10, n_outputs=5, input_rate=0.2, steps=4)]
>>> e = estimate(layers, e_mac=4.6, e_ac=0.9)   # units of the constants
>>> round(e["e_ann"], 3), round(e["e_snn"], 3)      # 4.6*150 ; 4.6*100 + 0.9*0.2*4*50
(690.0, 496.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from icml25.core.validation import check_int, check_positive, check_real

__all__ = ["LayerCost", "estimate", "estimate_energy", "energy_table", "dense_layers", "memory_access_energy",
           "spikf_layers"]

#: (size in bytes, energy per 32-bit access in joules) of the SRAM model (spec §2, Lemaire et al. 2022)
SRAM_POINTS: tuple[tuple[float, float], ...] = ((8 * 1024, 10e-12), (32 * 1024, 20e-12), (1024 * 1024, 100e-12))


@dataclass(frozen=True)
class LayerCost:
    """One synaptic layer (per sample and SNN step).

    Parameters
    ----------
    name : str
    macs : float
        Multiply-accumulates of the dense equivalent for one step.
    n_inputs, n_outputs : int
        Input elements and output elements (neurons) per step.
    input_rate : float or None
        Input events per input element per step (None: analog input, computed with MACs).
    steps : int
        How many times the layer runs per sample (T, or 1 for the repeated analog encoding).
    spiking_output : bool
        The outputs are LIF neurons (they pay leak/bias/reset and potential memory in the detailed model).
    out_rate : float
        Output firing rate of those neurons.
    neuron_steps : int or None
        Steps the output neurons run (defaults to ``steps``).
    params : int
        Number of weights (sizes the memory in the detailed model).
    """

    name: str
    macs: float
    n_inputs: int
    n_outputs: int
    input_rate: float | None = None
    steps: int = 1
    spiking_output: bool = False
    out_rate: float = 0.0
    neuron_steps: int | None = None
    params: int = 0

    def __post_init__(self) -> None:
        check_real(self.macs, "macs", low=0.0)
        check_int(self.n_inputs, "n_inputs", low=1)
        check_int(self.n_outputs, "n_outputs", low=1)
        check_int(self.steps, "steps", low=1)
        if self.input_rate is not None:
            check_real(self.input_rate, "input_rate", low=0.0)
        check_real(self.out_rate, "out_rate", low=0.0, high=1.0)
        check_int(self.params, "params", low=0)


def memory_access_energy(n_bytes: float, points: tuple[tuple[float, float], ...] = SRAM_POINTS) -> float:
    """Energy of one 32-bit SRAM access for a memory of ``n_bytes`` (log-size interpolation, clamped)."""
    n_bytes = max(check_positive(n_bytes, "n_bytes"), 1.0)
    if n_bytes <= points[0][0]:
        return points[0][1]
    for (s0, e0), (s1, e1) in zip(points, points[1:]):
        if n_bytes <= s1:
            w = (math.log(n_bytes) - math.log(s0)) / (math.log(s1) - math.log(s0))
            return e0 + w * (e1 - e0)
    return points[-1][1]


def estimate(layers: list[LayerCost], e_mac: float = 4.6e-12, e_ac: float = 0.9e-12, detailed: bool = False,
             sram_points: tuple[tuple[float, float], ...] = SRAM_POINTS) -> dict[str, Any]:
    """Energy per sample of the SNN and of its dense ANN equivalent.

    Returns ``{"e_snn", "e_ann", "ratio" (= e_ann / e_snn), "layers": [per-layer rows]}``; with ``detailed`` the
    SNN and ANN totals also carry ``ops``, ``addressing`` and ``memory`` parts.
    """
    e_mac = check_positive(e_mac, "e_mac")
    e_ac = check_positive(e_ac, "e_ac")
    if not layers or not all(isinstance(layer, LayerCost) for layer in layers):
        raise TypeError("layers must be a non-empty list of LayerCost")
    rows = []
    tot = {"snn_ops": 0.0, "snn_addr": 0.0, "snn_mem": 0.0, "ann_ops": 0.0, "ann_mem": 0.0}
    for L in layers:
        ann_ops = e_mac * L.macs
        if L.input_rate is None:
            sops = 0.0
            snn_syn = e_mac * L.macs * L.steps
        else:
            sops = L.input_rate * L.steps * L.macs
            snn_syn = e_ac * sops
        row = {"layer": L.name, "MACs": L.macs, "input rate": L.input_rate, "SOPs": sops,
               "E_ANN (J)": ann_ops, "E_SNN (J)": snn_syn}
        tot["snn_ops"] += snn_syn
        tot["ann_ops"] += ann_ops
        if detailed:
            nsteps = L.neuron_steps if L.neuron_steps is not None else L.steps
            mem = memory_access_energy(4 * max(L.params, 1), sram_points)
            neuron_updates = L.n_outputs * nsteps if L.spiking_output else 0
            neuron_ops = neuron_updates * (e_mac + e_ac) + e_ac * L.out_rate * neuron_updates
            if L.input_rate is None:
                addr = 0.0
                accesses = 2 * L.macs * L.steps + L.n_outputs * L.steps
            else:
                events = L.input_rate * L.steps * L.n_inputs
                addr = e_ac * events
                accesses = 3 * sops
            accesses += 2 * neuron_updates
            ann_mem = mem * (2 * L.macs + L.n_outputs)
            row.update({"E_SNN ops (J)": snn_syn + neuron_ops, "E_SNN addr (J)": addr, "E_SNN mem (J)": mem * accesses,
                        "E_ANN mem (J)": ann_mem})
            row["E_SNN (J)"] = snn_syn + neuron_ops + addr + mem * accesses
            row["E_ANN (J)"] = ann_ops + ann_mem
            tot["snn_ops"] += neuron_ops
            tot["snn_addr"] += addr
            tot["snn_mem"] += mem * accesses
            tot["ann_mem"] += ann_mem
        rows.append(row)
    e_snn = tot["snn_ops"] + tot["snn_addr"] + tot["snn_mem"]
    e_ann = tot["ann_ops"] + tot["ann_mem"]
    out: dict[str, Any] = {"e_snn": e_snn, "e_ann": e_ann, "ratio": e_ann / e_snn if e_snn > 0 else math.inf,
                           "layers": rows}
    if detailed:
        out.update({"snn_ops": tot["snn_ops"], "snn_addressing": tot["snn_addr"], "snn_memory": tot["snn_mem"],
                    "ann_ops": tot["ann_ops"], "ann_memory": tot["ann_mem"]})
    return out


def spikf_layers(model: Any, stats: dict[str, Any]) -> list[LayerCost]:
    """The synaptic layers of a :class:`SpikFForecaster` with the measured rates ``stats`` of
    :func:`icml25.spikf.train.collect_firing_rates` (per sample; FFTs counted as ``2 N log2 N`` real MACs per
    series, spiking input for the forward FFT and analog input for the inverse)."""
    for key in ("rates", "block_input", "head_input"):
        if key not in stats:
            raise ValueError(f"stats must come from collect_firing_rates (missing {key!r})")
    T, D, N, C = model.T, model.n_vars, model.patch_num, model.patch_dim
    P, Hd, H, Nf = model.patch_len, model.hidden_dim, model.pred_len, N // 2 + 1
    r = stats["rates"]
    fft = 2.0 * N * math.log2(N) * C * D
    layers = [LayerCost("embed (analog)", N * D * P * C, N * D * P, C * N * D, None, 1, True, r["embed_lif"], T,
                        P * C)]
    for k in range(len(model.sfs)):
        p = f"sfs.{k}."
        r_in = stats["block_input"][k]
        r1 = r_in + r[p + "freq_lif"]
        r2 = r1 + r[p + "intra_lif"]
        layers += [
            LayerCost(p + "rfft", fft, C * D * N, 2 * C * D * Nf, r_in, T),
            LayerCost(p + "selector", C * D * N * Nf, C * D * N, C * D * Nf, r_in, T, True, r[p + "selector_lif"],
                      params=N * Nf),
            LayerCost(p + "mask LIF", 0, C * D * Nf, C * D * Nf, 1.0 * r[p + "selector_lif"], 1, True,
                      r[p + "mask_lif"], params=1),
            LayerCost(p + "irfft (analog)", fft, 2 * C * D * Nf, C * N * D, None, T, True, r[p + "freq_lif"]),
            LayerCost(p + "intra conv", C * C * 5 * N * D, C * N * D, C * N * D, r1, T, True, r[p + "intra_lif"],
                      params=C * C * 5),
            LayerCost(p + "inter conv", C * C * 3 * N * D, C * N * D, C * N * D, r2, T, True, r[p + "inter_lif"],
                      params=C * C * 3),
        ]
    layers += [LayerCost("head1", D * N * C * Hd, D * N * C, D * Hd, stats["head_input"], T, params=N * C * Hd),
               LayerCost("head2 (analog)", D * Hd * H, D * Hd, D * H, None, T, params=Hd * H)]
    return layers


def dense_layers(model: Any, X: Any, batch_size: int = 256) -> list[LayerCost]:
    """The ``nn.Linear`` / ``nn.Conv1d`` / ``nn.Conv2d`` layers of any torch ``model``, counted on a forward pass over
    the windows ``X`` (per sample): MACs from the output size times the fan-in, and the input as spike events (its
    mean value, when every input element is a non-negative integer) or analog (None). Layers that do not run are
    left out; operations outside these modules (moving averages, normalisation, activations) are not counted.
    """
    import numpy as np
    import torch

    from icml25.core.validation import check_array

    X = check_array(X, "X", ndim=3).astype(np.float32)
    batch_size = check_int(batch_size, "batch_size", low=1)
    kinds = (torch.nn.Linear, torch.nn.Conv1d, torch.nn.Conv2d)
    acc: dict[str, list[float]] = {}  # name -> [macs, input sum, input elements, spiking (0/1), n_in, n_out, params]

    def hook(name: str, mod: Any) -> Any:
        def run(_m: Any, inputs: Any, out: Any) -> None:
            x = inputs[0].detach()
            if isinstance(mod, torch.nn.Linear):
                fan_in = mod.in_features
            else:
                fan_in = mod.in_channels // mod.groups * int(np.prod(mod.kernel_size))
            a = acc.setdefault(name, [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, float(sum(p.numel() for p in mod.parameters()))])
            a[0] += float(out.numel()) * fan_in
            a[1] += float(x.sum())
            a[2] += float(x.numel())
            spiking = bool(((x >= 0) & (x == torch.round(x))).all())
            a[3] = min(a[3], 1.0 if spiking else 0.0)
            a[4] += float(x.numel())
            a[5] += float(out.numel())
        return run

    handles = [m.register_forward_hook(hook(n, m)) for n, m in model.named_modules() if isinstance(m, kinds)]
    was = model.training
    model.eval()
    device = next(model.parameters()).device
    try:
        with torch.no_grad():
            for s in range(0, len(X), batch_size):
                model(torch.from_numpy(X[s:s + batch_size]).to(device))
    finally:
        for h in handles:
            h.remove()
        model.train(was)
    n = float(len(X))
    layers = []
    for name, (macs, tot, elems, spiking, n_in, n_out, params) in acc.items():
        rate = tot / elems if spiking else None
        layers.append(LayerCost(name, macs / n, max(1, round(n_in / n)), max(1, round(n_out / n)), rate, 1,
                                params=int(params)))
    if not layers:
        raise ValueError(f"model {type(model).__name__} has no nn.Linear/nn.Conv1d/nn.Conv2d layer that ran on X")
    return layers


def estimate_energy(model: Any, data: Any, e_mac: float = 4.6e-12, e_ac: float = 0.9e-12,
                    batch_size: int = 256) -> tuple[float, list[dict[str, Any]]]:
    """Energy per sample of ``model`` on the windows ``data``, with the paper's operation accounting.

    A layer with spike input pays ``e_ac`` per synaptic operation (accumulate), ``SOPs = r * steps * MACs`` with
    ``r`` the firing rate of its input measured on ``data`` (a residual sum of spikes counts as that many events);
    a layer with analog input pays ``e_mac`` per multiply-accumulate at every step it runs (45 nm constants:
    0.9 pJ per AC, 4.6 pJ per MAC, Horowitz 2014). A :class:`SpikFForecaster` is counted with
    :func:`spikf_layers` (FFTs included) from :func:`icml25.spikf.train.collect_firing_rates`; any other model (a
    non-spiking comparison model such as :class:`DLinear`) with :func:`dense_layers`.

    Parameters
    ----------
    model : torch.nn.Module
    data : array [n, L, D] or (X, Y)
        Look-back windows (targets are ignored).
    e_mac, e_ac : float
        Joules per multiply-accumulate and per accumulate.

    Returns
    -------
    total : float
        Joules per sample.
    table : list of dict
        One row per layer: ``layer``, ``op`` ("AC" or "MAC"), ``MACs`` (dense), ``input rate``, ``operations``
        (SOPs or MACs actually paid), ``energy (J)`` and ``share`` of the total.
    """
    import numpy as np

    from icml25.core.validation import check_array

    e_mac = check_positive(e_mac, "e_mac")
    e_ac = check_positive(e_ac, "e_ac")
    batch_size = check_int(batch_size, "batch_size", low=1)
    if isinstance(data, tuple) and len(data) == 2:
        data = data[0]
    data = check_array(data, "data", ndim=3).astype(np.float32)
    from .model import SpikFForecaster

    if isinstance(model, SpikFForecaster):
        from .train import collect_firing_rates

        layers = spikf_layers(model, collect_firing_rates(model, data, batch_size=batch_size))
    else:
        layers = dense_layers(model, data, batch_size=batch_size)
    return energy_table(layers, e_mac=e_mac, e_ac=e_ac)


def energy_table(layers: list[LayerCost], e_mac: float = 4.6e-12, e_ac: float = 0.9e-12
                 ) -> tuple[float, list[dict[str, Any]]]:
    """The simple (AC/MAC) estimate of ``layers`` as ``(joules per sample, per-layer rows)``; see
    :func:`estimate_energy`."""
    e = estimate(layers, e_mac=e_mac, e_ac=e_ac)
    total = float(e["e_snn"])
    table = []
    for layer, row in zip(layers, e["layers"]):
        ops = row["SOPs"] if layer.input_rate is not None else layer.macs * layer.steps
        table.append({"layer": layer.name, "op": "MAC" if layer.input_rate is None else "AC", "MACs": layer.macs,
                      "input rate": layer.input_rate, "operations": ops, "energy (J)": row["E_SNN (J)"],
                      "share": row["E_SNN (J)"] / total if total > 0 else 0.0})
    return total, table
