"""Predict a file: rows read like the data in use, predicted by the sidebar's model or a model
file; download the predictions, or the model itself."""

import hashlib

import streamlit as st

from pages._shared.cache import cached_fit, open_model_file, predictions, read_like
from pages._shared.data import show_notes
from pages._shared.formatting import (
    context_name,
    esc_md,
    fmt_gamma,
    fmt_value,
    safe_filename,
    to_csv_bytes,
)
from pages._shared.long_jobs import before_fitting
from pages._shared.state import page_context
from sblr import DataError
from sblr.decision import Decision
from sblr.modelfile import ModelFileError, SavedModel, model_bytes

ds, s, key = page_context(__file__)


def _decision_text(model):
    """ "; decides by π ≥ …" for a multi-label model, else ""."""
    chosen = Decision.of(model)
    return "" if chosen.kind == "argmax" else "; decides by " + chosen.describe()


st.title("Predict a file")
with st.expander("What am I looking at?"):
    st.markdown(
        "Upload rows, with or without their label columns: they are read exactly as the "
        "training file was (columns matched by name, the same codes for nominal values, the "
        "training means for missing values), and the model predicts each row. The model is "
        "the sidebar's, fitted on every row of the data in use, or one opened from a model "
        "file (saved here, or with `sblr fit` / `sblr.save_model`). Model files are skops "
        "files: opening one runs no code; anything else (a pickle, a joblib file) is refused."
    )

source = st.radio(
    "Model",
    ["sidebar", "file"],
    format_func={
        "sidebar": "the sidebar's model, fitted on all rows of the data in use",
        "file": "a model file",
    }.get,
    horizontal=True,
    key="predict_source",
)
if source == "sidebar":
    before_fitting(ds, s, "predict")  # SBLR on 983 labels: hours, said before it starts
    fitted = cached_fit(ds, s.spec, decided=True)
    model_id, like, like_key = (ds.fingerprint, s.model, s.gamma, s.lam), ds, ds.fingerprint
    saved = SavedModel(
        fitted,
        {
            "estimator": type(fitted).__name__,
            "class_names": list(ds.class_names),
            "feature_names": list(ds.feature_names),
        },
    )
    lam_text = f", λ = {fmt_value(s.lam)}" if s.spec.l1 else ""
    st.caption(
        f"{s.model}, γ = {fmt_gamma(s.gamma)}{lam_text}, fitted on the "
        f"{ds.n_samples:,} rows of {esc_md(ds.name)}{_decision_text(fitted)}."
    )
    st.download_button(
        "Download this model (skops file)",
        lambda: model_bytes(fitted, dataset=ds),  # written when clicked
        file_name=context_name(ds, s.spec, "model", suffix=".skops"),
        mime="application/octet-stream",
        key="predict_download_model",
        help="Open it again here (a model file), in Python with sblr.load_model, or with "
        "`sblr predict MODEL DATA`.",
    )
else:
    up = st.file_uploader("Model file (.skops)", type=["skops"], key="predict_model_upload")
    if up is None:
        st.info("Open a model file saved here, with `sblr fit`, or with `sblr.save_model`.")
        st.stop()
    data = up.getvalue()
    try:
        saved = open_model_file(data)
    except ModelFileError as exc:
        st.error(f"Could not open {esc_md(up.name)}: {esc_md(exc)}")
        st.stop()
    info = saved.info
    est = getattr(saved.estimator, "best_estimator_", saved.estimator)
    gamma = getattr(est, "gamma_", None)
    settings = (f"γ = {fmt_value(gamma)}" if gamma is not None else "") + (
        f", λ = {fmt_value(est.lam)}" if hasattr(est, "lam") else ""
    )
    trained = getattr(getattr(est, "featurizer_", None), "X_fit_", None)
    rows_text = f"{trained.shape[0]:,} rows, " if trained is not None else ""
    st.caption(
        f"{esc_md(info.get('estimator'))}"
        + (f" ({settings})" if settings else "")
        + f" fitted on {esc_md(info.get('data') or '?')} "
        f"({rows_text}{len(info.get('feature_names') or []):,} features, "
        f"{len(info.get('class_names') or []):,} classes){_decision_text(saved.estimator)}, "
        f"written by sblr {esc_md(info.get('sblr_version'))}"
        + (f" on {esc_md(info['saved_at'])}" if info.get("saved_at") else "")
        + ". The sidebar's model settings are not in use here."
    )
    for note in saved.notes:
        st.caption(esc_md(note))
    like = saved.encoding
    if like is None:
        st.error("This model was fitted on arrays, not on a file: it cannot read a file.")
        st.stop()
    model_id = like_key = ("model file", hashlib.sha256(data).hexdigest())
    if list(info.get("feature_names") or []) != list(ds.feature_names):
        st.warning(
            f"This model's features are not those of the data in use ({esc_md(ds.name)}): "
            "files are read as the model's own training file was, and the Explain pages keep "
            "using the sidebar's model."
        )

rows_file = st.file_uploader(
    "Rows to predict (ARFF or CSV)",
    type=["arff", "csv", "tsv", "data", "txt"],
    key="predict_rows_upload",
)
if rows_file is None:
    st.info("Upload the rows to predict; label columns may be there or not.")
    st.stop()
try:  # read as the model's training file was, within the dashboard's size limit
    rows = read_like(like, like_key, rows_file.getvalue(), rows_file.name)
except DataError as exc:
    st.error(f"Could not read {esc_md(rows_file.name)}: {esc_md(exc)}")
    st.stop()
show_notes(rows)
with st.spinner(f"Predicting {rows.n_samples:,} rows…"):
    table = predictions(saved, model_id, rows, (like_key, rows_file.file_id))
st.subheader(f"{rows.n_samples:,} rows of {esc_md(rows.name)}")
st.dataframe(
    table,
    hide_index=True,
    width="stretch",
    key="predictions",
    # the texts wrap in rows three lines high, "predicted" and the evidence given the width
    row_height=66,
    column_config={
        c: st.column_config.NumberColumn(format="%.3f")
        for c in table.columns
        if c.startswith(("p(", "score("))
    }
    | {
        "row": st.column_config.NumberColumn(format="%d", width=48),
        "predicted": st.column_config.TextColumn(width="medium"),
        "true": st.column_config.TextColumn(width="medium"),
        "evidence that counted most": st.column_config.TextColumn(width="large"),
    },
)
rule = Decision.of(saved.estimator).describe()
st.caption(
    "row: its position in the file, from 0 as Explain and the Data page number rows; "
    f"predicted: the class (multi-label: the labels of its decision, {rule}; “(none)” when "
    "it gives none); p(class): its probability; evidence that counted most: for the row's most "
    "probable class, its logit and π, and the classes whose evidence terms βₜᵏ·f̄ₜ(x) raise "
    "and lower that logit most (the terms and the intercept add up to the logit)."
)
st.download_button(
    "Download predictions (CSV)",
    to_csv_bytes(table, index=False),
    file_name=safe_filename(rows.name, "predictions", suffix=".csv"),
    mime="text/csv",
    key="predict_download",
)
