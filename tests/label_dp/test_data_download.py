"""The canonical downloads of the label_dp data sets are converted to the shipped layout (core.data's ``convert``).

UCI's ``adult.data`` and the Pima CSV at ``PIMA_URL`` have no header row; a user with internet whose cache is empty gets
them converted, so that ``load_adult`` / ``load_pima`` read them like the shipped copies. Served here from ``file://``
URLs built from the shipped copies themselves (header removed, UCI's ``", "`` separator and ``?`` rows restored).
"""

from __future__ import annotations

import pytest

from icml25.core.data import resolve_data, shipped_path
from icml25.core.errors import DataNotFoundError
from icml25.label_dp.data import adult_from_uci, load_adult, load_pima, pima_from_raw


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML25_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _download(tmp_path, name, text, convert):
    raw = tmp_path / f"raw-{name}"
    raw.write_text(text, encoding="utf-8")
    return resolve_data("label_dp_download_test", name, url=raw.as_uri(), allow_download=True, convert=convert)


def test_uci_adult_becomes_the_shipped_layout(tmp_path, cache):
    shipped = shipped_path("label_dp", "adult.csv").read_text(encoding="utf-8").splitlines()
    head = shipped[1:41]
    uci = [", ".join(line.split(",")) for line in head]
    missing = uci[0].split(", ")
    missing[6] = "?"  # occupation unknown: UCI's missing code, dropped like the 2,399 such rows of the shipped copy
    text = "\n".join([uci[0], ", ".join(missing), *uci[1:]]) + "\n\n"
    got = _download(tmp_path, "adult.csv", text, adult_from_uci)
    assert got.parent == cache / "label_dp_download_test"
    assert got.read_text(encoding="utf-8").splitlines() == shipped[:41]
    X, y, names = load_adult(path=got, standardise=False)
    X0, y0, _ = load_adult(standardise=False)
    assert X.shape == (40, 4) and (X == X0[:40]).all() and (y == y0[:40]).all()


def test_headerless_pima_becomes_the_shipped_file(tmp_path, cache):
    shipped = shipped_path("label_dp", "pima_diabetes.csv").read_text(encoding="utf-8")
    body = "\n".join(shipped.splitlines()[1:]) + "\n"
    got = _download(tmp_path, "pima_diabetes.csv", body, pima_from_raw)
    assert got.read_text(encoding="utf-8").splitlines() == shipped.splitlines()
    X, y, _ = load_pima(path=got)
    X0, y0, _ = load_pima()
    assert (X == X0).all() and (y == y0).all()


def test_a_download_of_another_file_is_discarded_with_a_clear_error(tmp_path, cache):
    with pytest.raises(DataNotFoundError, match="not the expected 'pima_diabetes.csv'.*line 1 has 3 fields"):
        _download(tmp_path, "pima_diabetes.csv", "<html>,not,data\n", pima_from_raw)
    assert not list((cache / "label_dp_download_test").glob("*"))  # nothing half-written is left in the cache
