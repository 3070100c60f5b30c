"""SML: how a row is classified from its class evidence alone, with no layer on top.

:class:`SMLClassifier` takes the class with the most evidence (multi-class) or, for
multi-label data, the top ``xi(x)`` classes, ``xi`` the label-set size of the training
rows most like ``x`` (Rossi et al.); its scores are differences on a scale that keeps
every evidence value apart.  Public through :mod:`sblr.models`.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit
from sklearn.base import _fit_context
from sklearn.utils.validation import check_is_fitted

from sblr.models._base import (
    _FORCE_TOP1_CONSTRAINT,
    _THRESHOLD_CONSTRAINT,
    _logit,
    _SimilarityClassifier,
)
from sblr.similarity import (
    NONNEGATIVE_KERNELS,
    label_indicator,
)


class SMLClassifier(_SimilarityClassifier):
    """Similarity-based multi-label classifier SML (Rossi et al. 2018; Ma & Chen Sec. 3.1).

    Multi-class: ``argmax_k f_k(x)``.  Multi-label: the predicted set size
    ``xi(x)`` is the label-set size s whose training rows (grouped by label-set
    size) have the largest similarity sum to x; the ``xi(x)`` classes with the
    largest ``f_k(x)`` are predicted.

    Parameters
    ----------
    gamma : float or "scale", default="scale"
        RBF width; ``"scale"`` is ``1 / (n_features * X.var())`` on the scaled
        training data.
    kernel : {"rbf", "laplacian", "linear", "cosine"} or callable, default="rbf"
    normalize : {"sum", "mean"}, default="sum"
        Rank classes by raw evidence sums (the paper's SML) or by mean
        similarity per class row.
    working_memory : float, default=None
        MiB per block of similarities (None: 256).
    approx : {"auto", None, "nystroem", "rff"}, default="auto"
        Evidence mode (see :class:`~sblr.SimilarityFeaturizer`): ``"auto"`` is
        exact below 20,000 training rows and Nystroem from there on.
    n_components : int, default=500
        Size of the approximate feature map (only when approximating).
    random_state : int or None, default=0
        Seed of the approximate feature map (only when approximating).
    threshold : None, float, array-like of shape (n_classes,) or str, default="micro_f1"
        Multi-label decision.  None: SML's own rule (Rossi et al.; the paper's): the top
        ``xi(x)`` classes, ``xi(x)`` the label-set size whose training rows are most similar
        to x (on data where most rows have no label that size is 0 for every row: a 19-label
        shape with half its rows unlabelled got no label at all, micro-F1 0).  A number (or
        one per class): every class with ``predict_proba >= threshold``.  A rule of
        :mod:`sblr.decision` (``"pcut"``, ``"pcut_per_class"``, ``"f1"``, ``"micro_f1"``):
        cuts fitted on the training rows' leave-one-out probabilities.  Multi-class data
        always takes the class with the most evidence.
    force_top1 : bool or "auto", default="auto"
        Multi-label: True, a row given no label gets its most probable class; "auto", with a
        ``threshold`` rule, when that class's probability reaches the fill cut ``fill_cut_``
        fitted on the same held-out rows (:func:`sblr.decision.fit_fill_cut`: as many rows
        left empty as training rows have no label); False, never.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    multilabel_ : bool
    featurizer_ : SimilarityFeaturizer
    gamma_ : float
    approx_ : None, "nystroem" or "rff"
        The evidence mode actually used.
    threshold_ : ndarray of shape (n_classes,) or None
        The cut of each class's probability (None: SML's own rule, or multi-class data).
    set_sizes_ : ndarray of shape (n_sizes,)
        Label-set sizes seen in training (multi-label only).
    score_scale_ : float
        Standard deviation of the evidence of (at most 500) training rows
        (multi-label only), the scale of :meth:`predict_proba`.
    n_features_in_ : int

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> from sblr import SMLClassifier
    >>> X, y = load_wine(return_X_y=True)
    >>> clf = SMLClassifier().fit(X[::2], y[::2])
    >>> round(clf.score(X[1::2], y[1::2]), 2)
    0.94
    """

    #: Its multi-label decision without a ``threshold`` (see :class:`sblr.decision.Decision`).
    _own_rule = "SML's own rule: the top ξ(x) classes"

    def __init__(
        self,
        *,
        gamma="scale",
        kernel="rbf",
        normalize="sum",
        working_memory=None,
        approx="auto",
        n_components=500,
        random_state=0,
        threshold="micro_f1",
        force_top1="auto",
    ):
        self.gamma = gamma
        self.kernel = kernel
        self.normalize = normalize
        self.working_memory = working_memory
        self.approx = approx
        self.n_components = n_components
        self.random_state = random_state
        self.threshold = threshold
        self.force_top1 = force_top1

    _parameter_constraints = {
        **_SimilarityClassifier._parameter_constraints,
        "threshold": [*_THRESHOLD_CONSTRAINT, None],
        "force_top1": _FORCE_TOP1_CONSTRAINT,
    }

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Store the training rows and, for multi-label data, the set-size groups.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_classes)
            Class labels, or a 0/1 multi-label indicator matrix.

        Returns
        -------
        self
        """
        self._fit_featurizer(X, y)
        if self.multilabel_:
            self.set_sizes_, self._size_groups = label_indicator(
                self.featurizer_.Y_fit_.sum(axis=1)
            )
            # a scale for predict_proba only: the spread of the evidence of (at most 500)
            # training rows, so fit stays cheap on large data
            Xs = self.featurizer_.X_fit_
            rows = np.random.default_rng(0).permutation(Xs.shape[0])[:500]
            sample = self.featurizer_._evidence(Xs[rows], None, None, False)
            scaled = _ranking_scale(sample, self.kernel)
            spread = float(scaled[scaled > _LOG_ZERO].std()) if (scaled > _LOG_ZERO).any() else 0
            self.score_scale_ = spread if spread > 0 else 1.0
        self._fit_decision_from(self._loo_proba, self.featurizer_.Y_fit_)
        return self

    def _loo_proba(self):
        """:meth:`predict_proba` of the training rows, each left out of its own evidence
        (its class sums and its set-size sums)."""
        feat = self.featurizer_
        F = feat.training_evidence()
        if not self.multilabel_:
            return _evidence_share(F)
        sizes = self.set_sizes_[
            np.argmax(feat.training_evidence(Y=self._size_groups, normalize="sum"), axis=1)
        ]
        G = _ranking_scale(F, self.kernel)
        return expit((G - _cut_between(G, sizes)[:, None]) / self.score_scale_)

    def decision_function(self, X):
        """Class evidence, shifted per row so that positive means predicted.

        Multi-class (3+ classes): the evidence ``f(x)`` itself.  Two classes:
        ``(f_1 - f_0) / (f_1 + f_0)`` (0 when both are 0), positive for
        ``classes_[1]``.  Multi-label: ``g_k(x) - t(x)`` with ``g = log f`` (with the rbf and
        laplacian kernels, whose evidence is never negative; ``f`` itself with the linear,
        cosine or a callable kernel) and ``t(x)`` midway between the ``xi(x)``-th and
        ``(xi(x)+1)``-th largest ``g``, so each row keeps its ranking (ranking metrics equal
        those of the evidence) and exactly the predicted classes score above 0 (barring
        exact ties at the cut).  With a ``threshold``: ``logit(predict_proba) -
        logit(threshold_)``, again positive exactly where predicted.  The logarithm keeps
        evidence of very different sizes apart:
        ``f - t`` rounded 6e-78 and 2e-174 to the same -0.5 beside a cut of 0.5, a tie the
        ranking metrics then counted against the model; an evidence of exactly 0 gets
        ``log`` = -800, below that of any positive double.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Query rows, with the training data's features (scaled by the training
            data's ranges inside).

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes) or (n_samples,)
        """
        X = self._validated(X)
        if self.multilabel_ and getattr(self, "threshold_", None) is not None:
            # with a cut: the probability's logit minus the cut's, positive where predicted
            return self._own_rule_scores(X) / self.score_scale_ - _logit(self.threshold_)
        F = self.featurizer_.transform(X)
        if self.multilabel_:
            return self._own_rule_scores(X, F)
        if self._binary():
            return 2.0 * _evidence_share(F)[:, 1] - 1.0
        return F

    def _own_rule_scores(self, X, F=None):
        """``g(x) - t(x)``: SML's own multi-label scores (see :meth:`decision_function`)."""
        F = self.featurizer_.transform(X) if F is None else F
        G = _ranking_scale(F, self.kernel)
        return G - _cut_between(G, self._set_size(X))[:, None]

    def predict_proba(self, X):
        """Scores in [0, 1]; SML has no probability model, so read them as ranks.

        Multi-class: the share of the (non-negative) evidence each class holds
        (rows sum to 1).  Multi-label: ``sigmoid(decision_function / s)``, with
        ``s = score_scale_`` the spread of the training rows' (log) evidence, so a class is
        predicted exactly when its score is at least 0.5.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Query rows, with the training data's features (scaled by the training
            data's ranges inside).

        Returns
        -------
        P : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        if self.multilabel_:
            return expit(self._own_rule_scores(self._validated(X)) / self.score_scale_)
        return _evidence_share(self.evidence(X))

    def predict(self, X):
        """Top class (multi-class) or the top ``xi(x)`` classes (multi-label; with a
        ``threshold``, every class whose probability reaches its cut ``threshold_``).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Query rows, with the training data's features (scaled by the training
            data's ranges inside).

        Returns
        -------
        y : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        X = self._validated(X)
        if self.multilabel_ and getattr(self, "threshold_", None) is not None:
            return self._decide(self.predict_proba(X))
        F = self.featurizer_.transform(X)
        if not self.multilabel_:
            return self.classes_[np.argmax(F, axis=1)]
        Yp = top_k_indicator(F, self._set_size(X))
        if self.force_top1 is True:
            empty = Yp.sum(axis=1) == 0
            Yp[empty, np.argmax(F[empty], axis=1)] = 1
        return Yp

    def predict_set_size(self, X):
        """Predicted label-set size ``xi(x)`` (multi-label only).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Query rows, with the training data's features (scaled by the training
            data's ranges inside).

        Returns
        -------
        xi : ndarray of shape (n_samples,)
        """
        return self._set_size(self._validated(X))

    def _set_size(self, X):
        if not self.multilabel_:
            raise AttributeError("The set size xi(x) is defined for multi-label data only.")
        S = self.featurizer_.query_evidence(X, Y=self._size_groups, normalize="sum")
        return self.set_sizes_[np.argmax(S, axis=1)]


