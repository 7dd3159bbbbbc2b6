"""Figures of the reproduction: latent distortion per protection; samples clean / protected / protected + CAT."""

from __future__ import annotations

from typing import Any

import numpy as np


def figure_distortion(r0: dict[str, Any], cfg: Any) -> Any:
    """Bars: relative latent distortion and decoded MSE per protection at the main budget, noise as reference."""
    from icml25.core.plotting import new_figure, reference_line

    eta = cfg.etas[0]
    names = [p for p in cfg.protections]
    fig, (a1, a2) = new_figure(ncols=2)
    lat = [r0["dist"][(p, eta)]["rel_l2"] for p in names]
    dec = [r0["dist"][(p, eta)]["decoded_mse"] for p in names]
    cat = [r0["cat_dist"][(p, eta)]["decoded_mse"] for p in names]
    x = np.arange(len(names))
    a1.bar(x, lat, color="tab:red")
    reference_line(a1, r0["dist"][("noise", eta)]["rel_l2"], label="uniform noise")
    a1.set_xticks(x, names, rotation=30)
    a1.set_ylabel("||mu_E(x_a) - mu_E(x)|| / ||mu_E(x)||")
    a1.set_title(f"latent distortion (eta={eta})")
    a1.legend()
    a2.bar(x - 0.2, dec, width=0.4, color="tab:red", label="protected")
    a2.bar(x + 0.2, cat, width=0.4, color="tab:green", label="protected + CAT")
    reference_line(a2, r0["dist"][("noise", eta)]["decoded_mse"], label="uniform noise")
    reference_line(a2, r0["dist"][("noise", eta)]["clean_decoded_mse"], label="clean")
    a2.set_xticks(x, names, rotation=30)
    a2.set_ylabel("MSE of D(E(x_a)) against x (per pixel)")
    a2.set_title("decoded distortion")
    a2.legend(fontsize=7)
    fig.tight_layout()
    return fig


def figure_samples(r0: dict[str, Any], cfg: Any) -> Any:
    """Rows: subject images, protected images, generations after clean / protected / protected+CAT customisation."""
    from icml25.core.plotting import new_figure

    eta, name = cfg.etas[0], cfg.protections[0]
    s_p, s_c = r0["samples"][(name, eta)]
    rows = [("subject x", r0["world"]["subject"]), (f"{name} x_a", r0["adv"][(name, eta)]),
            ("clean custom.", r0["samples"]["clean"]), ("protected", s_p), ("protected+CAT", s_c)]
    k = min(8, *(len(imgs) for _, imgs in rows))
    fig, axes = new_figure(ncols=k, nrows=len(rows), width=0.9, height=1.0)
    for i, (label, imgs) in enumerate(rows):
        for j in range(k):
            ax = axes[i, j]
            img = np.asarray(imgs[j].detach().cpu()).clip(0, 1)
            if img.shape[0] == 3:
                ax.imshow(img.transpose(1, 2, 0))
            else:
                ax.imshow(img[0], cmap="gray", vmin=0, vmax=1)
            ax.set_xticks([])
            ax.set_yticks([])
            if j == 0:
                ax.set_ylabel(label, fontsize=6)
    fig.suptitle(f"{name}, eta={eta}: samples of 'sks'", fontsize=8)
    return fig
