"""Model files (issue #26): every sblr estimator saved and loaded with identical
probabilities; a new file read like the training file predicts as the original rows; and
files that are not sblr models (a pickle, a joblib file, a skops file of other types, a
truncated or oversized file) are refused without running anything: a marker file the
hostile file would create never appears."""

from __future__ import annotations

import io
import json
import os
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sblr import SBLRCV, SBLRClassifier, SMLClassifier, SparseSBLRClassifier, SparseSBLRCV
from sblr.baselines import BRSVMClassifier, IBLRClassifier, MLkNNClassifier
from sblr.io import load_dataset
from sblr.modelfile import FORMAT, ModelFileError, load_model, model_bytes, save_model
from sblr.samples import load_sample

SAMPLES = Path(__file__).resolve().parents[1] / "sample_data"

ESTIMATORS = {
    "SML": lambda: SMLClassifier(),
    "SBLR": lambda: SBLRClassifier(),
    "SparseSBLR": lambda: SparseSBLRClassifier(lam=1e-3),
    "SBLRCV": lambda: SBLRCV(gammas=(1.0, 0.1)),
    "SparseSBLRCV": lambda: SparseSBLRCV(gammas=(1.0, 0.1), lams=(1e-2, 1e-4)),
    "MLkNN": lambda: MLkNNClassifier(),
    "IBLR": lambda: IBLRClassifier(),
    "BRSVM": lambda: BRSVMClassifier(),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_every_estimator_round_trips_with_the_same_probabilities(name, tmp_path):
    ds = load_sample("planted")
    model = ESTIMATORS[name]().fit(ds.X, ds.y)
    path = save_model(model, tmp_path / "m.skops", dataset=ds)
    saved = load_model(path)
    assert type(saved.estimator) is type(model)
    method = "predict_proba" if hasattr(model, "predict_proba") else "decision_function"
    P = getattr(model, method)(ds.X)
    np.testing.assert_allclose(getattr(saved.estimator, method)(ds.X), P, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(saved.estimator.predict(ds.X), model.predict(ds.X))
    if hasattr(model, "cv_results_"):  # a table travels as plain lists and comes back
        assert list(saved.estimator.cv_results_.columns) == list(model.cv_results_.columns)
        assert len(saved.estimator.cv_results_) == len(model.cv_results_)
    assert saved.info["feature_names"] == ds.feature_names
    assert saved.info["class_names"] == ds.class_names and saved.info["task"] == ds.task
    assert not saved.notes


def test_a_new_file_is_read_like_the_training_file_and_predicted_alike(tmp_path):
    """The CSV of the training rows with its columns in another order, read through the
    model file's encoding, gets the original rows' predictions."""
    frame = pd.read_csv(SAMPLES / "wine.csv")
    train = load_dataset(SAMPLES / "wine.csv", target="class")
    model = SparseSBLRClassifier(lam=1e-3).fit(train.X, train.y)
    saved = load_model(save_model(model, tmp_path / "wine.skops", dataset=train))
    shuffled = frame[list(reversed(frame.columns))].drop(columns="class")
    rows = saved.read(shuffled.to_csv(index=False).encode(), name="new.csv")
    assert not rows.has_labels
    np.testing.assert_allclose(
        saved.estimator.predict_proba(rows.X), model.predict_proba(train.X), atol=1e-12
    )
    assert saved.info["params"]["lam"] == 1e-3


class _Touch:
    """Unpickling this creates a file: the marker of code run by opening a model file."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (Path.touch, (Path(self.path),))


def test_a_pickle_is_refused_and_runs_nothing(tmp_path):
    marker = tmp_path / "ran"
    evil = tmp_path / "model.skops"
    evil.write_bytes(pickle.dumps(_Touch(marker)))
    with pytest.raises(ModelFileError, match="pickle"):
        load_model(evil)
    assert not marker.exists()
    assert pickle.loads(evil.read_bytes()) is None or marker.exists()  # the oracle: it would


def test_a_joblib_file_is_refused_and_runs_nothing(tmp_path):
    import joblib

    marker = tmp_path / "ran"
    evil = tmp_path / "model.joblib"
    joblib.dump(_Touch(marker), evil)
    with pytest.raises(ModelFileError, match="pickle or joblib"):
        load_model(evil)
    assert not marker.exists()


def test_a_skops_file_of_other_types_is_refused_and_runs_nothing(tmp_path):
    import skops.io as sio

    marker = tmp_path / "ran"
    path = tmp_path / "other.skops"
    sio.dump({"info": {"kind": "sblr-model", "format": 1}, "estimator": os.system}, path)
    with pytest.raises(ModelFileError, match="not sblr's"):
        load_model(path)
    sio.dump({"info": {"kind": "sblr-model", "format": 1}, "estimator": _Touch(marker)}, path)
    with pytest.raises(ModelFileError, match="_Touch"):
        load_model(path)
    assert not marker.exists()


def test_truncated_oversized_foreign_and_newer_files(tmp_path, monkeypatch):
    import skops.io as sio

    import sblr.modelfile as modelfile

    ds = load_sample("wine")
    model = SMLClassifier().fit(ds.X, ds.y)
    path = save_model(model, tmp_path / "m.skops", dataset=ds)
    data = path.read_bytes()
    cut = tmp_path / "cut.skops"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelFileError):
        load_model(cut)
    monkeypatch.setattr(modelfile, "MAX_MODEL_MB", len(data) / 2**20 / 2)
    with pytest.raises(ModelFileError, match="at most"):
        load_model(path)
    monkeypatch.undo()
    other = tmp_path / "other.skops"
    sio.dump({"weights": np.ones(3)}, other)
    with pytest.raises(ModelFileError, match="not an sblr model"):
        load_model(other)
    with pytest.raises(ModelFileError, match="not a model file"):
        (tmp_path / "notes.txt").write_text("hello")
        load_model(tmp_path / "notes.txt")
    # a newer layout says why; another version of the same layout loads, with a note
    content = sio.loads(data, trusted=sio.get_untrusted_types(data=data))
    for fmt, version in ((FORMAT + 1, "9.0"), (FORMAT, "0.0.1")):
        content["info"] = dict(content["info"], format=fmt, sblr_version=version)
        sio.dump(content, tmp_path / "v.skops")
        if fmt > FORMAT:
            with pytest.raises(ModelFileError, match="newer layout.*Upgrade"):
                load_model(tmp_path / "v.skops")
        else:
            saved = load_model(tmp_path / "v.skops")
            assert "written by sblr 0.0.1" in saved.notes[0]
    assert zipfile.is_zipfile(io.BytesIO(data))


def test_only_sblr_estimators_are_saved(tmp_path):
    from sklearn.linear_model import LogisticRegression

    X, y = np.random.default_rng(0).normal(size=(20, 2)), np.arange(20) % 2
    with pytest.raises(ModelFileError, match="sblr estimators"):
        save_model(LogisticRegression().fit(X, y), tmp_path / "m.skops")


def test_evidence_that_counted_gives_the_net_logit_and_both_directions():
    """Oracle: the model's own logit of the row's most probable class, and its terms
    β·f̄ sorted by hand: the two largest raising terms and the two most negative."""
    ds = load_sample("planted")
    model = SparseSBLRClassifier(lam=1e-4).fit(ds.X, ds.y)
    saved = load_model(model_bytes(model, dataset=ds))
    table = saved.predictions(ds)
    names = ds.class_names
    # the reading before the numbers, then the probabilities (issue #46, item 12)
    assert list(table.columns) == ["row", "predicted", "true", "evidence that counted most"] + [
        f"p({c})" for c in names
    ]
    F = model.evidence(ds.X)
    P = model.predict_proba(ds.X)
    for r in (0, 7, 42):
        k = int(np.argmax(P[r]))
        terms = F[r] * model.coef_[k]
        logit = model.logits(ds.X[r : r + 1])[0, k]
        text = table["evidence that counted most"][r]
        assert text.startswith(f"{names[k]}: logit {logit:+.3g} (π {P[r, k]:.2f})"), text
        up = [t for t in np.argsort(-terms)[:2] if terms[t] > 0]
        down = [t for t in np.argsort(terms)[:2] if terms[t] < 0]
        for t in up + down:
            assert f"{names[t]} ({terms[t]:+.3g})" in text
        assert ("lowered by nothing" in text) == (not down)


#: A file written by sblr 0.1.0 before sblr.models, sblr.similarity and sblr.baselines became
#: packages: its types are named by their public paths (``sblr.models.SBLRClassifier``, with
#: a ``sblr.similarity.SimilarityFeaturizer`` inside), not by the modules that define them now.
BEFORE_PACKAGES = Path(__file__).parent / "data" / "sblr_0.1.0_before_packages.skops"


def _data_of_the_old_file():
    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(24, 3)), 3)
    Y = (X[:, :3] + 0.3 * rng.normal(size=(24, 3)) > 0).astype(int)
    return X, Y


def test_a_file_written_before_the_packages_opens_with_the_same_probabilities():
    X, Y = _data_of_the_old_file()
    saved = load_model(BEFORE_PACKAGES)
    assert saved.info["format"] == 1  # the layout before the packages: still opened
    assert type(saved.estimator) is SBLRClassifier
    assert saved.estimator.featurizer_.__class__.__name__ == "SimilarityFeaturizer"
    # the file was fitted on another machine: its BLAS kernels sum in another order
    # (1.6e-15 apart on OpenBLAS's Haswell kernels against SkylakeX's), hence a tolerance;
    # it was fitted on the paper's mean evidence, the default before log rates
    np.testing.assert_allclose(
        saved.estimator.predict_proba(X),
        SBLRClassifier(normalize="mean").fit(X, Y).predict_proba(X),
        rtol=1e-12,
        atol=0,
    )


def _named_by_public_paths(data: bytes) -> bytes:
    """A model file's bytes with every sblr type named as files written before the packages
    name it: ``sblr.baselines._neighbours.MLkNNClassifier`` becomes
    ``sblr.baselines.MLkNNClassifier``."""

    def public(node):
        if isinstance(node, dict):
            module = node.get("__module__")
            if isinstance(module, str) and module.startswith("sblr.") and "._" in module:
                node["__module__"] = module.split("._")[0]
            for value in node.values():
                public(value)
        elif isinstance(node, list):
            for value in node:
                public(value)

    source, out = zipfile.ZipFile(io.BytesIO(data)), io.BytesIO()
    with zipfile.ZipFile(out, "w") as target:
        for member in source.infolist():
            content = source.read(member)
            if member.filename == "schema.json":
                schema = json.loads(content)
                public(schema)
                content = json.dumps(schema).encode()
            target.writestr(member, content)
    return out.getvalue()


@pytest.mark.slow
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_every_estimator_opens_when_named_by_its_public_path(name):
    """Types are written by the module that defines them (``sblr.models._logistic``) and read
    by that name or by the public one older files use (``sblr.models``)."""
    ds = load_sample("planted")
    model = ESTIMATORS[name]().fit(ds.X, ds.y)
    data = model_bytes(model, dataset=ds)
    old = _named_by_public_paths(data)
    assert old != data  # some sblr type was renamed
    saved = load_model(old)
    assert type(saved.estimator) is type(model)
    method = "predict_proba" if hasattr(model, "predict_proba") else "decision_function"
    np.testing.assert_array_equal(
        getattr(saved.estimator, method)(ds.X), getattr(model, method)(ds.X)
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", ["SML", "SBLR", "MLkNN", "BRSVM"])
def test_a_pickle_naming_the_public_paths_unpickles(name):
    """Pickles and joblib files name a class by its module: those written before the packages
    (``sblr.models.SBLRClassifier``) still find it, through the public module."""
    ds = load_sample("planted")
    model = ESTIMATORS[name]().fit(ds.X, ds.y)
    data = pickle.dumps(model, protocol=0)  # text: module and class on lines of their own
    module = type(model).__module__
    old = data.replace(f"c{module}\n".encode(), f"c{module.split('._')[0]}\n".encode())
    assert old != data
    method = "predict_proba" if hasattr(model, "predict_proba") else "decision_function"
    np.testing.assert_array_equal(
        getattr(pickle.loads(old), method)(ds.X), getattr(model, method)(ds.X)
    )
