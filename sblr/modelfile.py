"""Model files that are safe to open: a fitted sblr estimator and what applying it needs.

:func:`save_model` writes a `skops <https://skops.readthedocs.io>`_ file (the format
scikit-learn's own guidance recommends for sharing models: it does not run code on load,
unlike a pickle) holding the estimator and, beside it, what is needed to apply it to a new
file: the feature names and how the training file was encoded (so a new file is read
``like=`` it), the class names, γ and λ, and the sblr version that wrote it.

:func:`load_model` opens such a file and nothing else.  Before anything is built from it:

* a file larger than ``MAX_MODEL_MB`` is refused unread;
* a file that is not a skops archive (a pickle, a joblib file, a truncated download) is
  refused: it is never unpickled;
* the archive's directory is read first: a member or a whole file that would unpack to more
  than ``MAX_UNPACKED_MB``, or to more than ``MAX_RATIO`` times its packed size beyond
  ``RATIO_FREE_MB`` (a zip bomb), is refused before anything is unpacked;
* its table of contents (``schema.json``) is bounded before JSON parses it: at most
  ``MAX_SCHEMA_MB``, ``MAX_SCHEMA_VALUES`` values and ``MAX_SCHEMA_DEPTH`` levels, counted
  on its bytes (parsed whole, 63 MB of ``[],`` are 21 million Python lists: 1.8 GB);
* every type the file would create must be sblr's own or one skops trusts by default
  (NumPy, SciPy, scikit-learn); a file naming any other type (a function, ``os.system``, a
  class of somebody's module) is refused, listing them;
* the model's info is checked field by field (types, lengths, unique names; its encoding
  key by key), and the model by the rules of its class (:mod:`sblr._fitted`): every
  parameter, every fitted array's shape (from the model's own numbers of classes, features
  and rows), dtype and range, and what the arrays say of each other -- a damaged array is
  refused when the file is opened, never found at a prediction;
* then the file is data, never live compiled state: a neighbour search (ML-kNN, IBLR) is
  rebuilt from its stored training rows (a stored tree whose index array points outside its
  data made the first prediction read out of bounds and crash the process), an SVM's
  arrays (BR-SVM) have been checked against each other before libsvm sees them, and the
  model must agree with the info (its type, task, classes, width and parameters).

Examples
--------
>>> import numpy as np, tempfile, os
>>> from sblr import SparseSBLRClassifier
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(40, 3)); y = (X[:, 0] > 0).astype(int)
>>> model = SparseSBLRClassifier(gamma=1.0, lam=1e-3).fit(X, y)
>>> path = os.path.join(tempfile.mkdtemp(), "model.skops")
>>> _ = save_model(model, path)
>>> saved = load_model(path)
>>> bool(np.array_equal(saved.estimator.predict_proba(X), model.predict_proba(X)))
True
>>> saved.info["params"]["lam"]
0.001
"""

from __future__ import annotations

import copy
import datetime
import functools
import importlib
import inspect
import io
import math
import os
import stat
import warnings
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from sblr import __version__
from sblr.display import label_set
from sblr.exceptions import DataError
from sblr.io import Encoding, load_dataset

# scikit-learn (about 1 s), skops (about 1.7 s) and the estimators (which import scikit-learn)
# are imported in the functions that need them: the dashboard's first page imports this module
# (pages/_shared/cache.py) and shows no model (benchmarks/startup.py lists what it loads).

__all__ = [
    "MAX_MODEL_MB",
    "ModelFileError",
    "SavedModel",
    "load_model",
    "model_bytes",
    "save_model",
]

