"""Lean PyTorch decoders for the transformers architectures the pretrained models use (Llama, Qwen2, Gemma 3 text),
read straight from a transformers folder (``config.json`` + ``model.safetensors``, memory-mapped).

:class:`~icml25.llm.hf.HFModel` runs these by default instead of ``AutoModelForCausalLM``: loading needs neither
``transformers`` (whose import alone takes several seconds) nor a random initialisation, the weights are the
memory-mapped safetensors tensors (no copy in float32), and a decoding step is a short list of torch calls on a
preallocated KV cache. The computation is the transformers one, operation for operation (the tests compare
logits, hidden states and greedy text with ``AutoModelForCausalLM``); a configuration with a feature not written
here (another RoPE type, attention soft-capping, ...) makes :func:`unsupported_reason` say why, and ``HFModel``
falls back to transformers.

Shapes: ``idx`` and ``positions`` are ``(B, T)``; the cache holds ``(B, n_kv_heads, S_max, head_dim)`` per layer;
``valid`` is ``(B, S)``, True at key positions that are real tokens (False at left padding).
"""

from __future__ import annotations

import ctypes
import functools
import json
import mmap
import struct
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

__all__ = ["DecoderConfig", "NativeDecoder", "KVCache", "unsupported_reason", "SUPPORTED_TYPES", "read_safetensors",
           "write_safetensors", "native_order", "Int8Weight", "Int4Weight", "QUANTIZE", "check_quantize",
           "quantize_int4"]

QUANTIZE = (None, "int8", "int4")

SUPPORTED_TYPES = ("llama", "qwen2", "gemma3_text")
_ACTS = {"silu": F.silu, "gelu_pytorch_tanh": lambda x: F.gelu(x, approximate="tanh")}


@dataclass(frozen=True)
class DecoderConfig:
    """What the forward pass needs from a transformers ``config.json``."""

    model_type: str
    vocab_size: int
    hidden_size: int
    n_layer: int
    n_head: int
    n_kv_head: int
    head_dim: int
    eps: float
    act: str
    rope_theta: tuple[float, ...]  # per layer
    window: tuple[int | None, ...]  # per layer: sliding-window length or None (full causal attention)
    scale: float  # attention scale (1/sqrt(head_dim), Gemma: query_pre_attn_scalar ** -0.5)
    gemma: bool  # (1 + w) RMS norms, q/k norms, norms around attention and MLP, scaled embeddings
    tie: bool
    final_softcap: float | None


def _rope(cfg: dict[str, Any], layer_type: str | None) -> tuple[float | None, str]:
    """RoPE base of a layer type and why it cannot be handled ('' when it can)."""
    rp = cfg.get("rope_parameters")
    if isinstance(rp, dict) and layer_type is not None and isinstance(rp.get(layer_type), dict):
        rp = rp[layer_type]
    if isinstance(rp, dict) and "rope_theta" in rp:
        kind = rp.get("rope_type", rp.get("type", "default"))
        return float(rp["rope_theta"]), "" if kind == "default" else f"RoPE type {kind!r}"
    scaling = cfg.get("rope_scaling")
    if scaling:
        return None, f"rope_scaling {scaling!r}"
    if layer_type == "sliding_attention" and "rope_local_base_freq" in cfg:
        return float(cfg["rope_local_base_freq"]), ""
    return float(cfg.get("rope_theta", 10000.0)), ""


