"""Data loading: MNIST for the paper-scale real-data PCA (the paper's Fig. 3) and scikit-learn's digits below it.

MNIST is not shipped (55 MB) and never downloaded unasked.

Looked up in this order: ``path`` given by the user (``--set mnist_path=...``), then ``mnist-original.mat`` (the file
the official code reads: key ``data``, 784 × 70 000 uint8) in the cache folder, then the four IDX files of the
original distribution (``train-images-idx3-ubyte.gz``, ``t10k-images-idx3-ubyte.gz``) in the cache folder, fetched
from the CVDF mirror only with ``--allow-download``. A ``.npy`` array of shape (70 000, 784) is accepted as ``path``.
"""

from __future__ import annotations

import gzip
import struct
from pathlib import Path
from typing import Any

import numpy as np

from icml25.core.data import DataNotFoundError, cache_dir, resolve_data

__all__ = ["load_mnist", "read_idx_images", "load_digits_images", "MNIST_MIRROR", "IDX_FILES"]

SLUG = "manifold_diffusion"
#: mirror of the original MNIST files (the one TensorFlow's loaders use); checked by name only, not from this machine
MNIST_MIRROR = "https://storage.googleapis.com/cvdf-datasets/mnist/"
#: the image files of the training (60 000) and test (10 000) sets, concatenated in this order
IDX_FILES = ("train-images-idx3-ubyte.gz", "t10k-images-idx3-ubyte.gz")


def read_idx_images(path: str | Path) -> np.ndarray:
    """Read an IDX image file (optionally gzipped): magic 2051, count, rows, cols (big-endian), then uint8 pixels.

    Returns an (count, rows·cols) uint8 array.
    """
    path = Path(path)
    opener: Any = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        head = f.read(16)
        if len(head) < 16:
            raise ValueError(f"{path}: not an IDX image file (shorter than its 16-byte header)")
        magic, count, rows, cols = struct.unpack(">iiii", head)
        if magic != 2051:
            raise ValueError(f"{path}: not an IDX image file (magic {magic}, expected 2051)")
        data = np.frombuffer(f.read(count * rows * cols), dtype=np.uint8)
    if data.size != count * rows * cols:
        raise ValueError(f"{path}: truncated IDX file ({data.size} of {count * rows * cols} pixels)")
    return data.reshape(count, rows * cols)


def _read(path: Path) -> np.ndarray:
    if path.suffix == ".mat":
        from scipy.io import loadmat

        mat = loadmat(path)
        if "data" not in mat:
            raise ValueError(f"{path}: expected the key 'data' (784 × 70 000, as in mnist-original.mat)")
        return np.asarray(mat["data"]).T
    if path.suffix == ".npy":
        return np.load(path)
    return read_idx_images(path)


def load_mnist(path: str | Path | None = None, allow_download: bool | None = None) -> np.ndarray:
    """The 70 000 MNIST images as an (70 000, 784) array with values in [0, 255].

    Raises
    ------
    DataNotFoundError
        When no copy is found (and downloading is not allowed); the message says where to put the file.
    """
    if path:
        x = _read(resolve_data(SLUG, Path(path).name, path=path))
    else:
        try:
            x = _read(resolve_data(SLUG, "mnist-original.mat", allow_download=False))
        except DataNotFoundError:
            try:
                files = [resolve_data(SLUG, name, url=MNIST_MIRROR + name, allow_download=allow_download)
                         for name in IDX_FILES]
            except DataNotFoundError as exc:
                raise DataNotFoundError(
                    f"MNIST (the paper's Fig. 3 data, not shipped) was not found: put the official code's "
                    f"mnist-original.mat or the files {', '.join(IDX_FILES)} in {cache_dir(SLUG)}, pass "
                    f"--set mnist_path=/path/to/mnist-original.mat, or rerun with --allow-download to fetch the IDX "
                    f"files from {MNIST_MIRROR}") from exc
            x = np.concatenate([read_idx_images(f) for f in files])
    x = np.asarray(x)
    if x.ndim != 2 or x.shape[1] != 784:
        raise ValueError(f"MNIST must have 784 pixels per image, got an array of shape {x.shape}")
    return x


def load_digits_images() -> np.ndarray:
    """scikit-learn's digits, the real data below paper scale: a (1797, 64) array with values in [0, 16] (shipped with
    scikit-learn, extra ``stats``)."""
    from icml25.core.optional import require

    require("sklearn", extra="stats")
    from sklearn.datasets import load_digits

    return load_digits().data
