"""The toy data set: scikit-learn's 8x8 digits, scaled to [0, 1] and upsampled to 16x16 (spec §6).

The paper's faces/artworks (CelebA-HQ, VGGFace2, WikiArt) and Stable Diffusion cannot be had offline; the digits
ship inside scikit-learn's wheel, so nothing is downloaded and nothing is copied into this package.
"""

from __future__ import annotations

import numpy as np

from icml25.core.validation import check_int

__all__ = ["load_digit_images", "subject_images"]


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
