"""Exact rate-coded spiking inference of a W1A4 Sorbet model: average integrate-and-fire neurons (spec §2).

Every 4-bit code ``q`` (signed codes offset by +8 to ``[0, 15]``) is presented for ``T = 16`` steps as a constant
input current to an integrate-and-fire neuron with threshold ``0.95 T`` (reset by subtraction), which emits exactly
``q`` spikes. Binary-weight layers accumulate ``sign(W) s_t`` over the steps (one synaptic accumulate per spike and
synapse); ``Q K^T`` and ``P V`` are computed between a spiking operand (Q, P) and an accumulated one (K, V). The
offsets are removed once per window, and the scales (powers of two) applied at the end. Because every accumulated
quantity is an integer times a power of two, the simulation reproduces the W1A4 ANN bit for bit.
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from icml25.core.validation import check_int, check_real

from .quantizers import BinaryLinear, LSQQuantizer

__all__ = ["AverageIF", "SpikingSorbet"]


class AverageIF(nn.Module):
    """Integrate-and-fire neuron of the 'Sorbet' (ICML 2025) paper's spiking inference (Algorithm 4).

    Input: integer codes ``n`` in ``[0, T - 1]``, presented as a constant current for ``T`` steps; the membrane
    ``v_t = v_{t-1} + n`` fires when ``v_t >= theta`` (``theta = threshold_ratio * T``) and is reset by subtracting
    ``theta``. For ``threshold_ratio`` in ``(T-1)/T .. 1`` it emits exactly ``n`` spikes.

    Parameters
    ----------
    T : int
        Time steps of the window (16 for 4-bit codes).
    threshold_ratio : float
        ``theta / T`` (0.95 in the released code).

    Shapes
    ------
    ``n``: any shape; output spikes ``(T, *n.shape)`` of 0/1 floats.

    Examples
    --------
    >>> s = AverageIF(T=16)(torch.arange(16.0))
    >>> s.sum(0).tolist() == list(range(16))
    True
    """

    def __init__(self, T: int = 16, threshold_ratio: float = 0.95) -> None:
        super().__init__()
        self.T = check_int(T, "T", low=2)
        check_real(threshold_ratio, "threshold_ratio", low=(T - 1) / T + 1e-9, high=1.0)
        self.theta = float(threshold_ratio) * T

    def forward(self, n: torch.Tensor) -> torch.Tensor:
        if not isinstance(n, torch.Tensor):
            raise TypeError(f"n must be a torch.Tensor of integer codes, got {type(n).__name__}")
        if n.numel() and (not torch.equal(n, torch.round(n)) or float(n.min()) < 0 or float(n.max()) > self.T - 1):
            raise ValueError(f"n must hold integers in [0, {self.T - 1}] (T={self.T}), got values in "
                             f"[{float(n.min())}, {float(n.max())}]")
        v = torch.zeros_like(n, dtype=torch.float32)
        out = torch.empty((self.T, *n.shape), dtype=torch.float32, device=n.device)
        for t in range(self.T):
            v = v + n
            s = (v >= self.theta).to(torch.float32)
            v = v - self.theta * s
            out[t] = s
        return out


class SpikingSorbet(nn.Module):
    """The spiking (SNN) form of a trained W1A4 :class:`SorbetBertForSequenceClassification`.

    ``forward`` simulates the network step by step and returns ``.logits`` (identical to the ANN's),
    ``.hidden_states`` and ``.stats``: per spiking population the number of spikes, of neurons (real tokens only)
    and of synaptic accumulates (spikes x fan-out), for :func:`icml25.sorbet.energy.energy_report`.

    Parameters
    ----------
    model : SorbetBertForSequenceClassification
        A W1A4 model (binary weights, 4-bit activations) whose quantisers are initialised (trained or run once).
    T : int
        Time steps (must equal ``2 ** act_bits``).
    per_step : bool
        Compute every step's synaptic input separately (the simulation); ``False`` sums the spike trains over the
        window first (the same numbers by linearity, ``T`` times cheaper).
    """

    def __init__(self, model: Any, T: int = 16, per_step: bool = True) -> None:
        super().__init__()
        from .model import SorbetBertForSequenceClassification

        if not isinstance(model, SorbetBertForSequenceClassification):
            raise TypeError(f"model must be a W1A4 SorbetBertForSequenceClassification, got {type(model).__name__}")
        o = model.options
        if o.weight_bits != 1 or o.act_bits != 4:
            raise ValueError(f"model must be W1A4 (weight_bits=1, act_bits=4) to run as a spiking network, got "
                             f"weight_bits={o.weight_bits}, act_bits={o.act_bits}")
        check_int(T, "T", low=2)
        if T != 2 ** o.act_bits:
            raise ValueError(f"T must be 2**act_bits = {2 ** o.act_bits} for exact rate coding, got {T}")
        for name, m in model.named_modules():
            if isinstance(m, LSQQuantizer) and not bool(m.initialized):
                raise ValueError(f"model's quantiser {name} is not initialised: train the W1A4 model (or run it once "
                                 "in train mode) before converting it to a spiking network")
        self.ann = model.eval()
        self.neuron = AverageIF(T)
        self.T, self.per_step = T, bool(per_step)
        # the neuron's response depends on its code alone: simulate it once per code value (T x T spike trains,
        # trains[t, c]) and look every neuron's train up by its code instead of re-running the loop per population
        self.register_buffer("trains", self.neuron(torch.arange(float(T))), persistent=False)

    def train(self, mode: bool = True) -> SpikingSorbet:  # the spiking model is inference-only
        super().train(False)
        self.ann.eval()
        return self

    # --- spike coding ------------------------------------------------------------------------------------
    def _encode(self, quant: LSQQuantizer, x: torch.Tensor, name: str, mask: torch.Tensor | None,
                stats: dict[str, list[float]], fanout: float | torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Codes of ``x`` -> spike trains ``(T, ...)`` (``per_step``; else the window's spike counts), the step,
        the offset; records spike statistics.

        ``mask`` (broadcastable to ``x``) selects the neurons counted (real tokens); ``fanout`` (a number or a
        tensor broadcastable to ``x``) is the number of synapses each spike drives.
        """
        q, alpha, off = quant.codes(x)
        n = q - quant.q_n                       # signed codes are offset by +2^(k-1) to [0, 2^k - 1]
        if n.numel() and (float(n.min()) < 0 or float(n.max()) > self.T - 1):
            raise ValueError(f"codes of {name} fall outside [0, {self.T - 1}]")
        code = n.long()
        trains = self.get_buffer("trains").to(n.device)
        counts = trains.sum(0)[code]            # spikes of each neuron over the window (= its code)
        # per_step: the spike trains (T, ...), every step's synaptic input computed separately; else the counts
        spikes = trains[:, code] if self.per_step else counts
        w = torch.ones_like(n) if mask is None else torch.ones_like(n) * mask
        counted = counts * w
        rec = stats.setdefault(name, [0.0, 0.0, 0.0])
        rec[0] += float(counted.sum())
        rec[1] += float(w.sum())
        rec[2] += float((counted * fanout).sum())
        return spikes, alpha, off

    def _accumulate(self, spikes: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        """``sum_t spikes_t @ weight.T`` computed per step (or, when not ``per_step``, ``spikes`` are the window's
        counts: one product)."""
        if self.per_step:
            T = spikes.shape[0]
            y = F.linear(spikes.reshape(-1, spikes.shape[-1]), weight)
            return y.reshape(T, *spikes.shape[1:-1], weight.shape[0]).sum(0)
        return F.linear(spikes, weight)

    def _linear(self, layer: BinaryLinear, quant: LSQQuantizer, x: torch.Tensor, name: str, mask: torch.Tensor,
                stats: dict[str, list[float]]) -> torch.Tensor:
        spikes, alpha, off = self._encode(quant, x, name, mask, stats, float(layer.out_features))
        sign = torch.sign(layer.weight.detach() - layer.weight.detach().mean())
        acc = self._accumulate(spikes, sign)
        rows = sign.sum(1)
        if quant.signed:
            y = (acc + quant.q_n * rows) * alpha         # remove the +8 offset once per window
        else:
            y = acc * alpha + off * rows
        y = y * layer.scale()
        return y + layer.bias.detach() if layer.bias is not None else y

    def _spike_matmul(self, quant: LSQQuantizer, a: torch.Tensor, b: torch.Tensor, name: str, mask4: torch.Tensor,
                      stats: dict[str, list[float]], fanout: float | torch.Tensor) -> torch.Tensor:
        """``a_hat @ b`` with ``a`` spike-coded (codes of ``quant``) and ``b`` accumulated (already dequantised)."""
        spikes, alpha, off = self._encode(quant, a, name, mask4, stats, fanout)
        if self.per_step:
            acc = (spikes @ b).sum(0)
        else:
            acc = spikes @ b
        colsum = b.sum(-2, keepdim=True)
        if quant.signed:
            return (acc + quant.q_n * colsum) * alpha
        return acc * alpha + off * colsum

    @torch.no_grad()
    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None,
                token_type_ids: torch.Tensor | None = None, **_: Any) -> SimpleNamespace:
        m = self.ann
        input_ids, attention_mask, token_type_ids = m._check(input_ids, attention_mask, token_type_ids)
        mask = attention_mask.to(torch.float32)
        add_mask = ((1.0 - mask) * -10000.0)[:, None, None, :]
        stats: dict[str, list[float]] = {}
        tok = mask[:, :, None]                          # real tokens of (B, L, C) populations
        rows = mask[:, None, :, None]                   # real query rows of (B, H, L, .) populations
        keys = mask.sum(1)[:, None, None, None]         # real keys per sentence: fan-out of a query spike
        h = m.embed(input_ids, token_type_ids)
        hidden = [h]
        for i, lay in enumerate(m.layers):
            x = h
            # the Q/K/V inputs share one spike train (fan-out to three layers)
            spikes, alpha, off = self._encode(lay.qkv_quant, x, f"layer{i}.qkv_in", tok, stats,
                                              3 * lay.query.out_features)
            outs = []
            for lin in (lay.query, lay.key, lay.value):
                sign = torch.sign(lin.weight.detach() - lin.weight.detach().mean())
                acc = self._accumulate(spikes, sign)
                y = (acc + lay.qkv_quant.q_n * sign.sum(1)) * alpha * lin.scale() + lin.bias.detach()
                outs.append(lay.split(y))
            qh, kh, vh = outs
            k_hat = lay.k_quant(kh)                     # accumulated operands (dequantised codes)
            v_hat = lay.v_quant(vh)
            scores = self._spike_matmul(lay.q_quant, qh, k_hat.transpose(-1, -2), f"layer{i}.query", rows, stats,
                                        keys)
            scores = scores / math.sqrt(lay.head_dim) + add_mask
            p = lay.softmax(scores)
            ctx = self._spike_matmul(lay.p_quant, p, v_hat, f"layer{i}.attn_prob",
                                     rows * mask[:, None, None, :], stats, float(lay.head_dim))
            ctx = ctx.transpose(1, 2).reshape(h.shape)
            a = self._linear(lay.attn_out, lay.ctx_quant, ctx, f"layer{i}.attn_out_in", tok, stats)
            h1 = lay.norm1(a + h, mask)
            f = self._linear(lay.ffn_in, lay.ffn_in_quant, h1, f"layer{i}.ffn_in_in", tok, stats)
            f = self._linear(lay.ffn_out, lay.ffn_out_quant, lay.act(f), f"layer{i}.ffn_out_in", tok, stats)
            h = lay.norm2(f + h1, mask)
            hidden.append(h)
        pooled = self._linear(m.pooler, m.pooler_quant, m.pool(h, mask), "pooler_in", None, stats)
        pooled = m.pooler_act(pooled)
        spikes, alpha, off = self._encode(m.cls_quant, pooled, "classifier_in", None, stats,
                                          float(m.classifier.out_features))
        counts = spikes.sum(0) if self.per_step else spikes  # the read-out counts spikes over the window
        logits = m.classifier((counts + m.cls_quant.q_n) * alpha + off)
        return SimpleNamespace(logits=logits, hidden_states=tuple(hidden),
                               stats={k: {"spikes": v[0], "neurons": v[1], "synaptic_ops": v[2]} for k, v in stats.items()})
