"""Multi-label decisions: the cut on each class's probability, fitted from held-out probabilities.

A multi-label model gives every class k a probability ``π_k(x)``; the decision is the set
``{k : π_k(x) >= t_k}``.  The cut 0.5 is right for a calibrated model whose classes are not
rare; with rare labels the probabilities sit near the base rates and a 0.5 cut leaves most
rows without any label.  MEKA calibrates the cut by default (PCut1), R's utiml offers the same
family (lcard, pcut, scut, ...), scikit-learn's ``TunedThresholdClassifierCV`` tunes one cut on
out-of-fold scores.  The rules here (every one fitted on probabilities of rows the model did
not fit on: out-of-fold or leave-one-out, never in-sample):

``"pcut"``
    One cut for every class: the predicted label cardinality of the rows matches their true one
    (MEKA's PCut1).
``"pcut_per_class"``
    Per class: as many rows predicted as have the label (MEKA's PCutL).
``"f1"``
    Per class: the cut that maximizes the class's F1 (a class with fewer than 5 positives
    among the rows takes the ``"micro_f1"`` cut: too few rows to place a cut of its own).
``"micro_f1"``
    One cut for every class that maximizes micro-F1 (the rows' labels pooled).

A cut always lies halfway between two neighbouring probabilities of the rows, so a tie is
never split and a row a hair away from the cut is decided the same way as its neighbour.

Rows the cuts leave without a label (``force_top1``): ``True`` gives each its most probable
class; ``"auto"`` (the models' default with a rule) fits a *fill cut* on the same held-out
rows (:func:`fit_fill_cut`): a row left empty gets its most probable class when that class's
probability reaches the fill cut, chosen so that the held-out rows left empty are as many as
the training rows with no label (0 on data where every row has one: every empty row is
filled; about half on data where half the rows are unlabelled: only the confident ones).
One global cut on 159 labels of very different rates left 710 of bibtex's 2,515 test rows
empty (truth 0); the fill cut leaves none and raises micro-F1 0.4421 -> 0.4433, where
``force_top1=True`` on a 19-label shape with half the rows unlabelled costs micro-F1 0.95 ->
0.76 and the fill cut 0.95 -> 0.95 (``python -m benchmarks.decisions --fill``).

Examples
--------
>>> P = np.array([[0.9, 0.40], [0.35, 0.2], [0.30, 0.45], [0.1, 0.05]])
>>> Y = np.array([[1, 0], [1, 0], [0, 1], [0, 0]])
>>> fit_cuts(P, Y, "pcut_per_class")          # class 0: 2 rows above, class 1: 1 row
array([0.325, 0.425])
>>> decide(P, fit_cuts(P, Y, "pcut_per_class")).tolist()
[[1, 0], [1, 0], [0, 1], [0, 0]]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: The rules :func:`fit_cuts` knows, by the name a ``threshold`` parameter takes.
RULES = ("pcut", "pcut_per_class", "f1", "micro_f1")
#: Each rule in words, as the pages, the reports and the benchmark's tables name it.
RULE_WORDS = {
    "pcut": "one cut matching the label cardinality of held-out rows",
    "micro_f1": "one cut maximizing micro-F1 on held-out rows",
    "pcut_per_class": "per class: as many rows as have the label, on held-out rows",
    "f1": "per class: maximizing each class's F1 on held-out rows",
}

#: Fewest positives for which the ``"f1"`` rule fits a class a cut of its own.
_MIN_POSITIVES = 5

__all__ = [
    "RULES",
    "RULE_WORDS",
    "Decision",
    "checked_threshold",
    "decide",
    "describe",
    "fit_cuts",
    "fit_fill_cut",
]


def _valid_cuts(s):
    """For probabilities ``s`` sorted in decreasing order: every ``j`` in 0 .. len(s) for which
    a cut predicts exactly the top ``j`` values (``s[j-1] > s[j]``), and that cut: just above
    the largest value for j = 0, halfway between the j-th and (j+1)-th value, the smallest value
    for j = len(s).  Returns ``(js, cuts)``."""
    n = s.size
    if n == 0:
        return np.array([0]), np.array([1.0])
    js = np.r_[0, np.flatnonzero(s[:-1] > s[1:]) + 1, n]
    inner = js[1:-1]
    cuts = np.r_[np.nextafter(s[0], np.inf), 0.5 * (s[inner - 1] + s[inner]), s[-1]]
    return js, cuts


def _best_f1_cut(p, y):
    """The cut of one column (or the pooled columns) maximizing F1: the fewest predicted rows
    among ties.

    The best set is the top rows down to a tie group holding a positive (a group of negatives
    only adds false positives), so only the positives' values are tried: one sorted copy of
    ``p`` and the positives, not six arrays of its size (pooled over 983 labels and 12,920
    rows those took 700 MB)."""
    p = np.asarray(p, dtype=np.float64).ravel()
    if p.size == 0:
        return 1.0
    is_pos = np.asarray(y).ravel() > 0
    values = np.unique(p[is_pos])[::-1]  # the positives' distinct values, largest first
    s = np.sort(p)  # ascending
    if values.size == 0:
        return float(np.nextafter(s[-1], np.inf))
    at = np.searchsorted(s, values, side="left")  # entries below each value
    predicted = p.size - at
    pos_sorted = np.sort(p[is_pos])
    tp = pos_sorted.size - np.searchsorted(pos_sorted, values, side="left")
    f1 = 2.0 * tp / (predicted + pos_sorted.size)
    best = int(np.argmax(f1))  # values decrease: the first maximum predicts the fewest
    if not f1[best] > 0:
        return float(np.nextafter(s[-1], np.inf))
    below = at[best]
    return float(values[best] if below == 0 else 0.5 * (values[best] + s[below - 1]))


def _count_cut(p, count):
    """The cut of ``p`` predicting the number of rows nearest ``count`` (the fewer among
    ties)."""
    s = np.sort(p)[::-1]
    js, cuts = _valid_cuts(s)
    return float(cuts[int(np.argmin(np.abs(js - count)))])


def fit_cuts(P, Y, rule):
    """Per-class cuts ``t`` of the decision ``P >= t`` by ``rule``, from probabilities ``P``
    of rows held out from the fit and their true labels ``Y``.

    Parameters
    ----------
    P : ndarray of shape (n_rows, n_classes)
        Out-of-fold or leave-one-out probabilities.
    Y : ndarray of shape (n_rows, n_classes)
        0/1 labels of the same rows.
    rule : {"pcut", "pcut_per_class", "f1", "micro_f1"}
        See the module's text.

    Returns
    -------
    cuts : ndarray of shape (n_classes,)
        A class never seen in ``Y`` gets the cut above its largest probability (``"f1"``,
        ``"pcut_per_class"``): it is predicted for no row like those.

    Examples
    --------
    >>> P = np.array([[0.8, 0.3], [0.6, 0.2], [0.4, 0.1]])
    >>> Y = np.array([[1, 0], [0, 1], [1, 0]])
    >>> fit_cuts(P, Y, "pcut").tolist()          # 3 labels in all: the 3 largest values
    [0.35, 0.35]
    >>> fit_cuts(P, Y, "micro_f1").tolist()      # the top 5 of the 6 values: F1 = 6/8
    [0.15, 0.15]
    >>> fit_cuts(P, Y, "f1").tolist()            # 1 or 2 positives: the pooled cut
    [0.15, 0.15]
    """
    P = np.asarray(P, dtype=np.float64)
    Y = np.asarray(Y)
    if P.ndim != 2 or P.shape != Y.shape:
        raise ValueError(
            f"P and Y must be matrices of the same shape; got {P.shape} and {Y.shape}."
        )
    if rule not in RULES:
        raise ValueError(f"Unknown threshold rule {rule!r}; choose one of {list(RULES)}.")
    Y = (Y > 0).astype(np.int64)
    m = P.shape[1]
    if rule == "pcut":
        return np.full(m, _count_cut(P.ravel(), int(Y.sum())))
    if rule == "micro_f1":
        return np.full(m, _best_f1_cut(P.ravel(), Y.ravel()))
    if rule == "pcut_per_class":
        return np.array([_count_cut(P[:, k], int(Y[:, k].sum())) for k in range(m)])
    # "f1": a class with fewer than _MIN_POSITIVES positives takes the pooled cut, as the
    # F1-best cut of one or two positives is noise (often "predict every row": F1 = 2/(n + 1)
    # beats 0, a class with 1 positive in 333 rows predicted for all 645 test rows)
    pooled = _best_f1_cut(P.ravel(), Y.ravel())
    counts = Y.sum(axis=0)
    return np.array(
        [
            _best_f1_cut(P[:, k], Y[:, k]) if counts[k] >= _MIN_POSITIVES else pooled
            for k in range(m)
        ]
    )


def checked_threshold(threshold, n_classes):
    """A fixed ``threshold`` (a number or one per class) as an array of ``n_classes`` cuts, or
    a ``ValueError`` naming what is wrong."""
    t = np.asarray(threshold, dtype=np.float64)
    if t.ndim == 0:
        t = np.full(n_classes, float(t))
    if t.shape != (n_classes,):
        raise ValueError(
            f"threshold must be one number or one per class ({n_classes}); got {t.shape[0]} values."
        )
    if not (np.isfinite(t).all() and (t >= 0).all() and (t <= 1).all()):
        raise ValueError("every threshold must be a probability in [0, 1].")
    return t


def decide(P, cuts, force_top1=False, fill_cut=None):
    """The 0/1 decisions ``P >= cuts`` (one cut per column); with ``force_top1=True`` a row
    given no label gets its most probable one, with a ``fill_cut`` (see
    :func:`fit_fill_cut`) when that one's probability reaches it.

    Examples
    --------
    >>> decide([[0.2, 0.1], [0.7, 0.4]], [0.3, 0.3], force_top1=True).tolist()
    [[1, 0], [1, 1]]
    >>> decide([[0.2, 0.1], [0.05, 0.1]], [0.3, 0.3], fill_cut=0.15).tolist()
    [[1, 0], [0, 0]]
    """
    P = np.asarray(P, dtype=np.float64)
    Yp = (P >= np.asarray(cuts, dtype=np.float64)[None, :]).astype(int)
    if (force_top1 is True or fill_cut is not None) and len(P) and P.shape[1]:
        empty = Yp.sum(axis=1) == 0
        if force_top1 is not True:
            empty &= P.max(axis=1) >= fill_cut
        Yp[empty, np.argmax(P[empty], axis=1)] = 1
    return Yp


def fit_fill_cut(P, Y, cuts):
    """The fill cut of held-out probabilities ``P`` decided by ``cuts``: a row the cuts leave
    without a label gets its most probable class when that probability reaches the fill cut;
    the cut is chosen so that as many of these rows stay empty as rows of ``Y`` have no label
    (halfway between neighbouring probabilities, as every cut here).  None when the cuts
    leave no more rows empty than that (nothing to fill), 0.0 when every empty row is filled.

    Examples
    --------
    >>> P = np.array([[0.4, 0.1], [0.2, 0.05], [0.1, 0.3], [0.9, 0.2]])
    >>> fit_fill_cut(P, [[1, 0], [0, 0], [0, 1], [1, 0]], [0.5, 0.5])  # 1 row truly empty
    0.25
    >>> fit_fill_cut(P, [[1, 0], [1, 0], [0, 1], [1, 0]], [0.5, 0.5])  # none: fill all
    0.0
    """
    P = np.asarray(P, dtype=np.float64)
    Y = np.asarray(Y)
    if P.ndim != 2 or P.shape != Y.shape or P.shape[1] == 0:
        raise ValueError(f"P and Y must be matrices of the same shape; got {P.shape}, {Y.shape}.")
    empty = ~(P >= np.asarray(cuts, dtype=np.float64)[None, :]).any(axis=1)
    surplus = int(empty.sum()) - int((np.asarray(Y).sum(axis=1) == 0).sum())
    if surplus <= 0:
        return None
    top = np.sort(P[empty].max(axis=1))[::-1]
    if surplus >= top.size:
        return 0.0
    js, fills = _valid_cuts(top)
    return float(max(fills[int(np.argmin(np.abs(js - surplus)))], 0.0))


def describe(threshold_param, cuts):
    """The cuts in words, for a page or a report: ``"0.31 (micro_f1, one cut)"``,
    ``"per class, 0.05 – 0.62 (f1)"``, ``"0.5"``.

    Examples
    --------
    >>> describe("micro_f1", np.array([0.3125, 0.3125]))
    '0.312 (one cut maximizing micro-F1 on held-out rows)'
    >>> describe([0.2, 0.6], np.array([0.2, 0.6]))
    'per class, 0.2 – 0.6'
    """
    cuts = np.asarray(cuts, dtype=np.float64)
    how = RULE_WORDS.get(threshold_param if isinstance(threshold_param, str) else "", "")
    finite = cuts[np.isfinite(cuts)]
    if cuts.size and np.all(cuts == cuts[0]):
        text = f"{cuts[0]:.3g}"
    elif finite.size:
        text = f"per class, {finite.min():.3g} – {finite.max():.3g}"
    else:
        text = "none"
    if how and not how.startswith("per class"):
        return f"{text} ({how})"
    return f"{text} ({how.removeprefix('per class: ')})" if how else text


@dataclass(frozen=True, eq=False)
class Decision:
    """How a fitted model turns its probabilities into labels: a value, asked for once.

    ``kind`` is ``"argmax"`` (multi-class data: the most probable class), ``"cut"``
    (multi-label: every class ``k`` with ``π_k >= cuts[k]``; ``rule`` the :data:`RULES` name
    the cuts were fitted by, or None for cuts given as numbers) or ``"own"`` (multi-label, a
    model deciding by its own rule, said by its class attribute ``_own_rule``: ``cuts`` are
    0.5, where its probabilities cross it, or None for a model without probabilities).
    Build it with :meth:`of`; every page, report and command words it with
    :meth:`describe`.

    Examples
    --------
    >>> d = Decision("cut", np.array([0.3125, 0.3125]), rule="micro_f1")
    >>> d.describe()
    'π ≥ 0.312 (one cut maximizing micro-F1 on held-out rows)'
    >>> d.decide(np.array([[0.4, 0.2], [0.1, 0.9]])).tolist()
    [[1, 0], [0, 1]]
    >>> Decision("argmax").describe()
    'the most probable class'
    """

    kind: str
    cuts: np.ndarray | None = None
    rule: str | None = None
    force_top1: bool = False
    own: str = ""
    fill_cut: float | None = None

    @classmethod
    def of(cls, model, n_classes=None):
        """The decision of a fitted ``model`` (any sblr estimator or baseline): its
        ``threshold_`` cuts, its own rule, or the argmax of multi-class data.

        Raises ``NotFittedError`` for a multi-label SBLR/SparseSBLR fitted with
        ``cuts=False`` (it has no decision until its ``fit_decision``)."""
        model = getattr(model, "best_estimator_", model)  # a CV estimator decides by its refit
        multilabel = bool(getattr(model, "multilabel_", False))
        if not multilabel:
            return cls("argmax")
        m = int(n_classes if n_classes is not None else len(model.classes_))
        force = getattr(model, "force_top1", False) is True
        fill = vars(model).get("fill_cut_")
        param = getattr(model, "threshold", None)
        if "threshold_" not in vars(model) and hasattr(model, "fit_decision"):
            from sklearn.exceptions import NotFittedError  # lazy: scikit-learn, about 1 s

            raise NotFittedError(
                f"{type(model).__name__} was fitted without its decision (cuts=False): "
                "fit_decision(F) fits it, or fit the model again."
            )
        cuts = vars(model).get("threshold_")
        if cuts is None:
            own = getattr(type(model), "_own_rule", "its own rule")
            half = np.full(m, 0.5) if hasattr(model, "predict_proba") else None
            return cls("own", half, force_top1=force, own=own)
        rule = param if isinstance(param, str) else None
        cuts = np.asarray(cuts, dtype=np.float64)
        return cls("cut", cuts, rule=rule, force_top1=force, fill_cut=fill)

    def decide(self, P):
        """Labels from probabilities ``P``: a 0/1 matrix (multi-label) or class codes
        (``"argmax"``)."""
        P = np.asarray(P, dtype=np.float64)
        if self.kind == "argmax":
            return np.argmax(P, axis=1)
        if self.cuts is None:
            raise ValueError(f"{self.own} decides on scores, not probabilities: use predict.")
        return decide(P, self.cuts, self.force_top1, self.fill_cut)

    def entry_cuts(self, P):
        """Cuts of every entry of ``P`` (rows × classes) at which ``P >= cuts`` is exactly
        :meth:`decide`: the class cuts, lowered to ``P`` where the fill gives a row its top
        class (so functions deciding ``P >= threshold``, the per-class tables and counts,
        decide as the model).

        Examples
        --------
        >>> d = Decision("cut", np.array([0.5, 0.5]), fill_cut=0.3)
        >>> d.entry_cuts(np.array([[0.4, 0.1], [0.2, 0.1]])).tolist()
        [[0.4, 0.5], [0.5, 0.5]]
        """
        P = np.asarray(P, dtype=np.float64)
        if self.kind == "argmax" or self.cuts is None:
            raise ValueError(f"{self.describe()} is not a cut on each class's probability.")
        cuts = np.broadcast_to(self.cuts, P.shape)
        filled = (self.decide(P) == 1) & (P < cuts)
        return np.where(filled, P, cuts)

    def cut(self, k):
        """The cut of class ``k`` (0.5 for argmax and own rules: where their π crosses)."""
        return 0.5 if self.cuts is None else float(self.cuts[k])

    def describe(self):
        """The decision in words, the one wording of every page, report and command."""
        if self.kind == "argmax":
            return "the most probable class"
        text = self.own if self.kind == "own" else "π ≥ " + describe(self.rule, self.cuts)
        if self.force_top1:
            return text + "; a row with none gets its most probable class"
        if self.fill_cut == 0.0:
            return (
                text + "; a row with none gets its most probable class (every training row has one)"
            )
        if self.fill_cut is not None:
            return text + (
                f"; a row with none gets its most probable class if its π ≥ {self.fill_cut:.3g} "
                "(as many rows left empty as training rows have no label)"
            )
        return text
