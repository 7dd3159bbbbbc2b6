"""A BERT encoder classifier with Sorbet's switchable components, and :func:`convert` from transformers BERT models.

:class:`SorbetBertForSequenceClassification` re-implements the BERT forward pass (embeddings, self-attention,
FFN, pooler, classifier) with each of Sorbet's replacements switchable (:class:`SorbetOptions`): softmax or
PTsoftmax, LayerNorm or BSPN, GELU or ReLU, full-precision or binary weights, full-precision or 4-bit activations.
With the ``"fp"`` options it computes exactly what the transformers model computes (tested), so the multi-step
distillation chain starts from the user's own checkpoint.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from types import SimpleNamespace
from typing import Any

import torch
from torch import nn

from icml25.core.validation import check_int, check_option

from .bspn import BSPN
from .ptsoftmax import PTSoftmax
from .quantizers import BinaryEmbedding, BinaryLinear, LSQQuantizer

__all__ = ["SorbetOptions", "STAGES", "SorbetBertForSequenceClassification", "convert", "MASK_VALUE"]

MASK_VALUE = -10000.0  # additive attention mask of padding positions (spec §2)


@dataclass(frozen=True)
class SorbetOptions:
    """Which of Sorbet's replacements a model uses.

    Attributes
    ----------
    attention : {"softmax", "ptsoftmax"}
    norm : {"layernorm", "bspn"}
        Both residual norms of every layer (the embedding LayerNorm is kept, as in the released code).
    activation : {"gelu", "relu"}
        FFN activation.
    pooler_activation : {"tanh", "relu"}
        Pooler activation (BERT: tanh; Sorbet: ReLU).
    weight_bits : {32, 1}
        1 = binary weights for every Linear of the encoder and pooler and for the word embeddings.
    act_bits : {32, 4}
        4 = 4-bit LSQ quantisers on the inputs of every Linear, on Q, K, V and on the attention probabilities.
    ste : bool
        Straight-through gradients in PTsoftmax and BSPN (False = the released code).
    bspn_warmup : int
        Warm-up iterations of BSPN (batch statistics).
    bspn_pad_mask : bool
        BSPN statistics over real tokens only.
    pow2_step : bool
        Power-of-two quantiser steps (Sorbet) or free steps (BiT).
    bspn_projected_shift : bool
        Straight-through gradient for the rounded divisor of BSPN's group shift (:func:`~icml25.sorbet.group_shift`,
        default); False treats the divisor as a constant.
    binary_scale_grad : bool
        Back-propagate through the binary weights' scale ``mean|W|`` (:class:`BinaryLinear`).
    attn_prob_step : {"lsq", "unit"}
        Initial step of the attention-probability quantiser: the LSQ first-batch rule (``4 mean(p) / sqrt(15)``,
        which for long rows clips large probabilities at ``15 * step``) or ``1/16`` (codes cover ``[0, 15/16]``).
    pooling : {"cls", "mean"}
        Input of the pooler: the ``[CLS]`` state (BERT) or the mean over real tokens (the native pooling of
        sentence-transformers encoders such as all-MiniLM-L6-v2, whose ``[CLS]`` state is nearly constant in the
        first layers).
    """

    attention: str = "softmax"
    norm: str = "layernorm"
    activation: str = "gelu"
    pooler_activation: str = "tanh"
    weight_bits: int = 32
    act_bits: int = 32
    ste: bool = True
    bspn_warmup: int = 1000
    bspn_pad_mask: bool = True
    pow2_step: bool = True
    bspn_projected_shift: bool = True
    binary_scale_grad: bool = False
    attn_prob_step: str = "lsq"
    pooling: str = "cls"

    def __post_init__(self) -> None:
        check_option(self.attention, "attention", ("softmax", "ptsoftmax"))
        check_option(self.norm, "norm", ("layernorm", "bspn"))
        check_option(self.activation, "activation", ("gelu", "relu"))
        check_option(self.pooler_activation, "pooler_activation", ("tanh", "relu"))
        check_option(self.weight_bits, "weight_bits", (32, 1))
        check_option(self.act_bits, "act_bits", (32, 4))
        check_option(self.pooling, "pooling", ("cls", "mean"))
        check_option(self.attn_prob_step, "attn_prob_step", ("lsq", "unit"))
        for name in ("ste", "bspn_pad_mask", "pow2_step", "bspn_projected_shift", "binary_scale_grad"):
            check_option(getattr(self, name), name, (True, False))
        check_int(self.bspn_warmup, "bspn_warmup", low=0)


#: the stages of the multi-step pipeline (spec §2): teacher re-implementation, FP with the replacements, W1A4
STAGES: dict[str, SorbetOptions] = {
    "fp": SorbetOptions(),
    "ptsoftmax_bspn": SorbetOptions(attention="ptsoftmax", norm="bspn", activation="relu", pooler_activation="relu"),
    "w1a4": SorbetOptions(attention="ptsoftmax", norm="bspn", activation="relu", pooler_activation="relu",
                          weight_bits=1, act_bits=4),
}


@dataclass
class _Dims:
    vocab_size: int
    hidden: int
    layers: int
    heads: int
    ffn: int
    max_position: int
    type_vocab: int
    num_labels: int
    ln_eps: float = 1e-12
    extra: dict[str, Any] = field(default_factory=dict)


def _quant(opts: SorbetOptions, signed: bool, features: int | None = None, init_step: float | None = None) -> nn.Module:
    if opts.act_bits == 32:
        return nn.Identity()
    return LSQQuantizer(opts.act_bits, signed=signed, num_features=features, pow2_step=opts.pow2_step,
                        init_step=init_step)


def _linear(opts: SorbetOptions, i: int, o: int) -> nn.Linear:
    return BinaryLinear(i, o, scale_grad=opts.binary_scale_grad) if opts.weight_bits == 1 else nn.Linear(i, o)


class _Norm(nn.Module):
    def __init__(self, opts: SorbetOptions, d: _Dims) -> None:
        super().__init__()
        self.kind = opts.norm
        if opts.norm == "bspn":
            self.norm: nn.Module = BSPN(d.hidden, d.heads, warmup_iters=opts.bspn_warmup, ste=opts.ste,
                                        pad_mask=opts.bspn_pad_mask, projected_shift=opts.bspn_projected_shift)
        else:
            self.norm = nn.LayerNorm(d.hidden, eps=d.ln_eps)

    def forward(self, h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.norm(h, mask) if self.kind == "bspn" else self.norm(h)


class SorbetLayer(nn.Module):
    """One encoder layer; module names follow the spiking simulator (``qkv_quant`` ... ``ffn_out_quant``)."""

    def __init__(self, opts: SorbetOptions, d: _Dims) -> None:
        super().__init__()
        C, self.heads = d.hidden, d.heads
        self.head_dim = C // d.heads
        self.qkv_quant = _quant(opts, True, C)
        self.query, self.key, self.value = (_linear(opts, C, C) for _ in range(3))
        self.q_quant, self.k_quant, self.v_quant = (_quant(opts, True) for _ in range(3))
        self.softmax: nn.Module = PTSoftmax(ste=opts.ste) if opts.attention == "ptsoftmax" else nn.Softmax(-1)
        self.p_quant = _quant(opts, False, init_step=2.0 ** -opts.act_bits if opts.attn_prob_step == "unit" else None)
        self.ctx_quant = _quant(opts, True, C)
        self.attn_out = _linear(opts, C, C)
        self.norm1 = _Norm(opts, d)
        self.ffn_in_quant = _quant(opts, True, C)
        self.ffn_in = _linear(opts, C, d.ffn)
        self.act: nn.Module = nn.ReLU() if opts.activation == "relu" else nn.GELU()
        self.ffn_out_quant = _quant(opts, opts.activation != "relu", d.ffn)
        self.ffn_out = _linear(opts, d.ffn, C)
        self.norm2 = _Norm(opts, d)

    def split(self, x: torch.Tensor) -> torch.Tensor:
        B, L, _ = x.shape
        return x.view(B, L, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, h: torch.Tensor, add_mask: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = self.qkv_quant(h)
        q = self.q_quant(self.split(self.query(x)))
        k = self.k_quant(self.split(self.key(x)))
        v = self.v_quant(self.split(self.value(x)))
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim) + add_mask
        p = self.p_quant(self.softmax(scores))
        ctx = (p @ v).transpose(1, 2).reshape(h.shape)
        h1 = self.norm1(self.attn_out(self.ctx_quant(ctx)) + h, mask)
        f = self.ffn_out(self.ffn_out_quant(self.act(self.ffn_in(self.ffn_in_quant(h1)))))
        return self.norm2(f + h1, mask)


class SorbetBertForSequenceClassification(nn.Module):
    r"""A BERT sequence classifier with the replacements of the 'Sorbet' (ICML 2025) paper switchable.

    Build one with :func:`convert` from a transformers ``BertForSequenceClassification`` (or from another
    ``SorbetBertForSequenceClassification``, which is how the multi-step distillation moves between stages).

    Parameters
    ----------
    dims : _Dims
        Sizes (taken from the source model's config by :func:`convert`).
    options : SorbetOptions
        The replacements in use.

    Shapes
    ------
    ``input_ids``, ``attention_mask``, ``token_type_ids``: ``(B, L)`` integers; output ``.logits``
    ``(B, num_labels)`` and ``.hidden_states`` (a tuple of ``layers + 1`` tensors ``(B, L, C)``).
    """

    def __init__(self, dims: _Dims, options: SorbetOptions) -> None:
        super().__init__()
        self.dims, self.options = dims, options
        C = dims.hidden
        self.word_embeddings = (BinaryEmbedding(dims.vocab_size, C) if options.weight_bits == 1
                                else nn.Embedding(dims.vocab_size, C))
        self.position_embeddings = nn.Embedding(dims.max_position, C)
        self.token_type_embeddings = nn.Embedding(dims.type_vocab, C)
        self.emb_norm = nn.LayerNorm(C, eps=dims.ln_eps)
        self.layers = nn.ModuleList(SorbetLayer(options, dims) for _ in range(dims.layers))
        self.pooler_quant = _quant(options, True, C)
        self.pooler = _linear(options, C, C)
        self.pooler_act: nn.Module = nn.ReLU() if options.pooler_activation == "relu" else nn.Tanh()
        self.cls_quant = _quant(options, options.pooler_activation != "relu", C)
        self.classifier = nn.Linear(C, dims.num_labels)

    def _check(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> tuple[torch.Tensor, ...]:
        if not isinstance(input_ids, torch.Tensor) or input_ids.dim() != 2 or input_ids.dtype != torch.long:
            raise TypeError(f"input_ids must be a (batch, length) torch.long tensor, got "
                            f"{getattr(input_ids, 'dtype', type(input_ids).__name__)} "
                            f"{tuple(getattr(input_ids, 'shape', ()))}")
        B, L = input_ids.shape
        if L > self.dims.max_position:
            raise ValueError(f"input_ids has length {L}, over the model's maximum sequence length "
                             f"{self.dims.max_position}; truncate the input")
        if L == 0 or B == 0:
            raise ValueError(f"input_ids must be non-empty, got shape {(B, L)}")
        if int(input_ids.min()) < 0 or int(input_ids.max()) >= self.dims.vocab_size:
            raise ValueError(f"input_ids must be token ids in [0, {self.dims.vocab_size}), got "
                             f"[{int(input_ids.min())}, {int(input_ids.max())}]")
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        for name, t in (("attention_mask", attention_mask), ("token_type_ids", token_type_ids)):
            if not isinstance(t, torch.Tensor) or tuple(t.shape) != (B, L):
                raise ValueError(f"{name} must be a tensor of shape {(B, L)} like input_ids, got "
                                 f"{tuple(getattr(t, 'shape', ())) or type(t).__name__}")
        return input_ids, attention_mask, token_type_ids

    def embed(self, input_ids: torch.Tensor, token_type_ids: torch.Tensor) -> torch.Tensor:
        """Embedding output ``h_0`` (word + position + token type, then the kept LayerNorm)."""
        pos = torch.arange(input_ids.shape[1], device=input_ids.device)
        e = self.word_embeddings(input_ids) + self.position_embeddings(pos) + self.token_type_embeddings(token_type_ids)
        return self.emb_norm(e)

    def pool(self, h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Pooler input: ``h[:, 0]`` or the mean of ``h`` over real tokens (``options.pooling``)."""
        if self.options.pooling == "cls":
            return h[:, 0]
        return (h * mask[:, :, None]).sum(1) / mask.sum(1, keepdim=True)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None,
                token_type_ids: torch.Tensor | None = None, **_: Any) -> SimpleNamespace:
        input_ids, attention_mask, token_type_ids = self._check(input_ids, attention_mask, token_type_ids)
        mask = attention_mask.to(torch.float32)
        add_mask = ((1.0 - mask) * MASK_VALUE)[:, None, None, :]
        h = self.embed(input_ids, token_type_ids)
        hidden = [h]
        for layer in self.layers:
            h = layer(h, add_mask, mask)
            hidden.append(h)
        pooled = self.pooler_act(self.pooler(self.pooler_quant(self.pool(h, mask))))
        logits = self.classifier(self.cls_quant(pooled))
        return SimpleNamespace(logits=logits, hidden_states=tuple(hidden))


