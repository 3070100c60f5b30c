"""The playground's data: points drawn in the plane, and what the models make of them.

A :class:`Board` holds up to :data:`MAX_POINTS` points (x₁, x₂) in [-1, 1]², each with one or
more of up to :data:`MAX_CLASSES` classes (a point with two classes makes the board
multi-label). Every fourth point (by position) is held out: the models never see it, and it
measures the test error. A board travels in a link as a short text (:func:`encode_board`: three
bytes a point, base64url), read back by :func:`decode_board`, which refuses anything malformed
or oversized with a :class:`~sblr.exceptions.DataError` that says what is wrong.

:func:`fit_board` fits SML, SBLR or SparseSBLR on the training points; :func:`surface` evaluates
a fitted model over a grid of the plane (πₖ, or the evidence f̄ₖ), one array for the page to
draw; :func:`board_scores` gives training and test error (multi-label: micro-F1 too).
Nothing here imports Streamlit.

Examples
--------
>>> board = preset("two blobs")
>>> board.n_classes, len(board) > 50
(2, True)
>>> decode_board(encode_board(board)) == board
True
>>> model = fit_board(board, "SBLR", gamma=1.0)
>>> xs, Z = surface(model, board, k=0, n=5)
>>> Z.shape
(5, 5)
"""

from __future__ import annotations

import base64
import binascii
import functools
import io
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

from sblr.exceptions import DataError
from sblr.registry import SBLR, SML, SPARSE_SBLR, get_model

__all__ = [
    "CLASS_NAMES",
    "FROM_LINK",
    "MAX_CLASSES",
    "MAX_POINTS",
    "PRESETS",
    "Board",
    "board_beta",
    "board_csv",
    "board_evidence",
    "board_from_link",
    "board_scores",
    "decision_cut",
    "decode_board",
    "encode_board",
    "error_along_lambda",
    "evidence_pair",
    "fit_board",
    "held_out_note",
    "ignores_points",
    "plane_title",
    "preset",
    "surface",
    "with_label_noise",
    # the page's view (pages/playground.py draws it): its state, a click, a run's plane
    "PlaneView",
    "act",
    "class_label",
    "classes_changed",
    "clear",
    "clicked",
    "default_board",
    "lam_label",
    "lesson",
    "link_params",
    "load_preset",
    "model_traits",
    "new_points",
    "noise_changed",
    "PLANE_KEY",
    "click_count",
    "click_preview",
    "preview_basis",
    "plane_view",
    "preset_options",
    "region_options",
    "KNOBS",
    "knob_values",
    "page_drawn",
    "set_board",
    "share_changed",
    "state_from_link",
    "sync_link",
    "undo",
]

#: Classes a board may have (a palette of this many colours).
MAX_CLASSES = 6
#: Points a board may hold (and a link carry).
MAX_POINTS = 400
#: Held-out shares a board offers: every n-th point held out (0: none), the default first.
HOLDOUT_EVERY = 4
HOLDOUT_CHOICES = (0, 5, 4, 3, 2)
#: Class names, in palette order.
CLASS_NAMES = ("A", "B", "C", "D", "E", "F")
#: Coordinates are kept on a grid of this many values per axis (one byte each in a link).
LEVELS = 256
_VERSION = 1
#: Longest link text :func:`decode_board` reads (a full board and its header).
MAX_ENCODED = 4 * ((2 + 3 * MAX_POINTS + 2) // 3)


def _snap(v) -> np.ndarray:
    """Coordinates onto the board's grid (what a link can carry), clipped to [-1, 1]."""
    q = np.rint((np.clip(np.asarray(v, dtype=float), -1.0, 1.0) + 1.0) / 2.0 * (LEVELS - 1))
    return q / (LEVELS - 1) * 2.0 - 1.0


@dataclass(frozen=True, eq=False)
class Board:
    """Points in [-1, 1]² and their classes.

    Parameters
    ----------
    points : array-like of shape (n, 2)
        Snapped to the board's grid of :data:`LEVELS` values per axis.
    labels : array-like of shape (n, m), bool
        ``labels[i, c]``: point i carries class c; every point carries at least one.
    every : int, default 4
        Every ``every``-th point (by position) is held out (0: none); one of
        :data:`HOLDOUT_CHOICES`.
    """

    points: np.ndarray
    labels: np.ndarray
    every: int = HOLDOUT_EVERY

    def __post_init__(self):
        points = np.asarray(self.points, dtype=float).reshape(-1, 2)
        labels = np.asarray(self.labels, dtype=bool)
        if labels.ndim != 2 or labels.shape[0] != points.shape[0]:
            raise DataError(
                f"A board needs one row of classes per point; got {labels.shape} for "
                f"{points.shape[0]} points."
            )
        if not 1 <= labels.shape[1] <= MAX_CLASSES:
            raise DataError(f"A board has 1 to {MAX_CLASSES} classes; got {labels.shape[1]}.")
        if points.shape[0] > MAX_POINTS:
            raise DataError(f"A board holds at most {MAX_POINTS} points; got {points.shape[0]}.")
        if not np.isfinite(points).all():
            raise DataError("A board's points must be finite numbers.")
        if len(labels) and not labels.any(axis=1).all():
            raise DataError("Every point of a board carries at least one class.")
        if self.every not in HOLDOUT_CHOICES:
            raise DataError(
                f"Every n-th point is held out, n one of {HOLDOUT_CHOICES[1:]} (0: none); got "
                f"{self.every!r}."
            )
        object.__setattr__(self, "points", _snap(points))
        object.__setattr__(self, "labels", labels.copy())

    @classmethod
    def empty(cls, n_classes: int = 2) -> Board:
        return cls(np.zeros((0, 2)), np.zeros((0, n_classes), dtype=bool))

    def __len__(self) -> int:
        return self.points.shape[0]

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, Board)
            and self.every == other.every
            and self.labels.shape == other.labels.shape
            and np.array_equal(self.points, other.points)
            and np.array_equal(self.labels, other.labels)
        )

    __hash__ = None

    @property
    def n_classes(self) -> int:
        return self.labels.shape[1]

    @property
    def multilabel(self) -> bool:
        """Whether some point carries two or more classes."""
        return bool(len(self)) and bool((self.labels.sum(axis=1) > 1).any())

    @property
    def held_out(self) -> np.ndarray:
        """Every ``every``-th point (by default the fourth: positions 3, 7, 11, …): never
        fitted on, it measures the test error."""
        if not self.every:
            return np.zeros(len(self), dtype=bool)
        return np.arange(len(self)) % self.every == self.every - 1

    def with_holdout(self, every: int) -> Board:
        """The same points with every ``every``-th held out (0: none)."""
        return Board(self.points, self.labels, int(every))

    def with_classes(self, m: int) -> Board:
        """The board with ``m`` classes: new ones empty; points left with no class dropped."""
        if not 1 <= m <= MAX_CLASSES:
            raise DataError(f"A board has 1 to {MAX_CLASSES} classes; got {m}.")
        labels = np.zeros((len(self), m), dtype=bool)
        keep = min(m, self.n_classes)
        labels[:, :keep] = self.labels[:, :keep]
        kept = labels.any(axis=1)
        return Board(self.points[kept], labels[kept], self.every)

    def add(self, x: float, y: float, k: int) -> Board:
        """What a click of class ``k`` at (x, y) does: a new point of class ``k``; on an
        existing point (the same grid cell), class ``k`` added to it (a second class makes the
        board multi-label), or taken off it when it has it (the point goes with its last
        class)."""
        self._check_class(k)
        at = self.nearest(x, y, radius=1.5 / (LEVELS - 1))
        if at is not None:
            if self.labels[at, k] and self.labels[at].sum() == 1:
                return self.remove(at)
            labels = self.labels.copy()
            labels[at, k] = not labels[at, k]
            return Board(self.points, labels, self.every)
        row = np.zeros((1, self.n_classes), dtype=bool)
        row[0, k] = True
        points = np.vstack([self.points, [[x, y]]])
        return Board(points, np.vstack([self.labels, row]), self.every)

    def add_cluster(
        self, x: float, y: float, k: int, n: int = 20, spread: float = 0.12, seed: int = 0
    ) -> Board:
        """``n`` points of class ``k`` scattered (normal, sd ``spread``) around (x, y)."""
        self._check_class(k)
        n = max(0, min(int(n), MAX_POINTS - len(self)))
        rng = np.random.default_rng(seed)
        new = np.clip(rng.normal(loc=(x, y), scale=spread, size=(n, 2)), -1.0, 1.0)
        row = np.zeros((n, self.n_classes), dtype=bool)
        row[:, k] = True
        return Board(np.vstack([self.points, new]), np.vstack([self.labels, row]), self.every)

    def remove(self, i: int) -> Board:
        """The board without point ``i``."""
        keep = np.arange(len(self)) != int(i)
        return Board(self.points[keep], self.labels[keep], self.every)

    def nearest(self, x: float, y: float, radius: float) -> int | None:
        """The point within ``radius`` of (x, y) (the nearest), or None."""
        if not len(self):
            return None
        d = np.hypot(self.points[:, 0] - x, self.points[:, 1] - y)
        i = int(np.argmin(d))
        return i if d[i] <= radius else None

    def _check_class(self, k):
        if not 0 <= int(k) < self.n_classes:
            raise DataError(f"Class {k} is not one of this board's {self.n_classes} classes.")


