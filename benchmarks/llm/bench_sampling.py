"""TinyGPT sampling throughput vs transformers' GPT2LMHeadModel.generate with an identical configuration.

Both models: same n_layer / n_head / n_embd / vocabulary (258, byte level) / context, random initialisation, batch
32, the same prompts (16 bytes + BOS), the same number of new tokens, KV cache on, no early stopping. Reports
tokens/s (new tokens over wall time, best of ``--repeats``; the ratio of process CPU times is printed too, as it
is less sensitive to other processes on a shared machine) for greedy and for temperature-1 sampling, at 1 and 2
torch threads, and the ratio TinyGPT / transformers. Also times one training step at 1 and 2 threads.

Run: ``.venv/bin/python benchmarks/llm/bench_sampling.py [--n-layer 4 --n-embd 192 --new-tokens 64]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch


def best_time(fn, repeats: int) -> float:
    """Best wall time of ``repeats`` calls after a warm-up."""
    return best_times(fn, repeats)[0]


def best_times(fn, repeats: int) -> tuple[float, float]:
    """Best wall time and best process CPU time (robust to other processes on a busy machine)."""
    fn()  # warm-up
    wall, cpu = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return min(wall), min(cpu)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-layer", type=int, default=4)
    ap.add_argument("--n-head", type=int, default=4)
    ap.add_argument("--n-embd", type=int, default=192)
    ap.add_argument("--block-size", type=int, default=256)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--prompt-len", type=int, default=16)
    ap.add_argument("--new-tokens", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    args = ap.parse_args()

    import transformers
    from transformers import GPT2Config, GPT2LMHeadModel

    from icml25.llm import ByteTokenizer, TinyGPT, TinyGPTConfig

    transformers.utils.logging.set_verbosity_error()
    tok = ByteTokenizer()
    cfg = TinyGPTConfig(n_layer=args.n_layer, n_head=args.n_head, n_embd=args.n_embd, block_size=args.block_size)
    tiny = TinyGPT(cfg, tok, seed=0)
    torch.manual_seed(0)
    hf = GPT2LMHeadModel(GPT2Config(vocab_size=tok.vocab_size, n_positions=args.block_size, n_embd=args.n_embd,
                                    n_layer=args.n_layer, n_head=args.n_head, bos_token_id=tok.eot_id,
                                    eos_token_id=None, pad_token_id=tok.pad_id)).eval()
    rng = np.random.default_rng(0)
    prompts = ["".join(chr(c) for c in rng.integers(97, 123, size=args.prompt_len)) for _ in range(args.batch)]
    ids = torch.tensor([[tok.eot_id, *tok.encode(p)] for p in prompts])
    mask = torch.ones_like(ids)
    n_new = args.batch * args.new_tokens
    print(f"TinyGPT params {tiny.num_parameters():,} | GPT2LMHeadModel params {hf.num_parameters():,} | "
          f"batch {args.batch}, prompt {ids.shape[1]} tokens, {args.new_tokens} new tokens, torch {torch.__version__}, "
          f"transformers {transformers.__version__}")

    def run_tiny(temperature: float) -> None:
        out = tiny.generate(prompts, temperature=temperature, max_tokens=args.new_tokens, seed=1)
        assert len(out) == args.batch

    def run_hf(sample: bool) -> None:
        kw = {"do_sample": True, "temperature": 1.0, "top_k": 0, "top_p": 1.0} if sample else {"do_sample": False}
        with torch.inference_mode():
            out = hf.generate(input_ids=ids, attention_mask=mask, max_new_tokens=args.new_tokens,
                              min_new_tokens=args.new_tokens, use_cache=True, **kw)
        assert out.shape[1] == ids.shape[1] + args.new_tokens

    rows = []
    for threads in args.threads:
        torch.set_num_threads(threads)
        for mode, temp in (("greedy", 0.0), ("sample T=1", 1.0)):
            t_tiny, c_tiny = best_times(lambda temp=temp: run_tiny(temp), args.repeats)
            t_hf, c_hf = best_times(lambda temp=temp: run_hf(temp > 0), args.repeats)
            rows.append((threads, mode, n_new / t_tiny, n_new / t_hf))
            print(f"threads={threads} {mode:11s} TinyGPT {n_new / t_tiny:9.0f} tok/s | transformers GPT-2 "
                  f"{n_new / t_hf:9.0f} tok/s | ratio {t_hf / t_tiny:5.2f}x (wall) | CPU-time ratio "
                  f"{c_hf / c_tiny:5.2f}x")

    # training step time (batch 32 x 128 tokens) per thread count
    x = torch.randint(0, 256, (32, 129))
    opt = torch.optim.AdamW(tiny.module.parameters(), lr=1e-3)
    for threads in args.threads:
        torch.set_num_threads(threads)

        def train_step() -> None:
            logits = tiny.module(x[:, :-1])
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), x[:, 1:].reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()

        tiny.module.train()
        t = best_time(train_step, args.repeats)
        tiny.module.eval()
        print(f"threads={threads} training step (32 x 128 tokens): {t * 1000:7.1f} ms ({32 * 128 / t:8.0f} tok/s)")
    worst = min(r[2] / r[3] for r in rows)
    print(f"minimum ratio TinyGPT / transformers over all settings: {worst:.2f}x "
          f"({'TinyGPT at least as fast' if worst >= 1 else 'TinyGPT slower'})")


if __name__ == "__main__":
    main()
