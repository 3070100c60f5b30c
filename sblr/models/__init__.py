"""SML, SBLR and SparseSBLR as scikit-learn classifiers.

All three start from the class evidence of :class:`~sblr.SimilarityFeaturizer`
(features scaled to [-1, 1] on the training data; a training row's own term
left out of its evidence).  SML decides from the evidence directly; SBLR and
SparseSBLR fit one binary logistic regression per class k on the normalized
evidence of ALL classes, so ``coef_[k, t]`` (the paper's ``beta_t^k``) says
how much class t's evidence counts for class k.

The rooms, by question (every public name is imported from here): ``_base`` what the
three share (evidence, targets, the multi-label decision; :func:`fits_from_evidence`),
``_sml`` SML's decision from the evidence alone, ``_logistic`` the logistic layer of SBLR
and SparseSBLR.
"""

from sblr.models._base import fits_from_evidence
from sblr.models._logistic import SBLRClassifier, SparseSBLRClassifier
from sblr.models._sml import SMLClassifier, top_k_indicator
from sblr.registry import DASHBOARD_MODELS, get_model

__all__ = [
    "MODELS",
    "SBLRClassifier",
    "SMLClassifier",
    "SparseSBLRClassifier",
    "fits_from_evidence",
    "make_model",
    "top_k_indicator",
]

#: The three models of the paper, by the names the dashboard and the CLI use (their labels in
#: :data:`sblr.registry.DASHBOARD_MODELS`, in its order).
MODELS = {m.label: m.factory for m in DASHBOARD_MODELS}


def make_model(name, *, gamma="scale", lam=1e-4, **params):
    """Build one of :data:`MODELS` by its label, key or entry (:func:`sblr.registry.get_model`);
    ``lam`` is used by the models that take λ (SparseSBLR) only.

    Examples
    --------
    >>> make_model("SparseSBLR", gamma=0.1, lam=1e-2)
    SparseSBLRClassifier(gamma=0.1, lam=0.01)
    >>> make_model("sml", lam=5.0)
    SMLClassifier()
    """
    model = get_model(name)
    if model.takes_lam:
        params["lam"] = lam
    return model.build(gamma=gamma, **params)
