"""The Class contributions page's view: the paper's claim about βₜᵏ tested on the data for the
sidebar's class k, and the reading of each of SparseSBLR's zeros (``pages/contributions.py``
draws it)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from pages._shared.cache import FitPlan, cached_fit, diagnostics, fit_beside, training_evidence
from pages._shared.formatting import (
    context_name,
    esc_md,
    fmt_corr,
    fmt_gamma,
    fmt_share,
    fmt_value,
)
from pages._shared.long_jobs import stored_stability
from pages._shared.questions import Spec
from sblr.interpret import (
    check_claim,
    class_affinity,
    contribution_table,
    family_threshold,
    readings_at,
    zero_readings,
)
from sblr.registry import SBLR, SPARSE_SBLR

__all__ = ["INTRO", "INTRO_LATEX", "MULTICLASS", "MULTICLASS_LATEX", "Verdict", "contributions"]

INTRO = (
    "Each model's logit for the class k chosen in the sidebar is a weighted sum of every "
    "class t's evidence. The weight βₜᵏ says how much t's evidence moves k. By default the "
    "weights are the standardized β̃ₜᵏ = βₜᵏ · sd(f̄ₜ): the change of k's logit per standard "
    "deviation of t's evidence (population sd over the training rows). They can be compared "
    "across classes; raw β cannot, since each evidence column has its own spread.\n\n"
    "**How the claim is tested.** The weights are ranked against a dependency of k on t "
    "with Spearman's ρ (class k itself left out). The p-value is the share of 9,999 random "
    "shufflings of the weights that give a |ρ| at least as large: a small p means the "
    "agreement is unlikely to be chance. With few classes nothing can be confirmed, and "
    "that is what the p-value then says.\n\n"
    "**Two dependencies.** Co-occurrence C_kt counts the rows with both labels; it grows "
    "with the size of t, so a frequent class 'co-occurs' with everything. P(k | t) = "
    "C_kt / C_tt, the share of t's rows that also carry k, removes that. For a fixed k it "
    "ranks the classes exactly as lift and pointwise mutual information do."
)
INTRO_LATEX = (
    r"\tilde\beta_t^k=\beta_t^k\operatorname{sd}(\bar f_t),\qquad "
    r"C_{kt}=\#\{i: y_{ik}=y_{it}=1\},\qquad P(k\mid t)=\frac{C_{kt}}{C_{tt}},\qquad "
    r"\rho=\operatorname{Spearman}\big(|\tilde\beta_t^k|,\ D_{kt}\big)_{t\neq k}"
)
#: What the page says of multi-class data, whose classes never co-occur.
MULTICLASS = (
    "Multi-class data: every row has exactly one class, so no two classes ever co-occur "
    "and the paper's claim cannot be stated with co-occurrence. The dependency used here "
    "is the **mean evidence of class t over the rows of class k**, A_kt (how similar, on "
    "average, k's rows are to t's rows; leave-one-out). A large A_kt means the two classes "
    "are easily confused, so t's evidence carries information about k."
)
MULTICLASS_LATEX = r"A_{kt}=\frac{1}{|D_k|}\sum_{x_i\in D_k}\bar f_t(x_i)"
#: The SBLR verdicts' warning where its single coefficients are not identifiable.
UNRELIABLE = (
    "**Read SBLR's verdicts with care here:** at this γ SBLR's single coefficients are not "
    "identifiable (the Coefficients page says why), so its ranking of the classes, and "
    "any agreement of it with the data, may change with the solver's start. SparseSBLR's "
    "are the ones to read."
)
#: What the table lacks until the Coefficients page has estimated the stability.
NO_STABILITY = (
    "Run “Estimate stability” on the Coefficients page (same γ and λ) to add each weight's "
    "selection frequency and interval to this table."
)


@dataclass(frozen=True)
class Verdict:
    """One test of the claim, as a metric: its ``label``, ``value`` (ρ or "n/a"), the
    ``verdict`` and its ``colour`` (a ``delta_color``), the ``help`` and the ``line`` listed
    under the metrics (Markdown)."""

    label: str
    value: str
    verdict: str
    colour: str
    help: str
    line: str


@dataclass(frozen=True)
class ContributionsView:
    """What the Class contributions page shows for the sidebar's class."""

    title: str
    multiclass: bool
    hypothesis: str
    verdicts: list[Verdict]
    per_row: int  # metrics in a row: one row per model
    sblr_unreliable: bool
    beside: FitPlan  # SBLR's: fitted here without asking, or why not (plan.sentence)
    caption: str
    zeros: list[str]  # Markdown paragraphs on SparseSBLR's zeros
    zeros_caption: str | None
    table: pd.DataFrame  # the page's table, its formats in ``formats``
    formats: dict
    stability_shown: bool
    download: pd.DataFrame
    file_name: str