#: Largest model file opened (MB): the exact models keep their training rows (an n × d
#: matrix), so a 150,000 × 100 data set makes a model of about 120 MB.
MAX_MODEL_MB = 512
#: Largest unpacked size of a model file, member by member and in all (MB), read from the zip
#: directory before anything is unpacked.  A member cannot unpack to more than the directory
#: says: Python's zipfile stops at the stated size (and fails its CRC check).
MAX_UNPACKED_MB = 2 * MAX_MODEL_MB
#: Largest ratio of unpacked to packed size beyond ``RATIO_FREE_MB`` unpacked: real models
#: unpack to 1-20x (float rows barely compress; 0/1 label matrices of int64 about 20-60x); a
#: 0.8 MB file unpacking to 800 MB of zeros is 1,000x.
MAX_RATIO = 100
RATIO_FREE_MB = 64
#: The most a model file's table of contents (``schema.json``: every object, field and list
#: element of the model; the arrays are members of their own) may hold: MB, values (each
#: array, object, key, number or text counts one) and levels of nesting, counted on its bytes
#: before JSON parses it.  What sblr writes (``python -m benchmarks.model_schema``): a
#: SparseSBLR of 20,000 features (its names, means and encoding: ~88 values a feature)
#: 38.9 MB, 1.76 million values; BR-SVM of 300 classes (one SVM each, ~1,900 values) 14.4 MB,
#: 0.57 million; SBLR, SML, ML-kNN, IBLR of 2,000 rows, 100 features and 300 classes 0.5 MB;
#: nesting 12-16 levels for every estimator.  A model file the dashboard opens is an upload of
#: at most 50 MB and skops stores its members unpacked, so its schema is below 50 MB, about
#: 2.3 million values.  Crafted schemas at these limits cost at most 316 MB more while they are
#: read (texts; the 20,000-feature file itself 305 MB); the 62 kB file of 63 MB of ``[],`` is
#: refused after its first MB (tests/test_modelfile_schema.py holds it below 600 MB).
MAX_SCHEMA_MB = 64
MAX_SCHEMA_VALUES = 3_000_000
MAX_SCHEMA_DEPTH = 64
#: Bytes of the schema counted at a time by :func:`_nesting_depth` (its working memory is
#: about 25 times this).
_DEPTH_BLOCK = 2**20
_NOT_STRUCTURE = bytes(sorted(set(range(256)) - set(b'"[]{}')))
#: Longest name in a model file (a feature, class, category or parameter's text), and the
#: longest of its other texts: a data set's name, the versions and the time it was saved
#: (sblr writes "2026-01-31 12:00 UTC").  A name is shown in tables, a stamp in one line.
MAX_NAME_CHARS = 1000
_INFO_TEXTS = {
    "task": 20,
    "estimator": 100,
    "sblr_version": 40,
    "saved_at": 40,
    "data": MAX_NAME_CHARS,
}
#: The layout of the file; a file of a newer layout is refused with the reason. 2: classes are
#: named by the module that defines them (``sblr.models._logistic.SBLRClassifier``) since
#: sblr.models, sblr.similarity and sblr.baselines are packages; an sblr that reads format 1
#: then says to upgrade, instead of calling the file's model "not an sblr estimator". Both open.
FORMAT = 2
_KIND = "sblr-model"
#: scikit-learn's own compiled types inside fitted neighbour searches (ML-kNN, IBLR): skops
#: does not trust them by default only because they are rebuilt from their state; they are
#: scikit-learn's, not somebody's code.
_SKLEARN_TYPES = {
    "sklearn.neighbors._kd_tree.KDTree",
    "sklearn.neighbors._ball_tree.BallTree",
    "sklearn.metrics._dist_metrics.EuclideanDistance64",
}


class ModelFileError(DataError):
    """The file is not an sblr model file, or not one that may be opened."""


@functools.cache
def _sblr_types() -> frozenset[str]:
    """The sblr classes a model file may hold: by the module that defines each
    (``sblr.models._logistic.SBLRClassifier``) and by the public one it is imported from
    (``sblr.models.SBLRClassifier``), the name files written before sblr.models,
    sblr.similarity and sblr.baselines became packages give it."""
    # lazy: the estimators import scikit-learn (about 1 s; see the note at the imports)
    from sblr import baselines, models, similarity, tuning

    out = set()
    for face in (models, similarity, tuning, baselines):
        rooms = [face] + [
            m
            for m in vars(face).values()
            if inspect.ismodule(m) and m.__name__.startswith(face.__name__ + ".")
        ]
        for module in rooms:
            for name, obj in vars(module).items():
                if isinstance(obj, type) and obj.__module__ == module.__name__:
                    out.add(f"{obj.__module__}.{obj.__qualname__}")
                    if getattr(face, name, None) is obj:
                        out.add(f"{face.__name__}.{name}")
    return frozenset(out)


def _estimator_types() -> set[str]:
    """The public sblr estimators (what a model file may hold as its model)."""
    from sklearn.base import BaseEstimator  # lazy: scikit-learn, about 1 s

    out = set()
    for name in _sblr_types():
        module, _, cls = name.rpartition(".")
        obj = getattr(importlib.import_module(module), cls)
        if issubclass(obj, BaseEstimator) and not cls.startswith("_"):
            out.add(name)
    return out