def _dims_from_hf(config: Any) -> _Dims:
    if getattr(config, "model_type", None) != "bert":
        raise TypeError(f"model must be a BERT-family transformers model (config.model_type 'bert'), got "
                        f"model_type {getattr(config, 'model_type', None)!r}")
    act = getattr(config, "hidden_act", "gelu")
    if act not in ("gelu", "relu"):
        raise ValueError(f"model's hidden_act must be 'gelu' or 'relu', got {act!r}")
    return _Dims(config.vocab_size, config.hidden_size, config.num_hidden_layers, config.num_attention_heads,
                 config.intermediate_size, config.max_position_embeddings, config.type_vocab_size,
                 config.num_labels, config.layer_norm_eps, {"hidden_act": act})


def _hf_state(model: Any) -> dict[str, torch.Tensor]:
    sd = model.state_dict()
    out: dict[str, torch.Tensor] = {}
    ren = {"bert.embeddings.word_embeddings.weight": "word_embeddings.weight",
           "bert.embeddings.position_embeddings.weight": "position_embeddings.weight",
           "bert.embeddings.token_type_embeddings.weight": "token_type_embeddings.weight",
           "bert.embeddings.LayerNorm.weight": "emb_norm.weight", "bert.embeddings.LayerNorm.bias": "emb_norm.bias",
           "bert.pooler.dense.weight": "pooler.weight", "bert.pooler.dense.bias": "pooler.bias",
           "classifier.weight": "classifier.weight", "classifier.bias": "classifier.bias"}
    sub = {"attention.self.query": "query", "attention.self.key": "key", "attention.self.value": "value",
           "attention.output.dense": "attn_out", "attention.output.LayerNorm": "norm1.norm",
           "intermediate.dense": "ffn_in", "output.dense": "ffn_out", "output.LayerNorm": "norm2.norm"}
    for k, v in sd.items():
        if k in ren:
            out[ren[k]] = v
        elif k.startswith("bert.encoder.layer."):
            i, rest = k[len("bert.encoder.layer."):].split(".", 1)
            mod, p = rest.rsplit(".", 1)
            if mod in sub:
                out[f"layers.{i}.{sub[mod]}.{p}"] = v
    return out


