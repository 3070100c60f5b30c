"""A guided lesson on the planted sample: from co-occurrence to a stable, sparse β."""

import streamlit as st

from pages._shared.data import cached_sample
from pages._shared.formatting import fmt_value
from pages._shared.lesson import STEPS, open_step, remembered_step
from pages._shared.state import page_context

page_context(__file__)

st.title("Lesson: what the planted data hides")
st.markdown(
    "Seven steps, each with a question for the class. “Show me” opens the page with the "
    "sidebar set for the step (on the planted sample: it replaces an upload). Every step has "
    "its own address, so a teacher can project or send any step."
)

n = len(STEPS)
# the widget's own state is dropped when another page runs: the step is kept under a key of
# its own, so coming back to the lesson reopens the last step (the link's ?step=N on a first
# visit)
if "lesson_step" not in st.session_state:
    st.session_state["lesson_step"] = remembered_step(st.session_state.get("_url_step"))
# a select box, not seven radio lines: "Show me" stays in the first screen at 1024×768 (a
# click below it scrolled the page, and the step's page then opened scrolled down too)
step = st.selectbox(
    "Step",
    range(1, n + 1),
    format_func=lambda i: f"{i}. {STEPS[i - 1]['title']}",
    key="lesson_step",
)
st.session_state["_lesson_step"] = step
st.query_params["step"] = str(step)
info = STEPS[step - 1]
st.subheader(f"Step {step} of {n}: {info['title']}")
st.markdown(info["text"])
view = info["view"]
planted = cached_sample("planted")
settings = (
    f"planted sample, {view['model']}, γ = "
    + ("scale" if view["gamma"] == "scale" else fmt_value(view["gamma"]))
    + f", λ = {fmt_value(view['lam'])}, class {planted.class_names[view['k']]}"
)
if st.button(f"Show me ({settings})", type="primary", key="lesson_show"):
    open_step(step)
st.info(f"**Question for the class.** {info['question']}", icon=":material/help:")
st.caption(
    "The page opens with this step's question, the figure it is about and its control at the "
    "top, and ◀ step · next ▶ to walk through the lesson there."
)