@dataclass(frozen=True)
class SavedModel:
    """A model read from a file: the estimator and what applying it needs.

    Attributes
    ----------
    estimator : fitted sblr estimator
    info : dict
        ``sblr_version``, ``format``, ``estimator`` (class name), ``params`` (γ, λ...),
        ``feature_names``, ``class_names``, ``task``, ``encoding`` (a dict, see
        :meth:`sblr.io.Encoding.to_dict`, or None) and ``data`` (the training data's name).
    notes : list of str
        What the reader should know (e.g. the file was written by another sblr version).
    """

    estimator: object
    info: dict
    notes: list = field(default_factory=list)

    @property
    def encoding(self):
        """The training file's :class:`sblr.io.Encoding`, or None (fitted on arrays)."""
        enc = self.info.get("encoding")
        return None if enc is None else Encoding.from_dict(enc)

    def features(self, X):
        """``X`` as the estimator takes it: the similarity models keep sparse rows sparse,
        the baselines get them dense."""
        # lazy: the estimators import scikit-learn (about 1 s; see the note at the imports)
        from sblr.models import SMLClassifier
        from sblr.models._logistic import _LogisticSimilarityClassifier
        from sblr.tuning import SBLRCV, SparseSBLRCV

        keeps_sparse = isinstance(
            self.estimator, (SMLClassifier, _LogisticSimilarityClassifier, SBLRCV, SparseSBLRCV)
        )
        if sp.issparse(X) and not keeps_sparse:
            return np.asarray(X.toarray(), dtype=np.float64)
        return X

    def predictions(self, rows):
        """One row per row of ``rows`` (a Dataset read with :meth:`read`): ``row`` (its
        position, from 0, as Explain and the Data page number rows), ``predicted`` (the class;
        multi-label: the labels joined by "; ", "(none)" for an empty set), ``true`` when the
        file has labels, for the similarity models ``evidence that counted most``: for the
        row's most probable class k, its logit and π and the two classes t whose terms
        βₜᵏ·f̄ₜ(x) raise it most and the two that lower it most (SML: the classes with the most
        evidence), then each class's probability ``p(<class>)`` (BR-SVM, which has none: its
        score ``score(<class>)``)."""
        est = self.estimator
        X = self.features(rows.X)
        names = [str(n) for n in (self.info.get("class_names") or rows.class_names)]
        pred = np.asarray(est.predict(X))
        if hasattr(est, "predict_proba"):
            scores, kind = np.asarray(est.predict_proba(X)), "p"
        else:
            scores, kind = np.asarray(est.decision_function(X)), "score"
            if scores.ndim == 1:  # two classes: one score for the second
                scores = np.c_[-scores, scores]

        def label_sets(Y):
            return [label_set(names, r) for r in np.asarray(Y)]

        multilabel = pred.ndim == 2
        table = pd.DataFrame({"row": np.arange(X.shape[0])})
        table["predicted"] = label_sets(pred) if multilabel else [str(v) for v in pred]
        if rows.has_labels:
            table["true"] = label_sets(rows.y) if multilabel else [str(v) for v in rows.y]
        # the reading before the numbers: after 20 probabilities the evidence was off screen
        counted = _evidence_that_counted(est, X, scores, names)
        if counted is not None:
            table["evidence that counted most"] = counted
        for j, name in enumerate(names):
            table[f"{kind}({name})"] = scores[:, j]
        return table

    def read(self, source, **kwargs):
        """A file read as the training file was (``load_dataset(source, like=...)``)."""
        if self.encoding is None:
            raise ModelFileError(
                "This model was fitted on arrays, not on a file: it records no encoding to "
                "read a file with. Pass the feature matrix itself."
            )
        return load_dataset(source, like=self.encoding, **kwargs)


def _evidence_that_counted(est, X, scores, names, n=3):
    """Per row, for its most probable class k: its logit and π, the classes t whose terms
    βₜᵏ·f̄ₜ(x) raise it most and those that lower it most (SBLR, SparseSBLR), or the classes
    with the most evidence (SML); None for the baselines, which have no class evidence."""
    # lazy: the estimators import scikit-learn (about 1 s; see the note at the imports)
    from sblr.models import SMLClassifier
    from sblr.models._logistic import _LogisticSimilarityClassifier

    est = getattr(est, "best_estimator_", est)  # a CV estimator predicts with its refit
    if not isinstance(est, (SMLClassifier, _LogisticSimilarityClassifier)):
        return None
    F = np.asarray(est.evidence(X), dtype=float)
    top = np.argmax(scores, axis=1)
    if isinstance(est, SMLClassifier):
        out = []
        for r in range(F.shape[0]):
            order = [t for t in np.argsort(-F[r], kind="stable")[:n] if F[r, t] > 0]
            out.append(", ".join(f"{names[t]} ({F[r, t]:.3g})" for t in order) or "none")
        return out
    # the net logit of the row's most probable class and what moved it most either way: a
    # "+31.05" beside π = 0.22 read as a strong yes when a -30.4 beside it said no
    terms = F * np.asarray(est.coef_)[top]
    logits = terms.sum(axis=1) + np.asarray(est.intercept_)[top]

    def listed(r, idx):
        return ", ".join(f"{names[t]} ({terms[r, t]:+.3g})" for t in idx) or "nothing"

    out = []
    for r in range(F.shape[0]):
        order = np.argsort(-terms[r], kind="stable")
        up = [t for t in order[:2] if terms[r, t] > 0]
        down = [t for t in order[::-1][:2] if terms[r, t] < 0]
        p = 1.0 / (1.0 + np.exp(-np.clip(logits[r], -700, 700)))
        out.append(
            f"{names[top[r]]}: logit {logits[r]:+.3g} (π {p:.2f}); raised by "
            f"{listed(r, up)}; lowered by {listed(r, down)}"
        )
    return out


