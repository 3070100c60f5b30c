"""The dashboard's shell (``app.py`` runs :func:`main` every run of every session): the
navigation, the shared sidebar (data summary, model, γ, λ, class) on every page, and the home
page where the data is chosen."""

import streamlit as st

from pages._shared import server
from pages._shared.data import (
    MAX_ROWS,
    MAX_UPLOAD_MB,
    SHARE_DAYS,
    SHARES_PER_PERSON,
    Upload,
    current_dataset,
    dataset_key,
    forget_shared,
    label_frequency_chart,
    list_columns_cached,
    manage_link,
    owns_shared,
    reads_shared,
    show_notes,
    try_upload,
    use_sample,
)
from pages._shared.formatting import context_name, esc_md
from pages._shared.lesson import lesson_panel, warm_lesson
from pages._shared.report import dashboard_report
from pages._shared.server import error_boundary, settle_garbage_collector
from pages._shared.state import (
    apply_pending_view,
    follow_redirect,
    init_state_from_url,
    note_dropped_links,
    sidebar_settings,
    url_notice,
)
from sblr import DataError
from sblr.samples import DEFAULT_SAMPLE, SAMPLES


def home():
    st.title("Similarity-based classification you can look inside")
    st.markdown(
        "Every class k gets **evidence** f̄ₖ(x): the mean RBF similarity of x to the training "
        "rows of class k. **SML** ranks the classes by the *summed* similarity fₖ(x) = |Dₖ|·f̄ₖ(x) "
        "(so a large class gets more) and predicts those with the most. **SBLR** fits, "
        "for every class k, a logistic regression on the evidence of *all* classes, so its "
        "coefficient βₜᵏ says how much class t's evidence counts for class k. **SparseSBLR** "
        "adds an L1 penalty λ‖βᵏ‖₁ that sets the coefficients of irrelevant classes exactly "
        "to zero. Choose data below, then use the pages on the left; γ, λ and the model are "
        "in the sidebar and every page follows them."
    )
    # two formulas, one a line: side by side they needed sideways scrolling at 800 px
    st.latex(r"\bar f_k(x)=\frac{1}{|D_k|}\sum_{x_j\in D_k} e^{-\gamma\lVert x-x_j\rVert^2}")
    st.latex(r"\log\frac{\pi_k}{1-\pi_k}=\beta_0^k+\sum_{t=1}^m \beta_t^k \bar f_t(x)")

    st.page_link(
        "pages/lesson.py",
        label="New here? Take the 7-step lesson on the planted data",
        help="About 30 minutes, a question for the class at every step.",
        icon=":material/school:",
    )
    st.subheader("Data")
    _shared_banner()
    sample_tab, upload_tab = st.tabs(["Sample data", "Upload ARFF or CSV"])
    with sample_tab:
        names = list(SAMPLES)
        current = st.session_state.get("sample", DEFAULT_SAMPLE)
        choice = st.radio(
            "Sample dataset",
            names,
            index=names.index(current),
            format_func=lambda n: f"{n}: {SAMPLES[n]}",
            key="sample_choice",
        )
        if st.session_state.get("upload") is not None:
            whose = "the shared data" if reads_shared() else "my upload"
            if st.button(f"Use this sample instead of {whose}", key="use_sample_instead"):
                use_sample(choice)
                st.rerun()
        elif choice != current:
            use_sample(choice)
            st.rerun()
    with upload_tab:
        _upload_form()
        _share_notice()

    ds = current_dataset()
    _summary(ds)
    _report(ds)


