"""Tiny randomly initialised transformers checkpoints (Llama, Qwen2, Gemma 3) and a tiny GGUF file, written in
milliseconds, for testing the native decoder and the pretrained-model cache without loading real models."""

from __future__ import annotations

from pathlib import Path
from typing import Any

CORPUS = ["the quick brown fox jumps over the lazy dog", "a stitch in time saves nine",
          "France -> Paris", "Japan -> Tokyo", "3 + 4 = 7"] * 4


def _tokenizer(corpus: list[str], vocab_size: int) -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<pad>", "<bos>", "<eos>", "<tag>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tk.train_from_iterator(corpus, trainer)
    tk.post_processor = processors.TemplateProcessing(single="<bos> $A", pair="<bos> $A <bos> $B",
                                                      special_tokens=[("<bos>", tk.token_to_id("<bos>"))])
    return PreTrainedTokenizerFast(tokenizer_object=tk, bos_token="<bos>", eos_token="<eos>", pad_token="<pad>",
                                   additional_special_tokens=["<tag>"])


def save_random_decoder(directory: str | Path, model_type: str, seed: int = 0, **overrides: Any) -> Path:
    """A random ``model_type`` ("llama", "qwen2", "gemma3_text") checkpoint with a BPE tokenizer in
    ``directory`` (hidden 32, 3 layers, 4 query heads over 2 key/value heads)."""
    import torch
    import transformers

    tok = _tokenizer(CORPUS, 300)
    common = dict(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=3,
                  num_attention_heads=4, num_key_value_heads=2, bos_token_id=tok.bos_token_id,
                  eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    if model_type == "llama":
        cfg = transformers.LlamaConfig(**{**common, "rope_theta": 500.0, **overrides})
        cls = transformers.LlamaForCausalLM
    elif model_type == "qwen2":
        cfg = transformers.Qwen2Config(**{**common, "tie_word_embeddings": False, **overrides})
        cls = transformers.Qwen2ForCausalLM
    elif model_type == "gemma3_text":
        cfg = transformers.Gemma3TextConfig(**{
            **common, "head_dim": 16, "sliding_window": 4, "query_pre_attn_scalar": 16,
            "layer_types": ["sliding_attention", "full_attention", "sliding_attention"], **overrides})
        cls = transformers.Gemma3ForCausalLM
    else:
        raise ValueError(model_type)
    torch.manual_seed(seed)
    model = cls(cfg)
    with torch.no_grad():  # norms away from their identity initialisation, so that mistakes show
        for name, p in model.named_parameters():
            if "norm" in name:
                p.add_(torch.randn_like(p) * 0.3)
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(d)
    tok.save_pretrained(d)
    return d


def write_tiny_gguf(path: str | Path, seed: int = 0) -> Path:
    """A tiny Llama in GGUF (float32 tensors, a byte-pair tokenizer) that transformers de-quantises."""
    import gguf
    import numpy as np

    tokens = ["<s>", "</s>", "<unk>"] + [chr(c) for c in range(97, 123)] + ["Ġ", "Ġa", "ab", "Ġab"]
    merges = ["Ġ a", "a b", "Ġa b"]
    V, D, n_layer, nh, nkv, ff = len(tokens), 16, 2, 4, 2, 32
    hd = D // nh
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("tiny")
    w.add_block_count(n_layer)
    w.add_context_length(64)
    w.add_embedding_length(D)
    w.add_feed_forward_length(ff)
    w.add_head_count(nh)
    w.add_head_count_kv(nkv)
    w.add_rope_freq_base(10000.0)
    w.add_rope_dimension_count(hd)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_tokenizer_model("gpt2")
    w.add_token_list(tokens)
    w.add_token_types([3, 3, 2] + [1] * (V - 3))
    w.add_token_merges(merges)
    w.add_bos_token_id(0)
    w.add_eos_token_id(1)
    w.add_unk_token_id(2)
    rng = np.random.default_rng(seed)

    def t(*shape: int, base: float = 0.0) -> Any:
        return (base + rng.standard_normal(shape) * 0.3).astype(np.float32)

    w.add_tensor("token_embd.weight", t(V, D))
    for i in range(n_layer):
        w.add_tensor(f"blk.{i}.attn_norm.weight", t(D, base=1.0))
        w.add_tensor(f"blk.{i}.attn_q.weight", t(nh * hd, D))
        w.add_tensor(f"blk.{i}.attn_k.weight", t(nkv * hd, D))
        w.add_tensor(f"blk.{i}.attn_v.weight", t(nkv * hd, D))
        w.add_tensor(f"blk.{i}.attn_output.weight", t(D, nh * hd))
        w.add_tensor(f"blk.{i}.ffn_norm.weight", t(D, base=1.0))
        w.add_tensor(f"blk.{i}.ffn_gate.weight", t(ff, D))
        w.add_tensor(f"blk.{i}.ffn_up.weight", t(ff, D))
        w.add_tensor(f"blk.{i}.ffn_down.weight", t(D, ff))
    w.add_tensor("output_norm.weight", t(D, base=1.0))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return Path(path)
