"""``estimate_energy``: the paper's accounting on a tiny W1A4 Sorbet against spikes and fan-outs counted by hand."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")


def test_tiny_sorbet_energy_by_hand(tiny):
    from icml25.sorbet import LSQQuantizer, ann_macs, estimate_energy

    m = tiny.w1a4(0)  # 2 layers, hidden C=32, 4 heads (head_dim 8), FFN F=64, 2 labels
    B, L = 3, 5
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(3, 60, (B, L), generator=g)
    batch = {"input_ids": ids, "attention_mask": torch.ones(B, L, dtype=torch.long),
             "token_type_ids": torch.zeros_like(ids)}  # no padding: every neuron counts, every query sees L keys
    # spikes of every spiking population, counted on the ANN: a 4-bit code q drives q - q_n spikes (signed +8)
    spikes: dict[str, float] = {}

    def hook(name):
        def run(mod, inputs, _out):
            q, _, _ = mod.codes(inputs[0])
            spikes[name] = spikes.get(name, 0.0) + float((q - mod.q_n).sum())
        return run

    handles = [mod.register_forward_hook(hook(name)) for name, mod in m.named_modules()
               if isinstance(mod, LSQQuantizer) and name.rsplit(".", 1)[-1] not in ("k_quant", "v_quant")]  # accumulated
    with torch.no_grad():
        m(batch["input_ids"], batch["attention_mask"], batch["token_type_ids"])
    for h in handles:
        h.remove()
    C, F, heads, layers, labels = 32, 64, 4, 2, 2
    fan_out = {"qkv_quant": 3 * C, "q_quant": L, "p_quant": C // heads, "ctx_quant": C, "ffn_in_quant": F,
               "ffn_out_quant": C, "pooler_quant": C, "cls_quant": labels}
    sops = sum(n * fan_out[name.rsplit(".", 1)[-1]] for name, n in spikes.items()) / B
    shifts = 3 * heads * L * L * layers + 4 * L * C * 2 * layers  # PTsoftmax per score, BSPN per element (x2 norms)
    e_snn, rows, e_ann = estimate_energy(m, [batch])
    assert len(spikes) == 6 * layers + 2 and sops > 0
    assert e_snn == pytest.approx(0.9e-12 * (sops + shifts), rel=1e-9)
    assert e_ann == pytest.approx(4.6e-12 * ann_macs(L, C, F, layers, labels)["total"])
    assert e_ann == pytest.approx(4.6e-12 * (layers * (4 * L * C * C + 2 * L * C * F + 2 * L * L * C) + C * C + C * 2))
    assert sum(r["energy / sentence (nJ)"] for r in rows) == pytest.approx(e_snn * 1e9)