def _upload_form():
    st.caption(
        f"Mulan ARFF (dense or sparse; labels from a Mulan XML file, a number of labels, "
        f"or MEKA's -C in the relation name) or CSV. Up to {MAX_UPLOAD_MB} MB and "
        f"{MAX_ROWS:,} rows. Once loaded, the file is kept on this server for "
        f"{SHARE_DAYS:g} days under a private link (below), so a reload keeps it; "
        "you can remove it at any time."
    )
    up = st.file_uploader(
        "Data file", type=["arff", "csv", "tsv", "data", "txt"], key="upload_file"
    )
    if up is None:
        return
    data = up.getvalue()
    is_arff = up.name.lower().endswith(".arff")
    xml, n_labels, target, drop = None, None, None, None
    if is_arff:
        # keys name the file: the label options of one ARFF must not carry over to the next
        xml_file = st.file_uploader(
            "Mulan XML label file (optional)", type=["xml"], key=f"upload_xml:{up.file_id}"
        )
        xml = xml_file.getvalue() if xml_file is not None else None
        n = st.number_input(
            "…or the number of labels (the last attributes)",
            min_value=0,
            value=0,
            step=1,
            key=f"upload_n_labels:{up.file_id}",
            help="0: use the XML file, MEKA's -C N, or a nominal last attribute.",
        )
        n_labels = int(n) or None
    else:
        try:
            columns = list_columns_cached(data, up.name)
        except DataError as exc:
            st.error(f"Could not read {esc_md(up.name)}: {esc_md(exc)}")
            return
        kind = st.radio(
            "Task",
            ["multi-class: one target column", "multi-label: several 0/1 label columns"],
            key="upload_task",
            horizontal=True,
        )
        if kind.startswith("multi-class"):
            # keys name the file: the browser must not carry a column choice to another file
            target = st.selectbox(
                "Target column",
                columns,
                index=len(columns) - 1,
                key=f"upload_target:{up.file_id}",
            )
        else:
            target = st.multiselect(
                "Label columns (0/1)", columns, key=f"upload_labels:{up.file_id}"
            )
            if not target:
                st.info("Choose the label columns, then load.")
                return
        drop = st.multiselect(
            "Leave out columns (IDs, row numbers)",
            columns,
            key=f"upload_drop:{up.file_id}",
            help="Columns that are not measurements of a row: an ID or a row number lets a "
            "model tell the classes apart when the file is sorted by class.",
        )
    if st.button("Load this file", type="primary", key="upload_load"):
        error = try_upload(Upload(data, up.name, xml, n_labels, target, drop))
        if error:
            st.error(f"Could not use {esc_md(up.name)}: {esc_md(error)}")
            st.caption("The previously loaded data is still in use.")
        else:
            # Rerun: the sidebar and the URL were drawn for the previous data before this page.
            st.session_state["_loaded_message"] = f"Loaded {esc_md(up.name)}."
            st.rerun()
    loaded = st.session_state.pop("_loaded_message", None)
    if loaded:
        st.success(loaded)


def _report(ds):
    st.subheader("Report")
    s = st.session_state.get("_settings")
    if s is None:
        return
    st.caption(
        "One HTML file of the analysis with the sidebar's settings: metrics on a hold-out "
        "split, both models' β̃, and the Class contributions of the sidebar's class. It opens "
        "offline, so students can keep it."
    )
    if st.button("Prepare the report", key="report_prepare"):
        bar = st.progress(0.0, text="Preparing the report…")
        try:
            data = dashboard_report(
                ds,
                s,
                progress=lambda done, total, text: bar.progress(done / total, text=text),
            )
        finally:
            bar.empty()
        st.session_state["_report"] = (dataset_key(), s, data)
    ready = st.session_state.get("_report")
    if ready and ready[0] == dataset_key() and ready[1] == s:
        st.download_button(
            "Download report (HTML)",
            ready[2],
            file_name=context_name(ds, s.spec, "report", suffix=".html"),
            mime="text/html",
            key="report_download",
        )


def _share_notice():
    upload = st.session_state.get("upload")
    if upload is None or not owns_shared():
        if upload is not None and not upload.get("share_id"):
            why = upload.get("no_link") or "removed, or the server could not keep it"
            st.caption(
                f"This upload has no link ({esc_md(why)}): it stays in this browser "
                "tab only, and a reload returns to the sample data."
            )
        return
    st.info(
        f"**This data has a link.** The address bar holds it (…?data=…): a reload keeps "
        f"your upload, and anyone you give the link sees this data and this view, read-only, "
        f"until {_expiry_text(upload)}. The id in the link is 128 random bits: it cannot be "
        "guessed, but whoever has the link has the data. Only you can remove it; this browser "
        f"keeps {SHARES_PER_PERSON} links at most, so a further upload removes its "
        "oldest.",
        icon=":material/link:",
    )
    with st.expander("Your private manage link (keep it to yourself)"):
        st.caption(
            "Opens this data with the right to remove it, e.g. after a reload or from another "
            "computer. The address bar's link never carries this key; do not share this one."
        )
        st.code(
            manage_link(upload["share_id"], upload["owner_key"], st.context.url),
            language=None,
        )
    if st.button("Remove my data from the server", key="share_forget"):
        forget_shared()
        st.rerun()


def _expiry_text(upload):
    expires = upload.get("expires")
    if not expires:
        return f"{SHARE_DAYS:g} days after the upload"
    import datetime as dt

    when = dt.datetime.fromtimestamp(expires, dt.timezone.utc)
    return f"{when.day} {when:%B %Y, %H:%M} UTC"