def _check_unpacked_sizes(data, name, max_mb=MAX_UNPACKED_MB):
    """Refuse an archive whose directory promises more than the limits (a zip bomb), before
    any member is unpacked."""
    try:
        members = zipfile.ZipFile(io.BytesIO(data)).infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ModelFileError(f"{name} is damaged or truncated ({exc}).") from None
    limit = max_mb * 2**20
    total = 0
    for member in members:
        if member.file_size > limit:
            raise ModelFileError(
                f"{name} holds a part ({member.filename[:60]!r}) that would unpack to "
                f"{member.file_size / 2**20:,.0f} MB; a model file may unpack to at most "
                f"{max_mb:,.0f} MB. It is not opened."
            )
        total += member.file_size
    if total > limit:
        raise ModelFileError(
            f"{name} would unpack to {total / 2**20:,.0f} MB; a model file may unpack to at "
            f"most {max_mb:,.0f} MB. It is not opened."
        )
    if total > RATIO_FREE_MB * 2**20 and total > MAX_RATIO * len(data):
        raise ModelFileError(
            f"{name} would unpack to {total / 2**20:,.0f} MB from {len(data) / 2**20:,.1f} MB "
            f"({total / max(len(data), 1):,.0f} times its size; a model unpacks to at most "
            f"{MAX_RATIO} times): it is not opened."
        )