# ----------------------------------------------------------------------------- link text
def encode_board(board: Board) -> str:
    """The board as a short text for a link: a version byte, the number of classes, then three
    bytes a point (x₁ and x₂ on the grid, the classes as bits), base64url without padding.

    >>> encode_board(Board([[-1.0, 1.0]], [[False, True]]))
    'AQIA_wI'
    """
    q = np.rint((board.points + 1.0) / 2.0 * (LEVELS - 1)).astype(np.uint8)
    bits = (board.labels * (1 << np.arange(board.n_classes))).sum(axis=1).astype(np.uint8)
    body = np.column_stack([q, bits]).astype(np.uint8).tobytes()
    raw = bytes([_VERSION, board.n_classes]) + body
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_board(text) -> Board:
    """The board a link's text holds (:func:`encode_board`).

    Raises
    ------
    DataError
        The text is too long, not base64url, of another version, or holds a point with no
        class or a class the board does not have.
    """
    if not isinstance(text, str):
        raise DataError("The link's points are not text.")
    if len(text) > MAX_ENCODED:
        raise DataError(
            f"The link's points are {len(text):,} characters; a board of at most "
            f"{MAX_POINTS} points takes at most {MAX_ENCODED:,}."
        )
    text = text.rstrip("=")  # padding, if a link kept it
    if not text or not set(text) <= set(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    ):
        raise DataError("The link's points are not in the playground's code (base64url).")
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise DataError("The link's points are not in the playground's code (base64url).") from None
    if len(raw) < 2 or raw[0] != _VERSION:
        raise DataError("The link's points were written by another version of the playground.")
    m = raw[1]
    if not 1 <= m <= MAX_CLASSES:
        raise DataError(f"The link names {m} classes; a board has 1 to {MAX_CLASSES}.")
    body = raw[2:]
    if len(body) % 3:
        raise DataError("The link's points are cut short (three bytes a point).")
    cells = np.frombuffer(body, dtype=np.uint8).reshape(-1, 3)
    bits = cells[:, 2].astype(int)
    if (bits == 0).any() or (bits >= 1 << m).any():
        raise DataError("A point in the link has no class, or a class the board does not have.")
    labels = ((bits[:, None] >> np.arange(m)) & 1).astype(bool)
    points = cells[:, :2].astype(float) / (LEVELS - 1) * 2.0 - 1.0
    return Board(points, labels)


def board_from_link(text, default: str = "two blobs") -> tuple[Board, str | None, bool]:
    """``(board, note, offer)`` for a link's ``pts`` (None: no points in the link): the
    link's board, else the preset ``default``; a note to show (or None), and whether to offer
    the default board beside it.

    Every board a link can hold opens with its points as they were: one of a single class
    gets an empty second class (a model needs two; issue #44: a one-class link raised an
    IndexError on every run). A link that cannot be read gives an empty plane and says why.

    >>> board, note, offer = board_from_link("AQI*")
    >>> len(board), offer, note.startswith("The link's points could not be read")
    (0, True, True)
    """
    if text is None:
        return preset(default), None, False
    try:
        board = decode_board(text)
    except DataError as exc:
        note = f"The link's points could not be read ({exc}); the plane is empty."
        return Board.empty(2), note, True
    if board.n_classes < 2:
        note = (
            "The link's board has one class (A). A model needs two: class B is added, with no "
            "points yet; place some to see the models at work."
        )
        return board.with_classes(2), note, False
    return board, None, False


def held_out_note(board: Board) -> str:
    """Why some points are hollow, in one sentence.

    >>> held_out_note(preset("XOR"))[:33]
    'Every fourth point you place is h'
    """
    n = board.every
    if not n:
        return "No point is held out: the test error is not measured."
    nth = {2: "second", 3: "third", 4: "fourth", 5: "fifth"}[n]
    return (
        f"Every {nth} point you place is held out (drawn hollow): the model never sees it, so "
        "its error there is the test error."
    )


#: "What am I looking at?": a point, the plane's colour, the dashed line (Markdown).
WHAT_YOU_SEE = (
    "**A point** is one example at (x₁, x₂); its colour is its class, and a point of several "
    "classes has a ring for each (hover it for its classes).\n\n"
    "**The colour of the plane** is what the model says there: the class it predicts, or for "
    "one class its probability π (deeper = surer), or that class's evidence f̄.\n\n"
    "**The dashed line** is where the model starts to give the class: inside it, the class "
    "is predicted. Click to add a point and watch it move."
)
#: The short lesson's text, step by step (Markdown; 0: before the first step).
LESSON_STEPS = {
    0: "Three steps on a class that lives where two others overlap. Press 1 to begin.",
    1: "**1.** Every point of C is also a point of A and of B (three rings). *Predict:* in "
    "row C of β (below), which weights are non-zero: C's own, A's, B's? Then press 2.",
    2: "**2.** λ raised to 3.2e-2: which of C's weights survive? C's own evidence says “near C's "
    "points” directly; A's and B's only help at C's edges (“A without B is not C”: a negative "
    "weight), and the L1 penalty drops what adds least. Co-occurring is not being needed.",
    3: "**3.** 15% of all labels flipped at random: move λ and watch the test error and which "
    "of C's weights come and go.",
}


# ----------------------------------------------------------------------------- presets
def _blob(rng, center, n, sd):
    return np.clip(rng.normal(loc=center, scale=sd, size=(n, 2)), -1.0, 1.0)


