"""A guided lesson on the planted sample: from co-occurrence to a stable, sparse β."""

import streamlit as st

from pages import common

common.page_context(__file__)

#: One step: title, what to read, the question for the class, and the view "Show me" opens.
STEPS = [
    {
        "title": "Which labels occur together?",
        "text": (
            "The planted data has 500 rows, 8 features and 7 labels a row can carry at once "
            "(daylight, birdsong, rain, thunder, frost, spring_tide, noise). The data was made "
            "with a few rules hidden in it. The Data page counts, for every pair of labels, the "
            "rows that carry both: the co-occurrence matrix."
        ),
        "question": (
            "Which label never occurs without another one? Which two labels almost never occur "
            "together?"
        ),
        "page": "pages/data.py",
        "view": {"model": "SparseSBLR", "gamma": "scale", "lam": 1e-3, "k": 3},
    },
    {
        "title": "SML: decide from the evidence alone",
        "text": (
            "Every row gets one number per class, its evidence f̄ₜ(x): how similar it is, on "
            "average, to the training rows of class t. SML adds these similarities up instead "
            "of averaging them (fₜ = |Dₜ|·f̄ₜ, the mean times the class's size) and predicts the "
            "classes with the largest sums, nothing more. The Model page scores it on rows it "
            "has not seen."
        ),
        "question": (
            "Look at the per-class table: which label does SML get worst? Why could a rare "
            "label such as frost be hard for a rule that compares summed similarities?"
        ),
        "page": "pages/model.py",
        "view": {"model": "SML", "gamma": "scale", "lam": 1e-3, "k": 4},
    },
    {
        "title": "SBLR: every class's evidence in every class's model",
        "text": (
            "SBLR fits, for each class k, a logistic regression whose inputs are the evidences "
            "of ALL classes. Its coefficient βₜᵏ says how much class t's evidence moves the "
            "logit of class k. You know logistic regression: this is it, on 7 made-up features "
            "(the evidences). With no penalty, almost every β is non-zero."
        ),
        "question": (
            "In the SBLR panel, find thunder's row. Which classes' evidence does it use? Can "
            "you tell the planted rule from the noise?"
        ),
        "page": "pages/coefficients.py",
        "view": {"model": "SBLR", "gamma": 1.0, "lam": 1e-5, "k": 3},
    },
    {
        "title": "Raise λ: the L1 penalty sets weights to exactly zero",
        "text": (
            "SparseSBLR adds λ‖βᵏ‖₁ to the loss. A weight that does not earn its keep becomes "
            "exactly 0. Move the λ slider in the sidebar to the right, step by step, and watch "
            "the SparseSBLR panel empty out."
        ),
        "question": (
            "At which λ is every weight zero? Which weights are the last to go? (The "
            "Regularization path page shows the same thing as curves.)"
        ),
        "page": "pages/coefficients.py",
        "view": {"model": "SparseSBLR", "gamma": 1.0, "lam": 10**-2.5, "k": 3},
    },
    {
        "title": "The planted structure appears",
        "text": (
            "At γ = 1 and λ = 3·10⁻⁴ SparseSBLR keeps only a few weights besides each class's "
            "own evidence. Most of them are the rules the data was made with (birdsong copies "
            "daylight, thunder occurs only with rain, frost excludes daylight); a few are not: "
            "the L1 penalty keeps what helps to predict, planted or not."
        ),
        "question": (
            "Read the rules off the heatmap: thunder ← ?, birdsong ← ?, and which weight is "
            "negative? Does the noise label's evidence count for anything?"
        ),
        "page": "pages/coefficients.py",
        "view": {"model": "SparseSBLR", "gamma": 1.0, "lam": 10**-3.5, "k": 3},
    },
    {
        "title": "How sure is each β?",
        "text": (
            "The same model refitted on 50 bootstrap resamples of the rows: a weight that is "
            "non-zero in almost every resample is a stable finding, one that comes and goes is "
            "not. Press “Estimate stability” at the bottom of the page."
        ),
        "question": (
            "Which weights are selected in at least 90% of the resamples? Is the noise label "
            "among them?"
        ),
        "page": "pages/coefficients.py",
        "view": {"model": "SparseSBLR", "gamma": 1.0, "lam": 10**-3.5, "k": 3},
    },
    {
        "title": "Explain one prediction",
        "text": (
            "For one row, thunder's logit is the intercept plus one term βₜ · f̄ₜ(x) per class. "
            "The waterfall adds them up; pick a misclassified row with the row picker. Further "
            "down, the same logit is split over the input features (hour, season, wind...), "
            "against the most similar row on the other side, and “What if?” lets you change "
            "the features that count most."
        ),
        "question": (
            "For a row predicted as thunder, which term pushes it over the line? Which feature "
            "would you change to make the model doubt, and does the waterfall agree when you do?"
        ),
        "page": "pages/explain.py",
        "view": {"model": "SparseSBLR", "gamma": 1.0, "lam": 10**-3.5, "k": 3},
    },
]

st.title("Lesson: what the planted data hides")
st.markdown(
    "Seven steps, each with a question for the class. “Show me” opens the page with the "
    "sidebar set for the step (on the planted sample: it replaces an upload). Every step has "
    "its own address, so a teacher can project or send any step."
)

n = len(STEPS)
wanted = st.session_state.get("_url_step") or "1"  # the link's ?step=N
first = common.index_value(wanted)
first = first if first is not None and 1 <= first <= n else 1
st.session_state.setdefault("lesson_step", first)
step = st.radio(
    "Step",
    range(1, n + 1),
    format_func=lambda i: f"{i}. {STEPS[i - 1]['title']}",
    key="lesson_step",
)
st.query_params["step"] = str(step)
info = STEPS[step - 1]
st.subheader(f"Step {step} of {n}: {info['title']}")
st.markdown(info["text"])
st.info(f"**Question for the class.** {info['question']}", icon=":material/help:")
view = info["view"]
planted = common.cached_sample("planted")
settings = (
    f"planted sample, {view['model']}, γ = "
    + ("scale" if view["gamma"] == "scale" else common.fmt_value(view["gamma"]))
    + f", λ = {common.fmt_value(view['lam'])}, class {planted.class_names[view['k']]}"
)
if st.button(f"Show me ({settings})", type="primary", key="lesson_show"):
    common.show_view(info["page"], sample="planted", **view)