def _check_schema(data, name):
    """Refuse a table of contents (``schema.json``) larger, fuller or deeper than sblr writes,
    before JSON parses it: the size its directory states, then the values counted as it is
    unpacked (a 62 kB file unpacking to 63 MB of ``[],`` is refused after its first MB), then
    the nesting (JSON builds a Python object of ~60 bytes for each value)."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        member = archive.getinfo("schema.json")  # the member skops reads
    except (KeyError, zipfile.BadZipFile, OSError, ValueError):
        raise ModelFileError(f"{name} is damaged or truncated (it has no schema.json).") from None
    if member.file_size > MAX_SCHEMA_MB * 2**20:
        raise ModelFileError(
            f"{name} has a table of contents of {member.file_size / 2**20:,.0f} MB, more than "
            f"a model file's {MAX_SCHEMA_MB} MB, so it is not opened."
        )
    # every value but the first follows a ',' or opens an array or object, every key precedes
    # a ':' (counted inside texts too: an upper bound)
    values = 1
    try:  # zipfile unpacks at most the size its directory states (then fails its CRC check)
        with archive.open(member) as stream:
            while values <= MAX_SCHEMA_VALUES and (chunk := stream.read(2**20)):
                values += sum(chunk.count(c) for c in (b"[", b"{", b",", b":"))
        text = archive.read(member) if values <= MAX_SCHEMA_VALUES else b""
    except (zipfile.BadZipFile, zlib.error, OSError, ValueError, EOFError, RuntimeError) as exc:
        raise ModelFileError(f"{name} is damaged or truncated ({exc}).") from None
    if values > MAX_SCHEMA_VALUES:
        raise ModelFileError(
            f"{name} has a table of contents of more than {MAX_SCHEMA_VALUES:,} values, more "
            "than a model file holds, so it is not opened."
        )
    depth = _nesting_depth(text)
    if depth > MAX_SCHEMA_DEPTH:
        raise ModelFileError(
            f"{name} has a table of contents nested {depth:,} levels deep, deeper than a model "
            f"file's {MAX_SCHEMA_DEPTH}, so it is not opened."
        )


def _nesting_depth(text: bytes) -> int:
    r"""The deepest nesting of arrays and objects in the JSON ``text``, brackets inside texts
    not counted; exact for valid JSON, and for the part of invalid JSON a parser reads before
    its first error.  Counted in blocks of :data:`_DEPTH_BLOCK` bytes, in NumPy.

    >>> _nesting_depth(b'{"a": [[1], "]]]", {"b": "\\\\"}], "c": "[[[\\"[["}')
    3
    """
    # in a text, an escaped backslash and then an escaped quote are no delimiters: drop them
    # (in that order, so that a run of backslashes pairs up from its left, as JSON reads it);
    # then keep the quotes and brackets only (a fifth of what sblr writes)
    text = text.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _NOT_STRUCTURE)
    quotes = depth = deepest = 0
    for start in range(0, len(text), _DEPTH_BLOCK):
        block = np.frombuffer(text, np.uint8, min(_DEPTH_BLOCK, len(text) - start), start)
        is_quote = block == ord('"')
        outside = (np.cumsum(is_quote, dtype=np.int64) + quotes) % 2 == 0
        quotes += int(is_quote.sum())
        opens = outside & ((block == ord("[")) | (block == ord("{")))
        closes = outside & ((block == ord("]")) | (block == ord("}")))
        levels = np.cumsum(opens.astype(np.int32) - closes, dtype=np.int64) + depth
        if levels.size:
            deepest = max(deepest, int(levels.max()))
            depth = int(levels[-1])
    return deepest


def _check_info(info, name):
    """Every field of a model file's info, of the type, length and values it must have (the
    encoding: :func:`_check_encoding`)."""

    def bad(key, why):
        raise ModelFileError(f"{name}: its info field {key!r} {why}.")

    fmt = info.get("format", 0)
    if isinstance(fmt, bool) or not isinstance(fmt, int) or not 0 < fmt <= FORMAT:
        bad("format", f"must be a layout number 1 … {FORMAT}")
    for key in ("feature_names", "class_names"):
        value = info.get(key)
        if value is None:
            continue
        if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            bad(key, "must be a list of names")
        if any(len(v) > MAX_NAME_CHARS for v in value):
            bad(key, f"holds a name longer than {MAX_NAME_CHARS:,} characters")
        if len(set(value)) != len(value):
            bad(key, f"names {_first_repeated(value)!r} twice")
    for key, longest in _INFO_TEXTS.items():
        value = info.get(key)
        if value is not None and not isinstance(value, str):
            bad(key, "must be text")
        if value is not None and len(value) > longest:
            bad(key, f"is longer than {longest:,} characters")
    if info.get("task") not in (None, "multilabel", "multiclass"):
        bad("task", "must be multilabel or multiclass")
    for key in ("params", "frames"):
        if not isinstance(info.get(key) or {}, dict):
            bad(key, "must be a mapping")
    for key, value in (info.get("params") or {}).items():
        if not (
            isinstance(key, str)
            and (value is None or isinstance(value, (bool, int, float, str)))
            and (not isinstance(value, str) or len(value) <= MAX_NAME_CHARS)
        ):
            bad("params", "must map names to numbers, texts or None")
    if info.get("encoding") is not None:
        _check_encoding(info["encoding"], info, name)
    frames = info.get("frames") or {}
    for attr, frame in frames.items():
        if not (
            isinstance(attr, str)
            and attr.endswith("_")
            and isinstance(frame, dict)
            and all(isinstance(frame.get(k), list) for k in ("columns", "index", "data"))
            and all(isinstance(c, str) for c in frame["columns"])
            and len(frame["index"]) == len(frame["data"])
            and all(
                isinstance(row, list)
                and len(row) == len(frame["columns"])
                and all(v is None or isinstance(v, (bool, int, float, str)) for v in row)
                for row in frame["data"]
            )
        ):
            bad("frames", "holds a table that is not columns, index and rows")


#: The keys of a model file's encoding (:meth:`sblr.io.Encoding.to_dict`): those it must
#: have, and those it may.
_ENCODING_KEYS = {"features", "target", "task", "class_values", "means"}
_ENCODING_OPTIONAL = {"dropped", "sparse"}
_FEATURE_KINDS = ("numeric", "binary", "onehot")


def _check_encoding(enc, info, name):
    """A model file's encoding (how a new file is read like the training file): its keys and
    their types, unique names, each column's categories, and its widths and classes agreeing
    with the file's names -- refused in one sentence here, not at the first prediction."""

    def bad(why):
        raise ModelFileError(f"{name}: its encoding {why}, so it is not opened.")

    def names(value, what):
        if not (
            isinstance(value, list)
            and all(isinstance(v, str) and 0 < len(v) <= MAX_NAME_CHARS for v in value)
        ):
            bad(f"must list its {what} by name")
        if len(set(value)) != len(value):
            bad(f"names the {what} {_first_repeated(value)!r} twice")
        return value

    if not isinstance(enc, dict):
        bad("must be a mapping")
    missing, unknown = _ENCODING_KEYS - set(enc), set(enc) - _ENCODING_KEYS - _ENCODING_OPTIONAL
    if missing or unknown:
        bad(
            f"lacks {', '.join(sorted(missing))}"
            if missing
            else f"holds {', '.join(sorted(map(str, unknown)))}, which no encoding has"
        )
    task = enc["task"]
    if task not in ("multiclass", "multilabel") or task != info.get("task", task):
        bad("task must be the file's task, multiclass or multilabel")
    target = names(enc["target"], "target columns")
    if not target or (task == "multiclass" and len(target) != 1):
        bad("must name one class column, or the label columns")
    dropped = names(enc.get("dropped", []), "dropped columns")
    if not isinstance(enc.get("sparse", False), bool):
        bad("sparse must be true or false")
    features = enc["features"]
    if not isinstance(features, list) or not features:
        bad("must list its feature columns")
    width = 0
    for column in features:
        if not (isinstance(column, list) and len(column) == 4):
            bad("must give each feature column as [name, kind, categories, positive]")
        column_name, kind, categories, positive = column
        names([column_name], "feature columns")
        label = f"column {str(column_name)[:40]!r}"
        if kind not in _FEATURE_KINDS:
            bad(f"gives {label} the kind {str(kind)[:20]!r}, not {', '.join(_FEATURE_KINDS)}")
        names(categories, f"categories of {label}")
        if kind == "numeric" and (categories or positive is not None):
            bad(f"gives the numeric {label} categories")
        if kind == "binary" and not (len(categories) in (1, 2) and positive in categories):
            bad(f"must give the 0/1 {label} one or two categories, its 1 among them")
        if kind == "onehot" and (not categories or positive is not None):
            bad(f"must give the one-hot {label} its categories")
        width += len(categories) if kind == "onehot" else 1
    columns = names([c[0] for c in features], "feature columns")
    clash = set(columns) & (set(target) | set(dropped)) or set(target) & set(dropped)
    if clash:
        bad(f"uses the column {min(clash)!r} twice (a feature, target or dropped column)")
    means = enc["means"]
    if not (isinstance(means, list) and all(type(v) is float and math.isfinite(v) for v in means)):
        bad("means must be finite numbers")
    features_named = info.get("feature_names")
    if len(means) != width or (features_named is not None and len(features_named) != width):
        bad(f"makes {width} feature columns, but names {len(means)} means")
    # the columns of X it makes, named as the loader names them (a name repeated there was
    # renamed by the loader: then the file's names are not derived, and not compared)
    made = [
        name
        for column_name, kind, categories, _ in features
        for name in (
            [f"{column_name}={c}" for c in categories] if kind == "onehot" else [column_name]
        )
    ]
    if features_named is not None and len(set(made)) == len(made) and made != features_named:
        bad("makes feature columns other than the file's feature names, or in another order")
    values = enc["class_values"]
    if not (
        isinstance(values, list)
        and values
        and all(isinstance(v, str if task == "multilabel" else (str, int, float)) for v in values)
        and all(np.isfinite(v) for v in values if isinstance(v, float))
    ):
        bad("class_values must be the class values or label names")
    shown = [str(v) for v in values]
    if len(set(shown)) != len(shown):
        bad(f"names the class {_first_repeated(shown)!r} twice")
    classes = info.get("class_names")
    if (classes is not None and shown != classes) or (task == "multilabel" and shown != target):
        bad("class_values must be the file's class names, in their order")
    try:
        Encoding.from_dict(enc)
    except (KeyError, TypeError, ValueError) as exc:  # a form no check above foresaw
        bad(f"cannot be read ({exc})")


