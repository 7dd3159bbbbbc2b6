"""The toy data set: scikit-learn's 8x8 digits, scaled to [0, 1] and upsampled to 16x16 (spec §6).

The paper's faces/artworks (CelebA-HQ, VGGFace2, WikiArt) and Stable Diffusion cannot be had offline; the digits
ship inside scikit-learn's wheel, so nothing is downloaded and nothing is copied into this package.
"""

from __future__ import annotations

import numpy as np

from icml25.core.validation import check_int

__all__ = ["load_digit_images", "subject_images", "PHOTOS", "load_photos", "load_photo_crops"]


def load_digit_images(size: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """All 1,797 scikit-learn digits as images in [0, 1], bilinearly resized to ``size`` x ``size``.

    Parameters
    ----------
    size : int
        Output side length in pixels (>= 8).

    Returns
    -------
    images : ndarray of shape (1797, 1, size, size), float32 in [0, 1]
    labels : ndarray of shape (1797,), int64 digit classes 0-9

    Examples
    --------
    >>> x, y = load_digit_images()
    >>> x.shape, float(x.min()), float(x.max()) <= 1.0, int(y.max())
    ((1797, 1, 16, 16), 0.0, True, 9)
    """
    size = check_int(size, "size", low=8)
    import torch
    import torch.nn.functional as F
    from sklearn.datasets import load_digits

    d = load_digits()
    x = torch.as_tensor(d.images / 16.0, dtype=torch.float32)[:, None]
    if size != 8:
        x = F.interpolate(x, size=(size, size), mode="bilinear", align_corners=False).clamp(0.0, 1.0)
    return x.numpy(), d.target.astype(np.int64)


def subject_images(images: np.ndarray, labels: np.ndarray, subject: int, n: int, offset: int = 0) -> np.ndarray:
    """The ``n`` images of class ``subject`` starting at the ``offset``-th one (the customisation "subject").

    Examples
    --------
    >>> x, y = load_digit_images()
    >>> subject_images(x, y, subject=3, n=8).shape
    (8, 1, 16, 16)
    """
    subject = check_int(subject, "subject", low=0, high=int(np.max(labels)))
    n = check_int(n, "n", low=1)
    offset = check_int(offset, "offset", low=0)
    idx = np.flatnonzero(labels == subject)[offset:offset + n]
    if len(idx) < n:
        raise ValueError(f"n={n} images of subject {subject} from offset {offset} requested, only {len(idx)} exist")
    return images[idx]


#: The photographs shipped in ``data/photos.npz`` (scikit-image 0.26's sample images, all CC0 or public domain; see
#: ``data/SOURCE.md``), resized so that the short side is 128 px; index = class label of their crops.
PHOTOS = ("chelsea", "astronaut", "coffee", "rocket", "hubble_deep_field", "retina", "camera")


def load_photos() -> dict[str, np.ndarray]:
    """The shipped photographs, name -> (H, W, 3) uint8 array with min(H, W) = 128 (``PHOTOS`` order).

    Examples
    --------
    >>> p = load_photos()
    >>> list(p) == list(PHOTOS), p["chelsea"].shape
    (True, (128, 192, 3))
    """
    from pathlib import Path

    with np.load(Path(__file__).with_name("data") / "photos.npz") as f:
        return {k: f[k] for k in PHOTOS}


def load_photo_crops(n_per_photo: int, size: int = 32, seed: int = 0, scale: tuple[float, float] = (0.3, 0.7)
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Random square crops of every shipped photograph: the "real-image world" of the full reproduction.

    Each crop has a side of ``scale`` (uniform) times the photo's short side, a uniform random position and a random
    horizontal flip, and is resized (bilinear, antialiased) to ``size`` x ``size``. A crop's label is the index of
    its photo in ``PHOTOS`` (the photo plays a person's identity: DreamBooth learns one photo's "subject" from a few
    crops, the identity network recognises which photo a crop comes from).

    Returns
    -------
    images : ndarray (len(PHOTOS) * n_per_photo, 3, size, size), float32 in [0, 1]
    labels : ndarray (len(PHOTOS) * n_per_photo,), int64

    Examples
    --------
    >>> x, y = load_photo_crops(2, size=16)
    >>> x.shape, float(x.min()) >= 0.0, float(x.max()) <= 1.0, y.tolist()[:4]
    ((14, 3, 16, 16), True, True, [0, 0, 1, 1])
    """
    n_per_photo = check_int(n_per_photo, "n_per_photo", low=1)
    size = check_int(size, "size", low=4)
    seed = check_int(seed, "seed", low=0)
    lo, hi = scale
    if not 0.0 < lo <= hi <= 1.0:
        raise ValueError(f"scale must satisfy 0 < low <= high <= 1, got {scale!r}")
    import torch
    import torch.nn.functional as F

    rng = np.random.default_rng(seed)
    xs, ys = [], []
    for label, img in enumerate(load_photos().values()):
        t = torch.as_tensor(img, dtype=torch.float32).permute(2, 0, 1) / 255.0
        h, w = t.shape[1:]
        for _ in range(n_per_photo):
            side = max(size // 2, int(round(rng.uniform(lo, hi) * min(h, w))))
            i, j = int(rng.integers(0, h - side + 1)), int(rng.integers(0, w - side + 1))
            c = t[None, :, i:i + side, j:j + side]
            if rng.random() < 0.5:
                c = c.flip(-1)
            xs.append(F.interpolate(c, size=(size, size), mode="bilinear", align_corners=False, antialias=True))
            ys.append(label)
    return torch.cat(xs).clamp(0.0, 1.0).numpy(), np.asarray(ys, dtype=np.int64)