def parse_config(cfg: dict[str, Any]) -> tuple[DecoderConfig | None, str]:
    """``(DecoderConfig, '')`` for a supported ``config.json`` dictionary, else ``(None, why not)``."""
    mt = cfg.get("model_type")
    if mt not in SUPPORTED_TYPES:
        return None, f"model_type {mt!r} (written natively: {', '.join(SUPPORTED_TYPES)})"
    gemma = mt == "gemma3_text"
    n_layer, n_head = int(cfg["num_hidden_layers"]), int(cfg["num_attention_heads"])
    hidden = int(cfg["hidden_size"])
    head_dim = int(cfg.get("head_dim") or hidden // n_head)
    act = cfg.get("hidden_activation" if gemma else "hidden_act") or ("gelu_pytorch_tanh" if gemma else "silu")
    if act not in _ACTS:
        return None, f"activation {act!r}"
    if gemma and cfg.get("attn_logit_softcapping") is not None:
        return None, "attention logit soft-capping"
    if cfg.get("use_bidirectional_attention"):
        return None, "bidirectional attention"
    if int(cfg.get("pretraining_tp", 1) or 1) != 1:
        return None, "pretraining_tp > 1"
    types = cfg.get("layer_types") or ["full_attention"] * n_layer
    if len(types) < n_layer or any(t not in ("full_attention", "sliding_attention") for t in types[:n_layer]):
        return None, f"layer_types {types!r}"
    if mt == "qwen2" and not cfg.get("use_sliding_window"):
        types = ["full_attention"] * n_layer
    thetas, windows = [], []
    for t in types[:n_layer]:
        theta, why = _rope(cfg, t if "rope_parameters" in cfg or gemma else None)
        if why or theta is None:
            return None, why or "no RoPE base"
        thetas.append(theta)
        w = cfg.get("sliding_window") if t == "sliding_attention" else None
        windows.append(int(w) if w else None)
    scale = float(cfg["query_pre_attn_scalar"]) ** -0.5 if gemma else head_dim ** -0.5
    soft = cfg.get("final_logit_softcapping") if gemma else None
    return DecoderConfig(
        model_type=mt, vocab_size=int(cfg["vocab_size"]), hidden_size=hidden, n_layer=n_layer, n_head=n_head,
        n_kv_head=int(cfg.get("num_key_value_heads") or n_head), head_dim=head_dim, eps=float(cfg["rms_norm_eps"]),
        act=act, rope_theta=tuple(thetas), window=tuple(windows), scale=scale, gemma=gemma,
        tie=bool(cfg.get("tie_word_embeddings", True)), final_softcap=float(soft) if soft else None), ""


def unsupported_reason(folder: str | Path) -> str | None:
    """None when ``folder`` can be run by :class:`NativeDecoder`, else why not (one line)."""
    folder = Path(folder)
    if not (folder / "config.json").is_file():
        return "no config.json"
    if not (folder / "model.safetensors").is_file():
        return "no single model.safetensors file"
    try:
        cfg = json.loads((folder / "config.json").read_text())
    except (OSError, ValueError) as exc:
        return f"unreadable config.json ({exc})"
    if cfg.get("auto_map"):
        return "custom model code (auto_map)"
    if cfg.get("quantization_config"):
        return "a quantised checkpoint"
    try:
        return parse_config(cfg)[1] or None
    except (KeyError, TypeError, ValueError) as exc:
        return f"config.json lacks {exc}"


_ST_DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16, "F64": torch.float64,
              "I64": torch.int64, "I32": torch.int32, "I16": torch.int16, "I8": torch.int8, "U8": torch.uint8,
              "BOOL": torch.bool}
_ST_NAMES = {v: k for k, v in _ST_DTYPES.items()}


class _Tensors(dict):  # a dict that also holds the memory map its tensors view
    mmap: Any = None


def read_safetensors(path: str | Path) -> dict[str, torch.Tensor]:
    """Every tensor of a ``.safetensors`` file as a view of one private memory map of the file.

    Nothing is read until used, and tensors stored back to back can be joined without a copy
    (``NativeDecoder`` runs q/k/v and gate/up as one matrix each when the file stores them in that order, as
    :func:`write_safetensors` with :func:`native_order` does). Writes to the tensors stay in this process.
    """
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)
    base = torch.frombuffer(mm, dtype=torch.uint8) if len(mm) else torch.empty(0, dtype=torch.uint8)
    start = 8 + n
    out = _Tensors()
    out.mmap = mm
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        dt = _ST_DTYPES[info["dtype"]]
        out[name] = base[start + a:start + b].view(dt).view(info["shape"])
    return out


def native_order(names: list[str]) -> list[str]:
    """``names`` ordered so that each layer's q, k, v projections and gate, up projections lie back to back."""
    rank = {"q_proj": 0, "k_proj": 1, "v_proj": 2, "o_proj": 3, "gate_proj": 4, "up_proj": 5, "down_proj": 6}

    def key(name: str) -> tuple:
        parts = name.split(".")
        if "layers" in parts:
            i = parts.index("layers")
            layer = int(parts[i + 1])
            proj = next((rank[p] for p in parts if p in rank), 99)
            return (1, layer, parts[-1] != "weight", proj, name)
        return (0 if "embed" in name else 2, 0, False, 0, name)

    return sorted(names, key=key)


def write_safetensors(path: str | Path, tensors: dict[str, torch.Tensor], metadata: dict[str, str] | None = None
                      ) -> None:
    """Write ``tensors`` to a ``.safetensors`` file in the order of the dictionary (``safetensors.save_file``
    sorts by name, which separates q from k and v)."""
    header: dict[str, Any] = {"__metadata__": dict(metadata or {"format": "pt"})}
    off, blobs = 0, []
    for name, t in tensors.items():
        t = t.detach().contiguous().cpu()
        nbytes = t.numel() * t.element_size()
        header[name] = {"dtype": _ST_NAMES[t.dtype], "shape": list(t.shape), "data_offsets": [off, off + nbytes]}
        blobs.append(t)
        off += nbytes
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)  # the data starts 8-byte aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)))
        f.write(raw)
        for t in blobs:
            if t.numel():
                f.write(t.view(-1).view(torch.uint8).numpy().tobytes() if t.dtype == torch.bfloat16
                        else t.numpy().tobytes())


