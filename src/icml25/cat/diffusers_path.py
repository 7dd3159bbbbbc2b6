"""The real path for users with Stable Diffusion weights: CAT adapter files and image folders (spec §6 "real path").

:func:`~icml25.cat.adapter.add_cat_adapter`, :func:`~icml25.cat.adapter.train_cat_adapter` and
:func:`~icml25.cat.adapter.encode_with_cat` accept a diffusers ``AutoencoderKL`` directly (the official target
regexes match its module names). This module adds saving/loading of the adapter as a safetensors file with
``vae.``-prefixed peft keys (``...lora_A.weight``/``...lora_B.weight``), the layout ``StableDiffusionPipeline``
LoRA files use, and a loader for a folder of subject images.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from icml25.core.validation import check_int

from ._validation import check_module

__all__ = ["save_cat_adapter", "load_cat_adapter", "load_image_folder"]


def save_cat_adapter(vae: Any, path: str | Path, *, rank: int, target: str, alpha: float | None = None) -> Path:
    """Write the CAT adapter weights of ``vae`` to ``path`` (safetensors; keys ``vae.<module>.lora_A.weight``).

    ``rank``, ``target`` and ``alpha`` are stored in the file's metadata so :func:`load_cat_adapter` can rebuild
    the adapter. Returns the path.

    Examples
    --------
    >>> import tempfile, torch
    >>> from icml25.cat import TinyVAE, add_cat_adapter
    >>> vae = add_cat_adapter(TinyVAE(width=8), rank=2)
    >>> p = save_cat_adapter(vae, tempfile.mkdtemp() + "/cat.safetensors", rank=2, target="encoder")
    >>> p.suffix
    '.safetensors'
    """
    from peft import get_peft_model_state_dict
    from safetensors.torch import save_file

    from .adapter import TARGET_PATTERNS

    check_module(vae, "vae")
    rank = check_int(rank, "rank", low=1)
    if target not in TARGET_PATTERNS:
        raise ValueError(f"target must be one of {', '.join(TARGET_PATTERNS)}; got {target!r}")
    if not isinstance(path, (str, Path)) or not str(path):
        raise TypeError(f"path must be a non-empty str or Path, got {path!r}")
    sd = get_peft_model_state_dict(vae, adapter_name="cat")
    if not sd:
        raise ValueError("vae has no CAT adapter named 'cat'; call add_cat_adapter first")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {"rank": str(rank), "target": target, "alpha": json.dumps(alpha), "format": "icml25.cat/peft"}
    save_file({f"vae.{k}": v.detach().contiguous() for k, v in sd.items()}, str(path), metadata=meta)
    return path


def load_cat_adapter(vae: Any, path: str | Path) -> Any:
    """Add a CAT adapter to ``vae`` (in place) and load its weights from a file written by :func:`save_cat_adapter`.

    Also accepts diffusers-style keys (``lora.down``/``lora.up``) by renaming them to peft's ``lora_A``/``lora_B``.

    Examples
    --------
    >>> import tempfile, torch
    >>> from icml25.cat import TinyVAE, add_cat_adapter
    >>> vae = add_cat_adapter(TinyVAE(width=8), rank=2)
    >>> p = save_cat_adapter(vae, tempfile.mkdtemp() + "/cat.safetensors", rank=2, target="encoder")
    >>> len(load_cat_adapter(TinyVAE(width=8), p).state_dict()) > len(TinyVAE(width=8).state_dict())
    True
    """
    from peft import set_peft_model_state_dict
    from safetensors import safe_open

    from .adapter import add_cat_adapter

    check_module(vae, "vae")
    if not isinstance(path, (str, Path)) or not str(path):
        raise TypeError(f"path must be a non-empty str or Path, got {path!r}")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"path {str(path)!r} is not a file; pass a file written by save_cat_adapter")
    with safe_open(str(path), framework="pt") as f:
        meta = f.metadata() or {}
        sd = {k: f.get_tensor(k) for k in f.keys()}
    if "rank" not in meta or "target" not in meta:
        raise ValueError(f"{path} has no CAT metadata (rank, target); it was not written by save_cat_adapter")
    alpha = json.loads(meta.get("alpha", "null"))
    add_cat_adapter(vae, int(meta["rank"]), meta["target"], alpha=alpha)
    renamed = {}
    for k, v in sd.items():
        k = k.removeprefix("vae.").replace("lora.down", "lora_A").replace("lora.up", "lora_B")
        renamed[k] = v
    result = set_peft_model_state_dict(vae, renamed, adapter_name="cat")
    unexpected = [k for k in getattr(result, "unexpected_keys", []) if "lora_" in k]
    if unexpected:
        raise ValueError(f"{path} holds adapter weights for modules this vae lacks: {unexpected[:3]}")
    return vae


def load_image_folder(folder: str | Path, resolution: int = 512, channels: int = 3) -> np.ndarray:
    """Load every .png/.jpg/.jpeg/.webp image in ``folder``, centre-crop to a square, resize to ``resolution``.

    Returns float32 images (N, channels, resolution, resolution) in [0, 1] (RGB for channels=3, grey for 1), sorted
    by file name. Needs Pillow. An unreadable image (empty, truncated, not an image, a folder) raises ``ValueError``
    naming the file.

    Examples
    --------
    >>> import tempfile
    >>> from PIL import Image
    >>> d = tempfile.mkdtemp(); Image.new("RGB", (40, 30), (255, 0, 0)).save(d + "/a.png")
    >>> load_image_folder(d, resolution=16).shape
    (1, 3, 16, 16)
    """
    from PIL import Image

    resolution = check_int(resolution, "resolution", low=1)
    channels = check_int(channels, "channels", low=1, high=3)
    if channels == 2:
        raise ValueError("channels must be 1 (grey) or 3 (RGB), got 2")
    if not isinstance(folder, (str, Path)) or not str(folder):
        raise TypeError(f"folder must be a non-empty str or Path, got {folder!r}")
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"folder {str(folder)!r} is not a directory")
    files = sorted(p for p in folder.iterdir() if p.suffix.lower() in (".png", ".jpg", ".jpeg", ".webp"))
    if not files:
        raise ValueError(f"folder {str(folder)!r} holds no .png/.jpg/.jpeg/.webp images")
    from icml25.core.files import FileFormatError

    out = []
    for f in files:
        try:
            with Image.open(f) as raw:
                im = raw.convert("RGB" if channels == 3 else "L")
        except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as exc:
            raise FileFormatError(f"{f}: not a readable image ({type(exc).__name__}: {str(exc)[:60]}); expected a "
                                  f".png/.jpg/.jpeg/.webp image file") from None
        w, h = im.size
        s = min(w, h)
        im = im.crop(((w - s) // 2, (h - s) // 2, (w - s) // 2 + s, (h - s) // 2 + s))
        im = im.resize((resolution, resolution), Image.Resampling.BICUBIC)
        a = np.asarray(im, dtype=np.float32) / 255.0
        out.append(a.transpose(2, 0, 1) if a.ndim == 3 else a[None])
    return np.stack(out)
