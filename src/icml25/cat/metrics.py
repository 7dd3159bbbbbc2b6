"""Latent distortion (claim 1) and the toy identity/quality metrics ISM*/FDFR* (spec §2 "metrics", §6 step 2).

``latent_distortion`` is the paper's analysis: how far a protection moves the encoder's posterior means and how much
worse the decoded image gets. ISM*/FDFR* replace ArcFace identity similarity and RetinaFace detection failure with a
digit classifier trained on clean digits: ISM* = mean probability of the subject class over generated images,
FDFR* = fraction of generated images whose top class probability is < 0.5 ("no recognisable digit").
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from icml25.core.progress import progress
from icml25.core.validation import check_array, check_int, check_positive, check_probability

from ._vae_io import decode, module_device, posterior
from ._validation import as_images, check_module, vae_geometry

__all__ = ["latent_distortion", "DigitClassifier", "train_classifier", "identity_scores", "pca_latents"]


_posterior, _decode = posterior, decode


def latent_distortion(vae: nn.Module, clean: Any, protected: Any, *, reference_vae: nn.Module | None = None
                      ) -> dict[str, float]:
    """Distortion statistics of ``protected`` images against their ``clean`` originals (means over images).

    With mu, sigma the clean posterior of ``reference_vae`` (default ``vae``) and mu_a the posterior mean of the
    protected image under ``vae``:

    - ``rel_l2``: ||mu_a - mu||_2 / ||mu||_2 (spec §2 d_lat);
    - ``sigma_l2``: mean over latent elements of ((mu_a - mu) / sigma)^2 (spec §8, robust to degenerate directions);
    - ``decoded_mse``: mean (D(mu_a) - x)^2 per pixel with x the clean image (d_rec), and ``clean_decoded_mse`` the
      same for D(mu) (the VAE's own reconstruction error); ``psnr``: 10 log10(1 / decoded_mse) (dB);
    - ``recon_mse``: mean (D(mu_a) - x_a)^2, the autoencoder's error on the image it was given (the artefacts it
      adds; what the CAT loss minimises, with a posterior sample instead of the mean).

    Examples
    --------
    >>> import torch
    >>> from icml25.cat import TinyVAE
    >>> vae, x = TinyVAE(width=8), torch.rand(4, 1, 16, 16)
    >>> latent_distortion(vae, x, x)["rel_l2"]
    0.0
    """
    check_module(vae, "vae")
    ref = vae if reference_vae is None else check_module(reference_vae, "reference_vae")
    ch, size = vae_geometry(vae)
    dev = module_device(vae)  # a GPU VAE: the images move to its device
    x = as_images(clean, "clean", channels=ch, size=size).to(dev)
    xa = as_images(protected, "protected", channels=ch, size=size).to(dev)
    if x.shape != xa.shape:
        raise ValueError(f"protected must have the shape of clean {tuple(x.shape)}, got {tuple(xa.shape)}")
    with torch.no_grad():
        mu, logvar = _posterior(ref, x)
        mu_a = _posterior(vae, xa)[0]
        n = len(x)
        d = (mu_a - mu).reshape(n, -1)
        rel = d.norm(dim=1) / mu.reshape(n, -1).norm(dim=1).clamp_min(1e-12)
        sig = (d / torch.exp(0.5 * logvar).reshape(n, -1)).pow(2).mean(1)
        rec_a = _decode(vae, mu_a).clamp(0, 1)
        dec = (rec_a - x).pow(2).reshape(n, -1).mean(1)
        own = (rec_a - xa).pow(2).reshape(n, -1).mean(1)
        dec0 = (_decode(ref, mu).clamp(0, 1) - x).pow(2).reshape(n, -1).mean(1)
    mse = float(dec.mean())
    return {"rel_l2": float(rel.mean()), "sigma_l2": float(sig.mean()), "decoded_mse": mse,
            "clean_decoded_mse": float(dec0.mean()), "recon_mse": float(own.mean()), "psnr": float(10 * np.log10(1.0 / max(mse, 1e-12)))}


def pca_latents(vae: nn.Module, groups: dict[str, Any], n_components: int = 2) -> dict[str, np.ndarray]:
    """Project the posterior means of several image groups onto the first principal axes of all of them together.

    ``groups`` maps a name ("clean", "AdvDM(+)", ...) to images (N, C, S, S); returns name -> (N, n_components).
    (The paper shows t-SNE; PCA is deterministic and shows the same separation of protected latents.)

    Examples
    --------
    >>> import torch
    >>> from icml25.cat import TinyVAE
    >>> out = pca_latents(TinyVAE(width=8), {"a": torch.rand(5, 1, 16, 16), "b": torch.rand(3, 1, 16, 16)})
    >>> out["a"].shape, out["b"].shape
    ((5, 2), (3, 2))
    """
    check_module(vae, "vae")
    n_components = check_int(n_components, "n_components", low=1)
    if not isinstance(groups, dict) or not groups:
        raise TypeError(f"groups must be a non-empty dict name -> images, got {type(groups).__name__}")
    ch, size = vae_geometry(vae)
    with torch.no_grad():
        mus = {k: _posterior(vae, as_images(v, f"groups[{k!r}]", channels=ch, size=size))[0].reshape(
            len(v), -1).cpu().numpy() for k, v in groups.items()}
    allz = np.concatenate(list(mus.values()))
    center = allz.mean(0)
    _, _, vt = np.linalg.svd(allz - center, full_matrices=False)
    return {k: (m - center) @ vt[:n_components].T for k, m in mus.items()}


class DigitClassifier(nn.Module):
    """Small CNN on (N, C, S, S) images -> logits (N, n_classes): the identity "recogniser" behind ISM*/FDFR*.

    The digits world uses the defaults (1 channel, 16x16, 10 digits); the photo world a 3-channel 32x32 version
    whose classes are the photographs (which photo a crop comes from plays a person's identity).
    ``features`` returns the penultimate embedding (the ArcFace-embedding analogue).

    Examples
    --------
    >>> import torch
    >>> DigitClassifier()(torch.rand(2, 1, 16, 16)).shape
    torch.Size([2, 10])
    >>> DigitClassifier(7, in_channels=3, image_size=32)(torch.rand(2, 3, 32, 32)).shape
    torch.Size([2, 7])
    """

    def __init__(self, n_classes: int = 10, width: int = 16, in_channels: int = 1, image_size: int = 16) -> None:
        super().__init__()
        self.n_classes = check_int(n_classes, "n_classes", low=2)
        width = check_int(width, "width", low=1)
        self.in_channels = check_int(in_channels, "in_channels", low=1)
        self.image_size = check_int(image_size, "image_size", low=4)
        if self.image_size % 4:
            raise ValueError(f"image_size must be divisible by 4 (two 2x2 poolings), got {image_size}")
        self.net = nn.Sequential(nn.Conv2d(self.in_channels, width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                 nn.Conv2d(width, 2 * width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                 nn.Flatten(), nn.Linear(2 * width * (self.image_size // 4) ** 2, self.n_classes))

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """The flattened last conv features (N, D) the linear head reads."""
        return self.net[:-1](x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def train_classifier(images: Any, labels: Any, *, steps: int = 400, batch_size: int = 64, lr: float = 3e-3,
                     seed: int = 0, n_classes: int = 10, width: int = 16, augment: bool = False) -> DigitClassifier:
    """Train a :class:`DigitClassifier` on ``images`` (N, C, S, S) with ``labels`` (N,) in 0..n_classes-1 (Adam).

    The classifier takes the images' channels and size (16x16 grey digits by default). ``augment``: random
    horizontal flips and brightness/contrast jitter (x in [0.8, 1.2], +-0.1) of every batch, so that the network
    recognises a photo's content rather than its exact colour statistics.

    Examples
    --------
    >>> import torch
    >>> clf = train_classifier(torch.rand(20, 1, 16, 16), torch.arange(20) % 10, steps=2)
    >>> isinstance(clf, DigitClassifier)
    True
    """
    x = as_images(images, "images")
    n_classes = check_int(n_classes, "n_classes", low=2)
    y = torch.as_tensor(check_array(labels, "labels", ndim=1, dtype=int, low=0, high=n_classes - 1),
                        dtype=torch.long, device="cpu")
    if len(y) != len(x):
        raise ValueError(f"labels must have one entry per image ({len(x)}), got {len(y)}")
    if x.shape[2] != x.shape[3] or x.shape[2] % 4:
        raise ValueError(f"images must be square with a side divisible by 4, got shape {tuple(x.shape)}")
    steps = check_int(steps, "steps", low=1)
    batch_size = check_int(batch_size, "batch_size", low=1)
    lr = check_positive(lr, "lr")
    if not isinstance(augment, bool):
        raise TypeError(f"augment must be a bool, got {augment!r}")
    g = torch.Generator().manual_seed(check_int(seed, "seed", low=0))
    torch.manual_seed(int(torch.randint(2**31 - 1, (1,), generator=g, device=g.device)))
    clf = DigitClassifier(n_classes, width, in_channels=x.shape[1], image_size=x.shape[2])  # torch's default device
    x, y = x.to(module_device(clf)), y.to(module_device(clf))
    opt = torch.optim.Adam(clf.parameters(), lr=lr, foreach=True)
    for _ in progress(range(steps), "classifier training"):
        idx = torch.randint(len(x), (batch_size,), generator=g, device=g.device).to(x.device)
        xb = x[idx]
        if augment:
            n = len(xb)
            flip = (torch.rand(n, generator=g) < 0.5).to(xb.device).view(-1, 1, 1, 1)
            xb = torch.where(flip, xb.flip(-1), xb)
            a = (0.8 + 0.4 * torch.rand(n, 1, 1, 1, generator=g)).to(xb.device)
            b = (0.2 * torch.rand(n, 1, 1, 1, generator=g) - 0.1).to(xb.device)
            xb = (a * xb + b).clamp(0.0, 1.0)
        loss = nn.functional.cross_entropy(clf(xb), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    return clf.eval()


def identity_scores(classifier: nn.Module, images: Any, subject: int, threshold: float = 0.5,
                    reference: Any = None) -> dict[str, float]:
    """ISM* (mean P(subject)), FDFR* (fraction with max P < ``threshold``) and subject accuracy of ``images``.

    With ``reference`` images of the subject (e.g. its clean held-out photos) and a classifier with ``features``,
    also ``ism_cos``: the mean cosine similarity of each image's embedding to the mean reference embedding (the
    paper's ArcFace ISM form).

    Examples
    --------
    >>> import torch
    >>> s = identity_scores(DigitClassifier(), torch.rand(4, 1, 16, 16), subject=3)
    >>> sorted(s)
    ['accuracy', 'fdfr', 'ism']
    """
    check_module(classifier, "classifier")
    ch, size = getattr(classifier, "in_channels", 1), getattr(classifier, "image_size", 16)
    x = as_images(images, "images", channels=ch, size=size)
    subject = check_int(subject, "subject", low=0, high=getattr(classifier, "n_classes", 10) - 1)
    threshold = check_probability(threshold, "threshold")
    dev = module_device(classifier)
    with torch.no_grad():
        p = torch.softmax(classifier(x.to(dev)), dim=1)
        out = {"ism": float(p[:, subject].mean()), "fdfr": float((p.max(1).values < threshold).float().mean()),
               "accuracy": float((p.argmax(1) == subject).float().mean())}
        if reference is not None:
            if not hasattr(classifier, "features"):
                raise TypeError("reference needs a classifier with a features() method (DigitClassifier)")
            ref = as_images(reference, "reference", channels=ch, size=size).to(dev)
            mean = classifier.features(ref).mean(0, keepdim=True)
            out["ism_cos"] = float(nn.functional.cosine_similarity(classifier.features(x.to(dev)), mean).mean())
    return out
