"""The paper's pretrained MNIST models and test images (shipped), and small digits networks trained here.

``load_model(name)`` rebuilds the six released Lipschitz-regularised networks that are shipped (MNIST MLP and
ConvSmall, CIFAR CNN-A, CNN-C, ConvSmall, ConvDeep; architectures in ``data/SOURCE.md``) from their ``.npz`` state
dicts; ``load_images('mnist' | 'cifar')`` returns the paper's 200 test images. :func:`train_digits_mlp` trains the small scikit-learn-digits MLPs used for the
tightness checks against the exact and SDP oracles.
"""

from __future__ import annotations

import pickle
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from icml25.core.data import DataNotFoundError, cache_dir, resolve_data
from icml25.core.files import FileFormatError, check_file, read_npz
from icml25.core.validation import check_int, check_real

__all__ = ["load_model", "load_images", "train_digits_mlp", "digits_data", "MODELS", "USER_MODELS", "MODEL_INFO"]

_URL = "https://github.com/thomasdeltort/SDP-CROWN/raw/c0ee99b27ecdcc00ea82ed25f99a79d87582a98e/"
#: SHA-256 of the image files shipped in data/ (byte-identical to the release's datasets/sdp/<dataset>/{X,y}_sdp.npy):
#: a download is checked against them (the .npz weights are conversions, the user models' .pth are not shipped)
SHA256 = {"mnist_X_sdp.npy": "277b5e781c2e2838246070f3663b64e5ec02087e1a0a25dba804fcf8ff832419",
          "mnist_y_sdp.npy": "00b2d850ef5c455c33eea88bcc86a940be739b0479f2067d27d8b282263f29a9",
          "cifar_X_sdp.npy": "bc487064171fc74ce09b8c29db029da3a9be1f0275a23aa2f3aca6ccacb6958e",
          "cifar_y_sdp.npy": "b02c682406c3ae3aeba6b0fa0f6598ddb1d0331ce87c9b869136263946296dbd"}

#: the paper's released models shipped here (Table 1 rows; ConvLarge ×2 and CNN-B were not available)
MODELS = ("mnist_mlp", "mnist_convsmall", "cifar10_cnn_a", "cifar10_cnn_c", "cifar10_convsmall", "cifar10_convdeep")
#: Table 1 models whose architecture is built here but whose weights are not shipped: the user provides the release's
#: ``models/<name>.pth`` (or an ``.npz`` of its state dict) in ``weights_dir`` or the cache, or downloads it with
#: ``--allow-download``
USER_MODELS = ("mnist_convlarge", "cifar10_cnn_b", "cifar10_convlarge")

#: CIFAR-10 preprocessing of the paper's code: per-channel mean, the same std 0.225 for every channel (spec §3)
CIFAR_MEAN = (125.3 / 255, 123.0 / 255, 113.9 / 255)
CIFAR_STD = 0.225


def _mnist_mlp() -> tuple[nn.Sequential, dict[str, int]]:
    seq = nn.Sequential(nn.Flatten(), nn.Linear(784, 100), nn.ReLU(), nn.Linear(100, 100), nn.ReLU(),
                        nn.Linear(100, 10))
    return seq, {"1": 1, "3": 3, "5": 5}


def _mnist_convsmall() -> tuple[nn.Sequential, dict[str, int]]:
    seq = nn.Sequential(nn.Conv2d(1, 16, 4, 2, 1), nn.ReLU(), nn.Conv2d(16, 32, 4, 2, 1), nn.ReLU(), nn.Flatten(),
                        nn.Linear(1568, 100), nn.ReLU(), nn.Linear(100, 10))
    return seq, {"conv1": 0, "conv2": 2, "fc1": 5, "fc2": 7}


