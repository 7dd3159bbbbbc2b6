"""The paper-scale MNIST path (Fig. 3) on tiny fake files: IDX and .mat readers, the lookup order, the one-line
error when the data are missing, and the MNIST PCA driver on fake images (it must run and keep the ordering)."""

from __future__ import annotations

import gzip
import struct

import numpy as np
import pytest

from icml25.core.data import DataNotFoundError
from icml25.manifold_diffusion import experiment as ex
from icml25.manifold_diffusion.combination import paper_combination_matrix
from icml25.manifold_diffusion.data import load_mnist, read_idx_images


def _write_idx(path, images: np.ndarray) -> None:  # type: ignore[no-untyped-def]
    with gzip.open(path, "wb") as f:
        f.write(struct.pack(">iiii", 2051, len(images), 28, 28))
        f.write(images.astype(np.uint8).tobytes())


def test_idx_reader_round_trip(tmp_path) -> None:  # type: ignore[no-untyped-def]
    imgs = np.random.default_rng(0).integers(0, 256, size=(5, 784))
    _write_idx(tmp_path / "x-idx3-ubyte.gz", imgs)
    assert np.array_equal(read_idx_images(tmp_path / "x-idx3-ubyte.gz"), imgs)
    (tmp_path / "bad.gz").write_bytes(gzip.compress(struct.pack(">iiii", 2049, 1, 28, 28)))
    with pytest.raises(ValueError, match="magic"):
        read_idx_images(tmp_path / "bad.gz")


def test_cache_lookup_mat_then_idx_then_error(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from scipy.io import savemat

    monkeypatch.setenv("ICML25_CACHE", str(tmp_path))
    with pytest.raises(DataNotFoundError, match="--allow-download") as err:
        load_mnist(allow_download=False)
    assert "\n" not in str(err.value) and str(tmp_path) in str(err.value)
    folder = tmp_path / "manifold_diffusion"
    folder.mkdir()
    rng = np.random.default_rng(1)
    train, test = rng.integers(0, 256, (6, 784)), rng.integers(0, 256, (2, 784))
    _write_idx(folder / "train-images-idx3-ubyte.gz", train)
    _write_idx(folder / "t10k-images-idx3-ubyte.gz", test)
    assert np.array_equal(load_mnist(allow_download=False), np.vstack([train, test]))
    savemat(folder / "mnist-original.mat", {"data": train.T.astype(np.uint8)})  # the official file wins
    assert np.array_equal(load_mnist(allow_download=False), train)
    np.save(tmp_path / "own.npy", test)
    assert np.array_equal(load_mnist(tmp_path / "own.npy"), test)


def test_mnist_pca_driver_on_fake_images() -> None:
    a = paper_combination_matrix("metropolis")
    rng = np.random.default_rng(0)
    basis = np.linalg.qr(rng.normal(size=(784, 5)))[0]  # images near a 5-dimensional subspace
    imgs = np.clip(128 + (rng.normal(size=(20 * 8, 5)) * [60, 50, 40, 30, 20]) @ basis.T * 10, 0, 255)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):  # tiny products: one thread is faster on a busy machine
        out = ex.mnist_pca(a, 0, imgs, 5, record_every=4)
    assert out["samples_per_agent"] == 8
    assert set(out["curves"]) == set(ex.ALGOS) and all(np.all(np.isfinite(c)) for c in out["curves"].values())
