"""sblr: similarity-based classification (SML, SBLR, SparseSBLR) after Ma & Chen."""

from sblr import interpret, metrics
from sblr.exceptions import DataError
from sblr.io import Dataset, load_dataset, read_mulan_xml
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
    "metrics",
    "read_mulan_xml",
]
__version__ = "0.1.0"