def _cifar(convs: list[tuple[int, int, int, int, int]], fcs: list[tuple[int, int]], pad: tuple | None = None
           ) -> tuple[nn.Sequential, dict[str, int]]:
    """Normalize, [ZeroPad2d(pad)], then Conv2d(in, out, k, stride, pad)+ReLU per entry, Flatten, Linear(+ReLU but
    the last).

    The state-dict keys count the modules of the original net without the Normalize layer (index shift 1)."""
    from .network import Normalize

    mods: list[nn.Module] = [Normalize(CIFAR_MEAN, [CIFAR_STD] * 3)]
    if pad is not None:
        mods.append(nn.ZeroPad2d(pad))
    for cin, cout, k, s, p in convs:
        mods += [nn.Conv2d(cin, cout, k, s, p), nn.ReLU()]
    mods.append(nn.Flatten())
    for i, (a, b) in enumerate(fcs):
        mods.append(nn.Linear(a, b))
        if i < len(fcs) - 1:
            mods.append(nn.ReLU())
    index = {str(i - 1): i for i, m in enumerate(mods) if isinstance(m, (nn.Conv2d, nn.Linear))}
    return nn.Sequential(*mods), index


def _convlarge(channels: int, side: int) -> tuple[nn.Sequential, dict[str, int]]:
    """ConvLarge of Table 1 (the release's ``models.py``): Conv(c,32,3,1,1), Conv(32,32,4,2,1), Conv(32,64,3,1,1),
    Conv(64,64,4,2,1), Linear(64·(side/4)², 512), Linear(512, 512), Linear(512, 10); keys ``conv1..4``, ``fc1..3``.
    CIFAR (c = 3, side 32): 62,464 ReLU neurons (65,536 with the 3,072 inputs) and 2,466,858 parameters."""
    from .network import Normalize

    mods: list[nn.Module] = [Normalize(CIFAR_MEAN, [CIFAR_STD] * 3)] if channels == 3 else []
    names = []
    for i, (cin, cout, k, s, p) in enumerate([(channels, 32, 3, 1, 1), (32, 32, 4, 2, 1), (32, 64, 3, 1, 1),
                                              (64, 64, 4, 2, 1)], 1):
        names.append((f"conv{i}", len(mods)))
        mods += [nn.Conv2d(cin, cout, k, s, p), nn.ReLU()]
    mods.append(nn.Flatten())
    for i, (a, b) in enumerate([(64 * (side // 4) ** 2, 512), (512, 512), (512, 10)], 1):
        names.append((f"fc{i}", len(mods)))
        mods.append(nn.Linear(a, b))
        if i < 3:
            mods.append(nn.ReLU())
    return nn.Sequential(*mods), dict(names)


_BUILDERS = {
    "mnist_mlp": _mnist_mlp,
    "mnist_convsmall": _mnist_convsmall,
    "cifar10_cnn_a": lambda: _cifar([(3, 16, 4, 2, 1), (16, 32, 4, 2, 1)], [(2048, 100), (100, 10)]),
    "cifar10_cnn_c": lambda: _cifar([(3, 8, 4, 2, 0), (8, 16, 4, 2, 0)], [(576, 128), (128, 64), (64, 10)]),
    "cifar10_convsmall": lambda: _cifar([(3, 16, 4, 2, 0), (16, 32, 4, 2, 0)], [(1152, 100), (100, 10)]),
    "cifar10_convdeep": lambda: _cifar([(3, 8, 4, 2, 1), (8, 8, 3, 1, 1), (8, 8, 3, 1, 1), (8, 8, 4, 2, 1)],
                                       [(512, 100), (100, 10)]),
    # not shipped (USER_MODELS): the architectures of the release's models.py, weights provided by the user
    "mnist_convlarge": lambda: _convlarge(1, 28),
    "cifar10_cnn_b": lambda: _cifar([(3, 32, 5, 2, 0), (32, 128, 4, 2, 1)], [(8192, 250), (250, 10)],
                                    pad=(1, 2, 1, 2)),
    "cifar10_convlarge": lambda: _convlarge(3, 32),
}

#: per model: data set, input shape, the paper's ℓ2 radius in raw [0, 1] pixel units (Table 1; the CIFAR radius
#: 24/255 is 24/255/0.225 in the normalised space, which the Normalize layer accounts for)
MODEL_INFO = {
    "mnist_mlp": ("mnist", (1, 28, 28), 1.0),
    "mnist_convsmall": ("mnist", (1, 28, 28), 0.3),
    "cifar10_cnn_a": ("cifar", (3, 32, 32), 24 / 255),
    "cifar10_cnn_c": ("cifar", (3, 32, 32), 24 / 255),
    "cifar10_convsmall": ("cifar", (3, 32, 32), 24 / 255),
    "cifar10_convdeep": ("cifar", (3, 32, 32), 24 / 255),
    "mnist_convlarge": ("mnist", (1, 28, 28), 0.3),
    "cifar10_cnn_b": ("cifar", (3, 32, 32), 24 / 255),
    "cifar10_convlarge": ("cifar", (3, 32, 32), 8 / 255),
}


def load_model(name: str, path: str | Path | None = None) -> nn.Sequential:
    """Load one of the paper's released models as an ``nn.Sequential`` (float32, eval mode).

    Parameters
    ----------
    name : one of :data:`MODELS` or :data:`USER_MODELS`
        Model name (Table 1 rows MNIST MLP / ConvSmall, CIFAR CNN-A / CNN-C / ConvSmall / ConvDeep, shipped; MNIST
        ConvLarge, CIFAR CNN-B / ConvLarge, whose weights the user provides).
    path : path-like, optional
        A ``.npz`` state dict (or the release's ``.pth`` state dict) to use instead of the shipped copy; for
        :data:`USER_MODELS` the default is ``<name>.pth`` or ``<name>.npz`` in the cache (``~/.cache/icml25/
        sdp_crown``), downloaded from the release with ``--allow-download``.

    Returns
    -------
    nn.Sequential
        MNIST: input ``[B, 1, 28, 28]`` in [0, 1]. CIFAR: input ``[B, 3, 32, 32]`` in [0, 1] (unnormalised); the
        first module is the paper's :class:`Normalize` (mean per channel, std 0.225), so ℓ2 radii are given in raw
        pixel units (24/255 in Table 1). Output: 10 logits.

    Examples
    --------
    >>> model = load_model("cifar10_cnn_c")
    >>> type(model[0]).__name__, model[-1].out_features
    ('Normalize', 10)
    """
    if name not in _BUILDERS:
        raise ValueError(f"name must be one of {MODELS + USER_MODELS}, got {name!r}")
    seq, index = _BUILDERS[name]()
    what = f"the {name} state dict (.npz, or the release's .pth) with {', '.join(sorted(index))} .weight/.bias arrays"
    if path is not None and Path(path).is_dir():
        check_file(path, what)  # one line: a directory, expected the weights file
    file = _weights_file(name, path)
    if Path(file).suffix == ".pth":  # the release's state dict, read as tensors only (no pickled code)
        check_file(file, what)
        try:
            state = {k: v.numpy() for k, v in torch.load(file, map_location="cpu", weights_only=True).items()}
        except (EOFError, OSError, RuntimeError, ValueError, TypeError, AttributeError, pickle.UnpicklingError,
                zipfile.BadZipFile) as exc:
            raise FileFormatError(f"{file}: not a readable state dict ({type(exc).__name__}: "
                                  f"{' '.join(str(exc).split())[:60]}); expected {what}") from None
    else:
        state = read_npz(file, what)  # a damaged archive or a pickle: one line naming the file
    sd = dict(seq.state_dict())  # keeps the Normalize buffers, which the released files do not hold
    need = {f"{k}.{leaf}" for k in index for leaf in ("weight", "bias") if f"{index[k]}.{leaf}" in sd}
    for key, value in state.items():
        prefix, _, leaf = key.rpartition(".")
        if prefix not in index:
            raise FileFormatError(f"{file}: key {key!r} is not a layer of {name}; expected prefixes {sorted(index)}")
        target = f"{index[prefix]}.{leaf}"
        value = np.asarray(value)
        if target not in sd or value.shape != tuple(sd[target].shape) or value.dtype.kind not in "fiu" \
                or not np.isfinite(value).all():
            shape = tuple(sd[target].shape) if target in sd else "none"
            raise FileFormatError(f"{file}: array {key!r} has shape {value.shape} and dtype {value.dtype}; expected "
                                  f"finite numbers of shape {shape}")
        sd[target] = torch.from_numpy(np.asarray(value, dtype=np.float32))
    missing = sorted(need - set(state))
    if missing:
        raise FileFormatError(f"{file}: no {missing[0]!r} array ({len(missing)} missing); expected {what}")
    seq.load_state_dict(sd)
    return seq.eval()


def _weights_file(name: str, path: str | Path | None) -> Path:
    """The weights of ``name``: ``path``, else the shipped/cached ``.npz``; for :data:`USER_MODELS` the cached
    ``.pth`` or ``.npz`` (or a download of the release's ``.pth`` when allowed)."""
    if path is not None or name in MODELS:
        return resolve_data("sdp_crown", f"{name}.npz", path=path)
    try:
        return resolve_data("sdp_crown", f"{name}.npz")
    except DataNotFoundError:
        pass
    try:
        return resolve_data("sdp_crown", f"{name}.pth", url=_URL + f"models/{name}.pth")
    except DataNotFoundError as exc:
        raise DataNotFoundError(
            f"the weights of {name} (Table 1) are not shipped: put the release's models/{name}.pth (or an .npz of its "
            f"state dict) at {cache_dir('sdp_crown') / (name + '.pth')}, pass path=... (reproduction: --set "
            f"weights_dir=<folder>), or rerun with --allow-download ({exc})") from None


def load_images(dataset: str = "mnist", n: int = 200) -> tuple[torch.Tensor, torch.Tensor]:
    """The paper's first ``n`` test images and labels ``[n]``.

    ``dataset='mnist'``: ``[n, 1, 28, 28]``; ``'cifar'``: CIFAR-10 ``[n, 3, 32, 32]``, unnormalised (the CIFAR
    models of :func:`load_model` normalise inside). float64 in [0, 1].
    """
    if dataset not in ("mnist", "cifar"):
        raise ValueError(f"dataset must be 'mnist' or 'cifar', got {dataset!r}")
    n = check_int(n, "n", low=1, high=200)
    X, y = (np.load(resolve_data("sdp_crown", f"{dataset}_{v}_sdp.npy", url=_URL + f"datasets/sdp/{dataset}/{v}_sdp.npy",
                                 sha256=SHA256[f"{dataset}_{v}_sdp.npy"])) for v in ("X", "y"))
    X = torch.from_numpy(np.asarray(X[:n], dtype=np.float64)).permute(0, 3, 1, 2).contiguous()
    return X, torch.from_numpy(np.asarray(y[:n], dtype=np.int64))


def digits_data(seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """scikit-learn's 8×8 digits in [0, 1] (64 features), split 70/30 with ``seed``: X_tr, y_tr, X_te, y_te."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    seed = check_int(seed, "seed", low=0)
    d = load_digits()
    X = d.data.astype(np.float64) / 16.0
    Xtr, Xte, ytr, yte = train_test_split(X, d.target, test_size=0.3, random_state=seed, stratify=d.target)
    return (torch.from_numpy(Xtr), torch.from_numpy(ytr).long(), torch.from_numpy(Xte), torch.from_numpy(yte).long())


def train_digits_mlp(hidden: tuple[int, ...] = (16, 16), steps: int = 300, lip_penalty: float = 0.05,
                     seed: int = 0, data: Any = None) -> nn.Sequential:
    """Train a small MLP on the digits with cross-entropy + ``lip_penalty · Π‖W‖₂`` (spec §5, mimics the
    paper's Lipschitz-regularised retraining); full-batch Adam, lr 1e-2.

    Returns
    -------
    nn.Sequential
        float64 network 64 → hidden → 10.
    """
    if not isinstance(hidden, (tuple, list)) or not hidden:
        raise TypeError(f"hidden must be a non-empty tuple of widths, got {hidden!r}")
    hidden = tuple(check_int(h, "hidden", low=1) for h in hidden)
    steps = check_int(steps, "steps", low=1)
    lip_penalty = check_real(lip_penalty, "lip_penalty", low=0.0)
    seed = check_int(seed, "seed", low=0)
    Xtr, ytr, _, _ = digits_data(seed) if data is None else data
    torch.manual_seed(seed)
    layers: list[nn.Module] = []
    prev = Xtr.shape[1]
    for h in hidden:
        layers += [nn.Linear(prev, h), nn.ReLU()]
        prev = h
    layers.append(nn.Linear(prev, 10))
    model = nn.Sequential(*layers).double()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    linears = [m for m in model if isinstance(m, nn.Linear)]
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(Xtr), ytr)
        lip = torch.stack([torch.linalg.matrix_norm(m.weight, ord=2) for m in linears]).prod()
        (loss + lip_penalty * lip).backward()
        opt.step()
    return model.eval()