def _two_blobs(rng):
    pts = np.vstack([_blob(rng, (-0.45, -0.3), 40, 0.2), _blob(rng, (0.45, 0.3), 40, 0.2)])
    return pts, np.repeat(np.eye(2, dtype=bool), 40, axis=0)


def _xor(rng):
    centers = [(-0.5, -0.5), (0.5, 0.5), (-0.5, 0.5), (0.5, -0.5)]
    pts = np.vstack([_blob(rng, c, 25, 0.15) for c in centers])
    return pts, np.repeat(np.eye(2, dtype=bool)[[0, 0, 1, 1]], 25, axis=0)


def _rings(rng):
    n = 60
    r = np.r_[rng.uniform(0.0, 0.35, n), rng.uniform(0.65, 0.9, n)]
    a = rng.uniform(0, 2 * np.pi, 2 * n)
    pts = np.c_[r * np.cos(a), r * np.sin(a)]
    return pts, np.repeat(np.eye(2, dtype=bool), n, axis=0)


def _overlap(rng):
    """A and B two wide bands that overlap in the middle; C exactly where both are."""
    pts = np.c_[rng.uniform(-0.9, 0.9, 150), rng.uniform(-0.6, 0.6, 150)]
    a, b = pts[:, 0] < 0.25, pts[:, 0] > -0.25
    return pts, np.c_[a, b, a & b]


def _noisy(rng):
    pts, labels = _two_blobs(rng)
    flip = rng.random(len(pts)) < 0.15
    labels[flip] = ~labels[flip]
    return pts, labels


PRESETS = {
    "two blobs": _two_blobs,
    "XOR": _xor,
    "rings": _rings,
    "C where A and B overlap": _overlap,
    "noisy labels": _noisy,
}


def preset(name: str, seed: int = 0) -> Board:
    """One of :data:`PRESETS` (seeded: the same board for everyone)."""
    if name not in PRESETS:
        raise DataError(f"Unknown preset {name!r}; one of {', '.join(PRESETS)}.")
    pts, labels = PRESETS[name](np.random.default_rng(seed))
    return Board(pts, labels)


def with_label_noise(board: Board, share: float, seed: int = 0) -> Board:
    """The board with noisy labels (seeded): multi-class, about ``share`` of the points get
    another class, drawn at random (the board stays multi-class); multi-label, about ``share``
    of its (point, class) labels are flipped, a point left with no class keeping its first.

    >>> board = preset("two blobs")
    >>> noisy = with_label_noise(board, 0.2, seed=1)
    >>> noisy.multilabel, 0 < int((noisy.labels != board.labels).any(axis=1).sum()) < len(board)
    (False, True)
    """
    if not 0.0 <= float(share) <= 1.0:
        raise DataError(f"The share of labels to flip is between 0 and 1; got {share}.")
    rng = np.random.default_rng(seed)
    if not board.multilabel:
        m = board.n_classes
        codes = np.argmax(board.labels, axis=1)
        moved = rng.random(len(board)) < float(share)
        codes[moved] = (codes[moved] + rng.integers(1, max(m, 2), moved.sum())) % m
        return Board(board.points, np.eye(m, dtype=bool)[codes], board.every)
    labels = board.labels ^ (rng.random(board.labels.shape) < float(share))
    empty = ~labels.any(axis=1)
    labels[empty, np.argmax(board.labels[empty], axis=1)] = True
    return Board(board.points, labels, board.every)


# ----------------------------------------------------------------------------- models
def _training(board: Board):
    """The training points and their targets: the 0/1 matrix (multi-label) or class codes."""
    train = ~board.held_out
    X = board.points[train]
    if board.multilabel:
        return X, board.labels[train].astype(int)
    return X, np.argmax(board.labels[train], axis=1)


def fit_board(board: Board, model: str = SPARSE_SBLR.label, *, gamma=1.0, lam=1e-3):
    """``model`` ("SML", "SBLR" or "SparseSBLR") fitted on the board's training points.

    Multi-label when a point carries two classes, else multi-class on the class codes; the
    decision is the model's own (multi-label: its fitted cut). Classes with no training point
    are not known to the model (:func:`surface` gives them 0).

    Raises
    ------
    DataError
        Fewer than two training points, or fewer than two classes among them.
    """
    from sblr.models import make_model  # lazy: scikit-learn, about 1 s; the board needs none

    X, y = _training(board)
    classes = np.unique(y) if y.ndim == 1 else np.flatnonzero(y.any(axis=0))
    if len(X) < 2 or len(classes) < 2:
        raise DataError("Place points of at least two classes (two or more training points).")
    if y.ndim == 2 and (y.all(axis=0)).any():
        raise DataError("A class is on every training point: give some points no such class.")
    try:
        get_model(model)
    except ValueError as exc:
        raise DataError(str(exc)) from None
    return make_model(model, gamma=gamma, lam=lam).fit(X, y)


def _board_columns(model, board: Board):
    """For each board class, its column in the model's outputs (None: the model lacks it)."""
    classes = list(getattr(model, "classes_", range(board.n_classes)))
    if board.multilabel:
        return list(range(board.n_classes))
    return [classes.index(c) if c in classes else None for c in range(board.n_classes)]


def _in_board_order(model, board: Board, out, axes=(1,)) -> np.ndarray:
    """``out`` (columns in the model's class order, on each axis of ``axes``) in the board's
    class order; a class the model lacks (no training point) is 0."""
    out = np.asarray(out, dtype=float)
    cols = _board_columns(model, board)
    have = [c for c, j in enumerate(cols) if j is not None and j < out.shape[axes[0]]]
    index = [cols[c] for c in have]
    shape = list(out.shape)
    for axis in axes:
        shape[axis] = board.n_classes
    full = np.zeros(shape)
    if len(axes) == 1:
        full[:, have] = out[:, index]
    else:
        full[np.ix_(have, have)] = out[np.ix_(index, index)]
    return full


def _class_outputs(model, board: Board, X, what: str) -> np.ndarray:
    """(n, m) outputs for the board's classes: π (``"proba"``) or f̄ (``"evidence"``)."""
    out = model.predict_proba(X) if what == "proba" else model.evidence(X)
    return _in_board_order(model, board, out)


def board_beta(model, board: Board) -> np.ndarray:
    """β[k, t] of a fitted SBLR / SparseSBLR in the board's class order (m × m; a class the
    model lacks has zeros).

    >>> board = preset("two blobs")
    >>> board_beta(fit_board(board, "SBLR"), board).shape
    (2, 2)
    """
    return _in_board_order(model, board, model.coef_, axes=(0, 1))


def board_evidence(model, board: Board) -> np.ndarray:
    """The evidence f̄ of every point of the board (n × m, board class order): a training point
    without its own similarity, as the model saw it; a held-out point as a new query."""
    F = np.asarray(model.evidence(board.points), dtype=float)
    F[~board.held_out] = model.featurizer_.training_evidence()
    return _in_board_order(model, board, F)


