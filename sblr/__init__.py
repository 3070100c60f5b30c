"""sblr: similarity-based classification (SML, SBLR, SparseSBLR) after Ma & Chen."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from sblr.exceptions import DataError

if TYPE_CHECKING:  # imported on first use by __getattr__ below
    from sblr import interpret, metrics
    from sblr.io import Dataset, load_dataset, read_mulan_xml
    from sblr.modelfile import load_model, save_model
    from sblr.models import SBLRClassifier, SMLClassifier, SparseSBLRClassifier
    from sblr.similarity import SimilarityFeaturizer
    from sblr.tuning import SBLRCV, SparseSBLRCV

__all__ = [
    "DataError",
    "Dataset",
    "SBLRCV",
    "SBLRClassifier",
    "SMLClassifier",
    "SimilarityFeaturizer",
    "SparseSBLRCV",
    "SparseSBLRClassifier",
    "interpret",
    "load_dataset",
    "load_model",
    "metrics",
    "read_mulan_xml",
    "save_model",
]
__version__ = "0.1.0"

#: Where the public names are defined.  They are imported on first access (PEP 562), so
#: that ``import sblr`` and the light submodules (sblr.io, sblr.samples, sblr.plots...) do
#: not import scikit-learn, and with it scipy.stats: seconds at start-up.
_LAZY = {
    "Dataset": "sblr.io",
    "load_dataset": "sblr.io",
    "read_mulan_xml": "sblr.io",
    "load_model": "sblr.modelfile",
    "save_model": "sblr.modelfile",
    "SBLRClassifier": "sblr.models",
    "SMLClassifier": "sblr.models",
    "SparseSBLRClassifier": "sblr.models",
    "SimilarityFeaturizer": "sblr.similarity",
    "SBLRCV": "sblr.tuning",
    "SparseSBLRCV": "sblr.tuning",
}


def __getattr__(name):
    """A public name or a submodule (``sblr.metrics``, ``sblr.models``...), imported now."""
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
    elif name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    else:
        try:
            value = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
