"""The stage functions of the reproduction (called by ``reproduce.py``)."""