def _first_repeated(values):
    seen = set()
    for v in values:
        if v in seen:
            return v
        seen.add(v)
    return None


def _check_state(estimator, name):
    """The estimator's parameters and every fitted array and field, by the rules of its class
    (:mod:`sblr._fitted`: shapes from its own sizes, dtypes, ranges, what the arrays say of
    each other), before anything predicts."""
    # lazy: the rules import the estimators and scikit-learn (about 1 s; see the imports)
    from sblr._fitted import FittedStateError, check_fitted

    try:
        check_fitted(estimator)
    except FittedStateError as exc:
        raise ModelFileError(f"{name}: the model's {exc}, so it is not opened.") from None


def _rebuild_compiled(estimator):
    """Rebuild what a file must not supply as live compiled state: a neighbour search (ML-kNN,
    IBLR) from the stored rows the rules checked (a stored tree whose index array pointed
    outside its data made the first prediction read out of bounds and crash the process).
    An SVM's libsvm arrays are data, checked against each other by the rules."""
    from sklearn.neighbors import NearestNeighbors  # lazy: scikit-learn, about 1 s

    search = getattr(estimator, "nn_", None)
    if isinstance(search, NearestNeighbors):
        estimator.nn_ = NearestNeighbors(n_neighbors=search.n_neighbors).fit(estimator.X_fit_)


def _check_applies(estimator, info, name):
    """The estimator agrees with the file's info -- its type, task, classes, width and
    parameters are those the info names (the probability columns are labelled by them) --
    and it predicts one row."""

    def bad(why):
        raise ModelFileError(f"{name}: {why}; it is not opened.")

    if info.get("estimator") not in (None, type(estimator).__name__):
        bad(f"its info names a {info['estimator'][:40]} but it holds a {type(estimator).__name__}")
    task = "multilabel" if estimator.multilabel_ else "multiclass"
    if info.get("task") not in (None, task):
        bad(f"its info says {info['task']} but its model is {task}")
    classes = estimator.classes_
    names = info.get("class_names")
    if names is not None and len(names) != len(classes):
        bad(
            f"it names {len(names)} classes but its model has {len(classes)}, so the "
            "probability columns would be labelled wrongly"
        )
    if names is not None and task == "multiclass" and names != [str(c) for c in classes.tolist()]:
        bad("its class names are not its model's classes, in their order")
    features = info.get("feature_names")
    width = estimator.n_features_in_
    if features is not None and len(features) != width:
        bad(f"it names {len(features)} features but its model takes {width}")
    params = estimator.get_params(deep=False)
    for key, value in (info.get("params") or {}).items():
        if key in params and not _same_value(params[key], value):
            bad(f"its info gives {key} = {repr(value)[:40]} but its model {params[key]!r}")
    probe = np.zeros((1, int(width)))
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            estimator.predict(probe)
            scores = getattr(estimator, "predict_proba", None) or estimator.decision_function
            out = np.asarray(scores(probe), dtype=float)
    except Exception as exc:  # any failure of a damaged model: a typed refusal, not a page error
        raise ModelFileError(f"{name}: its model does not apply to a row ({exc}).") from None
    if out.ndim == 2 and out.shape[1] != len(classes):
        bad(f"its model gives {out.shape[1]} scores a row for {len(classes)} classes")