def contributions(ds, s, standardized: bool) -> ContributionsView:
    """The view of the sidebar's settings ``s`` (class ``s.k``), β̃ if ``standardized``; SBLR
    beside SparseSBLR only where :func:`~pages._shared.cache.fit_beside` shows it."""
    k, name_k = s.k, ds.class_names[s.k]
    multiclass = not ds.is_multilabel
    sblr_model, beside = fit_beside(ds, s.spec_for(SBLR))
    models = {f"{SBLR.label} beta": sblr_model} if sblr_model is not None else {}
    models[f"{SPARSE_SBLR.label} beta"] = cached_fit(ds, s.spec_for(SPARSE_SBLR))
    F, Y = training_evidence(ds, s.gamma), ds.label_matrix()
    if multiclass:
        related = "mean evidence on k's rows"
        measures = {related: "mean evidence of t on k's rows"}
    else:
        measures = {"cooccurrence": "co-occurrence", "p_k_given_t": "P(k | t)"}
    table = contribution_table(
        models,
        Y,
        k,
        class_names=ds.class_names,
        evidence=F,
        relation=class_affinity(Y, F) if multiclass else None,
        relation_name=related if multiclass else None,
        dependency=not multiclass,
    )
    sym = "β̃" if standardized else "β"
    weight = {name: (name + "_std" if standardized else name) for name in models}
    unreliable = sblr_model is not None and diagnostics(ds, s.gamma).unreliable
    verdicts = []
    for name in models:
        model_name = name.replace(" beta", "")
        # no green or red for SBLR where its single coefficients are not identifiable
        grey = unreliable and not Spec.of(model_name, s.gamma, s.lam).l1  # dense β
        for column, label in measures.items():
            c = check_claim(
                table[weight[name]].to_numpy(),
                table[column].to_numpy(),
                target=table.index.get_loc(k),
            )
            colour = {"supported": "normal", "contradicted": "inverse"}.get(c.verdict, "off")
            verdicts.append(
                Verdict(
                    label=f"{model_name}: ρ(|{sym}|, {label})",
                    value="n/a" if c.verdict in ("undefined", "untestable") else f"{c.rho:.2f}",
                    verdict=c.verdict,
                    colour="off" if grey else colour,
                    help=c.sentence(label),
                    line=f"- **{esc_md(model_name)}, {esc_md(label)}**: "
                    + esc_md(c.sentence(label)),
                )
            )
    zeros = zero_readings(
        models[f"{SPARSE_SBLR.label} beta"].coef_[k], F, Y, k, class_names=ds.class_names
    )
    paragraphs, zeros_caption = _zero_texts(ds, s, zeros, n_rows=len(F))
    shown = {weight[name]: name.replace("beta", sym) for name in models}
    view, formats, stability_shown = _table(ds, s, table, (measures, shown, zeros))
    return ContributionsView(
        title=f"Class contributions to “{esc_md(name_k)}”",
        multiclass=multiclass,
        hypothesis=_hypothesis(esc_md(name_k), multiclass),
        verdicts=verdicts,
        per_row=len(measures),
        sblr_unreliable=unreliable,
        beside=beside,
        caption=f"At γ = {fmt_gamma(s.gamma)}, λ = {fmt_value(s.lam)} (λ applies to SparseSBLR). "
        "The path page shows how ρ changes along λ. Each verdict is one test at the 5% level: "
        "browsing many classes, expect about one test in twenty to come out “supported” or "
        "“contradicted” by chance alone.",
        zeros=paragraphs,
        zeros_caption=zeros_caption,
        table=view,
        formats=formats,
        stability_shown=stability_shown,
        download=table.join(zeros.drop(columns="class")),
        file_name=context_name(ds, s.spec_for(SPARSE_SBLR), "contributions", name_k, suffix=".csv"),
    )


