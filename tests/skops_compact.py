"""Model files made faster for the test that makes thousands (the mutation property of
tests/test_modelfile_rules.py: 58 -> 36 s alone, its two children together). skops writes a
file's schema with ``json.dumps(state, indent=2)``, which Python encodes without its C
encoder (~26 ms a file, a third of that test's time). Inside :func:`compact_schema` the same
schema is written without the indentation; the reader parses both alike, and every other
byte of the file is skops' own."""

from __future__ import annotations

import contextlib
import json


class _CompactJson:
    @staticmethod
    def dumps(obj, indent=None, **kwargs):
        return json.dumps(obj, **kwargs)


@contextlib.contextmanager
def compact_schema():
    """Model files written in the block (skops' ``dumps``, ``sblr.modelfile.model_bytes``)
    have their schema compact. (Where skops keeps no ``json`` there, nothing changes.)"""
    from skops.io import _persist

    real = getattr(_persist, "json", None)
    if real is not None:
        _persist.json = _CompactJson
    try:
        yield
    finally:
        if real is not None:
            _persist.json = real