def _same_value(a, b):
    """A parameter of the model and its copy in the info (written as plain Python values):
    a flag or a text of the same type, a number of the same value."""
    a = bool(a) if isinstance(a, np.bool_) else a
    if isinstance(a, (bool, str)) or isinstance(b, (bool, str)):
        return type(a) is type(b) and a == b
    return a == b


def _content(estimator, dataset) -> dict:
    """What a model file holds: ``{"info": ..., "estimator": ...}`` (see :func:`save_model`)."""
    from sklearn.utils.validation import check_is_fitted  # lazy: scikit-learn, about 1 s

    name = f"{type(estimator).__module__}.{type(estimator).__qualname__}"
    if name not in _estimator_types():
        raise ModelFileError(f"save_model writes sblr estimators; got {name}.")
    check_is_fitted(estimator)
    for part in (estimator, getattr(estimator, "best_estimator_", None)):
        if hasattr(part, "fit_decision") and "threshold_" not in vars(part):
            raise ModelFileError(
                f"{type(part).__name__} was fitted without its decision (cuts=False): "
                "fit_decision(F) fits it before the model is saved."
            )
    # a table of results (a CV estimator's cv_results_) travels as plain lists: skops cannot
    # rebuild a pandas DataFrame, and need not
    frames = {}
    if any(isinstance(v, pd.DataFrame) for v in vars(estimator).values()):
        estimator = copy.copy(estimator)
        for attr, value in list(vars(estimator).items()):
            if isinstance(value, pd.DataFrame):
                frames[attr] = _frame_to_plain(value)
                delattr(estimator, attr)
    params = {
        k: (v.item() if isinstance(v, np.generic) else v)
        for k, v in estimator.get_params(deep=False).items()
        if isinstance(v, (int, float, str, bool, type(None), np.generic))
    }
    encoding = getattr(dataset, "encoding", None)
    info = {
        "kind": _KIND,
        "format": FORMAT,
        "sblr_version": __version__,
        # when it was written (UTC, to the minute): what a reader of an old file asks first
        "saved_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "estimator": type(estimator).__name__,
        "params": params,
        "feature_names": None if dataset is None else [str(n) for n in dataset.feature_names],
        "class_names": None if dataset is None else [str(n) for n in dataset.class_names],
        "task": None if dataset is None else dataset.task,
        "data": None if dataset is None else str(dataset.name),
        "encoding": None if encoding is None else encoding.to_dict(),
        "frames": frames,
    }
    if dataset is not None and len(info["feature_names"]) != getattr(
        estimator, "n_features_in_", len(info["feature_names"])
    ):
        raise ModelFileError(
            f"The model has {estimator.n_features_in_} features but the data set "
            f"{dataset.name!r} has {len(info['feature_names'])}: is it the data it was fitted "
            "on?"
        )
    return {"info": info, "estimator": estimator}


def save_model(estimator, path, *, dataset=None) -> Path:
    """Write a fitted sblr estimator to ``path`` as a skops file (see the module docstring).

    Parameters
    ----------
    estimator : fitted sblr estimator (SML, SBLR, SparseSBLR, SBLRCV, SparseSBLRCV, a baseline)
    path : str or path-like
    dataset : sblr.io.Dataset, optional
        The data it was fitted on: its feature names, class names and encoding go into the
        file, so that a new file can be read the same way (:meth:`SavedModel.read`).

    Returns
    -------
    pathlib.Path
    """
    import skops.io as sio  # lazy: about 1.7 s

    content = _content(estimator, dataset)
    path = Path(path)
    sio.dump(content, path)
    return path


def _frame_to_plain(frame):
    """A DataFrame as lists of plain values (str, float, int, bool, None)."""

    def plain(v):
        if isinstance(v, np.generic):
            return v.item()
        if isinstance(v, (str, int, float, bool)) or v is None:
            return v
        return repr(v)

    return {
        "columns": [str(c) for c in frame.columns],
        "index": [plain(i) for i in frame.index],
        "data": [[plain(v) for v in row] for row in frame.itertuples(index=False)],
    }


