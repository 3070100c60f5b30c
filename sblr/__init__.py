"""sblr: similarity-based classification (SML, SBLR, SparseSBLR) after Ma & Chen."""

from sblr.exceptions import DataError
from sblr.models import SBLRClassifier, SMLClassifier, SparseSBLRClassifier
from sblr.similarity import SimilarityFeaturizer

__all__ = [
    "DataError",
    "SBLRClassifier",
    "SMLClassifier",
    "SimilarityFeaturizer",
    "SparseSBLRClassifier",
]
