"""Data of the paper's text tasks: Yelp reviews (sentiment) and an author-labelled corpus (anonymisation).

Yelp: the canonical ``yelp_review_full`` data (Zhang et al. 2015; 650,000 training and 50,000 test reviews rated 1-5),
as the CSV pair ``yelp_review_full_csv/{train,test}.csv`` (no header; columns rating, text). It is found at a path
the user gives (the CSV itself or the folder holding it), then in the icml25 cache, and downloaded from the fast.ai
mirror of the original archive only when allowed (``--allow-download`` / ``allow_download=True``), the archive
checked by its MD5 (the checksum torchtext and others publish for that URL) before the split is extracted.

Authorship: a user file (CSV with a header; text and author columns), e.g. the paper's authorship corpus, which is
not public here.
"""

from __future__ import annotations

import csv
import sys
import tarfile
from pathlib import Path
from typing import Any

import numpy as np

from icml25.core.data import file_hash, resolve_data
from icml25.core.errors import DataNotFoundError

__all__ = ["YELP_URL", "YELP_MD5", "load_yelp", "load_authorship"]

SLUG = "mcmc_extrapolation"
#: the fast.ai S3 mirror of Zhang et al.'s yelp_review_full_csv archive (196 MB)
YELP_URL = "https://s3.amazonaws.com/fast-ai-nlp/yelp_review_full_csv.tgz"
#: MD5 of that archive, as published with the URL (torchtext-based loaders, e.g. the Yelp dataset classes that
#: download it with hash checking)
YELP_MD5 = "a4acce1892d0f927165488f62860cabe"
SPLITS = ("train", "test")


def _extractor(split: str) -> Any:
    def convert(archive: Path, out: Path) -> None:
        if file_hash(archive, "md5") != YELP_MD5:
            raise ValueError(f"MD5 is not {YELP_MD5}")
        with tarfile.open(archive) as tar:
            member = next((m for m in tar.getmembers() if m.name.endswith(f"yelp_review_full_csv/{split}.csv")),
                          None)
            if member is None:
                raise ValueError(f"the archive has no yelp_review_full_csv/{split}.csv")
            src = tar.extractfile(member)
            if src is None:
                raise ValueError(f"{member.name} is not a file")
            with open(out, "wb") as fh:
                while chunk := src.read(1 << 20):
                    fh.write(chunk)

    return convert


def _check_split(split: Any) -> str:
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    return str(split)


def load_yelp(split: str = "train", path: str | Path | None = None, allow_download: bool | None = None,
              max_words: int | None = None) -> tuple[list[str], np.ndarray]:
    """Reviews and star ratings (1-5) of one split of ``yelp_review_full``.

    Parameters
    ----------
    split : {"train", "test"}
    path : path-like, optional
        The split's CSV, or a folder holding ``<split>.csv`` (e.g. the extracted ``yelp_review_full_csv``).
    allow_download : bool, optional
        Download the archive (MD5-checked, then cached) when no copy is found; default: the process-wide setting
        (``--allow-download``).
    max_words : int, optional
        Keep only reviews of at most this many words.

    Returns
    -------
    texts : list of str
        Reviews (the data's ``\\n`` escapes replaced by spaces).
    ratings : (n,) int array
        Stars, 1-5.

    Raises
    ------
    DataNotFoundError
        No copy and no download allowed: one line naming the file, where to put it and the flag to download it.
    """
    split = _check_split(split)
    filename = f"yelp_review_full_csv/{split}.csv"
    if path is not None:
        p = Path(path).expanduser()
        if p.is_dir():
            p = next((c for c in (p / f"{split}.csv", p / filename) if c.is_file()), p / f"{split}.csv")
        if not p.is_file():
            raise DataNotFoundError(f"Yelp {split} file {str(p)!r} does not exist; pass the path of "
                                    f"yelp_review_full_csv/{split}.csv (or its folder)")
    else:
        try:
            p = resolve_data(SLUG, filename, url=YELP_URL, allow_download=allow_download, convert=_extractor(split))
        except DataNotFoundError as exc:
            if "not found" not in str(exc):
                raise
            from icml25.core.data import cache_dir

            raise DataNotFoundError(f"Yelp file {filename!r} not found: put it at {cache_dir(SLUG) / filename} "
                                    f"(from {YELP_URL}), pass --set yelp_path=<its folder>, or rerun with "
                                    "--allow-download") from None
    if max_words is not None and (isinstance(max_words, bool) or not isinstance(max_words, int) or max_words < 1):
        raise ValueError(f"max_words must be an integer >= 1, got {max_words!r}")
    texts, ratings = [], []
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    with open(p, newline="", encoding="utf-8") as fh:
        for i, row in enumerate(csv.reader(fh)):
            if len(row) < 2 or not row[0].strip().isdigit() or not 1 <= int(row[0]) <= 5:
                raise ValueError(f"{p}: row {i + 1} is not '<rating 1-5>,<text>' (the yelp_review_full CSV format)")
            text = " ".join(" ".join(row[1:]).replace("\\n", " ").replace('\\"', '"').split())
            if max_words is None or len(text.split()) <= max_words:
                texts.append(text)
                ratings.append(int(row[0]))
    return texts, np.asarray(ratings, dtype=np.int64)


def load_authorship(path: str | Path, text_column: str = "text",
                    author_column: str = "author") -> tuple[list[str], list[str]]:
    """Texts and their authors from a user CSV file with a header row.

    Raises
    ------
    DataNotFoundError
        The file does not exist.
    ValueError
        A column is missing or the file holds no rows.
    """
    if not isinstance(path, (str, Path)) or not str(path).strip():
        raise DataNotFoundError("authorship data: no file given; pass --set authorship_path=<CSV with a header and "
                                f"columns {text_column!r}, {author_column!r}>")
    p = Path(path).expanduser()
    if not p.is_file():
        raise DataNotFoundError(f"authorship file {str(p)!r} does not exist; pass --set authorship_path=<CSV with "
                                f"a header and columns {text_column!r}, {author_column!r}>")
    for name, value in (("text_column", text_column), ("author_column", author_column)):
        if not isinstance(value, str) or not value:
            raise TypeError(f"{name} must be a non-empty column name, got {value!r}")
    texts, authors = [], []
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    with open(p, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        for col in (text_column, author_column):
            if col not in (reader.fieldnames or []):
                raise ValueError(f"authorship file {str(p)!r} has no column {col!r} (columns: {reader.fieldnames})")
        for row in reader:
            text = " ".join(str(row[text_column] or "").split())
            if text:
                texts.append(text)
                authors.append(str(row[author_column]).strip())
    if not texts:
        raise ValueError(f"authorship file {str(p)!r} holds no non-empty text")
    return texts, authors