def evidence_pair(model, board: Board, k: int | None, *, evidence=None) -> tuple[int, int]:
    """The two classes whose evidence best shows class ``k``'s decision: ``k`` itself and the
    other class that moves ``k`` most.

    For SBLR / SparseSBLR the other class is the one with the largest ``|β[k, t]|`` (t ≠ k);
    for SML (no β) the one whose evidence is largest, on average, at ``k``'s training points;
    ties go to the first class. ``k=None`` (the multi-class map of every class) shows classes
    0 and 1. A board of one class gives ``(k, k)``. ``evidence``: the board's
    :func:`board_evidence`, if the caller has it (the page draws it too).

    >>> board = preset("C where A and B overlap")
    >>> evidence_pair(fit_board(board, "SBLR"), board, 2)[0]
    2
    >>> evidence_pair(fit_board(preset("two blobs"), "SML"), preset("two blobs"), None)
    (0, 1)
    """
    m = board.n_classes
    if k is None:
        return (0, 1) if m > 1 else (0, 0)
    k = int(k)
    board._check_class(k)
    others = [t for t in range(m) if t != k]
    if not others:
        return k, k
    if hasattr(model, "coef_"):
        weight = np.abs(board_beta(model, board)[k])
    else:
        F = board_evidence(model, board) if evidence is None else np.asarray(evidence)
        rows = board.labels[:, k] & ~board.held_out
        weight = F[rows].mean(axis=0) if rows.any() else np.zeros(m)
    return k, max(others, key=lambda t: (weight[t], -t))


def surface(model, board: Board, k: int | None, n: int = 60, *, what: str = "proba"):
    """The model over an ``n`` × ``n`` grid of the plane.

    Returns ``(xs, Z)``: the grid's coordinates on each axis (``n`` values from -1 to 1) and
    ``Z[i, j]`` at (x₁, x₂) = (xs[j], xs[i]): class ``k``'s πₖ (``what="proba"``) or evidence
    f̄ₖ (``"evidence"``); with ``k=None`` the most probable class's index (multi-class maps).
    """
    xs = np.linspace(-1.0, 1.0, int(n))
    gx, gy = np.meshgrid(xs, xs)
    grid = np.c_[gx.ravel(), gy.ravel()]
    out = _class_outputs(model, board, grid, what)
    Z = np.argmax(out, axis=1) if k is None else out[:, int(k)]
    return xs, Z.reshape(len(xs), len(xs))


def board_scores(model, board: Board) -> dict:
    """Training and test error of ``model`` on the board (multi-label: the share of wrong
    label decisions, and micro-F1), with the number of points of each."""
    held = board.held_out
    scores = {}
    for part, rows in (("train", ~held), ("test", held)):
        if not rows.any():
            scores[part] = None
            continue
        pred = np.asarray(model.predict(board.points[rows]))
        if board.multilabel:
            truth = board.labels[rows]
            pred = pred.astype(bool)
            # micro-F1 by its definition, 2·TP / (2·TP + FP + FN) (0 when nothing is either
            # given or true); scikit-learn's f1_score took 20 ms a call, a third of a click
            tp = int((pred & truth).sum())
            wrong = int((pred != truth).sum())
            scores[part] = {
                "points": int(rows.sum()),
                "error": float(wrong / truth.size),
                "micro_f1": 2 * tp / (2 * tp + wrong) if tp + wrong else 0.0,
            }
        else:
            truth = np.argmax(board.labels[rows], axis=1)
            scores[part] = {"points": int(rows.sum()), "error": float((pred != truth).mean())}
    return scores


def decision_cut(model, board: Board, k: int) -> float:
    """The π of class ``k`` at which the model decides, as the plane draws it: multi-label,
    the cut the model fitted on its training points (its :class:`~sblr.decision.Decision`;
    0.5 for SML's own rule); multi-class, 0.5 (where two classes are equally probable).

    >>> board = preset("C where A and B overlap")
    >>> cut = decision_cut(fit_board(board, "SBLR"), board, 2)
    >>> 0.0 < cut < 1.0
    True
    """
    if not board.multilabel:
        return 0.5
    from sblr.decision import Decision

    return Decision.of(model).cut(k)


def ignores_points(model) -> bool:
    """Whether a model with β has every β at 0 (λ large enough): its π is then the same at
    every place of the plane, whatever the points (SML has no β: never)."""
    coef = getattr(model, "coef_", None)
    return coef is not None and not np.any(coef)


def plane_title(model_name: str, k: int | None, what: str, *, cut=None, flat=False) -> str:
    """The plane's title: what is coloured, and what the dashed line is (none when the model
    ignores the points: ``flat``).

    >>> plane_title("SBLR", 2, "proba", cut=0.42)
    'SBLR: π of C (dashed: π = 0.42, where it decides)'
    >>> plane_title("SparseSBLR", 0, "proba", cut=0.5, flat=True)
    'SparseSBLR: π of A, the same everywhere (every β is 0)'
    """
    if k is None:
        return f"{model_name}: where it predicts each class"
    name = CLASS_NAMES[k]
    if what == "evidence":
        return f"{model_name}: evidence f̄ of {name}"
    if flat:
        return f"{model_name}: π of {name}, the same everywhere (every β is 0)"
    if cut is None:
        return f"{model_name}: π of {name}"
    return f"{model_name}: π of {name} (dashed: π = {cut:.2f}, where it decides)"


def error_along_lambda(board: Board, model: str, *, gamma: float, lams) -> dict:
    """Training and test error of ``model`` fitted on the board at each λ of ``lams`` (the
    share of wrong classes, multi-class; of wrong label decisions, multi-label), for a curve
    of error against λ. Test errors are None without held-out points.

    >>> out = error_along_lambda(preset("XOR"), "SparseSBLR", gamma=1.0, lams=[1e-4, 1.0])
    >>> [round(e, 2) for e in out["train"]]
    [0.0, 0.5]
    """
    lams = [float(v) for v in lams]
    train, test = [], []
    held = board.held_out
    truth = board.labels.astype(int) if board.multilabel else np.argmax(board.labels, axis=1)
    for lam in lams:
        fitted = fit_board(board, model, gamma=gamma, lam=lam)
        wrong = np.asarray(fitted.predict(board.points)) != truth
        wrong = wrong.reshape(len(board), -1)
        train.append(float(wrong[~held].mean()))
        test.append(float(wrong[held].mean()) if held.any() else None)
    return {"lams": lams, "train": train, "test": test}


def board_csv(board: Board) -> bytes:
    """The board as a CSV the dashboard loads back: ``x1, x2`` and, multi-label, one 0/1
    column per class (choose them as the labels); multi-class, a ``class`` column."""
    import pandas as pd  # lazy: 0.25 s; only the CSV download needs it

    frame = pd.DataFrame(board.points, columns=["x1", "x2"])
    names = CLASS_NAMES[: board.n_classes]
    if board.multilabel:
        for c, name in enumerate(names):
            frame[name] = board.labels[:, c].astype(int)
    else:
        frame["class"] = [names[c] for c in np.argmax(board.labels, axis=1)]
    buf = io.StringIO()
    frame.to_csv(buf, index=False, float_format="%.6g")
    return buf.getvalue().encode()


# ----------------------------------------------------------------------------- the page
# What pages/playground.py shows, computed here (no Streamlit): the state its widgets keep
# in a mapping (the session's, or a dict in a test), what a click or a button does to it,
# and the plane, the scores and the texts of a run (:func:`plane_view`).

