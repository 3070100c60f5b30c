"""SBLR and SparseSBLR: how much does each class's evidence count for each class?

One binary logistic regression per class k on the normalized evidence of all classes
(``coef_[k, t]``, the paper's ``beta_t^k``), ridge-penalized (:class:`SBLRClassifier`) or
L1-penalized (:class:`SparseSBLRClassifier`), solved by :func:`sblr.logistic.solve_layer`;
the out-of-fold probabilities a threshold rule is fitted on.  Public through
:mod:`sblr.models`.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from scipy.special import expit, log_expit, logsumexp
from sklearn.base import _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import KFold
from sklearn.utils.validation import check_is_fitted

from sblr._validation import Interval, StrOptions
from sblr.exceptions import DataError
from sblr.logistic import solve_layer
from sblr.models._base import (
    _FORCE_TOP1_CONSTRAINT,
    _THRESHOLD_CONSTRAINT,
    _logit,
    _SimilarityClassifier,
)
from sblr.similarity import (
    check_evidence,
)

#: KKT violation above which a fit is reported as not converged (never seen in practice).
_KKT_WARN = 1e-3


#: Folds of the out-of-fold probabilities a threshold rule is fitted on (each refits only the
#: logistic layer, warm-started from the fit on all rows: a few Newton steps).
_OOF_FOLDS = 5
#: KKT tolerance of those fits: a cut needs probabilities to a few digits, not β to 1e-6 (on
#: a 174-label shape 1e-4 left the cuts as at 1e-6 to 3 digits; 1e-3 moved one by 0.1).
_OOF_TOL = 1e-4


class _LogisticSimilarityClassifier(_SimilarityClassifier):
    """SBLR and SparseSBLR: the logistic layer on top of the evidence.

    The ``*_from_evidence`` methods work on precomputed evidence, so a caller
    that caches the evidence (a lambda path, a tuning loop, the dashboard's
    lambda slider) refits and applies only the cheap logistic layer.
    """

    #: See :func:`fits_from_evidence`.
    _fits_from_evidence = True

    _parameter_constraints = {
        **_SimilarityClassifier._parameter_constraints,
        "ridge": [Interval(Real, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "force_top1": _FORCE_TOP1_CONSTRAINT,
        "threshold": list(_THRESHOLD_CONSTRAINT),
    }

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Compute the leave-one-out evidence and fit one logistic model per class.

        Multi-label data: then fit ``threshold_``, the cut of each class's probability, by the
        ``threshold`` rule on out-of-fold probabilities of the training rows (5 folds; each
        refits only the layer, on the same leave-one-out evidence).

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
        return self._fit_layer(self.featurizer_.training_evidence())

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_from_evidence(self, featurizer, F, *, warm_start=None, progress=None, cuts=True):
        """Fit only the logistic layer, on a fitted featurizer's training evidence.

        ``fit(X, y)`` equals ``fit_from_evidence(f, f.training_evidence())`` with
        ``f = SimilarityFeaturizer(...).fit(X, y)`` built with this estimator's
        kernel, gamma and normalize.

        Parameters
        ----------
        featurizer : SimilarityFeaturizer
            Fitted; kept as ``featurizer_`` (not copied).
        F : ndarray of shape (n_samples, n_classes)
            ``featurizer.training_evidence()``.
        warm_start : fitted estimator of the same data, optional
            Start the solver from its ``coef_`` / ``intercept_`` (a lambda path).
        progress : callable, optional
            ``progress(done, total)`` after each class's problem (see
            :func:`sblr.logistic.fit_logistic_layer`).
        cuts : bool, default True
            Fit the decision too (``threshold_``, see :meth:`fit_decision`).  False: only β,
            for a view of the coefficients that never decides (a λ path, a β heatmap): the
            model then has no ``threshold_`` until :meth:`fit_decision`, and a multi-label
            ``predict`` raises ``NotFittedError``.

        Returns
        -------
        self

        Raises
        ------
        DataError
            ``F`` holds NaN or inf.
        ValueError
            ``F`` does not have one row per training row and one column per class.
        """
        return self._fit_from_evidence(featurizer, F, warm_start, progress, cuts)

    def _fit_from_evidence(self, featurizer, F, warm_start=None, progress=None, cuts=True):
        F = np.asarray(F, dtype=np.float64)
        expected = featurizer.Y_fit_.shape
        if F.shape != expected:
            raise ValueError(
                f"F must be the featurizer's training evidence, of shape {expected} (one row "
                f"per training row, one column per class); got {F.shape}."
            )
        check_evidence(F)
        self.featurizer_ = featurizer
        self.classes_ = featurizer.classes_
        self.gamma_ = featurizer.gamma_
        self.approx_ = featurizer.approx_
        self.n_features_in_ = featurizer.n_features_in_
        self.multilabel_ = featurizer.multilabel_
        if hasattr(featurizer, "feature_names_in_"):
            self.feature_names_in_ = featurizer.feature_names_in_
        return self._fit_layer(F, warm_start, progress, cuts)

    def _fit_layer(self, F, warm_start=None, progress=None, cuts=True):
        Y = self.featurizer_.Y_fit_
        return self.fit_layer(F, Y, warm_start=warm_start, progress=progress, cuts=cuts)

    def fit_decision(self, F, Y=None, *, sample_weight=None, progress=None):
        """Fit ``threshold_``, the decision of a fitted layer, on the rows ``F`` it was
        fitted on: multi-label data with a ``threshold`` rule take the rule's cuts on
        out-of-fold probabilities of those rows (5 folds, each refitting only the layer,
        warm-started from ``coef_``); a numeric ``threshold`` is checked into one cut per
        class; multi-class data get None (the most probable class).  ``fit`` does this
        itself; call it after ``fit_from_evidence(..., cuts=False)``.

        Parameters
        ----------
        F : ndarray of shape (n_rows, n_classes)
            The evidence the layer was fitted on (``featurizer_.training_evidence()``).
        Y : ndarray of shape (n_rows, n_classes), optional
            Their 0/1 labels (default ``featurizer_.Y_fit_``).
        sample_weight : ndarray of shape (n_rows,), optional
            The rows' weights in the fit.
        progress : callable, optional
            ``progress(done, total)`` after each class's problem of the out-of-fold layer
            fits (``total``: 5 × the classes; multi-label data with a rule only).

        Returns
        -------
        self
        """
        check_is_fitted(self, "coef_")
        F = np.asarray(F, dtype=np.float64)
        Y = self.featurizer_.Y_fit_ if Y is None else np.asarray(Y)
        if F.shape != Y.shape or F.shape[1] != self.coef_.shape[1]:
            raise ValueError(
                f"F must be the evidence the layer was fitted on, of shape {Y.shape}; got "
                f"{F.shape}."
            )
        weight = None if sample_weight is None else np.asarray(sample_weight, np.float64)
        self._fit_decision_from(lambda: self._out_of_fold_proba(F, Y, weight, progress), Y)
        return self

    def _layer_lam(self, F, Y, sample_weight=None):
        """The L1 strength of each class's problem: one number (0 for SBLR), or per class."""
        return 0.0

    def _out_of_fold_proba(self, F, Y, sample_weight=None, progress=None):
        """Probabilities of the rows ``F`` (evidence) from layers fitted without them: 5 folds,
        each warm-started from the current ``coef_`` (multi-label data); ``progress(done,
        total)`` after each class's problem of each fold."""
        n, m = F.shape
        P = np.empty(Y.shape, dtype=np.float64)
        if n < 2:
            return expit(F @ self.coef_.T + self.intercept_)
        opts = {"ridge": self.ridge, "tol": max(self.tol, _OOF_TOL), "max_iter": self.max_iter}
        folds = KFold(min(_OOF_FOLDS, n), shuffle=True, random_state=0)
        for j, (fit_rows, held) in enumerate(folds.split(F)):
            if progress is not None:
                opts["progress"] = lambda done, q, j=j: progress(j * q + done, folds.n_splits * q)
            weight = None if sample_weight is None else sample_weight[fit_rows]
            if weight is not None and not weight.sum() > 0:
                P[held] = expit(F[held] @ self.coef_.T + self.intercept_)
                continue
            # the fold's rows gathered once, column-major, and centred in place by the solver
            F_fit = np.take(F, fit_rows, axis=0, out=np.empty((len(fit_rows), m), order="F"))
            Y_fit = Y[fit_rows]
            coef, intercept, _, _ = solve_layer(
                F_fit,
                Y_fit,
                self.coef_,
                self.intercept_,
                lam=self._layer_lam(F_fit, Y_fit, weight),
                sample_weight=weight,
                overwrite_F=True,
                **opts,
            )
            with np.errstate(over="ignore"):
                P[held] = expit(F[held] @ coef.T + intercept)
        return P

    def fit_layer(
        self,
        F,
        Y,
        *,
        sample_weight=None,
        warm_start=None,
        exact_steps=False,
        progress=None,
        cuts=True,
    ):
        """Refit only the logistic layer, on evidence ``F`` of any rows with their labels ``Y``.

        For resampling the rows of a fitted model (``sblr.stability``): the
        featurizer and its attributes are kept, ``coef_``, ``intercept_``,
        ``n_iter_`` and ``kkt_violation_`` are replaced.

        Parameters
        ----------
        F : ndarray of shape (n_rows, n_classes)
            Normalized class evidence of the rows.
        Y : ndarray of shape (n_rows, n_classes)
            Their 0/1 class indicator (``featurizer_.Y_fit_`` order).
        sample_weight : ndarray of shape (n_rows,), optional
            Weights of the rows (integer weights: the rows repeated; see
            :func:`sblr.logistic.solve_layer`).
        warm_start : fitted estimator, optional
            Start the solver from its ``coef_`` / ``intercept_``.
        exact_steps : bool, default False
            See :func:`sblr.logistic.fit_logistic_layer` (for a warm start near the optimum).
        progress : callable, optional
            ``progress(done, total)`` after each class's problem (see
            :func:`sblr.logistic.fit_logistic_layer`).
        cuts : bool, default True
            Fit ``threshold_`` on these rows too (:meth:`fit_decision`); False leaves the
            model without a decision (see :meth:`fit_from_evidence`).

        Returns
        -------
        self
        """
        F = np.asarray(F, dtype=np.float64)
        Y = np.asarray(Y)
        for attr in ("threshold_", "fill_cut_"):  # a refit never keeps another fit's cuts
            self.__dict__.pop(attr, None)
        lam = self._layer_lam(F, Y if not self._binary() else Y[:, 1:], sample_weight)
        opts = {"lam": lam, "ridge": self.ridge, "tol": self.tol}
        opts.update(max_iter=self.max_iter, progress=progress)
        opts.update(sample_weight=sample_weight, exact_steps=exact_steps)
        coef_init = None if warm_start is None else warm_start.coef_
        intercept_init = None if warm_start is None else warm_start.intercept_
        if self._binary():
            # The problems for the two classes are mirror images (y -> 1 - y,
            # beta -> -beta leaves the loss and both penalties unchanged): solve
            # one, mirror it, so that both rows agree exactly.
            if warm_start is not None:
                coef_init, intercept_init = coef_init[1:], intercept_init[1:]
            c, b, it, kkt = solve_layer(F, Y[:, 1:], coef_init, intercept_init, **opts)
            coef, intercept = np.vstack([-c, c]), np.r_[-b, b]
            n_iter, kkt = np.r_[it, it], np.r_[kkt, kkt]
        else:
            coef, intercept, n_iter, kkt = solve_layer(F, Y, coef_init, intercept_init, **opts)
        self.coef_, self.intercept_ = coef, intercept
        self.n_iter_, self.kkt_violation_ = n_iter, kkt
        if np.ndim(lam):
            self.lams_ = np.asarray(lam, dtype=np.float64)
        if cuts:
            self.fit_decision(F, Y, sample_weight=sample_weight)
        if kkt.max() > _KKT_WARN:
            warnings.warn(
                f"The logistic layer did not converge (KKT violation {kkt.max():.1e}); "
                "increase max_iter.",
                ConvergenceWarning,
                stacklevel=3,
            )
        return self

    def logits(self, X):
        """Per-class logits ``beta_0^k + sum_t beta_t^k f̄_t(x)``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Query rows, with the training data's features (scaled by the training
            data's ranges inside).

        Returns
        -------
        eta : ndarray of shape (n_samples, n_classes)
        """
        return self.logits_from_evidence(self.evidence(X))

    def logits_from_evidence(self, F):
        """Logits from precomputed query evidence ``F = evidence(X)``.

        Raises :class:`~sblr.DataError` when ``F`` holds NaN or inf, or when
        the logits overflow (``argmax`` of NaN would silently be class 0).
        """
        check_is_fitted(self)
        F = check_evidence(F)
        if F.ndim != 2 or F.shape[1] != self.coef_.shape[1]:
            raise ValueError(
                f"F must have one column per class ({self.coef_.shape[1]}); got shape {F.shape}."
            )
        with np.errstate(over="ignore", invalid="ignore"):
            eta = F @ self.coef_.T + self.intercept_
        if not np.isfinite(eta).all():
            raise DataError(
                "The logits overflow: the evidence is too large for the fitted coefficients "
                f"(largest |f| = {np.abs(F).max():.3g}). Rescale the features."
            )
        return eta

    def decision_function(self, X):
        """Logits per class, multi-label: minus the logit of each class's cut ``threshold_``
        (positive exactly where predicted; one cut for every class leaves the ranking of a
        row's classes as the logits'); for two classes ``logit_1 - logit_0``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Query rows, with the training data's features (scaled by the training
            data's ranges inside).

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes) or (n_samples,)
        """
        return self.decision_from_evidence(self.evidence(X))

    def decision_from_evidence(self, F):
        """:meth:`decision_function` from precomputed query evidence."""
        eta = self.logits_from_evidence(F)
        if self._binary():
            return eta[:, 1] - eta[:, 0]
        if self.multilabel_ and self._cuts() is not None:
            return eta - _logit(self._cuts())
        return eta

    def predict_proba(self, X):
        """Posterior ``pi_k = sigmoid(logit_k)``.

        Multi-label: each class's own probability of relevance.  Multi-class:
        the per-class probabilities divided by their sum, so rows sum to 1 (the
        argmax, the paper's decision, is unchanged).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Query rows, with the training data's features (scaled by the training
            data's ranges inside).

        Returns
        -------
        P : ndarray of shape (n_samples, n_classes)
        """
        return self.proba_from_evidence(self.evidence(X))

    def proba_from_evidence(self, F):
        """:meth:`predict_proba` from precomputed query evidence."""
        eta = self.logits_from_evidence(F)
        if self.multilabel_:
            return expit(eta)
        # pi_k / sum_j pi_j in log space: every pi_k may underflow to 0 (all logits < -745)
        log_pi = log_expit(eta)
        return np.exp(log_pi - logsumexp(log_pi, axis=1, keepdims=True))

    def predict(self, X):
        """Multi-label: every class with ``pi_k >= threshold_[k]``; multi-class: ``argmax_k pi_k``.

        With ``force_top1`` a multi-label row whose set would be empty gets
        its most probable class.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Query rows, with the training data's features (scaled by the training
            data's ranges inside).

        Returns
        -------
        y : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        return self.predict_from_evidence(self.evidence(X))

    def predict_from_evidence(self, F):
        """:meth:`predict` from precomputed query evidence."""
        eta = self.logits_from_evidence(F)
        if not self.multilabel_:
            return self.classes_[np.argmax(eta, axis=1)]
        return self._decide(expit(eta))


class SBLRClassifier(_LogisticSimilarityClassifier):
    """Similarity-Based Logistic Regression (Ma & Chen, Eq. 9).

    For each class k, a binary logistic regression of ``y_k`` on the
    normalized evidence of all classes, ``z = [1, f̄_1(x), ..., f̄_m(x)]``, fitted
    by maximum likelihood.  A tiny ridge on the standardized coefficients,
    ``ridge / 2 * sum_t Var(f̄_t) * beta_t^2`` on the mean log-loss (``ridge =
    1e-6``), keeps the estimate finite when a class is perfectly separable
    whatever the scale of the evidence; the intercept is not penalized.

    Cost: every class is solved by Newton steps on all m evidence columns, about
    ``8 · n · (m + 1)² · m`` multiply-adds a fit (:meth:`sblr.registry.Method.layer_cost`),
    cubic in the classes: 1e14 at 983 labels and 12,920 rows (hours), where
    :class:`SparseSBLRClassifier` solves each class on the few columns it keeps (about
    ``3 · n · m²``, 4e10 there).  With hundreds of labels use SparseSBLR.

    Parameters
    ----------
    gamma : float or "scale", default="scale"
    kernel : {"rbf", "laplacian", "linear", "cosine"} or callable, default="rbf"
    normalize : {"log_rate", "mean", "sum"}, default="log_rate"
        The layer's input ``f̄_t(x)``: ``"log_rate"``, the log of the kernel-weighted rate of
        class t among the training rows near x, ``log(f_t(x) / sum_j Phi(x, x_j))`` (every
        training row in the total), in which SML's rule (rank a row's classes by ``f_k``) is
        the point ``beta = a * I`` of the model at every gamma; ``"mean"``, the paper's mean
        similarity to the class's rows (Ma & Chen, Eq. 9), which at large gamma is tiny and
        spiky for training rows and leaves the layer near the base rates; ``"sum"``, the raw
        sums.  See docs/benchmarks.md for the measurements.
    ridge : float, default=1e-6
    tol : float, default=1e-6
        KKT tolerance of each logistic fit.
    max_iter : int, default=100
        Newton steps per class.
    force_top1 : bool or "auto", default="auto"
        Multi-label: True, a row no class reaches its cut for gets its most probable class;
        "auto", with a ``threshold`` rule, when that class's probability reaches the fill cut
        ``fill_cut_`` fitted on the same out-of-fold probabilities
        (:func:`sblr.decision.fit_fill_cut`: as many rows left empty as training rows have no
        label); False, never.
    threshold : float, array-like of shape (n_classes,) or str, default="micro_f1"
        Multi-label decision: class k is predicted when ``pi_k >= threshold_[k]``.  A number
        (or one per class) is used as given (0.5 is the paper's decision).  A rule of
        :mod:`sblr.decision` fits the cuts on out-of-fold probabilities of the training rows:
        ``"micro_f1"`` (one cut maximizing micro-F1), ``"pcut"`` (one cut matching the label
        cardinality, MEKA's PCut1), ``"pcut_per_class"``, ``"f1"`` (per class).  Not used by
        multi-class data (the most probable class).
    working_memory : float, default=None
    approx : {"auto", None, "nystroem", "rff"}, default="auto"
        Evidence mode (see :class:`~sblr.SimilarityFeaturizer`): ``"auto"`` is
        exact below 20,000 training rows and Nystroem from there on.
    n_components : int, default=500
        Size of the approximate feature map (only when approximating).
    random_state : int or None, default=0
        Seed of the approximate feature map (only when approximating).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (n_classes, n_classes)
        ``coef_[k, t] = beta_t^k``: weight of class t's evidence in class k's logit.
    intercept_ : ndarray of shape (n_classes,)
    n_iter_ : ndarray of shape (n_classes,)
    kkt_violation_ : ndarray of shape (n_classes,)
    threshold_ : ndarray of shape (n_classes,) or None
        The cut of each class's probability (multi-label data; None for multi-class).
    multilabel_ : bool
    featurizer_ : SimilarityFeaturizer
    gamma_ : float
    approx_ : None, "nystroem" or "rff"
        The evidence mode actually used.
    n_features_in_ : int

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> from sblr import SBLRClassifier
    >>> X, y = load_wine(return_X_y=True)
    >>> clf = SBLRClassifier().fit(X[::2], y[::2])
    >>> clf.coef_.shape, round(clf.score(X[1::2], y[1::2]), 2)
    ((3, 3), 0.97)
    """

    def __init__(
        self,
        *,
        gamma="scale",
        kernel="rbf",
        normalize="log_rate",
        ridge=1e-6,
        tol=1e-6,
        max_iter=100,
        force_top1="auto",
        threshold="micro_f1",
        working_memory=None,
        approx="auto",
        n_components=500,
        random_state=0,
    ):
        self.gamma = gamma
        self.kernel = kernel
        self.normalize = normalize
        self.ridge = ridge
        self.tol = tol
        self.max_iter = max_iter
        self.force_top1 = force_top1
        self.threshold = threshold
        self.working_memory = working_memory
        self.approx = approx
        self.n_components = n_components
        self.random_state = random_state


class SparseSBLRClassifier(_LogisticSimilarityClassifier):
    """SBLR with an L1 penalty: irrelevant classes get ``beta = 0`` (Ma & Chen, Eq. 10).

    For each class k::

        min (1/n) sum_i logloss_i(beta_0^k, beta^k) + lam * ||beta^k||_1

    with the intercept ``beta_0^k`` NOT penalized (the SLEP convention).
    ``lam >= lam_max`` (see :func:`sblr.logistic.lambda_max`) gives ``beta = 0``.

    Parameters
    ----------
    gamma : float or "scale", default="scale"
    lam : float, default=1e-4
        L1 strength ``lambda`` (with ``lam_scale="relative"``: its share of each class's
        ``lambda_max``), per nat of log rate with the default ``normalize``.  1e-4: at the
        default gamma it decided best of 1e-4, 1e-3 and 3e-3 on a birds-shaped 19-label and a
        medical-shaped 45-label set with rare labels (micro-F1 0.948 / 0.889 against 0.933 /
        0.495 at 3e-3, which zeroes every weight of the rarest labels) and on Mulan's
        emotions split (``python -m benchmarks.decisions``); larger values (3e-3 on the
        planted sample) read sparser β.  ``sblr evaluate`` selects lambda
        (:data:`sblr.tuning.LAMBDA_GRID`).
    lam_scale : {"absolute", "relative"}, default="absolute"
        ``"relative"``: class k is fitted with ``lam * lambda_max_k``, its own
        :func:`~sblr.logistic.lambda_max` on the training evidence (SLEP's ``rFlag = 1``), so
        ``lam`` in [0, 1] is the same share of the way to ``beta = 0`` for a rare class as for
        a common one (whose ``lambda_max`` is orders of magnitude larger).
    kernel : {"rbf", "laplacian", "linear", "cosine"} or callable, default="rbf"
    normalize : {"log_rate", "mean", "sum"}, default="log_rate"
        As in :class:`SBLRClassifier` (``"mean"``: the paper's model).
    ridge : float, default=0.0
        Optional extra L2 term on the standardized coefficients (as in
        :class:`SBLRClassifier`); 0 is the paper's model.
    tol : float, default=1e-6
        KKT tolerance of each logistic fit.
    max_iter : int, default=100
    force_top1 : bool or "auto", default="auto"
    threshold : float, array-like of shape (n_classes,) or str, default="micro_f1"
        As in :class:`SBLRClassifier`.
    working_memory : float, default=None
    approx : {"auto", None, "nystroem", "rff"}, default="auto"
        Evidence mode (see :class:`~sblr.SimilarityFeaturizer`): ``"auto"`` is
        exact below 20,000 training rows and Nystroem from there on.
    n_components : int, default=500
        Size of the approximate feature map (only when approximating).
    random_state : int or None, default=0
        Seed of the approximate feature map (only when approximating).

    Attributes
    ----------
    classes_, coef_, intercept_, n_iter_, kkt_violation_, threshold_, multilabel_, featurizer_,
    gamma_, approx_, n_features_in_
        As in :class:`SBLRClassifier`.
    lams_ : ndarray of shape (n_classes,)
        With ``lam_scale="relative"``: the L1 strength each class was fitted with.

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> from sblr import SparseSBLRClassifier
    >>> X, y = load_wine(return_X_y=True)
    >>> clf = SparseSBLRClassifier(lam=1e-2).fit(X[::2], y[::2])
    >>> int((clf.coef_ == 0).sum()) > 0, round(clf.score(X[1::2], y[1::2]), 2)
    (True, 0.97)
    """

    _parameter_constraints = {
        **_LogisticSimilarityClassifier._parameter_constraints,
        "lam": [Interval(Real, 0, None, closed="left")],
        "lam_scale": [StrOptions({"absolute", "relative"})],
    }

    def __init__(
        self,
        *,
        gamma="scale",
        lam=1e-4,
        lam_scale="absolute",
        kernel="rbf",
        normalize="log_rate",
        ridge=0.0,
        tol=1e-6,
        max_iter=100,
        force_top1="auto",
        threshold="micro_f1",
        working_memory=None,
        approx="auto",
        n_components=500,
        random_state=0,
    ):
        self.gamma = gamma
        self.lam = lam
        self.lam_scale = lam_scale
        self.kernel = kernel
        self.normalize = normalize
        self.ridge = ridge
        self.tol = tol
        self.max_iter = max_iter
        self.force_top1 = force_top1
        self.threshold = threshold
        self.working_memory = working_memory
        self.approx = approx
        self.n_components = n_components
        self.random_state = random_state

    def _layer_lam(self, F, Y, sample_weight=None):
        if self.lam_scale == "absolute":
            return float(self.lam)
        # lambda_max with row weights: the weighted mean gradient at beta = 0
        w = np.ones(len(F)) if sample_weight is None else np.asarray(sample_weight, np.float64)
        share = w / w.sum() if w.sum() > 0 else np.full(len(F), 1.0 / max(len(F), 1))
        Y = np.asarray(Y, dtype=np.float64)
        resid = share @ Y - Y  # (n, q): base rate minus label, per problem
        lam_max = np.abs(F.T @ (share[:, None] * resid)).max(axis=0, initial=0.0)
        return float(self.lam) * lam_max
