"""The fitted state of every estimator sblr saves, as rules: what a model file must hold.

A model file's arrays are a stranger's data: a 2-D ``threshold_``, an extra axis on an SVM's
classes, a transposed table, a NaN among the coefficients or a missing ``multilabel_`` must
be refused when the file is opened, not found at a user's prediction (or never: a model that
silently predicts something else).  :data:`RULES` says, per class, what each fitted
attribute is -- its type, its shape in the sizes it shares with the others (``m`` classes,
``d`` features, ``n`` training rows ...), its dtype and its range -- and :data:`RELATIONS`
what the attributes must say of each other (``data_min_ <= data_max_``; the two rows of a
two-class model mirror images; an SVM's counts adding up to its vectors).  A class's rules
are its bases' and its own, in that order, so a new fitted attribute is one line under the
class that sets it; an attribute of an sblr estimator that no rule names is held to the
generic rule (a number, a short text, or a finite numeric array).  The parameters are
checked by the class's own ``_parameter_constraints``; a scikit-learn part (an SVM, a
feature map) must have the parameters the sblr estimator gives the part it builds.

:func:`check_fitted` applies them all (:func:`sblr.modelfile.load_model`, before anything
predicts).  Arrays are made C-contiguous on the way (libsvm and the compiled kernels read
their memory in C order).

Examples
--------
>>> import numpy as np
>>> from sblr import SBLRClassifier
>>> X = np.random.default_rng(0).normal(size=(30, 2)); y = (X[:, 0] > 0).astype(int)
>>> model = SBLRClassifier(gamma=1.0).fit(X, y)
>>> check_fitted(model)
>>> model.intercept_ = model.intercept_[:1]
>>> check_fitted(model)
Traceback (most recent call last):
...
sblr._fitted.FittedStateError: intercept_ must be of shape (2,); it is of shape (1,)
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
from sklearn.kernel_approximation import Nystroem, RBFSampler
from sklearn.linear_model import LogisticRegression
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.multiclass import OneVsRestClassifier
from sklearn.neighbors import NearestNeighbors
from sklearn.preprocessing import LabelBinarizer
from sklearn.svm import SVC

from sblr import decision
from sblr._validation import InvalidParameterError, validate_parameter_constraints
from sblr.baselines import (
    BRSVMClassifier,
    FrequencyClassifier,
    IBLRClassifier,
    MLkNNClassifier,
    OneVsRestLRClassifier,
)
from sblr.baselines._base import _ScaledClassifier
from sblr.baselines._neighbours import _NeighbourLabelClassifier
from sblr.models import SBLRClassifier, SMLClassifier, SparseSBLRClassifier
from sblr.models._base import _SimilarityClassifier
from sblr.models._logistic import _LogisticSimilarityClassifier
from sblr.similarity import SimilarityFeaturizer
from sblr.similarity._feature_maps import make_feature_map
from sblr.similarity._featurizer import FEATURIZER_PARAMS
from sblr.tuning import SparseSBLRCV, _SelectionCV

__all__ = ["RELATIONS", "RULES", "FittedStateError", "check_fitted"]

#: Longest text an attribute no rule names may hold (a mode, a name).
GENERIC_TEXT = 200
#: Sizes a fitted model has at least one of.
_NOT_EMPTY = {"n": "training rows", "m": "classes", "d": "features", "v": "support vectors"}
#: Support vectors inside the box (0 < α < C) of each SVM checked to lie on its margin.
_MARGIN_VECTORS = 8
#: Stored training rows are scaled to [-1, 1] (exactly, by construction); a file's may be off
#: by this much (a file written by an sblr that scaled otherwise).
_SCALED_SLACK = 1e-9


class FittedStateError(ValueError):
    """An estimator's fitted state breaks a rule; the message names the attribute and says
    what it must be (one clause, for :func:`sblr.modelfile.load_model` to frame)."""


@dataclass
class _Scope:
    """The sizes seen so far (shared by a model and its parts; each item of a list of parts
    gets its own copy) and the path of the object checked (``featurizer_.``)."""

    sizes: dict = field(default_factory=dict)
    path: str = ""

    def fail(self, attr, why):
        raise FittedStateError(f"{self.path}{attr} {why}")

    def size(self, entry):
        """The number an entry of a shape or a bound stands for: a number, a size's name or
        ``name±k``; None for a size not seen yet (the array fixes it)."""
        if not isinstance(entry, str):  # a number, or None
            return entry
        name, sign, offset = re.fullmatch(r"(\w+)(?:([+-])(\d+))?", entry).groups()
        if name not in self.sizes:
            return None
        return self.sizes[name] + (int(offset) if sign == "+" else -int(offset or 0))


# --------------------------------------------------------------------------- the rules
def _kind_words(kind):
    return {
        "float": "numbers",
        "int": "integers",
        "bool": "booleans",
        "label": "class labels",
        "text": "texts",
    }[kind]


def _describe(value):
    if isinstance(value, np.ndarray):
        return f"a {value.ndim}-D array of shape {value.shape} and type {value.dtype}"
    if isinstance(value, str):
        return f"the text {value[:40]!r}"
    return f"a {type(value).__name__}"


@dataclass(frozen=True)
class Array:
    """A NumPy array (exactly ``np.ndarray``, native byte order) of ``shape`` -- each entry
    an int, a size's name (``"m"``; the first array to name it fixes it), ``"name+1"`` or
    None (any length) -- of ``kind``: ``"float"`` (float64, finite), ``"int"`` (any integer
    type, or exactly ``dtype``), ``"bool"``, ``"label"`` (class labels: numbers, texts or
    booleans; finite) or ``"text"``; every value within ``[low, high]`` (a bound may be a
    size's name) and, given ``values``, one of them."""

    shape: tuple
    kind: str = "float"
    low: float | str | None = None
    high: float | str | None = None
    values: tuple | None = None
    dtype: str | None = None

    def check(self, value, scope, attr, owner):
        expected = (
            f"a {len(self.shape)}-D array of "
            + (
                f"{scope.size(self.shape[0])} "
                if len(self.shape) == 1 and scope.size(self.shape[0]) is not None
                else ""
            )
            + _kind_words(self.kind)
        )
        if type(value) is not np.ndarray or value.ndim != len(self.shape):
            scope.fail(attr, f"must be {expected}; it is {_describe(value)}")
        if not self._dtype_ok(value):
            scope.fail(attr, f"must be {expected}; its values are of type {value.dtype}")
        for axis, entry in enumerate(self.shape):
            want = scope.size(entry)
            if want is None and isinstance(entry, str):
                name = re.match(r"\w+", entry).group()
                if name in _NOT_EMPTY and value.shape[axis] < 1:
                    scope.fail(attr, f"is empty (it has no {_NOT_EMPTY[name]})")
                scope.sizes[name] = value.shape[axis]
            elif want is not None and value.shape[axis] != want:
                shape = tuple(scope.size(e) for e in self.shape)
                scope.fail(attr, f"must be of shape {shape}; it is of shape {value.shape}")
        if self.kind in ("float", "label") and value.dtype.kind == "f":
            if not np.isfinite(value).all():
                scope.fail(attr, "holds NaN or infinite values")
        if self.kind == "text" or (self.kind == "label" and value.dtype.kind == "O"):
            allowed = (str,) if self.kind == "text" else (str, Integral, Real)
            if not all(isinstance(v, allowed) and not isinstance(v, bool) for v in value.flat):
                scope.fail(attr, f"must hold {_kind_words(self.kind)} only")
        low, high = scope.size(self.low), scope.size(self.high)
        if value.size and low is not None and not (value >= low).all():
            scope.fail(attr, f"must be at least {low:g}; it holds {value.min():g}")
        if value.size and high is not None and not (value <= high).all():
            scope.fail(attr, f"must be at most {high:g}; it holds {value.max():g}")
        if self.values is not None and not np.isin(value, self.values).all():
            scope.fail(attr, f"must hold only {', '.join(map(str, self.values))}")
        if not value.flags.c_contiguous:
            setattr(owner, attr, np.ascontiguousarray(value))

    def _dtype_ok(self, value):
        dt = value.dtype
        if not dt.isnative:
            return False
        if self.dtype is not None:
            return dt == np.dtype(self.dtype)
        return {
            "float": dt == np.float64,
            "int": dt.kind in "iu",
            "bool": dt.kind == "b",
            "label": dt.kind in "iufbU" or (dt.kind == "O"),
            "text": dt.kind in "UO",
        }[self.kind]


@dataclass(frozen=True)
class Integer:
    """An integer (Python's or NumPy's, not a bool) in ``[low, high]`` (bounds may be sizes'
    names); ``size``: the name of the size it fixes (or must equal)."""

    low: int | str | None = None
    high: int | str | None = None
    size: str | None = None

    def check(self, value, scope, attr, owner):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            scope.fail(attr, f"must be an integer; it is {_describe(value)}")
        low, high = scope.size(self.low), scope.size(self.high)
        if (low is not None and value < low) or (high is not None and value > high):
            scope.fail(attr, f"must be in [{low}, {high}]; it is {value}")
        if self.size is not None:
            want = scope.size(self.size)
            if want is None:
                scope.sizes[self.size] = int(value)
            elif value != want:
                scope.fail(attr, f"must be {want}, as the model's other arrays say; it is {value}")


@dataclass(frozen=True)
class Number:
    """A finite real number (not a bool, not an array), above 0 if ``positive``."""

    positive: bool = False

    def check(self, value, scope, attr, owner):
        if isinstance(value, bool) or not isinstance(value, (Real, np.floating, np.integer)):
            scope.fail(attr, f"must be a number; it is {_describe(value)}")
        if not np.isfinite(value) or (self.positive and not value > 0):
            scope.fail(attr, f"must be a finite {'positive ' if self.positive else ''}number")


@dataclass(frozen=True)
class Flag:
    """True or False (Python's or NumPy's)."""

    def check(self, value, scope, attr, owner):
        if not isinstance(value, (bool, np.bool_)):
            scope.fail(attr, f"must be True or False; it is {_describe(value)}")


@dataclass(frozen=True)
class Choice:
    """One of ``options`` (None or texts)."""

    options: tuple

    def check(self, value, scope, attr, owner):
        if not any(value is o or (type(value) is str and value == o) for o in self.options):
            scope.fail(attr, f"must be one of {', '.join(map(str, self.options))}")


@dataclass(frozen=True)
class Part:
    """An object of exactly one of ``types``, checked by its own rules (sharing the sizes)."""

    types: tuple

    def check(self, value, scope, attr, owner):
        if type(value) not in self.types:
            names = " or ".join(t.__name__ for t in self.types)
            scope.fail(attr, f"must be a {names}; it is {_describe(value)}")
        _check_object(value, _Scope(scope.sizes, f"{scope.path}{attr}."))


@dataclass(frozen=True)
class Parts:
    """A list of parts (each one of ``types``, or None if ``none``), each checked with its
    own copy of the sizes (an SVM's support vectors are its own)."""

    types: tuple
    none: bool = False

    def check(self, value, scope, attr, owner):
        if type(value) is not list:
            scope.fail(attr, f"must be a list; it is {_describe(value)}")
        for i, item in enumerate(value):
            if item is None and self.none:
                continue
            own = _Scope(dict(scope.sizes), scope.path)
            Part(self.types).check(item, own, f"{attr}[{i}]", value)


@dataclass(frozen=True)
class Mapping:
    """A dict of texts to numbers or texts (selected parameters)."""

    def check(self, value, scope, attr, owner):
        if type(value) is not dict or not all(
            type(k) is str and (type(v) is str or (isinstance(v, Real) and np.isfinite(v)))
            for k, v in value.items()
        ):
            scope.fail(attr, "must be a mapping of names to numbers or texts")


@dataclass(frozen=True)
class Table:
    """A pandas DataFrame (a table of results, restored from the file's plain lists)."""

    def check(self, value, scope, attr, owner):
        import pandas as pd  # lazy: only a CV estimator's file holds one; pandas is loaded then

        if type(value) is not pd.DataFrame:
            scope.fail(attr, f"must be a table; it is {_describe(value)}")


@dataclass(frozen=True)
class Optional:
    """``rule``, or the attribute absent."""

    rule: object


@dataclass(frozen=True)
class NoneOr:
    """``rule``, or None."""

    rule: object


@dataclass(frozen=True)
class When:
    """``rule`` when ``condition(owner)`` holds (the attribute must be there); otherwise the
    attribute is not used, and not checked."""

    condition: object
    rule: object


def _multilabel(est):
    return bool(getattr(est, "multilabel_", False))


def _approximates(featurizer):
    return getattr(featurizer, "approx_", None) is not None


#: Per class: its fitted attributes, in the order they are checked (the first to name a
#: size fixes it).  A subclass's rules follow its bases'.
RULES = {
    SimilarityFeaturizer: {
        "n_features_in_": Integer(low=1, size="d"),
        "classes_": Array(("m",), "label"),
        "multilabel_": Flag(),
        "sparse_input_": Flag(),
        "X_fit_": Array(("n", "d"), low=-1 - _SCALED_SLACK, high=1 + _SCALED_SLACK),
        "Y_fit_": Array(("n", "m"), "int", values=(0, 1)),
        "data_min_": Array(("d",)),
        "data_max_": Array(("d",)),
        "gamma_": Number(positive=True),
        "approx_": Choice((None, "nystroem", "rff")),
        "feature_map_": When(_approximates, Part((Nystroem, RBFSampler))),
        "S_": When(_approximates, Array(("D", "m"))),
        "self_sim_": When(_approximates, Array(("n",))),
        "feature_names_in_": Optional(Array(("d",), "text")),
    },
    Nystroem: {
        "n_features_in_": Integer(size="d"),
        "components_": Array(("D", "d")),
        "normalization_": Array(("D", "D")),
    },
    RBFSampler: {
        "n_features_in_": Integer(size="d"),
        "random_weights_": Array(("d", "D")),
        "random_offset_": Array(("D",)),
    },
    _SimilarityClassifier: {
        "n_features_in_": Integer(low=1, size="d"),
        "featurizer_": Part((SimilarityFeaturizer,)),
        "classes_": Array(("m",), "label"),
        "multilabel_": Flag(),
        "gamma_": Number(positive=True),
        "approx_": Choice((None, "nystroem", "rff")),
        "feature_names_in_": Optional(Array(("d",), "text")),
    },
    SMLClassifier: {
        "set_sizes_": When(_multilabel, Array(("s",), "int", low=0, high="m")),
        "_size_groups": When(_multilabel, Array(("n", "s"), "int", values=(0, 1))),
        "score_scale_": When(_multilabel, Number(positive=True)),
        "threshold_": NoneOr(Array(("m",), low=0.0, high=1.0)),
        "fill_cut_": Optional(NoneOr(Number())),  # files before force_top1="auto": absent
    },
    _LogisticSimilarityClassifier: {
        "coef_": Array(("m", "m")),
        "intercept_": Array(("m",)),
        "n_iter_": Array(("m",), "int", low=0),
        "kkt_violation_": Array(("m",), low=0.0),
        "threshold_": NoneOr(Array(("m",), low=0.0, high=1.0)),
        "fill_cut_": Optional(NoneOr(Number())),
        "lams_": Optional(Array((None,), low=0.0)),  # one a problem: m, or 1 for two classes
    },
    _SelectionCV: {
        "n_features_in_": Integer(low=1, size="d"),
        "best_estimator_": Part((SBLRClassifier, SparseSBLRClassifier)),
        "best_params_": Mapping(),
        "best_score_": Number(),
        "cv_results_": Optional(Table()),
        "feature_names_in_": Optional(Array(("d",), "text")),
    },
    SparseSBLRCV: {
        "lams_": Array(("L",), low=0.0),
        "coef_path_": Array(("L", "m", "m")),
        "intercept_path_": Array(("L", "m")),
    },
    _ScaledClassifier: {
        "n_features_in_": Integer(low=1, size="d"),
        "multilabel_": Flag(),
        "classes_": Array(("m",), "label"),
        "data_min_": Array(("d",)),
        "data_max_": Array(("d",)),
        "feature_names_in_": Optional(Array(("d",), "text")),
    },
    _NeighbourLabelClassifier: {
        "X_fit_": Array(("n", "d"), low=-1 - _SCALED_SLACK, high=1 + _SCALED_SLACK),
        "Y_fit_": Array(("n", "m"), "int", values=(0, 1)),
        "n_neighbors_": Integer(low=0, high="n-1", size="k"),
        "nn_": Part((NearestNeighbors,)),
    },
    MLkNNClassifier: {
        "prior_": Array(("m",), low=0.0, high=1.0),
        "cond_prob_true_": Array(("m", "k+1"), low=0.0, high=1.0),
        "cond_prob_false_": Array(("m", "k+1"), low=0.0, high=1.0),
    },
    IBLRClassifier: {
        "coef_": Array(("m", "m")),
        "intercept_": Array(("m",)),
        "n_iter_": Array(("m",), "int", low=0),
    },
    BRSVMClassifier: {
        "constant_scores_": Array(("m",), values=(-1.0, 0.0, 1.0)),
        "svm_classes_": Array(("q",), "int", low=0, high="m-1"),
        "ovr_": NoneOr(Part((OneVsRestClassifier,))),
        "estimators_": Parts((SVC,), none=True),
    },
    OneVsRestLRClassifier: {
        "model_": Part((OneVsRestClassifier, LogisticRegression)),
        "n_iter_": Array((None,), "int", low=0),
        "C_": Number(positive=True),
        "threshold_": NoneOr(Array(("m",), low=0.0, high=1.0)),
    },
    OneVsRestClassifier: {
        "estimators_": Parts((SVC, LogisticRegression)),
        "label_binarizer_": Optional(Part((LabelBinarizer,))),
    },
    LabelBinarizer: {
        "y_type_": Choice(("multilabel-indicator", "multiclass", "binary")),
    },
    SVC: {
        "n_features_in_": Integer(size="d"),
        "classes_": Array((2,), "int", values=(0, 1)),
        "support_vectors_": Array(("v", "d")),
        "support_": Array(("v",), "int", low=0, dtype="int32"),
        "_n_support": Array((2,), "int", low=0, dtype="int32"),
        "_dual_coef_": Array((1, "v")),
        "dual_coef_": Array((1, "v")),
        "_intercept_": Array((1,)),
        "intercept_": Array((1,)),
        "_probA": Array((0,)),
        "_probB": Array((0,)),
        "_gamma": Number(positive=True),
        "_sparse": Flag(),
    },
    LogisticRegression: {
        "n_features_in_": Integer(size="d"),
        "classes_": Array(("c",), "int", low=0, high="m-1"),
        "coef_": Array((None, "d")),
        "intercept_": Array((None,)),
    },
    FrequencyClassifier: {
        "n_features_in_": Integer(low=1, size="d"),
        "multilabel_": Flag(),
        "classes_": Array(("m",), "label"),
        "frequency_": Array(("m",), low=0.0, high=1.0),
        "feature_names_in_": Optional(Array(("d",), "text")),
    },
}


# --------------------------------------------------------------------------- the relations
# Each takes the object and the sizes its rules fixed; it returns what is wrong, or None.
def _sorted_classes(est, sizes):
    c = est.classes_
    try:
        ordered = c.size < 2 or bool(np.all(c[1:] > c[:-1]))
    except TypeError:  # texts beside numbers: no order
        ordered = False
    if not ordered:
        return "classes_ must be distinct and sorted (as fit finds them)"
    if _multilabel(est) and not np.array_equal(c, np.arange(c.size)):
        return f"classes_ of a multi-label model must be 0 … {c.size - 1}"
    return None


def _range_order(est, sizes):
    if not (est.data_min_ <= est.data_max_).all():
        return "data_min_ exceeds data_max_ (the two swapped?)"
    return None


def _scaled_rows(est, sizes):
    # the stored rows are the training rows scaled by their own range: a constant column
    # (data_min_ == data_max_) is 0, any other spans exactly [-1, 1]
    constant = est.data_min_ == est.data_max_
    low, high = est.X_fit_.min(axis=0), est.X_fit_.max(axis=0)
    if not (
        (np.abs(est.X_fit_[:, constant]) <= _SCALED_SLACK).all()
        and np.allclose(low[~constant], -1.0, rtol=0, atol=_SCALED_SLACK)
        and np.allclose(high[~constant], 1.0, rtol=0, atol=_SCALED_SLACK)
    ):
        return "X_fit_ is not the training rows scaled by data_min_ and data_max_"
    return None


def _one_class_a_row(est, sizes):
    if not _multilabel(est) and not (est.Y_fit_.sum(axis=1) == 1).all():
        return "Y_fit_ of a multi-class model must hold one class a row"
    return None


def _dense_rows(est, sizes):
    # a model file opens dense rows only (skops does not trust SciPy's sparse matrices)
    if est.sparse_input_:
        return "sparse_input_ says the training rows were sparse, but X_fit_ is dense"
    return None


def _feature_map_as_built(est, sizes):
    if est.approx_ is None:
        return None
    built = make_feature_map(est.approx_, est.gamma_, est.n_components, est.random_state)
    if type(est.feature_map_) is not type(built):
        return f"feature_map_ is not the {est.approx_} map its approx_ names"
    wrong = _other_parameters(est.feature_map_, built)
    if wrong:
        return f"feature_map_ {wrong}"
    D = min(est.n_components, sizes["n"]) if est.approx_ == "nystroem" else est.n_components
    if sizes["D"] != D:
        return f"feature_map_ has {sizes['D']} features; its parameters give {D}"
    return None


def _agrees_with_featurizer(est, sizes):
    f = est.featurizer_
    for attr in ("classes_", "multilabel_", "gamma_", "approx_"):
        if not np.array_equal(getattr(est, attr), getattr(f, attr)):
            return f"{attr} differs from its featurizer_'s"
    shared = [p for p in (*FEATURIZER_PARAMS, "gamma") if p in est.get_params(deep=False)]
    for p in shared:
        if getattr(est, p) != getattr(f, p):
            return f"parameter {p} differs from its featurizer_'s"
    if isinstance(f.gamma, Real) and f.gamma_ != f.gamma:
        return "gamma_ is not its parameter gamma"
    return None


def _mirrored(est, sizes):
    # two classes: one problem solved, its mirror image stored beside it (exactly)
    if _multilabel(est) or sizes["m"] != 2:
        return None
    if not (
        np.array_equal(est.coef_[0], -est.coef_[1]) and est.intercept_[0] == -est.intercept_[1]
    ):
        return "coef_ and intercept_ of a two-class model must be mirror images"
    return None


def _layer_converged(est, sizes):
    # the solver stops when a class's KKT violation is at most tol, or after max_iter steps
    # (tests/test_logistic.py): a violation above tol from fewer steps is not the solver's
    done = (est.kkt_violation_ <= est.tol) | (est.n_iter_ >= est.max_iter)
    if not done.all():
        return "kkt_violation_ exceeds tol for a class the solver stopped early on (swapped?)"
    return None


def _cuts_of(est, threshold, cuts, sizes):
    """A multi-label model's cuts: present unless its rule is its own (SML's threshold=None),
    and exactly its parameter's when that is a number."""
    fill = vars(est).get("fill_cut_")
    if fill is not None:
        if not (isinstance(threshold, str) and est.force_top1 == "auto"):
            return "fill_cut_ is set without force_top1='auto' and a threshold rule"
        if not 0.0 <= fill <= 1.0:
            return "fill_cut_ must be a probability in [0, 1]"
    if not _multilabel(est):
        return None
    if (cuts is None) != (threshold is None):
        return "threshold_ does not match its parameter threshold"
    if threshold is not None and not isinstance(threshold, str):
        try:
            fixed = decision.checked_threshold(threshold, sizes["m"])
        except (TypeError, ValueError):
            return "parameter threshold is not one cut or one per class"
        if not np.array_equal(fixed, cuts):
            return "threshold_ differs from its parameter threshold"
    return None


def _layer_cuts(est, sizes):
    return _cuts_of(est, est.threshold, est.threshold_, sizes)


def _sml_rule(est, sizes):
    wrong = _cuts_of(est, est.threshold, est.threshold_, sizes)
    if wrong or not _multilabel(est):
        return wrong
    sizes_seen, groups = est.set_sizes_, est._size_groups
    if not (np.all(sizes_seen[1:] > sizes_seen[:-1]) and (groups.sum(axis=1) == 1).all()):
        return "set_sizes_ and _size_groups must be distinct sizes and one group a row"
    if not np.array_equal(
        sizes_seen[np.argmax(groups, axis=1)], est.featurizer_.Y_fit_.sum(axis=1)
    ):
        return "_size_groups does not group the training rows by their number of labels"
    return None


def _refit_of_selection(est, sizes):
    best = est.best_estimator_
    if type(best) is not est._model:
        return f"best_estimator_ must be a {est._model.__name__}"
    try:
        built = est._model_with(**est.best_params_)
    except TypeError:
        return "best_params_ names parameters its model does not have"
    wrong = _other_parameters(best, built)
    return f"best_estimator_ {wrong}" if wrong else None


def _path_of_lams(est, sizes):
    try:
        lams = np.asarray(est.lams, dtype=np.float64)
    except (TypeError, ValueError):
        return "parameter lams is not a list of numbers"
    if not np.array_equal(lams, est.lams_):
        return "lams_ is not its parameter lams"
    return None


def _neighbours_as_fitted(est, sizes):
    if est.n_neighbors_ != min(est.k, sizes["n"] - 1):
        return "n_neighbors_ is not min(k, training rows - 1)"
    wrong = _other_parameters(est.nn_, NearestNeighbors(n_neighbors=max(est.n_neighbors_, 1)))
    return f"nn_ {wrong}" if wrong else None


def _mlknn_tables(est, sizes):
    s, n, Y = float(est.s), sizes["n"], est.Y_fit_
    prior = (s + Y.sum(axis=0)) / (2.0 * s + n)
    if not np.allclose(est.prior_, prior, rtol=1e-12, atol=0):
        return "prior_ is not the smoothed label frequency of Y_fit_"
    # each entry is (s + count) / (s (k + 1) + rows with / without the label): the counts it
    # gives back are whole numbers adding up to those rows
    with_label = Y.sum(axis=0).astype(np.float64)
    for attr, rows in (("cond_prob_true_", with_label), ("cond_prob_false_", n - with_label)):
        table = getattr(est, attr)
        if not np.allclose(table.sum(axis=1), 1.0, rtol=0, atol=1e-9):
            return f"rows of {attr} must each sum to 1 (the table transposed?)"
        counts = table * (s * table.shape[1] + rows)[:, None] - s
        if not (
            np.allclose(counts, np.round(counts), rtol=0, atol=1e-6)
            and np.allclose(counts.sum(axis=1), rows, rtol=0, atol=1e-6)
        ):
            return f"{attr} does not count the training rows of Y_fit_ (swapped?)"
    return None


def _svms_as_fitted(est, sizes):
    m, q = sizes["m"], sizes["q"]
    constant = est.constant_scores_ != 0
    binary = not _multilabel(est) and m == 2
    have = np.array([1]) if binary else np.flatnonzero(~constant)
    if (binary and constant.any()) or not np.array_equal(est.svm_classes_, have):
        return "svm_classes_ must be the classes that are not constant (constant_scores_ 0)"
    if len(est.estimators_) != m or any(
        (svc is None) != (label not in set(have.tolist()))
        for label, svc in enumerate(est.estimators_)
    ):
        return "estimators_ must hold an SVM for each class of svm_classes_, None for others"
    if (est.ovr_ is None) != (q == 0):
        return "ovr_ must hold the SVMs of svm_classes_"
    if est.ovr_ is None:
        return None
    svms = est.ovr_.estimators_
    if len(svms) != q or any(
        svc is not est.estimators_[label] for label, svc in zip(have, svms, strict=True)
    ):
        return "ovr_.estimators_ must be the SVMs of estimators_, in the order of svm_classes_"
    built = SVC(kernel="rbf", C=est.C, gamma=est.gamma)
    wrong = _other_parameters(est.ovr_, OneVsRestClassifier(built))
    if wrong:
        return f"ovr_ {wrong}"
    for label, svc in zip(have, svms, strict=True):
        wrong = _svm_wrong(svc, built, est.gamma, sizes["d"])
        if wrong:
            return f"estimators_[{label}] {wrong}"
    return None


def _svm_wrong(svc, built, gamma, d):
    """What is wrong with one fitted SVM of BR-SVM (libsvm indexes its arrays by the counts
    stored beside them), or None."""
    wrong = _other_parameters(svc, built)
    if wrong:
        return wrong
    if svc._impl != "c_svc" or svc._sparse:
        return "is not a dense C-SVM"
    if int(svc._n_support.sum()) != svc.support_vectors_.shape[0]:
        return "has class counts that do not add up to its support vectors"
    if not (
        np.array_equal(svc.dual_coef_, -svc._dual_coef_)
        and np.array_equal(svc.intercept_, -svc._intercept_)
    ):
        return "has coefficients that are not the mirror of libsvm's (swapped?)"
    if isinstance(gamma, Real) and svc._gamma != gamma:
        return "has a γ other than its parameter gamma"
    if gamma == "auto" and svc._gamma != 1.0 / d:
        return "has a γ other than 1 / features (gamma='auto')"
    # libsvm's dual coefficients are y α: positive for the first class's vectors, negative for
    # the second's, |α| <= C; a vector strictly inside (0, C) lies on its margin, y f(x) = 1
    # to the solver's tol (measured: within 7e-4), which a flipped intercept breaks
    alpha, first = svc._dual_coef_[0], int(svc._n_support[0])
    y = np.where(np.arange(alpha.size) < first, 1.0, -1.0)
    if not ((y * alpha > 0).all() and (np.abs(alpha) <= svc.C * (1 + 1e-9)).all()):
        return "has dual coefficients of the wrong signs or above C (swapped?)"
    free = np.flatnonzero(np.abs(alpha) < svc.C * (1 - 1e-8))[:_MARGIN_VECTORS]
    if free.size:
        K = rbf_kernel(svc.support_vectors_[free], svc.support_vectors_, gamma=svc._gamma)
        margin = y[free] * (K @ alpha + svc._intercept_[0])
        if not np.allclose(margin, 1.0, rtol=0, atol=10 * svc.tol):
            return "has vectors off their margin: its intercept or coefficients are not its fit's"
    return None


def _regressions_as_fitted(est, sizes):
    if est.Cs is None and est.C_ != est.C:
        return f"C_ must be the model's C ({est.C}) when it chooses none (Cs is None)"
    if est.Cs is not None and est.C_ not in [float(c) for c in est.Cs]:
        return "C_ must be one of the Cs it chose from"
    built = LogisticRegression(C=est.C_, max_iter=est.max_iter)
    model, m, d = est.model_, sizes["m"], sizes["d"]
    if _multilabel(est):
        if type(model) is not OneVsRestClassifier or len(model.estimators_) != m:
            return f"model_ of a multi-label model must be {m} logistic regressions"
        binarizer = getattr(model, "label_binarizer_", None)
        if binarizer is None or binarizer.y_type_ != "multilabel-indicator":
            return "model_.label_binarizer_ must be that of a label matrix"
        wrong = _other_parameters(model, OneVsRestClassifier(built))
        parts = [(f"model_.estimators_[{i}]", lr) for i, lr in enumerate(model.estimators_)]
    else:
        if type(model) is not LogisticRegression:
            return "model_ of a multi-class model must be one logistic regression"
        wrong, parts = None, [("model_", model)]
    if wrong:
        return f"model_ {wrong}"
    for where, lr in parts:
        c = lr.classes_
        rows = 1 if c.size == 2 else c.size
        if not (c.size >= 2 and np.all(c[1:] > c[:-1])) or (_multilabel(est) and c.size != 2):
            return f"{where}.classes_ must be distinct sorted classes"
        if lr.coef_.shape != (rows, d) or lr.intercept_.shape != (rows,):
            return f"{where} has coefficients of shape {lr.coef_.shape}, not ({rows}, {d})"
        wrong = _other_parameters(lr, built)
        if wrong:
            return f"{where} {wrong}"
    return None


def _frequencies(est, sizes):
    if not _multilabel(est) and abs(float(est.frequency_.sum()) - 1.0) > 1e-9:
        return "frequency_ of a multi-class model must sum to 1"
    return None


#: Per class: what its attributes must say of each other, checked after its rules.
RELATIONS = {
    SimilarityFeaturizer: (
        _sorted_classes,
        _one_class_a_row,
        _range_order,
        _dense_rows,
        _scaled_rows,
        _feature_map_as_built,
    ),
    _SimilarityClassifier: (_agrees_with_featurizer,),
    SMLClassifier: (_sml_rule,),
    _LogisticSimilarityClassifier: (_mirrored, _layer_converged, _layer_cuts),
    _SelectionCV: (_refit_of_selection,),
    SparseSBLRCV: (_path_of_lams,),
    _ScaledClassifier: (_sorted_classes, _range_order),
    _NeighbourLabelClassifier: (_one_class_a_row, _scaled_rows, _neighbours_as_fitted),
    MLkNNClassifier: (_mlknn_tables,),
    IBLRClassifier: (_mirrored,),
    BRSVMClassifier: (_svms_as_fitted,),
    OneVsRestLRClassifier: (_regressions_as_fitted,),
    FrequencyClassifier: (_sorted_classes, _frequencies),
}

#: Parameters added to a class after files were written without them: ``{class: {name:
#: value}}``, the value under which such a file predicts as it did (a file missing any other
#: parameter is refused: a dropped ``force_top1`` would silently change its predictions).
PARAMETERS_ADDED = {OneVsRestLRClassifier: {"Cs": None, "threshold": 0.5, "cv": 5}}

#: Fitted attributes renamed after files were written with the old name: ``{class: {old:
#: new}}`` (SBLR/SparseSBLR kept their cuts as ``_threshold`` behind a lazy property until
#: the decision became an attribute set by ``fit``).
ATTRIBUTES_RENAMED = {_LogisticSimilarityClassifier: {"_threshold": "threshold_"}}


# --------------------------------------------------------------------------- checking
def _other_parameters(obj, built):
    """``"has parameter p = x, not y"`` for the first parameter of ``obj`` other than that of
    ``built`` (the part as the sblr estimator builds it; parts compared by their own
    parameters), or None."""
    try:
        mine = obj.get_params(deep=False)
    except AttributeError as exc:
        return f"lacks a parameter ({exc})"
    for name, want in built.get_params(deep=False).items():
        have = mine.get(name, "(missing)")
        if hasattr(want, "get_params"):
            if type(have) is not type(want) or _other_parameters(have, want):
                return f"has another {name}"
        elif type(have) is not type(want) and not (
            isinstance(want, Real) and isinstance(have, Real) and not isinstance(have, bool)
        ):
            return f"has parameter {name} = {have!r}, not {want!r}"
        elif have != want:
            return f"has parameter {name} = {have!r}, not {want!r}"
    return None


def _rules_of(cls):
    rules, relations = {}, []
    for base in reversed(cls.__mro__):
        rules.update(RULES.get(base, {}))
        relations += [r for r in RELATIONS.get(base, ()) if r not in relations]
    return rules, relations


def _generic(value, scope, attr):
    """An attribute no rule names: a number, a short text, None, or a finite numeric array."""
    if value is None or isinstance(value, (bool, np.bool_, int, np.integer)):
        return
    if isinstance(value, (float, np.floating)):
        if not np.isfinite(value):
            scope.fail(attr, "must be a finite number")
        return
    if type(value) is str and len(value) <= GENERIC_TEXT:
        return
    if type(value) is np.ndarray and value.dtype.isnative and value.dtype.kind in "biuf":
        if value.dtype.kind == "f" and not np.isfinite(value).all():
            scope.fail(attr, "holds NaN or infinite values")
        return
    scope.fail(attr, f"is {_describe(value)}, which no fitted attribute of this model may be")


def _check_parameters(obj, scope):
    for name, value in PARAMETERS_ADDED.get(type(obj), {}).items():
        obj.__dict__.setdefault(name, value)
    for base in type(obj).__mro__:
        for old, new in ATTRIBUTES_RENAMED.get(base, {}).items():
            if old in obj.__dict__ and new not in obj.__dict__:
                obj.__dict__[new] = obj.__dict__.pop(old)
    try:
        params = obj.get_params(deep=False)
    except AttributeError as exc:
        name = str(exc).rsplit("'", 2)[-2] if "'" in str(exc) else str(exc)
        scope.fail(name, "(a parameter) is missing")
    constraints = getattr(type(obj), "_parameter_constraints", None)
    if constraints:
        try:
            validate_parameter_constraints(constraints, params, caller_name=type(obj).__name__)
        except InvalidParameterError as exc:
            raise FittedStateError(f"{scope.path}parameters are not valid: {exc}") from None
    return params


def _check_object(obj, scope):
    """``obj``'s parameters (sblr's classes), every attribute by its rule, the attributes no
    rule names (sblr's classes), then the relations."""
    rules, relations = _rules_of(type(obj))
    own = type(obj).__module__.startswith("sblr.")
    params = _check_parameters(obj, scope) if own else {}
    state = vars(obj)
    for attr, rule in rules.items():
        if isinstance(rule, When):
            if not rule.condition(obj):
                continue
            rule = rule.rule
        if attr not in state:
            if isinstance(rule, Optional):
                continue
            scope.fail(attr, "is missing")
        rule = rule.rule if isinstance(rule, Optional) else rule
        if isinstance(rule, NoneOr):
            if state[attr] is None:
                continue
            rule = rule.rule
        with _unforeseen(scope, attr):
            rule.check(state[attr], scope, attr, obj)
    if own:
        for attr in [a for a in state if a not in rules and a not in params]:
            _generic(state[attr], scope, attr)
    for relation in relations:
        with _unforeseen(scope, relation.__name__.strip("_").replace("_", " ")):
            wrong = relation(obj, scope.sizes)
        if wrong:
            raise FittedStateError(f"{scope.path}{wrong}")


@contextlib.contextmanager
def _unforeseen(scope, what):
    """A state no rule foresaw that makes a check itself fail (an empty array reduced, a
    value of a type compared with another): a FittedStateError naming the check, never an
    untyped error out of the loader."""
    try:
        yield
    except FittedStateError:
        raise
    except (ValueError, TypeError, IndexError, KeyError, AttributeError, ArithmeticError) as exc:
        raise FittedStateError(
            f"{scope.path}{what} cannot be checked ({type(exc).__name__}: {str(exc)[:80]})"
        ) from None


def check_fitted(estimator):
    """Check ``estimator``'s parameters and fitted state against :data:`RULES` and
    :data:`RELATIONS` (see the module docstring).

    Raises
    ------
    FittedStateError
        The first rule broken: the attribute's path (``featurizer_.data_min_``) and what it
        must be, as one clause.
    """
    if not any(base in RULES for base in type(estimator).__mro__):
        raise FittedStateError(f"type {type(estimator).__name__} has no rules to be checked by")
    _check_object(estimator, _Scope())