MODELS = tuple(m.label for m in (SPARSE_SBLR, SBLR, SML))
COLOUR_NAMES = ("blue", "red", "green", "purple", "orange", "cyan")
LOG_GAMMAS = [round(v, 2) for v in np.arange(-1.0, 2.01, 0.25)]
LOG_LAMS = [round(v, 2) for v in np.arange(-5.0, 0.01, 0.5)]
LAYERS = {"pi": "πₖ", "evidence": "evidence f̄ₖ"}  # link value -> the radio's option
SHARES = {0: "none", 5: "20%", 4: "25%", 3: "33%", 2: "50%"}  # every n-th held out
TABS = ("Scores", "β", "Error vs λ", "Evidence", "Lesson")
ACTIONS = {"adds a point": ":material/add: 1", "adds 20 around": ":material/grain: 20",
           "removes a point": ":material/remove:"}  # fmt: skip
GRID = 60  # the region's resolution
UNDO_STEPS = 50
DEFAULT_PRESET = "two blobs"
OVERLAP = "C where A and B overlap"
#: The preset box's entry while the board is the one a link brought (not a preset's).
FROM_LINK = "the link's board"
PRESET_LABELS = {OVERLAP: "C in A ∩ B"}  # short enough for its box
LESSON_BUTTONS = ("1 · C in A ∩ B", "2 · λ = 3.2e-2", "3 · 15% noise")
ALL = "all classes"
# the page's state: its board and what the widgets hold (their keys)
K_BOARD, K_UNDO, K_CLICKS, K_NOTE = "_pg_board", "_pg_undo", "_pg_clicks", "_pg_note"
K_CLEAN = "_pg_clean"  # the board before the noise slider's flips
K_INFO = "_pg_info"  # a note on the board the link opened (no fault of the link)
K_OFFER = "_pg_offer"  # the link could not be read: offer the default board
K_SEED = "_pg_seed"  # the seed of the preset's last new points

#: The widgets' help texts.
HELP = {
    "action": "+ 1 places a point (on an existing point: gives it the chosen class too — a "
    "point of two classes makes the board multi-label — or takes it off); + 20 scatters 20 "
    "points of the class around the click; − removes the point clicked.",
    "noise": "Makes this share of the labels wrong, at random, on the points as they were "
    "before the slider moved (multi-class: a point gets another class; multi-label: a point's "
    "class is flipped on or off). Back at 0% they return; placing or loading points starts "
    "again from those points.",
    "test": "Every n-th point (by the order placed) is kept from the model and drawn hollow; "
    "the test error is measured on them.",
    "model": "The page's own model.",
    "typed": "What a click there would do.",
    "region": "All classes: each coloured where the model predicts it (multi-class boards); a "
    "class: its π or evidence.",
    "gamma": "The RBF width of the playground's model (the sidebar's is for the data in use).",
    "lam": "SparseSBLR's L1 penalty on β (SML and SBLR have none); the sidebar's λ is for the "
    "data in use.",
    "layer": "πₖ: the model's probability of the class; f̄ₖ: the class's evidence, a sum of "
    "bumps around its points.",
    "t2": "Each point at (its evidence of the first class, of this class). The default is the "
    "class that moves the first one most (the largest |β|, or for SML the evidence largest at "
    "its points).",
}


def class_label(c: int) -> str:
    """A class by its name and colour.

    >>> class_label(1)
    'B (red)'
    """
    return f"{CLASS_NAMES[c]} ({COLOUR_NAMES[c]})"


def lam_label(v: float) -> str:
    """A log₁₀ λ as the slider shows it.

    >>> lam_label(-2.0), lam_label(-1.5)
    ('1e-2', '0.032')
    """
    return f"1e{v:g}" if float(v).is_integer() else f"{10**v:.2g}"


def _number(text, choices, default):
    try:
        value = round(float(text), 2)
    except (TypeError, ValueError):
        return default
    return value if value in choices else default


def state_from_link(query) -> dict:
    """The page's state at a session's first run, from the address's ``query`` (a mapping of
    its parameters): the board, the notes on it, and every setting; a link without the newer
    settings opens with their defaults.  The parameters: ``pts`` the points, ``pm`` ``pgamma``
    ``plam`` the model, ``pk`` the class shown, ``pl`` the colouring, ``pc`` the class to
    place, ``pt2`` the evidence-space partner, ``ptest`` the held-out share, ``ptab`` the panel
    open beside the plane: a link shows everyone the same picture.

    >>> state = state_from_link({"pts": encode_board(preset("XOR")), "pm": "SBLR", "plam": "9"})
    >>> len(state[K_BOARD]), state["pg_model"], state["pg_lam"]
    (100, 'SBLR', -3.0)
    """
    board, note, offer = board_from_link(query.get("pts"), DEFAULT_PRESET)
    every = int(_number(query.get("ptest"), list(SHARES), HOLDOUT_EVERY))
    names = CLASS_NAMES[: board.n_classes]
    state = {
        K_BOARD: board.with_holdout(every),
        K_NOTE if offer else K_INFO: note,
        K_OFFER: offer,
        "pg_test": every,
        "pg_model": query.get("pm") if query.get("pm") in MODELS else MODELS[0],
        "pg_gamma": _number(query.get("pgamma"), LOG_GAMMAS, 0.0),
        "pg_lam": _number(query.get("plam"), LOG_LAMS, -3.0),
        "pg_layer": LAYERS.get(query.get("pl"), LAYERS["pi"]),
        "pg_class": names.index(query["pc"]) if query.get("pc") in names else 0,
        "_pg_k": query.get("pk"),
        "_pg_t2": query.get("pt2"),
    }
    if query.get("ptab") in TABS:
        state["pg_tab"] = query["ptab"]
    if query.get("pts") and not offer:  # the box names the board shown, not the default preset
        state["pg_preset"] = FROM_LINK
    return state


def preset_options(state) -> list[str]:
    """The preset box's entries: the presets, and the link's board while it is shown."""
    return list(PRESETS) + ([FROM_LINK] if state.get("pg_preset") == FROM_LINK else [])


def set_board(state, new: Board, *, noisy: bool = False) -> None:
    """Make ``new`` the board (undo keeps the old); a change other than the noise slider's
    makes the new board the clean one (the slider back to 0 %)."""
    if not noisy:
        state.pop(K_CLEAN, None)
        state["pg_noise"] = 0
    old = state[K_BOARD]
    undo = state.setdefault(K_UNDO, [])
    undo.append(encode_board(old))
    del undo[:-UNDO_STEPS]
    new = new.with_holdout(old.every)
    state[K_BOARD] = new
    state["pg_classes"] = new.n_classes  # the "Classes" box follows a preset
    if new.multilabel and state.get("pg_show_k", ALL) == ALL:
        # a multi-label board has no one most probable class: the box names the class whose
        # π the plane shows, the class just placed
        placed = int(state.get("pg_class", 0))
        state["pg_show_k"] = CLASS_NAMES[min(placed, new.n_classes - 1)]


def undo(state) -> None:
    """The board before the last change."""
    steps = state.get(K_UNDO)
    if steps:
        state.pop(K_CLEAN, None)
        state["pg_noise"] = 0
        state[K_BOARD] = decode_board(steps.pop()).with_holdout(state[K_BOARD].every)
        state["pg_classes"] = state[K_BOARD].n_classes


def noise_changed(state) -> None:
    """The noise slider: the clean board with that share of its labels made wrong."""
    clean = state.get(K_CLEAN) or state[K_BOARD]
    share = state["pg_noise"] / 100
    set_board(state, with_label_noise(clean, share, seed=0) if share else clean, noisy=True)
    state[K_CLEAN] = clean


