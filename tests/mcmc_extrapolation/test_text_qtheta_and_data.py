"""Text q_θ (LoRA fine-tuning of a tiny random GPT-2 on episodes), the Yelp and authorship loaders."""

from __future__ import annotations

import numpy as np
import pytest

from icml25.core.errors import DataNotFoundError
from icml25.mcmc_extrapolation.text_data import load_authorship, load_yelp


def test_episode_pairs_format_and_history() -> None:
    from icml25.mcmc_extrapolation.text_qtheta import episode_pairs

    eps = [(["a b", "a c", "d c"], np.array([0.0, 0.5, 1.0]))]
    pairs = episode_pairs(eps, lambda s: int(s * 2), history=1)
    assert pairs == [("<score 0> a b\n<score 1>", " a c"), ("<score 1> a c\n<score 2>", " d c")]
    pairs2 = episode_pairs(eps, lambda s: int(s * 2), history=2)
    assert pairs2[1][0] == "<score 0> a b\n<score 1> a c\n<score 2>"


def test_text_qtheta_finetuning_lowers_its_loss_and_transforms(tiny_text: dict[str, str]) -> None:
    import torch

    from icml25.mcmc_extrapolation.text_qtheta import TextQTheta

    torch.manual_seed(0)
    q = TextQTheta(tiny_text["qtheta_model"], history=2, n_bins=4)
    eps = [(["the food was bad", "the food was ok", "the food was good"], np.array([1.0, 2.0, 3.0])),
           (["service was slow", "service was ok", "service was fast"], np.array([1.5, 2.5, 3.5]))]
    q.lo, q.hi = 1.0, 3.5
    before = q.loss(q.pairs(eps))
    q.fit(eps, steps=40, lr=3e-2, batch_size=4, r=8, seed=0)
    after = q.loss(q.pairs(eps))
    assert after < 0.5 * before, (before, after)
    assert len(q.losses) == 40
    calls = []

    def guide(texts, rows):
        calls.append(len(texts))
        return np.array([t.count("good") + t.count("fast") for t in texts], dtype=float)

    res = q.transform(["the food was bad", "service was slow"], guide, steps=2, n_candidates=3, max_tokens=8,
                      temperature=0.7, seed=0)
    assert res.values.shape == (2, 3) and res.n_evals == 6 and len(res.texts[0]) == 3
    assert sum(calls[1:]) <= 2 * 2 * 3
    assert np.all(np.isfinite(res.values))


def test_yelp_loader_reads_the_canonical_csv_and_names_the_missing_file(tiny_text: dict[str, str], tmp_path,
                                                                        monkeypatch) -> None:
    texts, ratings = load_yelp("train", path=tiny_text["yelp_path"])
    assert len(texts) == 40 and set(ratings) == {1, 2, 3, 4, 5} and "\\n" not in "".join(texts)
    short, _ = load_yelp("test", path=tiny_text["yelp_path"], max_words=5)
    assert 0 < len(short) < 40 and all(len(t.split()) <= 5 for t in short)
    monkeypatch.setenv("ICML25_CACHE", str(tmp_path / "cache"))
    with pytest.raises(DataNotFoundError, match=r"yelp_review_full_csv/train.csv.*--allow-download"):
        load_yelp("train", allow_download=False)
    with pytest.raises(DataNotFoundError, match="does not exist"):
        load_yelp("test", path=tmp_path / "nowhere")
    bad = tmp_path / "bad.csv"
    bad.write_text("hello,world\n")
    with pytest.raises(ValueError, match="yelp_review_full CSV format"):
        load_yelp("train", path=bad)
    with pytest.raises(ValueError, match="split"):
        load_yelp("dev", path=bad)


def test_yelp_download_is_md5_checked(tmp_path, monkeypatch) -> None:
    """A download whose MD5 is not the published one is discarded (no internet: urlopen is replaced)."""
    import io
    import urllib.request

    monkeypatch.setenv("ICML25_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(urllib.request, "urlopen", lambda url, timeout=None: io.BytesIO(b"not the archive"))
    with pytest.raises(DataNotFoundError, match="MD5"):
        load_yelp("train", allow_download=True)
    assert not list((tmp_path / "cache").rglob("train.csv"))


def test_authorship_loader(tiny_text: dict[str, str], tmp_path) -> None:
    texts, authors = load_authorship(tiny_text["authorship_path"])
    assert len(texts) == 40 and set(authors) == {"alice", "bob", "carol"}
    with pytest.raises(DataNotFoundError, match="authorship_path"):
        load_authorship(tmp_path / "missing.csv")
    with pytest.raises(DataNotFoundError, match="authorship_path"):
        load_authorship("")
    with pytest.raises(ValueError, match="'writer'"):
        load_authorship(tiny_text["authorship_path"], author_column="writer")
