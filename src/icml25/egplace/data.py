"""Data of the EGPlace reproduction: the ISPD2005 bookshelf netlists the user provides (paper scale). The shipped
IBM-MS ibm01 netlist is read by :func:`icml25.egplace.netlist.load_ibm01`; the synthetic netlists are
:func:`icml25.egplace.netlist.synthetic_netlist` (seeded)."""

from __future__ import annotations

from pathlib import Path


def ispd_aux(circuit: str, ispd_dir: str = "") -> Path:
    """``<ispd_dir>/<circuit>/<circuit>.aux``, or the same under the icml25 cache (``core.data.resolve_data``)."""
    from icml25.core.data import DataNotFoundError, cache_dir, resolve_data

    if ispd_dir:
        aux = Path(ispd_dir).expanduser() / circuit / f"{circuit}.aux"
        if not aux.exists():
            raise DataNotFoundError(f"{aux} does not exist: put the ISPD2005 bookshelf files of {circuit} "
                                    f"(.aux/.nodes/.nets/.pl/.scl) in {aux.parent}")
        return aux
    try:
        return resolve_data("egplace", f"ispd2005/{circuit}/{circuit}.aux")
    except DataNotFoundError:
        raise DataNotFoundError(f"ISPD2005 {circuit} is not shipped: put its bookshelf files in "
                                f"{cache_dir('egplace') / 'ispd2005' / circuit} or pass --set ispd_dir=<folder> "
                                f"holding {circuit}/{circuit}.aux") from None