def load_preset(state) -> None:
    """The preset box: its board as everyone sees it first, and the class it is about (every
    class's region, or on a multi-label board its last)."""
    state[K_SEED] = 0
    board = preset(state["pg_preset"])
    state["pg_show_k"] = CLASS_NAMES[board.n_classes - 1] if board.multilabel else ALL
    set_board(state, board)


def new_points(state) -> None:
    """The chosen preset again, drawn with the next seed (the link's board: the default
    preset's)."""
    if state.get("pg_preset") not in PRESETS:
        state["pg_preset"] = DEFAULT_PRESET
    state[K_SEED] = state.get(K_SEED, 0) + 1
    set_board(state, preset(state.get("pg_preset", DEFAULT_PRESET), seed=state[K_SEED]))


def default_board(state) -> None:
    set_board(state, preset(DEFAULT_PRESET))


def clear(state) -> None:
    set_board(state, Board.empty(state[K_BOARD].n_classes))


def classes_changed(state) -> None:
    set_board(state, state[K_BOARD].with_classes(int(state["pg_classes"])))


def share_changed(state) -> None:
    state[K_BOARD] = state[K_BOARD].with_holdout(state["pg_test"])


def act(state, x: float, y: float, *, on_point: bool) -> str | None:
    """What a click at (x, y) does, by the chosen action and class; returns a note to show
    at once (a point placed that is held out), or None. A refusal goes to the page's note.

    >>> state = {K_BOARD: Board.empty(2), "pg_class": 1}
    >>> act(state, 0.5, 0.5, on_point=False), state[K_BOARD].labels.tolist()
    (None, [[False, True]])
    """
    board = state[K_BOARD]
    c = int(state.get("pg_class", 0))
    action = state.get("pg_action", "adds a point")
    try:
        if action == "removes a point":
            i = board.nearest(x, y, radius=0.06)
            if i is not None:
                set_board(state, board.remove(i))
        elif action == "adds 20 around":
            set_board(state, board.add_cluster(x, y, c, seed=len(board)))
        elif len(board) < MAX_POINTS or on_point:
            new = board.add(x, y, c)
            set_board(state, new)
            if len(new) > len(board) and new.held_out[-1]:
                return held_out_note(new)
    except DataError as exc:
        state[K_NOTE] = str(exc)
    return None


#: The plane's key (one for the page's life: the drawing keeps its canvas from board to board).
PLANE_KEY = "pg_plane"


def clicked(state) -> str | None:
    """The plane's click (``state[PLANE_KEY]["click"]``: ``{"x", "y", "on_point"}``, a click
    on a point carrying the point's own place, else the nearest cell's centre) acts as
    :func:`act`. Every click counts (:func:`click_count`), one that changes nothing too.

    >>> state = {K_BOARD: Board.empty(2), PLANE_KEY: {"click": {"x": 0.5, "y": 0.5}}}
    >>> clicked(state), len(state[K_BOARD]), click_count(state)
    (None, 1, 1)
    """
    click = (state.get(PLANE_KEY) or {}).get("click")
    if not click:
        return None
    state[K_CLICKS] = state.get(K_CLICKS, 0) + 1
    on_point = bool(click.get("on_point"))
    return act(state, float(click["x"]), float(click["y"]), on_point=on_point)


def click_count(state) -> int:
    """Clicks on the plane so far (a new number makes the drawing redraw, clearing the mark
    of the click)."""
    return int(state.get(K_CLICKS, 0))


def lesson(state, step: int) -> None:
    """Set the board and the page's settings for a step of the short lesson."""
    state["_pg_lesson"] = step
    state["pg_preset"] = OVERLAP
    if step in (1, 3):
        board = preset(OVERLAP)
        set_board(state, with_label_noise(board, 0.15, seed=0) if step == 3 else board)
    state["pg_model"] = SPARSE_SBLR.label
    state["pg_gamma"] = 0.0
    # on log rates C's weights on A and B fade between 1e-2 and 3e-2: at 10^-1.5 only C's
    # own survives (fit_board on the preset)
    state["pg_lam"] = -1.5 if step == 2 else -3.0
    state["pg_show_k"] = "C"
    state["pg_layer"] = LAYERS["pi"]


def region_options(state, board: Board) -> list[str]:
    """The "Region of" box's options (no "all classes" on a multi-label board), its value in
    the state made one of them (the link's class first, once)."""
    options = ([] if board.multilabel else [ALL]) + list(CLASS_NAMES[: board.n_classes])
    wanted = state.pop("_pg_k", None)
    if wanted is not None and wanted in options:
        state["pg_show_k"] = wanted
    if state.get("pg_show_k") not in options:
        state["pg_show_k"] = options[0]
    if state.get("pg_class", 0) >= board.n_classes:
        state["pg_class"] = 0
    state.setdefault("pg_classes", board.n_classes)
    return options


# the plane's settings, in the order of plane_view's parameters
KNOBS = ("pg_model", "pg_gamma", "pg_lam", "pg_show_k", "pg_layer")


def page_drawn(state) -> tuple:
    """What the Playground draws once a page run, above and under the plane: the classes, the
    undo button's state, the preset and whether the board has the 4 points the actions need
    (a click that changes one redraws the page).

    >>> page_drawn({K_BOARD: preset("XOR")})
    (2, False, None, True)
    """
    board = state[K_BOARD]
    return board.n_classes, bool(state.get(K_UNDO)), state.get("pg_preset"), len(board) >= 4


def knob_values(state, regions) -> tuple:
    """The plane's settings as the page draws them (:data:`KNOBS`' values and the "Region
    of" box's options): the page redraws its settings when these differ from those drawn (a
    lesson step sets them; a click that makes the board multi-label changes the options).

    >>> knob_values({"pg_model": "SML", "pg_gamma": 0.5}, ["all classes", "A"])
    ('SML', 0.5, None, None, None, ('all classes', 'A'))
    """
    return (*(state.get(key) for key in KNOBS), tuple(regions))


@functools.cache
def model_traits(model: str) -> tuple[bool, bool]:
    """(takes λ, learns β) of a model, as its estimator says.

    >>> model_traits("SparseSBLR"), model_traits("SML")
    ((True, True), (False, False))
    """
    from sblr.models import fits_from_evidence, make_model  # lazy: scikit-learn

    est = make_model(model)
    return "lam" in est.get_params(), fits_from_evidence(est)


