"""Data-set resolution: user path, then cache, then the copy shipped in the package, then download.

Download happens only when the user allows it (``--allow-download`` on the CLI, ``allow_download=True`` in
code, or ``ICML25_ALLOW_DOWNLOAD=1``). Nothing the user owns is overwritten: downloads go to the cache folder
(``$ICML25_CACHE`` or ``~/.cache/icml25``) through a temporary file that is renamed only when complete.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import urllib.request
from collections.abc import Callable
from pathlib import Path

from .errors import DataNotFoundError
from .registry import PACKAGE_ROOT

__all__ = ["resolve_data", "file_hash", "shipped_path", "cache_dir", "set_allow_download", "DataNotFoundError"]

_ALLOW_DOWNLOAD = os.environ.get("ICML25_ALLOW_DOWNLOAD", "0") == "1"


def set_allow_download(allow: bool) -> None:
    """Allow or forbid downloads for this process (the CLI's ``--allow-download``)."""
    global _ALLOW_DOWNLOAD
    _ALLOW_DOWNLOAD = bool(allow)


def cache_dir(slug: str) -> Path:
    """The per-paper cache folder (not created)."""
    base = Path(os.environ.get("ICML25_CACHE", Path.home() / ".cache" / "icml25"))
    return base / slug


def shipped_path(slug: str, filename: str) -> Path:
    """Path of a file shipped inside the package at ``icml25/<slug>/data/<filename>`` (may not exist)."""
    return PACKAGE_ROOT / slug / "data" / filename


def file_hash(path: str | Path, algorithm: str = "sha256") -> str:
    """Hex digest of a file's bytes, read in 4 MiB blocks (``algorithm``: any :func:`hashlib.new` name, e.g.
    ``"sha256"`` for the data and model checks, ``"md5"`` where a source publishes only that)."""
    h = hashlib.new(algorithm)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def resolve_data(slug: str, filename: str, path: str | Path | None = None, url: str | None = None,
                 allow_download: bool | None = None, sha256: str | None = None, timeout: float = 30.0,
                 convert: Callable[[Path, Path], None] | None = None) -> Path:
    """Locate the data file ``filename`` of paper ``slug``.

    Order: ``path`` given by the user (must exist), the cache, the shipped copy, then a download from ``url``
    when allowed.

    Parameters
    ----------
    slug : str
        Paper slug.
    filename : str
        File name relative to the paper's data folder (may contain ``/``).
    path : path-like, optional
        A user-supplied file; an error is raised if it does not exist (no silent fallback).
    url : str, optional
        Canonical download location.
    allow_download : bool, optional
        Overrides the process-wide setting.
    sha256 : str, optional
        Expected checksum of a downloaded file (as downloaded, before ``convert``).
    convert : callable, optional
        ``convert(downloaded, out)`` writes the downloaded file in the layout of the shipped copy to ``out`` (for a
        canonical source whose format differs, e.g. no header row); raise ``ValueError`` when it is not the
        expected file. Without it the download is cached as it is.

    Raises
    ------
    DataNotFoundError
        Nothing found; the message says where it looked and how to fix it.
    """
    if path is not None:
        p = Path(path).expanduser()
        if not p.exists():
            raise DataNotFoundError(f"data file {str(p)!r} does not exist; pass an existing path or omit it "
                                    f"to use the copy shipped with icml25")
        return p
    cached = cache_dir(slug) / filename
    if cached.exists():
        return cached
    shipped = shipped_path(slug, filename)
    if shipped.exists():
        return shipped
    allow = _ALLOW_DOWNLOAD if allow_download is None else allow_download
    if url and allow:
        cached.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cached.parent, prefix=".part-")
        os.close(fd)
        try:
            with urllib.request.urlopen(url, timeout=timeout) as resp, open(tmp, "wb") as f:
                shutil.copyfileobj(resp, f)
            if sha256 and file_hash(Path(tmp)) != sha256:
                raise DataNotFoundError(f"download of {url} has the wrong checksum; the file was discarded")
            if convert is not None:
                fd, raw = tempfile.mkstemp(dir=cached.parent, prefix=".raw-")
                os.close(fd)
                try:
                    os.replace(tmp, raw)
                    convert(Path(raw), Path(tmp))
                except ValueError as exc:
                    raise DataNotFoundError(f"the file downloaded from {url} is not the expected {filename!r} "
                                            f"({exc}); it was discarded") from exc
                finally:
                    os.unlink(raw)
            os.replace(tmp, cached)
        except OSError as exc:
            raise DataNotFoundError(f"could not download {filename!r} from {url}: {exc}") from exc
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        return cached
    hint = (f"rerun with --allow-download (or allow_download=True) to fetch it from {url}" if url
            else "pass path=... to a local copy")
    raise DataNotFoundError(f"data file {filename!r} of {slug!r} not found in {cached.parent} or {shipped.parent}; "
                            f"{hint}")
