"""Pinned SHA-256 of the downloadable files whose shipped copy is the download (issue 45 item 3).

A paper module pins them in a module-level ``SHA256 = {filename: sha256}`` (filename relative to the paper's
``data/`` folder) and passes them to ``resolve_data(..., sha256=...)``; spikf keeps them in ``BENCHMARKS``. Here:
the shipped files still have the pinned hashes (a shipped-file update without a new hash fails), and the loaders,
with the shipped copy made absent (``shipped_path`` pointed at an empty folder) and the cache in ``tmp_path``,
refuse a download with the wrong content and accept the right one.
"""

from __future__ import annotations

import hashlib
import importlib
import io
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import icml25.core.data as core_data
from icml25.core.data import DataNotFoundError, shipped_path

SRC = Path(core_data.__file__).resolve().parents[1]  # src/icml25


def _pinned_modules() -> list[tuple[str, Any]]:
    """(slug, module) of every paper module with a module-level ``SHA256`` dict."""
    out = []
    for f in sorted(SRC.glob("*/**/*.py")):
        rel = f.relative_to(SRC)
        if rel.parts[0] == "core" or not re.search(r"^SHA256\s*[:=]", f.read_text(encoding="utf-8"), re.M):
            continue
        mod = importlib.import_module("icml25." + ".".join(rel.with_suffix("").parts))
        assert isinstance(getattr(mod, "SHA256", None), dict), f"{rel}: SHA256 is not a module-level dict"
        out.append((rel.parts[0], mod))
    return out


def _pins() -> list[tuple[str, str, str]]:
    pins = [(slug, fname, sha) for slug, mod in _pinned_modules() for fname, sha in mod.SHA256.items()]
    from icml25.spikf.data import BENCHMARKS

    pins += [("spikf", fname, sha) for fname, _, _, sha in BENCHMARKS.values()
             if sha is not None and shipped_path("spikf", fname).exists()]
    return pins


PINS = _pins()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_the_pinned_modules_are_found() -> None:
    slugs = {slug for slug, _, _ in PINS}
    assert {"hier_decoding", "sdp_crown", "rstar_math", "inference_scaling", "croq", "spikf"} <= slugs


@pytest.mark.parametrize("slug,fname,sha", PINS, ids=[f"{s}/{f}" for s, f, _ in PINS])
def test_shipped_file_has_the_pinned_hash(slug: str, fname: str, sha: str) -> None:
    f = shipped_path(slug, fname)
    assert f.is_file(), f"{slug}: {fname} is pinned but not shipped"
    assert re.fullmatch(r"[0-9a-f]{64}", sha), f"{slug}: {fname}: {sha!r} is not a SHA-256"
    assert _sha256(f.read_bytes()) == sha, f"{slug}: shipped {fname} changed: update its pinned SHA-256"


def _imclef() -> Any:
    from icml25.hier_decoding.imclef import load_imclef

    return load_imclef("ImCLEF07A", "test")


def _sdp() -> Any:
    from icml25.sdp_crown.models import load_images

    return load_images("mnist", n=3)


def _rstar_benchmark() -> Any:
    from icml25.rstar_math.domain.benchmarks_data import load_benchmark

    return load_benchmark("aime2024")


def _rstar_gsm8k() -> Any:
    from icml25.rstar_math.domain.benchmarks_data import load_gsm8k_annotated

    return load_gsm8k_annotated()


def _digitized() -> Any:
    from icml25.inference_scaling.data import load_digitized_curve

    return load_digitized_curve("Gemma-2B")


def _mmlu() -> Any:
    from icml25.croq.data import load_mmlu_redux

    return load_mmlu_redux(subjects=["anatomy"])


def _toolalpaca() -> Any:
    from icml25.croq.data import load_toolalpaca

    return load_toolalpaca()


def _spikf() -> Any:
    from icml25.spikf.data import load_benchmark

    return load_benchmark("ETTh2")


LOADERS: dict[str, Callable[[], Any]] = {
    "hier_decoding": _imclef, "sdp_crown": _sdp, "rstar_math-benchmark": _rstar_benchmark,
    "rstar_math-gsm8k": _rstar_gsm8k, "inference_scaling": _digitized, "croq-mmlu": _mmlu,
    "croq-toolalpaca": _toolalpaca, "spikf": _spikf,
}


@pytest.fixture
def no_shipped_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Shipped copies absent, cache in tmp_path, downloads allowed and served by a fake ``urlopen``.

    ``resolve_data`` looks up ``shipped_path`` right before it downloads, so the fake remembers the file asked for
    and serves either its real shipped bytes (``state["right"]``) or wrong bytes.
    """
    import urllib.request

    state: dict[str, Any] = {"right": True, "asked": None, "urls": [], "cache": tmp_path / "cache"}

    def fake_shipped(slug: str, filename: str) -> Path:
        state["asked"] = (slug, filename)
        return tmp_path / "absent" / slug / filename

    def fake_urlopen(url: str, timeout: float = 0.0) -> io.BytesIO:
        state["urls"].append(url)
        data = shipped_path(*state["asked"]).read_bytes() if state["right"] else b"not the file\n"
        return io.BytesIO(data)

    monkeypatch.setenv("ICML25_CACHE", str(state["cache"]))
    monkeypatch.setattr(core_data, "_ALLOW_DOWNLOAD", True)
    monkeypatch.setattr(core_data, "shipped_path", fake_shipped)
    monkeypatch.setattr(urllib.request, "urlopen", fake_urlopen)
    return state


def _cached_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


@pytest.mark.parametrize("which", list(LOADERS))
def test_download_with_the_wrong_hash_is_refused(which: str, no_shipped_copy: dict[str, Any]) -> None:
    no_shipped_copy["right"] = False
    with pytest.raises(DataNotFoundError, match="checksum"):
        LOADERS[which]()
    assert no_shipped_copy["urls"], "no download was attempted"
    assert _cached_files(no_shipped_copy["cache"]) == [], "a download with the wrong hash was kept"


@pytest.mark.parametrize("which", list(LOADERS))
def test_download_with_the_right_hash_is_accepted(which: str, no_shipped_copy: dict[str, Any]) -> None:
    LOADERS[which]()
    assert no_shipped_copy["urls"], "no download was attempted"
    cached = _cached_files(no_shipped_copy["cache"])
    assert cached and not any(p.name.startswith(".part-") for p in cached)
    pinned = {sha for _, _, sha in PINS}
    for p in cached:
        assert _sha256(p.read_bytes()) in pinned, f"{p} was cached without a pinned hash"


def test_file_hash_equals_hashlib_on_the_bytes(tmp_path) -> None:
    """``core.data.file_hash`` (the one file hasher of the package) against hashlib on the whole content, across the
    4 MiB block boundary."""
    import hashlib

    from icml25.core.data import file_hash

    p = tmp_path / "blob.bin"
    data = bytes(range(256)) * (1 << 14) + b"tail"  # 4 MiB + 4 bytes
    p.write_bytes(data)
    assert file_hash(p) == hashlib.sha256(data).hexdigest()
    assert file_hash(p, "md5") == hashlib.md5(data).hexdigest()
    with pytest.raises(ValueError):
        file_hash(p, "no-such-hash")