@dataclass
class PlaneView:
    """What a run of the page shows beside and under the plane (:func:`plane_view`)."""

    board: Board
    model_name: str
    gamma: float
    lam: float
    k: int | None  # the class shown, None: every class's region
    what: str  # "proba" or "evidence"
    takes_lam: bool
    learns_beta: bool
    model: object = None  # the fitted model, None when it cannot be fitted
    problem: str | None = None  # why not
    flat: bool = False  # every β 0: the same π everywhere
    cut: float | None = None  # the dashed line's π, if it crosses the plane
    title: str = ""
    plane: dict | None = None  # the plane to draw (sblr.plots.playground.plane_payload)
    drawn: dict | None = None  # the plane's arguments (surface, k, what, cut, title)
    _scores: tuple | None = field(default=None, repr=False)  # scores(), once computed

    @property
    def names(self) -> list[str]:
        return list(CLASS_NAMES[: self.board.n_classes])

    @functools.cached_property
    def figure(self):
        """The same plane as a Plotly figure (:func:`~sblr.plots.playground.playground_plane`;
        the page draws :attr:`plane`, not this)."""
        from sblr.plots.playground import playground_plane

        b = self.board
        return playground_plane(b.points, b.labels, b.held_out, self.names, **self.drawn)

    @property
    def lam_if_taken(self) -> float | None:
        """λ if the model takes one (what the other pages are sent), else None."""
        return self.lam if self.takes_lam else None

    @property
    def flat_note(self) -> str | None:
        if not self.flat:
            return None
        return (
            f"Every β is 0 at λ = {self.lam:.2g}: **the model now ignores the points** and gives "
            "every place the same π. Lower λ to bring them back."
        )

    @property
    def caption(self) -> str:
        """The line under the plane."""
        b = self.board
        return (
            f"{len(b)} point{'' if len(b) == 1 else 's'} ({int(b.held_out.sum())} held out, "
            f"hollow), {b.n_classes} classes, {'multi-label' if b.multilabel else 'multi-class'}"
            ". A point's colour is its class; a point of several classes has a ring for each."
        )

    def scores(self) -> tuple[list[dict], str | None]:
        """The Scores tab: a metric a part (label, value, delta, help; value "–" without
        points) and the note on the cut (multi-label), or None. Computed once a view."""
        if self._scores is None:
            self._scores = self._scored()
        return self._scores

    def _scored(self):
        scores = board_scores(self.model, self.board)
        metrics = []
        for part, label in (("train", "Train"), ("test", "Test")):
            sc = scores[part]
            metric = {"label": f"{label} error", "value": "–", "delta": None, "help": None}
            if sc is not None:
                metric["value"] = f"{sc['error']:.1%}"
                metric["delta"] = f"micro-F1 {sc['micro_f1']:.2f}" if "micro_f1" in sc else None
                metric["help"] = f"On the {sc['points']} {part} points" + (
                    ": the share of wrong label decisions" if self.board.multilabel else ""
                )
            metrics.append(metric)
        note = None
        drawn = self.cut is not None and self.what == "proba" and not self.flat
        if drawn and self.board.multilabel:
            note = (
                f"Why is the dashed line at π = {self.cut:.2f}, not 0.5? With several classes a "
                "point may have, the model fits its cut on the training points, the π that "
                "gives the best micro-F1 there."
            )
        return metrics, note

    def beta(self):
        """The β tab: ``(figure, caption)``; without β ``(None, why)``."""
        from sblr import plots

        if not self.learns_beta:
            return None, f"{self.model_name} decides from the evidence alone: it has no β."
        coef = board_beta(self.model, self.board)
        label = self.model_name + (f", λ = {self.lam:.2g}" if self.takes_lam else "")
        lams = {label: self.lam} if self.takes_lam else None
        fig = plots.beta_heatmaps({label: coef}, self.names, lams=lams)
        caption = (
            f"β[k, t]: how class t's evidence moves class k's logit; {int((coef == 0).sum())} of "
            f"{coef.size} exactly 0 (white)."
        )
        return fig, caption

    def error_curve(self):
        """The Error vs λ tab: ``(note or None, figure)``: SparseSBLR's error at each λ of the
        slider (the model shown, if it takes λ)."""
        from sblr import plots

        note = None if self.takes_lam else f"{self.model_name} has no λ: the curve is SparseSBLR's."
        lams = [10.0**v for v in LOG_LAMS]
        curve = error_along_lambda(self.board, SPARSE_SBLR.label, gamma=self.gamma, lams=lams)
        return note, plots.error_curve(curve["lams"], curve["train"], curve["test"], lam=self.lam)

    @functools.cached_property
    def board_evidence(self) -> np.ndarray:
        """:func:`board_evidence` of the model (once a run: the pair and the plot)."""
        return board_evidence(self.model, self.board)

    def evidence_pair(self) -> tuple[int, int, list[int]]:
        """The Evidence tab's classes: ``(t1, t2, others)``, class t1 (the class shown) and
        the class that moves it most (:func:`evidence_pair`), and the classes t2 may be."""
        t1, t2 = evidence_pair(self.model, self.board, self.k, evidence=self.board_evidence)
        return t1, t2, [t for t in range(self.board.n_classes) if t != t1]

    def evidence_box(self, state) -> tuple[int, int, list[int], str]:
        """:meth:`evidence_pair` and the key of the box that chooses t2, keyed by the class
        and the model (a change of either starts from its own pair); the partner a link named
        (``state["_pg_t2"]``, a class name) is put in that box once."""
        t1, t2, others = self.evidence_pair()
        box = f"pg_space_t2:{t1}:{self.model_name}"
        wanted = state.pop("_pg_t2", None)
        if wanted in self.names and self.names.index(wanted) in others:
            state[box] = self.names.index(wanted)
        return t1, t2, others, box

    def evidence_space(self, t1: int, t2: int):
        """Each point at (its evidence of class t1, of class t2)."""
        from sblr import plots

        F, truth = self.board_evidence, self.board.labels[:, t1]
        fig = plots.evidence_scatter(F, t1, t2, truth, self.names, k=t1)
        fig.layout.height = 300
        return fig


#: The views :func:`plane_view` computed last, in this process (by the board and the settings):
#: the plane a click's preview drew (:func:`click_preview`) is the page's run's too, and λ
#: moved back and forth is fitted once. Views are read-only once made (their lazy parts
#: compute the same values, whichever session asks first).
VIEWS_KEPT = 16
_VIEWS: OrderedDict = OrderedDict()
_VIEWS_LOCK = threading.Lock()


def plane_view(
    board: Board, model_name: str, log_gamma: float, log_lam: float, shown_k: str = ALL,
    layer: str = LAYERS["pi"],
) -> PlaneView:  # fmt: skip
    """Fit the page's model on the board and draw the plane: everything the page shows about
    the model (its fit, the figure, the texts) for these settings (one of the
    :data:`VIEWS_KEPT` made last, if these are its board and settings).

    >>> view = plane_view(preset("XOR"), "SBLR", 0.0, -3.0)
    >>> view.k, view.title, view.problem, view.plane["surface"]["mode"]
    (None, 'SBLR: where it predicts each class', None, 'region')
    >>> plane_view(Board.empty(2), "SML", 0.0, -3.0).problem[:22]
    'Place points of at lea'
    >>> plane_view(preset("XOR"), "SBLR", 0.0, -3.0) is view
    True
    """
    key = (encode_board(board), board.every, model_name, float(log_gamma), float(log_lam),
           shown_k, layer)  # fmt: skip
    with _VIEWS_LOCK:
        view = _VIEWS.get(key)
        if view is not None:
            _VIEWS.move_to_end(key)
            return view
    view = _plane_view(board, model_name, log_gamma, log_lam, shown_k, layer)
    with _VIEWS_LOCK:
        _VIEWS[key] = view
        while len(_VIEWS) > VIEWS_KEPT:
            _VIEWS.popitem(last=False)
    return view