def model_bytes(estimator, *, dataset=None) -> bytes:
    """The bytes :func:`save_model` would write (for a download)."""
    import skops.io as sio  # lazy: about 1.7 s

    return sio.dumps(_content(estimator, dataset))


def load_model(path, *, max_unpacked_mb: float = MAX_UNPACKED_MB) -> SavedModel:
    """Open a model file written by :func:`save_model`; refuse anything else unrun.

    ``path`` may also be the file's bytes (an upload). ``max_unpacked_mb``: the most the file
    may unpack to (the dashboard, whose sessions share one process, passes less than the
    library's :data:`MAX_UNPACKED_MB`).

    Raises
    ------
    ModelFileError
        Too large, not a skops file (a pickle, a joblib file, truncated), holding types
        other than sblr's and those skops trusts, of a newer format, or not an sblr model.
    """
    import skops.io as sio  # lazy: about 1.7 s

    if isinstance(path, (bytes, bytearray)):
        data, path = bytes(path), Path("this file")
        size = len(data)
    else:
        path = Path(path)
        try:
            mode = os.stat(path).st_mode
            size = os.path.getsize(path)
        except OSError as exc:
            raise ModelFileError(f"Cannot read {path.name}: {exc.strerror or exc}.") from None
        if not stat.S_ISREG(mode):  # a pipe would block, a device read without end
            raise ModelFileError(f"{path.name} is not a regular file (a folder, device or pipe).")
        data = None
    if size > MAX_MODEL_MB * 2**20:
        raise ModelFileError(
            f"{path.name} is {size / 2**20:.0f} MB; a model file may be at most {MAX_MODEL_MB} MB."
        )
    if data is None:
        with open(path, "rb") as handle:  # at most the size checked, even if it grew since
            data = handle.read(MAX_MODEL_MB * 2**20 + 1)
        if len(data) > MAX_MODEL_MB * 2**20:
            raise ModelFileError(f"{path.name} is larger than {MAX_MODEL_MB} MB.")
    if not zipfile.is_zipfile(io.BytesIO(data)):
        what = "a pickle or joblib file" if data[:1] == b"\x80" else "not a model file"
        raise ModelFileError(
            f"{path.name} is {what}: only sblr model files (skops format, written by "
            "sblr.save_model or the dashboard) are opened. Pickles are never opened: loading "
            "one runs whatever code it holds."
        )
    _check_unpacked_sizes(data, path.name, min(float(max_unpacked_mb), MAX_UNPACKED_MB))
    _check_schema(data, path.name)
    try:
        untrusted = sio.get_untrusted_types(data=data)
    except Exception as exc:  # a damaged archive: its schema cannot be read
        raise ModelFileError(f"{path.name} is damaged or truncated ({exc}).") from None
    allowed = _sblr_types() | _SKLEARN_TYPES
    foreign = sorted(t for t in untrusted if t not in allowed)
    if foreign:
        raise ModelFileError(
            f"{path.name} would create types that are not sblr's: {', '.join(foreign[:8])}"
            f"{' …' if len(foreign) > 8 else ''}. It is not opened."
        )
    try:
        content = sio.loads(data, trusted=sorted(untrusted))
    except Exception as exc:
        raise ModelFileError(f"{path.name} cannot be read as a model ({exc}).") from None
    if not (isinstance(content, dict) and isinstance(content.get("info"), dict)):
        raise ModelFileError(f"{path.name} is a skops file, but not an sblr model.")
    info = content["info"]
    if info.get("kind") != _KIND:
        raise ModelFileError(f"{path.name} is a skops file, but not an sblr model.")
    fmt = info.get("format", 0)
    if isinstance(fmt, int) and not isinstance(fmt, bool) and fmt > FORMAT:
        raise ModelFileError(
            f"{path.name} was written by sblr {info.get('sblr_version')} in a newer layout "
            f"(format {info.get('format')}); this is sblr {__version__}. Upgrade sblr to open it."
        )
    estimator = content.get("estimator")
    name = f"{type(estimator).__module__}.{type(estimator).__qualname__}"
    if name not in _estimator_types():
        raise ModelFileError(f"{path.name} holds a {name}, not an sblr estimator.")
    _check_info(info, path.name)
    for attr, frame in (info.get("frames") or {}).items():
        try:
            setattr(
                estimator,
                attr,
                pd.DataFrame(frame["data"], columns=frame["columns"], index=frame["index"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelFileError(f"{path.name}: its table {attr!r} is damaged ({exc}).") from None
    _check_state(estimator, path.name)
    _rebuild_compiled(estimator)
    _check_applies(estimator, info, path.name)
    notes = []
    if info.get("sblr_version") != __version__:
        notes.append(
            f"written by sblr {info.get('sblr_version')}, opened by sblr {__version__}: the "
            "layout is the same, but its numbers may differ slightly from a fit made now"
        )
    return SavedModel(estimator, info, notes)
