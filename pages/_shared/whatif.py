"""The Explain page's what-if editor: one widget per feature of a training row (a nominal
column's one-hot group as one choice, a 0/1 flag as a checkbox, a number with its training
range), the values read back into the row explained."""

from __future__ import annotations

import numpy as np
import streamlit as st

from pages._shared.cache import feature_inputs_cached
from pages._shared.formatting import esc_md

__all__ = ["WhatIf"]


class WhatIf:
    """The editor of ``x_row`` (a training row's values) on data ``ds``; the widgets' keys
    start with ``prefix`` (one per data set and row: another row starts from its own values).
    ``x`` holds the values as edited so far."""

    def __init__(self, ds, x_row, prefix):
        self.inputs = feature_inputs_cached(ds)
        self.names = ds.feature_names
        self.x_row, self.x = x_row, x_row.copy()
        self.prefix = prefix
        self.groups = set()  # the one-hot groups drawn
        self.features = []  # the features drawn

    def input(self, col, i):
        """Feature i's widget in ``col``, its value written into ``x`` (a nominal column's
        one-hot group once, as one choice)."""
        inputs, x, x_row, key = self.inputs, self.x, self.x_row, self.prefix
        name = str(self.names[i])
        g = int(inputs.group_of[i])
        self.features.append(i)
        if g >= 0:  # a nominal column's one-hot group: one choice among its values
            if g in self.groups:
                return
            self.groups.add(g)
            attr, members = inputs.groups[g]
            values = [str(self.names[c]).split("=", 1)[1] for c in members]
            choice = col.selectbox(
                esc_md(attr, label=True),  # the label is its accessible name too
                range(len(members)),
                index=int(np.argmax(x_row[members])),
                format_func=lambda v, values=values: values[v],
                key=f"{key}group_{g}",
            )
            x[members] = 0.0
            x[members[choice]] = 1.0
        elif inputs.binary[i]:  # a 0/1 flag: yes or no, never 0.5
            flag = col.checkbox(esc_md(name, label=True), value=bool(x_row[i]), key=f"{key}{i}")
            x[i] = float(flag)
        else:
            lo, hi = inputs.low[i], inputs.high[i]
            x[i] = col.number_input(
                f"{esc_md(name, label=True)} (training {lo:.4g} … {hi:.4g})",
                value=float(x_row[i]),
                format="%g",
                key=f"{key}{i}",
            )

    def reset(self):
        """Back to the row's own values (a button's callback: the widgets of the last run)."""
        for i in self.features:
            st.session_state.pop(f"{self.prefix}{i}", None)
        for g in self.groups:
            st.session_state.pop(f"{self.prefix}group_{g}", None)

    def far(self) -> str | None:
        """The warning on values outside the training range (Markdown), or None."""
        far = [i for i in self.inputs.outside(self.x) if np.isfinite(self.x[i])]
        if not far:
            return None
        shown = ", ".join(esc_md(str(self.names[i])) for i in far[:5])
        more = f" and {len(far) - 5} more" if len(far) > 5 else ""
        return (
            f"Outside the training range: {shown}{more}. The model has seen no row there; its "
            "evidence fades to 0 away from the data, so read the answer as “far from "
            "everything”, not as a measurement."
        )