#: The log of an evidence of exactly 0 (below log(5e-324) = -744.4, the smallest double).
_LOG_ZERO = -800.0


def _ranking_scale(F, kernel):
    """A scale on which differences keep every evidence value apart (see
    SMLClassifier.decision_function): ``log F`` for a kernel whose evidence is never negative
    (an evidence <= 0 -> :data:`_LOG_ZERO`; approximate evidence can dip below 0), else ``F``.
    Decided by the kernel, so a row's score never depends on the other rows asked with it."""
    F = np.asarray(F, dtype=np.float64)
    if not (isinstance(kernel, str) and kernel in NONNEGATIVE_KERNELS):
        return F
    positive = F > 0
    return np.where(positive, np.log(np.where(positive, F, 1.0)), _LOG_ZERO)


def _cut_between(F, xi):
    """Per row, the midpoint between the xi-th and (xi+1)-th largest value."""
    desc = -np.sort(-F, axis=1)
    padded = np.hstack([desc[:, :1] + 1.0, desc, desc[:, -1:] - 1.0])
    rows = np.arange(F.shape[0])
    return 0.5 * (padded[rows, xi] + padded[rows, xi + 1])


def _evidence_share(F):
    Fp = np.maximum(F, 0.0)
    total = Fp.sum(axis=1, keepdims=True)
    uniform = np.full_like(Fp, 1.0 / Fp.shape[1])
    return np.divide(Fp, total, out=uniform, where=total > 0)


def top_k_indicator(scores, k):
    """0/1 matrix marking the ``k[i]`` largest scores of each row (ties: lower index first).

    Examples
    --------
    >>> top_k_indicator(np.array([[0.1, 0.7, 0.2], [0.5, 0.5, 0.0]]), np.array([2, 1]))
    array([[0, 1, 1],
           [1, 0, 0]])
    """
    order = np.argsort(-scores, axis=1, kind="stable")
    ranks = np.empty_like(order)
    rows = np.arange(scores.shape[0])[:, None]
    ranks[rows, order] = np.arange(scores.shape[1])[None, :]
    return (ranks < np.asarray(k)[:, None]).astype(int)