def _shared_banner():
    """What a session that opened someone's link sees: whose data, until when, read-only."""
    if not reads_shared():
        return
    upload = st.session_state["upload"]
    ds = upload["dataset"]
    st.info(
        f"**Shared data: {esc_md(upload['name'])}**, {ds.n_samples:,} rows, from a link; "
        f"kept until {_expiry_text(upload)}. Read-only: only whoever shared it can remove "
        "it. Uploading a file of your own below opens yours in this tab and leaves the "
        "shared data as it is.",
        icon=":material/visibility:",
    )


def _summary(ds):
    s = ds.summary()
    if st.session_state.get("upload") is None:
        source = "sample data"
    else:
        source = "shared data, read-only" if reads_shared() else "your upload"
    st.subheader(f"{esc_md(ds.name)} ({source})")
    cols = st.columns(5)
    cols[0].metric("Instances", f"{s['instances']:,}")
    cols[1].metric("Features", f"{s['features']:,}")
    cols[2].metric("Classes", s["classes"])
    cols[3].metric("Task", "multi-label" if ds.task == "multilabel" else "multi-class")
    cols[4].metric("Label cardinality", f"{s['label_cardinality']:.3f}")
    show_notes(ds)
    label_frequency_chart(ds)


#: Pages whose model is their own while the condition holds: the sidebar says so above its
#: model controls, where a reader looks (a note at its foot was out of sight).
OWN_MODEL = {
    "predict": (
        lambda: st.session_state.get("predict_source") == "file",
        "Predict a file is using the model file's own model, γ and λ; these are for the "
        "other pages.",
    ),
    "playground": (
        lambda: True,
        "The Playground's model, γ and λ are the page's own (beside the plane); these are "
        "for the other pages.",
    ),
}


def _sidebar(ds, page_path):
    st.sidebar.markdown(
        f"**Data:** {esc_md(ds.name)} · {ds.n_samples:,} × {ds.n_features} · "
        f"{ds.n_classes} {'labels' if ds.task == 'multilabel' else 'classes'}"
    )
    if reads_shared():
        st.sidebar.caption("Opened from a shared link: read-only.")
    own, note = OWN_MODEL.get(page_path, (lambda: False, ""))
    if own():
        st.sidebar.info(note, icon=":material/info:")
    st.session_state["_settings"] = sidebar_settings(ds)


def main():
    """A session's run: the navigation, the sidebar and the page."""
    st.set_page_config(
        page_title="sblr: similarity-based classification",
        page_icon=":material/hub:",
        layout="wide",
    )
    note_dropped_links()  # once per process: a link too long for Streamlit gets a note
    init_state_from_url()
    apply_pending_view()
    pages = [
        st.Page(home, title="Choose data", icon=":material/folder_open:", default=True),
        st.Page("pages/data.py", title="Data", icon=":material/bar_chart:"),
        st.Page("pages/model.py", title="Model & metrics", icon=":material/speed:"),
        st.Page("pages/compare.py", title="Compare methods", icon=":material/leaderboard:"),
        st.Page("pages/coefficients.py", title="Coefficients β", icon=":material/grid_on:"),
        st.Page(
            "pages/contributions.py", title="Class contributions", icon=":material/table_chart:"
        ),
        st.Page("pages/evidence.py", title="Evidence space", icon=":material/scatter_plot:"),
        st.Page("pages/explain.py", title="Explain a prediction", icon=":material/search:"),
        st.Page("pages/predict.py", title="Predict a file", icon=":material/upload_file:"),
        st.Page("pages/path.py", title="Regularization path", icon=":material/timeline:"),
        st.Page("pages/lesson.py", title="Lesson: the planted data", icon=":material/school:"),
        st.Page("pages/playground.py", title="Playground", icon=":material/draw:"),
    ]
    page = st.navigation(pages)
    # One error boundary per part of every run: a file or a computation that fails shows its
    # DataError text (or a generic message, the traceback going to the server log), never a
    # traceback.
    with error_boundary(stop=True):
        _sidebar(current_dataset(), page.url_path)
    follow_redirect()
    with error_boundary():
        url_notice(current_dataset())
        lesson_panel(page.url_path)
        page.run()
    # after the run (the page has imported what it needs): long-lived objects out of the
    # collector's way, so that a full collection does not fall into a slider move
    settle_garbage_collector()
    # SparseSBLR's compiled solver, compiled (a fresh install) or loaded in the background, once
    server.compiled_solver()  # (looked up at each run: a test may stand in for it)
    # what the lesson shows, fitted once per server in the background (in job slots, after users)
    warm_lesson()