def _plane_view(board, model_name, log_gamma, log_lam, shown_k, layer) -> PlaneView:
    from sblr.plots.playground import plane_payload

    takes_lam, learns = model_traits(model_name)
    k = None if shown_k == ALL else CLASS_NAMES.index(shown_k)
    what = "evidence" if layer == LAYERS["evidence"] and k is not None else "proba"
    view = PlaneView(board, model_name, 10.0**log_gamma, 10.0**log_lam, k, what, takes_lam,
                     learns)  # fmt: skip
    try:
        view.model = fit_board(board, model_name, gamma=view.gamma, lam=view.lam)
    except DataError as exc:
        view.problem = str(exc)
    surf = None
    if view.model is not None:
        view.flat = ignores_points(view.model)
        surf = surface(view.model, board, k, GRID, what=what)
        if k is not None:
            cut = decision_cut(view.model, board, k)
            # π on one side of the cut everywhere: no line to draw, none promised
            view.cut = cut if surf[1].min() < cut < surf[1].max() else None
    view.title = plane_title(model_name, k, what, cut=view.cut, flat=view.flat)
    view.drawn = dict(surface=surf, k=k, what=what, title=view.title,
                      cut=None if view.flat or what != "proba" else view.cut)  # fmt: skip
    view.plane = plane_payload(board.points, board.labels, board.held_out, view.names,
                               **view.drawn)  # fmt: skip
    return view


def link_params(state, view: PlaneView, t2: int | None) -> dict:
    """The address's parameters for this view (None: not in the address; ``pt2`` None: left
    as it is, the partner staying while its panel is closed)."""
    board = view.board
    tab = state.get("pg_tab", TABS[0])
    return {
        "pts": encode_board(board),
        "pm": view.model_name,
        "pgamma": f"{state['pg_gamma']:g}",
        "plam": f"{state['pg_lam']:g}",
        "pk": state["pg_show_k"],
        "pl": next(v for v, label in LAYERS.items() if label == state["pg_layer"]),
        "pc": CLASS_NAMES[int(state.get("pg_class", 0))],
        "pt2": None if t2 is None else CLASS_NAMES[t2],
        "ptab": None if tab == TABS[0] else tab,
        "ptest": None if board.every == HOLDOUT_EVERY else str(board.every),
    }


def sync_link(query, params: dict) -> None:
    """Write ``params`` (:func:`link_params`) into the address ``query`` (a mapping), setting
    only what changed."""
    for name, value in params.items():
        if value is None:
            if name != "pt2":
                query.pop(name, None)
        elif query.get(name) != value:
            query[name] = value


# ------------------------------------------------------------------ a click drawn at once
# The canvas asks the server for the plane a click makes before it asks for the page's run
# (the dashboard's route, pages/_shared/routes.py), and draws it at once: a run of the page
# is 3-5 React renders of Streamlit's frontend (issue #46 item 6). The run follows and draws
# the same view (plane_view keeps it); the route is a shortcut, never the only way.

#: The largest request :func:`click_preview` is asked with (a full board's text: 1,604 bytes).
PREVIEW_MAX_BYTES = 4096
_PREVIEW_FIELDS = ("board", "every", "knobs", "place", "action", "click")


def preview_basis(state, knobs: tuple) -> dict:
    """What the canvas sends with a click for :func:`click_preview`: the board as drawn (its
    link text and held-out share), the plane's settings (``knobs``, :func:`knob_values`), the
    class to place and what a click does.

    >>> basis = preview_basis({K_BOARD: preset("XOR")}, ("SML", 0.0, -3.0, ALL, "πₖ", ()))
    >>> sorted(basis), basis["knobs"]
    (['action', 'board', 'every', 'knobs', 'place'], ['SML', 0.0, -3.0, 'all classes', 'πₖ'])
    """
    board = state[K_BOARD]
    return {
        "board": encode_board(board),
        "every": board.every,
        "knobs": list(knobs[: len(KNOBS)]),
        "place": int(state.get("pg_class", 0)),
        "action": state.get("pg_action", "adds a point"),
    }


def _one_of(value, choices, what: str):
    """``value`` as the member of ``choices`` it equals (a number: by value, never a bool)."""
    numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
    for choice in choices:
        if (numeric and isinstance(choice, float) and value == choice) or (
            isinstance(value, str) and value == choice
        ):
            return choice
    raise DataError(f"A click's request has a {what} the page does not offer: {value!r:.40}.")


def _coordinate(click, name: str) -> float:
    v = click.get(name)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not -1.0 <= v <= 1.0:
        raise DataError(f"A click's {name} is not a number from -1 to 1: {v!r:.40}.")
    return float(v)


def _preview_state(request) -> dict:
    """The page's state as a click's request describes it, every field checked."""
    if not isinstance(request, dict):
        raise DataError("A click's request is not a JSON object.")
    missing = [name for name in _PREVIEW_FIELDS if name not in request]
    if missing:
        raise DataError(f"A click's request lacks {', '.join(missing)}.")
    knobs, click = request["knobs"], request["click"]
    if not isinstance(knobs, list) or len(knobs) != len(KNOBS):
        raise DataError(f"A click's request needs the plane's {len(KNOBS)} settings.")
    if not isinstance(click, dict):
        raise DataError("A click's request has no click (x, y, on_point).")
    every = request["every"]
    if isinstance(every, bool) or not isinstance(every, int) or every not in HOLDOUT_CHOICES:
        raise DataError(
            f"A click's request holds out a share the page does not offer: {every!r:.20}."
        )
    place = request["place"]
    if isinstance(place, bool) or not isinstance(place, int) or not 0 <= place < MAX_CLASSES:
        raise DataError(f"A click's request places a class the page does not have: {place!r:.40}.")
    offered = (  # each of KNOBS' options, and its name in a refusal
        (MODELS, "model"), (LOG_GAMMAS, "γ"), (LOG_LAMS, "λ"),
        ((ALL, *CLASS_NAMES), "class shown"), (tuple(LAYERS.values()), "colouring"),
    )  # fmt: skip
    return {
        K_BOARD: decode_board(request["board"]).with_holdout(every),
        **{key: _one_of(v, *o) for key, v, o in zip(KNOBS, knobs, offered, strict=True)},
        "pg_class": place,
        "pg_action": _one_of(request["action"], tuple(ACTIONS), "action"),
        PLANE_KEY: {
            "click": {
                "x": _coordinate(click, "x"),
                "y": _coordinate(click, "y"),
                "on_point": bool(click.get("on_point")),
            }
        },
    }


def click_preview(request) -> dict:
    """The plane a click makes, before the page's run: the same transitions as the run
    (:func:`clicked`, :func:`region_options`, :func:`plane_view`) on a state of what
    ``request`` holds (:func:`preview_basis`'s fields and ``click``: ``{"x", "y",
    "on_point"}``), a parsed JSON object from the canvas.

    Returns
    -------
    dict
        ``plane``: the plane to draw (:attr:`PlaneView.plane`); ``basis``: the next click's
        :func:`preview_basis` (clicks faster than the page's runs chain on it).

    Raises
    ------
    DataError
        A field is missing, of the wrong type, or outside what the page offers (the board
        as :func:`decode_board` reads a link).

    Examples
    --------
    >>> basis = preview_basis({K_BOARD: preset("XOR")}, ("SML", 0.0, -3.0, ALL, "πₖ", ()))
    >>> out = click_preview({**basis, "click": {"x": 0.5, "y": -0.5, "on_point": False}})
    >>> placed = decode_board(out["basis"]["board"]).points[-1]
    >>> len(out["plane"]["points"]), placed.round(2).tolist()
    (101, [0.5, -0.5])
    """
    state = _preview_state(request)
    clicked(state)
    board = state[K_BOARD]
    knobs = knob_values(state, region_options(state, board))
    view = plane_view(board, *knobs[: len(KNOBS)])
    return {"plane": view.plane, "basis": preview_basis(state, knobs)}