def convert(model: Any, stage: str = "w1a4", **overrides: Any) -> Any:
    """Build the Sorbet model of ``stage`` from a BERT classifier, copying its weights (the source is untouched).

    Parameters
    ----------
    model : transformers.BertForSequenceClassification or SorbetBertForSequenceClassification
        The source: a fine-tuned transformers BERT-family classifier (e.g. MiniLM-L6 with a classification head)
        or a Sorbet model of an earlier stage. A trained W1A4 Sorbet model for ``stage="snn"``.
    stage : {"fp", "ptsoftmax_bspn", "w1a4", "snn"}
        ``"fp"`` re-implements the source exactly; ``"ptsoftmax_bspn"`` adds ReLU, PTsoftmax and BSPN (full
        precision); ``"w1a4"`` also binarises the weights and quantises activations to 4 bits; ``"snn"`` wraps a
        trained W1A4 model in the exact rate-coded spiking simulator (:class:`SpikingSorbet`).
    **overrides
        Fields of :class:`SorbetOptions` changed from the stage's defaults (e.g. ``attention="softmax",
        norm="layernorm"`` for a BiT-like W1A4 baseline). For ``stage="snn"``: ``T`` (time steps) and ``per_step``
        of :class:`SpikingSorbet`.

    Returns
    -------
    SorbetBertForSequenceClassification or SpikingSorbet
        Same ``forward(input_ids, attention_mask, token_type_ids)`` signature, output with ``.logits``.

    Examples
    --------
    >>> from transformers import BertConfig, BertForSequenceClassification
    >>> cfg = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
    ...                  intermediate_size=32, max_position_embeddings=16)
    >>> hf = BertForSequenceClassification(cfg).eval()
    >>> ids = torch.tensor([[1, 5, 7, 2]])
    >>> fp = convert(hf, "fp").eval()
    >>> bool(torch.allclose(fp(ids).logits, hf(ids).logits, atol=1e-5))
    True
    >>> convert(hf, "w1a4").options.weight_bits
    1
    """
    check_option(stage, "stage", ("fp", "ptsoftmax_bspn", "w1a4", "snn"))
    if stage == "snn":
        from .spiking import SpikingSorbet

        bad = set(overrides) - {"T", "per_step"}
        if bad:
            raise TypeError(f"unknown option(s) {sorted(bad)} for convert(stage='snn'); valid: ['T', 'per_step'] "
                            "(the quantisation options are fixed by the trained W1A4 model)")
        return SpikingSorbet(model, **overrides)
    base = STAGES[stage]
    bad = set(overrides) - set(SorbetOptions.__dataclass_fields__)
    if bad:
        raise TypeError(f"unknown option(s) {sorted(bad)} for convert; valid: {sorted(SorbetOptions.__dataclass_fields__)}")
    opts = replace(base, **overrides)
    if isinstance(model, SorbetBertForSequenceClassification):
        dims, state = model.dims, {k: v for k, v in model.state_dict().items()}
        if model.options.act_bits != opts.act_bits or model.options.pow2_step != opts.pow2_step:
            state = {k: v for k, v in state.items() if "quant" not in k}  # re-initialise the step sizes
    elif type(model).__name__ == "BertForSequenceClassification" and hasattr(model, "config"):
        dims, state = _dims_from_hf(model.config), _hf_state(model)
        if opts.activation == "gelu" and dims.extra.get("hidden_act") == "relu":
            opts = replace(opts, activation="relu")
    else:
        raise TypeError("model must be a transformers BertForSequenceClassification (a BERT-family classifier) "
                        f"or a SorbetBertForSequenceClassification, got {type(model).__name__}")
    new = SorbetBertForSequenceClassification(dims, opts)
    own = new.state_dict()
    # LayerNorm -> BSPN: gamma/beta initialise the BSPN affine (same names); other stage-specific entries drop
    state = {k: v for k, v in state.items() if k in own and own[k].shape == v.shape}
    new.load_state_dict(state, strict=False)
    return new.train(model.training)