def check_quantize(quantize: Any, device: Any = "cpu") -> None:
    """Raise ``ValueError`` unless ``quantize`` is one of :data:`QUANTIZE` (None, ``"int8"``, ``"int4"``) and this
    torch build (and ``device``) has the kernel it runs on."""
    if quantize not in QUANTIZE:
        raise ValueError(f"quantize must be None, 'int8' or 'int4', got {quantize!r}")
    if quantize == "int8" and not hasattr(torch, "_weight_int8pack_mm"):
        raise ValueError("quantize='int8' needs torch._weight_int8pack_mm (torch >= 2.4); this torch is "
                         f"{torch.__version__}")
    if quantize == "int4":
        if not (hasattr(torch.ops.aten, "_weight_int4pack_mm_for_cpu")
                and hasattr(torch.ops.aten, "_convert_weight_to_int4pack_for_cpu")):
            raise ValueError("quantize='int4' needs torch.ops.aten._weight_int4pack_mm_for_cpu (a recent torch), "
                             f"which this torch ({torch.__version__}) lacks")
        if torch.device(device).type != "cpu":
            raise ValueError(f"quantize='int4' runs on the CPU only (torch's int4 CPU kernel), got device {device!r}")


class Int8Weight:
    """A weight matrix ``(N, K)`` stored as int8 with one scale per output row (symmetric, weight-only), run by
    ``torch._weight_int8pack_mm`` on bfloat16 activations: a quarter of float32's memory traffic per token, and
    approximate (answers may differ from float32 after a few tokens). Products over many rows at once (a prompt,
    a scored text: compute-bound, where that kernel is slower than float32) multiply by the de-quantised weight in
    float32, made for the call in row blocks: the float32 weight ``w`` is not kept (its memory-mapped pages can
    leave memory)."""

    __slots__ = ("q", "scale")
    MAX_ROWS = 16  # int8 kernel up to this many activation rows (decoding), de-quantised float32 above (prefill)
    CHUNK = 16384  # output rows de-quantised at a time in the float32 path

    def __init__(self, w: torch.Tensor, rows: int = 8192):
        self.q = torch.empty(w.shape, dtype=torch.int8, device=w.device)
        self.scale = torch.empty(w.shape[0], dtype=torch.bfloat16, device=w.device)
        for a in range(0, w.shape[0], rows):  # in row blocks: no float32 copy of a whole output layer
            blk = w[a:a + rows].float()
            s = (blk.abs().amax(1) / 127).clamp(min=1e-12).to(torch.bfloat16)
            self.scale[a:a + rows] = s
            self.q[a:a + rows] = (blk / s.float()[:, None]).round_().clamp_(-127, 127).to(torch.int8)

    @property
    def shape(self) -> torch.Size:
        return self.q.shape

    def dequantize(self, a: int = 0, b: int | None = None, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        """Rows ``a:b`` of the weight the kernel multiplies by, ``(b - a, K)`` in ``dtype``."""
        return (self.q[a:b].to(dtype) * self.scale[a:b].to(dtype)[:, None])

    def __call__(self, x: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
        shp = x.shape
        x2 = x.reshape(-1, shp[-1])
        if x2.shape[0] > self.MAX_ROWS:
            y = _chunked_linear(x2, self, self.q.shape[0], self.CHUNK)
        else:
            y = torch._weight_int8pack_mm(x2.to(torch.bfloat16), self.q, self.scale).to(x.dtype)
        y = y.view(*shp[:-1], -1)
        return y if bias is None else y + bias


def _chunked_linear(x2: torch.Tensor, wq: Any, n: int, chunk: int) -> torch.Tensor:
    """``x2 (M, K) @ W.T`` with ``W`` de-quantised ``chunk`` output rows at a time (bounded temporary memory)."""
    if n <= chunk:
        return F.linear(x2, wq.dequantize(0, n, x2.dtype))
    y = x2.new_empty((x2.shape[0], n))
    for a in range(0, n, chunk):
        b = min(a + chunk, n)
        y[:, a:b] = F.linear(x2, wq.dequantize(a, b, x2.dtype))
    return y


@functools.cache
def _int4_block() -> int | None:
    """How many output rows torch's CPU int4 packing interleaves (it depends on the CPU's vector width), found
    once by packing a probe matrix and checking that :func:`_unpack_int4` inverts it; None when no known layout
    fits (then the int4 kernel runs every product)."""
    g = torch.Generator().manual_seed(0)
    probe = torch.randint(0, 16, (128, 64), generator=g, dtype=torch.int32)
    packed = torch.ops.aten._convert_weight_to_int4pack_for_cpu(probe, 1)
    if packed.dtype == torch.uint8 and tuple(packed.shape) == (128, 32):
        for bn in (64, 32, 16):
            if torch.equal(_unpack_int4(packed, bn).int(), probe):
                return bn
    return None


def _unpack_int4(packed: torch.Tensor, bn: int) -> torch.Tensor:
    """The 4-bit codes ``(N, K)`` (uint8, 0..15) of torch's CPU int4 packing ``(N, K / 2)``: blocks of ``bn``
    output rows, stored k-major, rows ``j`` and ``j + bn / 2`` of a block in the low and high nibble of a byte."""
    n, k = packed.shape[0], packed.shape[1] * 2
    p = packed.view(n // bn, k, bn // 2)
    return torch.cat((p & 15, p >> 4), dim=-1).transpose(1, 2).reshape(n, k)


class Int4Weight:
    """A weight matrix ``(N, K)`` stored as 4-bit codes with a scale and an offset per group of ``group``
    consecutive inputs of a row (asymmetric, weight-only): ``w[n, k] = (code - 8) * scale[g, n] + zero[g, n]`` with
    ``g = k // group``, scales and offsets in bfloat16. Decoding rows run through torch's CPU kernel
    ``_weight_int4pack_mm_for_cpu`` on bfloat16 activations (an eighth of float32's weight bytes, plus the scales);
    products over more than :attr:`MAX_ROWS` rows (prompts, scored texts: compute-bound) multiply by the
    de-quantised weight in float32, made for the call in row blocks. No float32 weight is kept.

    GGUF's Q4_1 blocks (``w = d * q + m`` per 32 inputs, ``d``, ``m`` float16) are of this form: quantising
    their de-quantised weights with ``group=32`` recovers the codes, up to bfloat16 rounding of ``d`` and ``m``.

    Parameters
    ----------
    w : Tensor (N, K)
        The weight; ``K`` a multiple of ``group``. Rows are padded to a multiple of 64 (the kernel's packing).
    group : int
        Inputs per scale/offset: 32 (default), 64, 128 or 256.
    """

    __slots__ = ("packed", "sz", "group", "n")
    MAX_ROWS = 48  # int4 kernel up to this many activation rows, de-quantised float32 above (measured, README)
    CHUNK = 16384
    GROUPS = (32, 64, 128, 256)

    def __init__(self, w: torch.Tensor, group: int = 32, rows: int = 8192):
        if group not in self.GROUPS:
            raise ValueError(f"group must be one of {self.GROUPS}, got {group!r}")
        if w.dim() != 2 or w.shape[1] % group:
            raise ValueError(f"Int4Weight needs a 2-d weight whose columns are a multiple of group={group}, "
                             f"got shape {tuple(w.shape)}")
        n, k = w.shape
        n_pad = -(-n // 64) * 64
        self.n, self.group = n, group
        self.packed = torch.empty((n_pad, k // 2), dtype=torch.uint8)
        self.sz = torch.zeros((k // group, n_pad, 2), dtype=torch.bfloat16)
        for a in range(0, n_pad, rows):  # rows is a multiple of 64: blocks pack like the whole
            b = min(a + rows, n_pad)
            blk = w[a:min(b, n)].float()
            if blk.shape[0] < b - a:
                blk = torch.cat((blk, blk.new_zeros((b - a - blk.shape[0], k))))
            codes, scale, zero = quantize_int4(blk, group)
            self.sz[:, a:b, 0] = scale.t()
            self.sz[:, a:b, 1] = zero.t()
            self.packed[a:b] = torch.ops.aten._convert_weight_to_int4pack_for_cpu(codes.to(torch.int32), 1)

    @property
    def shape(self) -> torch.Size:
        return torch.Size((self.n, self.packed.shape[1] * 2))

    def codes(self) -> torch.Tensor | None:
        """The 4-bit codes ``(N, K)`` (uint8, 0..15), or None when this CPU's packing layout is not known."""
        bn = _int4_block()
        return None if bn is None else _unpack_int4(self.packed, bn)[:self.n]

    def dequantize(self, a: int = 0, b: int | None = None, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        """Rows ``a:b`` of the weight the kernel multiplies by, ``(b - a, K)`` in ``dtype`` (``a`` a multiple of
        64). ``RuntimeError`` when this CPU's packing layout is not known."""
        bn = _int4_block()
        if bn is None:
            raise RuntimeError("the int4 packing layout of this CPU is not known; cannot de-quantise")
        b = self.n if b is None else b
        b_pad = min(-(-b // bn) * bn, self.packed.shape[0])
        codes = _unpack_int4(self.packed[a:b_pad], bn)[:b - a]
        k = codes.shape[1]
        sz = self.sz[:, a:b].to(dtype)  # (K / group, b - a, 2)
        w = codes.to(dtype).view(b - a, k // self.group, self.group).sub_(8)
        return w.mul_(sz[..., 0].t()[..., None]).add_(sz[..., 1].t()[..., None]).view(b - a, k)

    def __call__(self, x: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
        shp = x.shape
        x2 = x.reshape(-1, shp[-1])
        if x2.shape[0] > self.MAX_ROWS and _int4_block() is not None:
            y = _chunked_linear(x2, self, self.n, self.CHUNK)
        else:
            y = torch.ops.aten._weight_int4pack_mm_for_cpu(x2.to(torch.bfloat16).contiguous(), self.packed,
                                                           self.group, self.sz)
            y = y[:, :self.n].to(x.dtype)
        y = y.view(*shp[:-1], self.n)
        return y if bias is None else y + bias


def quantize_int4(w: torch.Tensor, group: int = 32, grid: bool = True) -> tuple[torch.Tensor, torch.Tensor,
                                                                                torch.Tensor]:
    """Group-wise asymmetric 4-bit quantisation of ``w`` (N, K) (``K`` a multiple of ``group``).

    Per group of ``group`` consecutive inputs of a row: ``scale = (max - min) / 15`` and ``zero = min + 8 * scale``,
    both rounded to bfloat16 (what the kernel reads), then ``code = round((w - zero) / scale) + 8`` clamped to
    0..15, so that ``(code - 8) * scale + zero`` approximates ``w``; exact when ``w`` is so built from codes that
    use 0 and 15 in every group and bfloat16 scales and offsets (GGUF Q4_1 blocks).

    With ``grid`` (default), a group whose values already lie on a 4-bit grid of fewer steps -- ``min + j * d`` with
    ``j`` integers and ``(max - min) / d`` one of 8..14, as GGUF Q4_K sub-blocks do -- keeps that step ``d`` (its
    codes then span 0..``(max - min) / d``): the grid is recovered instead of re-quantised onto a finer one. Tried
    only when more than 5 % of the groups of the first 256 rows are such.

    Returns
    -------
    codes : uint8 Tensor (N, K)
    scale, zero : bfloat16 Tensors (N, K / group)
    """
    n, k = w.shape
    g = w.float().reshape(n, k // group, group)
    lo, hi = g.amin(-1), g.amax(-1)
    span = torch.full_like(lo, 15.0)
    if grid and float(_grid_spans(g[:256], lo[:256], hi[:256]).lt(15).float().mean()) > 0.05:
        span = _grid_spans(g, lo, hi)
    scale = ((hi - lo) / span).clamp_(min=1e-12).to(torch.bfloat16)
    zero = (lo + 8 * scale.float()).to(torch.bfloat16)
    codes = ((g - zero.float()[..., None]) / scale.float()[..., None]).round_().add_(8).clamp_(0, 15)
    return codes.to(torch.uint8).view(n, k), scale, zero


def _grid_spans(g: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor, tol: float = 1e-3) -> torch.Tensor:
    """Per group of ``g`` (..., group): the largest ``s`` in 8..14 such that every value is within ``tol`` steps
    of ``lo + j * (hi - lo) / s`` for an integer ``j``; 15 where none is."""
    rel = (g - lo[..., None]) / (hi - lo).clamp(min=1e-30)[..., None]  # in [0, 1]
    span = torch.full_like(lo, 15.0)
    todo = torch.ones_like(lo, dtype=torch.bool)
    buf = torch.empty_like(rel)
    for s in range(14, 7, -1):
        torch.mul(rel, s, out=buf)
        ok = buf.sub_(buf.round()).abs_().le_(tol).all(-1) & todo
        span[ok] = s
        todo &= ~ok
        if not bool(todo.any()):
            break
    return span


def _trim_heap() -> None:
    """Give freed heap memory back to the system (glibc's ``malloc_trim``; nothing elsewhere)."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except (OSError, AttributeError):
            pass


def _linear(x: torch.Tensor, w: Any, b: torch.Tensor | None = None) -> torch.Tensor:
    return w(x, b) if type(w) in (Int8Weight, Int4Weight) else F.linear(x, w, b)


class KVCache:
    """Preallocated keys and values of every layer for ``B`` rows and up to ``S_max`` positions.

    ``length`` positions are filled (the same for every row; left padding is masked through ``valid``).
    """

    def __init__(self, cfg: DecoderConfig, batch: int, max_len: int, dtype: torch.dtype, device: Any = None):
        shape = (batch, cfg.n_kv_head, max_len, cfg.head_dim)
        self.k = [torch.empty(shape, dtype=dtype, device=device) for _ in range(cfg.n_layer)]
        self.v = [torch.empty(shape, dtype=dtype, device=device) for _ in range(cfg.n_layer)]
        self.length = 0

    @property
    def batch(self) -> int:
        return self.k[0].shape[0]

    @property
    def capacity(self) -> int:
        return self.k[0].shape[2]

    def select_rows(self, rows: torch.Tensor) -> None:
        """Keep (or repeat) rows ``rows`` (a LongTensor of row indices), copying only the filled positions."""
        n = self.length
        for lst in (self.k, self.v):
            for i, t in enumerate(lst):
                new = t.new_empty((len(rows), *t.shape[1:]))
                new[:, :, :n] = t[rows, :, :n]
                lst[i] = new

    def grow(self, max_len: int) -> None:
        """Make room for ``max_len`` positions."""
        if max_len <= self.capacity:
            return
        for lst in (self.k, self.v):
            for i, t in enumerate(lst):
                new = t.new_empty((t.shape[0], t.shape[1], max_len, t.shape[3]))
                new[:, :, :self.length] = t[:, :, :self.length]
                lst[i] = new

    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in self.k + self.v)


class _Layer:
    __slots__ = ("wq", "wk", "wv", "wo", "bq", "bk", "bv", "bo", "wg", "wu", "wd", "bg", "bu", "bd", "ln_in",
                 "ln_post_attn", "ln_pre_ff", "ln_post_ff", "qn", "kn", "wqkv", "bqkv", "wgu", "bgu", "qkn")
    _PARAMS = ("wq", "wk", "wv", "wo", "bq", "bk", "bv", "bo", "wg", "wu", "wd", "bg", "bu", "bd", "ln_in",
               "ln_post_attn", "ln_pre_ff", "ln_post_ff", "qn", "kn")

    def __init__(self) -> None:
        for s in self.__slots__:
            setattr(self, s, None)


def _fuse(parts: list[torch.Tensor]) -> torch.Tensor:
    """The row-wise concatenation of ``parts``: a view when they lie back to back in one storage, else a copy."""
    first = parts[0]
    same = all(p.untyped_storage().data_ptr() == first.untyped_storage().data_ptr() and p.is_contiguous()
               and p.dtype == first.dtype for p in parts)
    if same:
        off = first.storage_offset()
        for p in parts:
            if p.storage_offset() != off:
                same = False
                break
            off += p.numel()
    if same:
        rows = sum(p.shape[0] for p in parts)
        return first.as_strided((rows, *first.shape[1:]), first.stride(), first.storage_offset())
    return torch.cat(parts)


class NativeDecoder:
    """A decoder-only transformer (Llama / Qwen2 / Gemma 3 text) as plain tensors and torch calls.

    Parameters
    ----------
    cfg : DecoderConfig
    weights : dict of str to Tensor
        The transformers state dict (``model.layers.{i}.self_attn.q_proj.weight`` ...); tied output layer optional.
    dtype : torch.dtype, optional
        Convert the weights (copies them); default: as given.
    device : str or torch.device
    quantize : {None, "int8", "int4"}
        ``"int8"``: the projection matrices and the output layer as :class:`Int8Weight` (weight-only, per-row
        scales, bfloat16 activations in the matrix products); ``"int4"``: as :class:`Int4Weight` (4-bit codes,
        a bfloat16 scale and offset per 32 inputs, CPU only). Faster decoding on a CPU whose memory bandwidth
        limits it (numbers in ``src/icml25/llm/README.md``), approximate (tested against float32 by agreement of
        log-probabilities, not equality); the float32 projection weights are not kept (memory-mapped pages read
        for quantising are released). Default None: the exact computation.
    """

    def __init__(self, cfg: DecoderConfig, weights: dict[str, torch.Tensor], dtype: torch.dtype | None = None,
                 device: Any = "cpu", quantize: str | None = None):
        check_quantize(quantize, device)
        self.cfg = cfg
        self.device = torch.device(device)
        self.quantize = quantize

        def get(name: str, required: bool = True) -> torch.Tensor | None:
            t = weights.get(name)
            if t is None:
                if required:
                    raise KeyError(f"the checkpoint has no tensor {name!r}")
                return None
            if dtype is not None and t.is_floating_point():
                t = t.to(dtype)
            return t.to(self.device)

        self.embed = get("model.embed_tokens.weight")
        self.dtype = self.embed.dtype
        self.lm_head = self.embed if cfg.tie or "lm_head.weight" not in weights else get("lm_head.weight")
        self.norm = self._norm_weight(get("model.norm.weight"))
        self.layers: list[_Layer] = []
        for i in range(cfg.n_layer):
            p = f"model.layers.{i}."
            L = _Layer()
            for slot, name in (("q", "q_proj"), ("k", "k_proj"), ("v", "v_proj"), ("o", "o_proj")):
                setattr(L, "w" + slot, get(p + f"self_attn.{name}.weight"))
                setattr(L, "b" + slot, get(p + f"self_attn.{name}.bias", required=False))
            for slot, name in (("g", "gate_proj"), ("u", "up_proj"), ("d", "down_proj")):
                setattr(L, "w" + slot, get(p + f"mlp.{name}.weight"))
                setattr(L, "b" + slot, get(p + f"mlp.{name}.bias", required=False))
            L.wqkv = _fuse([L.wq, L.wk, L.wv])
            L.bqkv = None if L.bq is None else _fuse([L.bq, L.bk, L.bv])
            L.wgu = _fuse([L.wg, L.wu])
            L.bgu = None if L.bg is None else _fuse([L.bg, L.bu])
            L.ln_in = self._norm_weight(get(p + "input_layernorm.weight"))
            L.ln_post_attn = self._norm_weight(get(p + "post_attention_layernorm.weight"))
            if cfg.gemma:
                L.ln_pre_ff = self._norm_weight(get(p + "pre_feedforward_layernorm.weight"))
                L.ln_post_ff = self._norm_weight(get(p + "post_feedforward_layernorm.weight"))
                L.qn = self._norm_weight(get(p + "self_attn.q_norm.weight"))
                L.kn = self._norm_weight(get(p + "self_attn.k_norm.weight"))
                L.qkn = torch.cat([L.qn.expand(cfg.n_head, -1), L.kn.expand(cfg.n_kv_head, -1)])
            self.layers.append(L)
        self._act = _ACTS[cfg.act]
        self._inter = self.layers[0].wg.shape[0] if self.layers else 0
        # the embedding scale is a float32 tensor cast to the weight dtype, as in transformers' Gemma 3
        self._embed_scale = torch.tensor(cfg.hidden_size ** 0.5).to(self.dtype) if cfg.gemma else None
        self._inv_freq = {th: 1.0 / (th ** (torch.arange(0, cfg.head_dim, 2, dtype=torch.int64)
                                           .to(device=self.device, dtype=torch.float) / cfg.head_dim))
                          for th in set(cfg.rope_theta)}
        self._gqa = cfg.n_kv_head != cfg.n_head
        self._n_params = sum(t.numel() for t in self.state_tensors())
        self.lm_head_q: Int8Weight | Int4Weight | None = None
        if quantize is not None:
            kind = Int8Weight if quantize == "int8" else Int4Weight
            for L in self.layers:
                L.wqkv, L.wo, L.wgu, L.wd = (kind(w) for w in (L.wqkv, L.wo, L.wgu, L.wd))
                L.wq = L.wk = L.wv = L.wg = L.wu = None  # the float weights are not kept
            self.lm_head_q = kind(self.lm_head)  # self.lm_head stays for its shape (and the tied embedding)
            mm = getattr(weights, "mmap", None)
            if mm is not None and hasattr(mm, "madvise") and hasattr(mmap, "MADV_DONTNEED"):
                mm.madvise(mmap.MADV_DONTNEED)  # the float32 pages read for quantising leave memory
            _trim_heap()  # and so do the temporaries of quantising (glibc keeps freed heap memory otherwise)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_folder(cls, folder: str | Path, dtype: torch.dtype | None = None, device: Any = "cpu",
                    quantize: str | None = None) -> NativeDecoder:
        """Load ``folder/config.json`` and ``folder/model.safetensors`` (memory-mapped, no copy unless ``dtype``
        or ``device`` asks for one). ``ValueError`` when the architecture is not supported."""
        folder = Path(folder)
        why = unsupported_reason(folder)
        if why is not None:
            raise ValueError(f"{folder}: cannot be run natively: {why}")
        cfg, _ = parse_config(json.loads((folder / "config.json").read_text()))
        assert cfg is not None
        return cls(cfg, read_safetensors(folder / "model.safetensors"), dtype=dtype, device=device, quantize=quantize)

    def _norm_weight(self, w: torch.Tensor) -> torch.Tensor:
        # Gemma multiplies by (1 + w) in float32; precomputing it is the same operation
        return 1.0 + w.float() if self.cfg.gemma else w

    def num_parameters(self) -> int:
        """Parameters (a tied output layer counted once)."""
        return self._n_params

    def state_tensors(self) -> list[torch.Tensor]:
        """Every weight tensor of the checkpoint as loaded (with ``quantize``: those not replaced by quantised
        ones)."""
        out = [self.embed, self.norm] + ([] if self.lm_head is self.embed else [self.lm_head])
        for L in self.layers:
            out += [t for t in (getattr(L, s) for s in _Layer._PARAMS) if isinstance(t, torch.Tensor)]
        return out

    def new_cache(self, batch: int, max_len: int) -> KVCache:
        return KVCache(self.cfg, batch, max_len, self.dtype, self.device)

    # ------------------------------------------------------------------ pieces
    def _rms(self, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        # transformers: normalise in float32; Llama multiplies by w after casting back, Gemma by (1 + w) before
        h = x.float()
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.cfg.eps)
        if x.dtype == torch.float32:
            return h * w
        if self.cfg.gemma:
            return (h * w).type_as(x)  # w = 1 + weight, float32
        return w * h.to(x.dtype)

    def _cos_sin(self, positions: torch.Tensor) -> dict[float, tuple[torch.Tensor, torch.Tensor]]:
        """RoPE tables ``(B, T, 1, head_dim)`` per base, computed as transformers does; the sine's first half is
        negated so that ``rotate_half(x) * sin == roll(x, head_dim / 2) * sin_signed``."""
        out = {}
        half = self.cfg.head_dim // 2
        for th, inv in self._inv_freq.items():
            freqs = positions[..., None].float() * inv
            emb = torch.cat((freqs, freqs), dim=-1)
            sin = emb.sin().to(self.dtype)
            sin[..., :half].neg_()
            out[th] = (emb.cos().to(self.dtype)[:, :, None], sin[:, :, None])
        return out

    def _masks(self, valid: torch.Tensor | None, s0: int, T: int) -> dict[int | None, Any]:
        """Attention masks (B or 1, 1, T, S) per window length; None where plain causal attention suffices
        (then ``"causal"`` marks a prefill that SDPA runs with ``is_causal``)."""
        S = s0 + T
        out: dict[int | None, Any] = {}
        q = torch.arange(s0, S, device=self.device)[:, None]
        k = torch.arange(S, device=self.device)[None, :]
        for w in set(self.cfg.window):
            windowed = w is not None and S > w
            if valid is None and not windowed:
                out[w] = None if T == 1 else ("causal" if s0 == 0 else (k <= q)[None, None])
                continue
            m = k <= q
            if windowed:
                m = m & (q - k < w)
            if valid is not None:
                # a padding query attends to itself only (its output is never used; this avoids NaN rows)
                m = (m[None] & valid[:, None, :S]) | (k == q)[None]
                out[w] = m[:, None]
            else:
                out[w] = m[None, None]
        return out

    def _attend(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: Any) -> torch.Tensor:
        if isinstance(mask, str):
            return F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=self.cfg.scale,
                                                  enable_gqa=self._gqa)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=self.cfg.scale, enable_gqa=self._gqa)

    # ------------------------------------------------------------------ forward
    def forward(self, idx: torch.Tensor, positions: torch.Tensor, valid: torch.Tensor | None = None,
                cache: KVCache | None = None, keep: int | None = 1, hidden: bool = False,
                layer_hook: Any = None, prefix: KVCache | None = None) -> torch.Tensor:
        """Run ``idx`` (B, T) at ``positions`` (B, T) after the ``cache.length`` cached positions.

        Parameters
        ----------
        valid : BoolTensor (B, cache.length + T), optional
            False at padding keys; None when no row is padded.
        cache : KVCache, optional
            Filled in place (``length`` advances by T); None runs the sequence alone.
        prefix : KVCache, optional
            Read-only keys and values of ``prefix.length`` earlier positions (one row, shared by every row of
            ``idx``, or ``B`` rows), used instead of ``cache`` when the new positions need not be stored (scoring
            many continuations of one prompt).
        keep : int or None
            Compute the output only at the last ``keep`` positions (None: all).
        hidden : bool
            Return the final hidden states (after the last norm, as transformers' ``hidden_states[-1]``) instead of
            logits.
        layer_hook : callable, optional
            ``layer_hook(i, x)`` after decoder layer ``i`` (0-based); may return a replacement ``x``.

        Returns
        -------
        Tensor (B, keep or T, vocab_size) logits, or (B, keep or T, hidden_size) hidden states.
        """
        cfg = self.cfg
        B, T = idx.shape
        past = cache if cache is not None else prefix
        s0 = past.length if past is not None else 0
        if cache is not None and s0 + T > cache.capacity:
            cache.grow(s0 + T)
        x = F.embedding(idx, self.embed)
        if self._embed_scale is not None:
            x = x * self._embed_scale
        cs = self._cos_sin(positions)
        masks = self._masks(valid, s0, T)
        H, KV, hd = cfg.n_head, cfg.n_kv_head, cfg.head_dim
        HK = H + KV
        act, rms, gemma = self._act, self._rms, cfg.gemma
        for i, L in enumerate(self.layers):
            h = rms(x, L.ln_in)
            qk, v = _linear(h, L.wqkv, L.bqkv).view(B, T, HK + KV, hd).split((HK, KV), dim=2)
            if gemma:
                qk = rms(qk, L.qkn)  # q_norm and k_norm at once (one weight row per head)
            cos, sin = cs[cfg.rope_theta[i]]
            # rotate_half(qk) * sin == roll(qk, hd / 2) * (sin with its first half negated), exactly
            qk = qk * cos + qk.roll(hd // 2, -1) * sin
            q, k = qk.transpose(1, 2).split((H, KV), dim=1)
            v = v.transpose(1, 2)
            if cache is not None:
                cache.k[i].narrow(2, s0, T).copy_(k)
                cache.v[i].narrow(2, s0, T).copy_(v)
                k, v = cache.k[i].narrow(2, 0, s0 + T), cache.v[i].narrow(2, 0, s0 + T)
            elif prefix is not None and s0:
                pk, pv = prefix.k[i].narrow(2, 0, s0), prefix.v[i].narrow(2, 0, s0)
                k = torch.cat((pk.expand(B, -1, -1, -1), k), dim=2)
                v = torch.cat((pv.expand(B, -1, -1, -1), v), dim=2)
            a = self._attend(q, k, v, masks[cfg.window[i]])
            a = _linear(a.transpose(1, 2).reshape(B, T, H * hd), L.wo, L.bo)
            if gemma:
                x = x + rms(a, L.ln_post_attn)
                h = rms(x, L.ln_pre_ff)
            else:
                x = x + a
                h = rms(x, L.ln_post_attn)
            g, u = _linear(h, L.wgu, L.bgu).chunk(2, dim=-1)
            m = _linear(act(g) * u, L.wd, L.bd)
            x = x + (rms(m, L.ln_post_ff) if gemma else m)
            if layer_hook is not None:
                new = layer_hook(i, x)
                if new is not None:
                    x = new
        if cache is not None:
            cache.length = s0 + T
        if keep is not None and keep < T:
            x = x[:, T - keep:]
        x = rms(x, self.norm)
        if hidden:
            return x
        return self.logits_from_hidden(x)

    def logits_from_hidden(self, h: torch.Tensor) -> torch.Tensor:
        """The output layer on final hidden states (for scoring only some positions)."""
        logits = _linear(h, self.lm_head_q if self.lm_head_q is not None else self.lm_head)
        if self.cfg.final_softcap is not None:
            logits = torch.tanh(logits / self.cfg.final_softcap) * self.cfg.final_softcap
        return logits