def _hypothesis(name_k: str, multiclass: bool) -> str:
    if multiclass:
        return (
            "**Hypothesis** (the paper's “Pacific Wren” discussion, stated for classes that "
            f"cannot co-occur): the classes whose rows are most like the rows of “{name_k}” "
            "(large A_kt) get the largest weights in its logit; classes unlike them get small "
            "weights, and SparseSBLR sets them to exactly zero."
        )
    return (
        "**Hypothesis** (the paper's “Pacific Wren” discussion): the classes that occur "
        f"together with “{name_k}” get the largest weights in its logit; classes "
        "that rarely occur with it get small weights, and SparseSBLR sets them to exactly zero."
    )


def _zero_texts(ds, s, zeros, n_rows):
    """The paragraphs (Markdown) on SparseSBLR's zeros for class k, and the caption on reading
    them all at once (None: one zero or none)."""
    if zeros.empty:
        return [
            f"SparseSBLR uses every class's evidence for “{esc_md(ds.class_names[s.k])}” at "
            f"λ = {fmt_value(s.lam)}: there is no zero to read. Raise λ to see some."
        ], None
    counts = zeros["reading"].value_counts()
    tau = zeros.attrs["threshold"]
    paragraphs = [
        f"SparseSBLR sets {len(zeros)} of the {ds.n_classes - 1} other classes' weights to "
        "exactly zero. A zero does not always mean *unrelated*. Each is read from two "
        "correlations with k's label over the rows: r, of t's evidence on its own, and r | S, "
        "of what is left of t's evidence once the classes the model does use (S) are "
        f"accounted for; a correlation counts when it reaches τ = 2/√n = {tau:.3f}.\n"
        f"- **irrelevant** ({counts.get('irrelevant', 0)}): no detectable relation to k, "
        "on its own or beyond S;\n"
        f"- **redundant** ({counts.get('redundant', 0)}): related to k on its own, but S "
        "already carries that information (a correlated class took its place); t may well "
        "matter for k;\n"
        f"- **weak** ({counts.get('weak', 0)}): it still tells something beyond S, but not "
        "enough to pay the L1 price at this λ (a smaller λ may let it in; see the path page)."
    ]
    if len(zeros) > 1 and len(counts) == 1:
        paragraphs.append(
            f"All {len(zeros)} zeros get the same reading, “{counts.index[0]}”: here the "
            "reading tells more about λ and the data as a whole than about any one class"
            + (
                " (every class still says something about k beyond S: λ is cutting classes "
                "the data support; a smaller λ, or Tune, keeps more)."
                if counts.index[0] == "weak"
                else "."
            )
        )
    if len(zeros) < 2:
        return paragraphs, None
    tau_all = family_threshold(n_rows, len(zeros))
    together = readings_at(zeros, tau_all).value_counts()  # the same correlations
    return paragraphs, (
        f"{len(zeros)} zeros are {len(zeros)} tests read at once: at τ = {tau:.3f} about "
        "one in twenty crosses it by chance. Held to 5% all together (Bonferroni, "
        f"τ = {tau_all:.3f}): {together.get('weak', 0)} weak, "
        f"{together.get('redundant', 0)} redundant, {together.get('irrelevant', 0)} "
        "irrelevant."
    )


def _table(ds, s, table, columns):
    """The page's table (the dependencies, the weights shown, each zero's reading and, once
    estimated, the stability), its number formats, and whether the stability is in it."""
    measures, shown, zeros = columns
    k = s.k
    view = table[["class", *measures, *shown]].rename(columns=shown)
    view = view.rename(columns={"cooccurrence": "co-occurrence", "p_k_given_t": "P(k | t)"})
    view["SparseSBLR zero"] = pd.Series(
        [
            f"{r} (r = {fmt_corr(v)}, r | S = {fmt_corr(p)})"
            for r, v, p in zip(zeros["reading"], zeros["r_with_k"], zeros["partial_r"], strict=True)
        ],
        index=zeros.index,
        dtype="string",
    ).reindex(view.index, fill_value="")
    result = stored_stability(ds, s.gamma, s.lam)
    if result is not None:
        view["selected in (resamples)"] = result.selection_frequency[k][view.index]
        view[f"β̃ {result.level:.0%} low"] = result.lower[k][view.index]
        view[f"β̃ {result.level:.0%} high"] = result.upper[k][view.index]
    numeric = [c for c in view.columns if c not in ("class", "SparseSBLR zero", "co-occurrence")]
    formats = {c: "{:.3g}" for c in numeric}
    if result is not None:
        formats["selected in (resamples)"] = "{:.0%}"
    if "P(k | t)" in view.columns:
        formats["P(k | t)"] = fmt_share
    return view, formats, result is not None
