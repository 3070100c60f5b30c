"""The Model & metrics page's list of this session's results: shown, restorable, downloadable."""

import streamlit as st

from pages._shared.data import dataset_key
from pages._shared.formatting import to_csv_bytes
from pages._shared.state import show_view
from pages._shared.views import model as view


def draw_result_list(ds, s, ev):
    """Add the evaluation ``ev`` of the data ``ds`` at the sidebar's settings ``s`` to the
    session's result list and draw the list, its restore button and its download."""
    results = st.session_state.setdefault("_result_list", [])
    view.remember(results, view.record(ds, s, ev, dataset_key()))
    with st.expander(f"Results of this session ({len(results)})"):
        listed = view.result_list(results, dataset_key())
        st.dataframe(listed.table, hide_index=True, width="stretch", key="result_list")
        st.caption(view.RESULT_LIST_CAPTION)
        if listed.restorable:
            pick, go_back = st.columns([3, 1], vertical_alignment="bottom")
            chosen = pick.selectbox(
                "Restore a setting of this data",
                list(listed.restorable),
                format_func=listed.restorable.get,
                key="result_restore_choice",
            )
            if go_back.button("Restore this setting", key="result_restore"):
                _, model, gamma, lam = results[chosen]["_setting"]
                setting = {"model": model, "gamma": gamma, "lam": lam}
                show_view("pages/model.py", setting, source="the result list")
        st.download_button(
            "Download the result list (CSV)",
            to_csv_bytes(listed.plain, index=False),
            file_name=listed.file_name,
            mime="text/csv",
            key="result_list_download",
        )
