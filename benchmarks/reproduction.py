"""Generate ``docs/reproduction.md``: our benchmark numbers beside the paper's (Ma & Chen).

Usage (from the repository root, with sblr importable: `pip install -e .` in the repository)::

    python benchmarks/reproduction.py --results docs/reproduction_results.csv \\
        --runtime "5 min 8 s on 2 cores" --out docs/reproduction.md \\
        --inner-results docs/reproduction_results_inner_kfold.csv \\
        --inner-runtime "27 min 3 s on 2 cores"

``--results`` takes a results CSV (``dataset, method, fold, metric, value``, as
written by ``python -m sblr benchmark``) or a benchmark output folder holding
``results.csv``; give it several times to merge runs (e.g. a separate BR-SVM
run).  ``--inner-results`` (optional, same format) is a second run of some of
the methods with hyper-parameters selected by an inner 5-fold CV on each
training fold instead of the paper's single 10% validation split; it adds a
section comparing the two selections.  ``--paper`` is the paper's numbers
(default ``../shared/paper/results.csv`` next to the repository).  Every number
in the generated tables comes from one of these CSV files; the hand-written
discussion (``docs/reproduction_discussion.md``) is appended verbatim.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from sblr.registry import BR_SVM, IBLR, KNN, LR, MLKNN, NCM, SBLR, SML, SPARSE_SBLR

REPO = Path(__file__).resolve().parent.parent
DEFAULT_PAPER = REPO.parent / "shared" / "paper" / "results.csv"
DEFAULT_DISCUSSION = REPO / "docs" / "reproduction_discussion.md"
#: Where the multi-label files are looked for (by the paper's data set name) to check the
#: published (coverage, ranking loss) pairs against each other.
DEFAULT_DATA = REPO.parent / "shared" / "datasets" / "multilabel"

#: Our method names -> the paper's column names (the registry's labels).
METHOD_LABELS = {
    m.key: m.label for m in (SPARSE_SBLR, SBLR, SML, MLKNN, IBLR, BR_SVM, KNN, NCM, LR)
}

#: Our data set names (file stems) -> the paper's spelling; others are the same.
DATASET_NAMES = {"balance-scale": "balance", "new-thyroid": "thyroid"}

#: Metric names (identical in both CSVs) -> display label.
METRIC_LABELS = {
    "hamming_loss": "Hamming loss ↓",
    "ranking_loss": "Ranking loss ↓",
    "one_error": "One-error ↓",
    "coverage": "Coverage ↓",
    "average_precision": "Average precision ↑",
    "accuracy": "Accuracy ↑",
}

#: Metrics where larger is better (the others are losses).
LARGER_IS_BETTER = ("average_precision", "accuracy")

#: Metrics not on a [0, 1] scale (coverage counts labels): kept apart when stds are averaged.
LABEL_SCALE = ("coverage",)

#: |ours - paper| above this is flagged (coverage is on a scale of labels, not [0, 1]).
DEFAULT_THRESHOLD = 0.02
THRESHOLDS = {"coverage": 0.1}

#: The benchmark's data arguments (paths relative to the repository root).
DATA_SPECS = {
    "emotions": "../shared/datasets/multilabel/emotions.arff",
    "scene": "../shared/datasets/multilabel/scene.arff",
    "yeast": "../shared/datasets/multilabel/yeast.arff",
    "genbase": "../shared/datasets/multilabel/genbase.arff",
    "balance-scale": "../shared/datasets/multiclass/balance-scale.data::target=0;header=no",
    "tae": "../shared/datasets/multiclass/tae.data::target=-1;header=no",
    "wine": "../shared/datasets/multiclass/wine.data::target=0;header=no",
    "new-thyroid": "../shared/datasets/multiclass/new-thyroid.data::target=0;header=no",
    "glass": "../shared/datasets/multiclass/glass.data::target=-1;drop=0;header=no",
    "zoo": "../shared/datasets/multiclass/zoo.data::target=-1;drop=0;header=no",
}

#: The paper's decisions and selection metric, passed explicitly: `sblr benchmark` decides by
#: the fitted cut and selects by micro-F1 unless told otherwise.
PAPER_DECISIONS = "--threshold paper --select-by average_precision"
#: Methods that have their own benchmark run (own output folder, shared cache).
SEPARATE_RUNS = (BR_SVM.key,)

#: Why a paper method was not run, by our method name.
NOT_RUN_METHOD_REASONS = {
    BR_SVM.key: "its separate benchmark run had not finished when this report was generated",
    **{
        m.key: f"multi-class baseline of the paper; implemented (`{m.key}`) but not part of "
        "this run"
        for m in (KNN, NCM, LR)
    },
}

#: Inner folds of the ``--inner-results`` run (``--selection inner_kfold --inner-folds``).
INNER_FOLDS = 5

#: Where the ``--inner-results`` run is kept in the repository.
INNER_RESULTS = "docs/reproduction_results_inner_kfold.csv"

REPORT_COMMAND = (
    "python benchmarks/reproduction.py --results docs/reproduction_results.csv "
    '--runtime "{runtime}"{inner} --out docs/reproduction.md'
)

#: The part of :data:`REPORT_COMMAND` that passes the inner-selection run.
INNER_REPORT_OPTIONS = ' --inner-results {path} --inner-runtime "{runtime}"'


# --------------------------------------------------------------------------- data
def read_results(sources):
    """Concatenate results CSVs (files, or folders holding ``results.csv``)."""
    frames = []
    for src in sources:
        path = Path(src)
        if path.is_dir():
            path = path / "results.csv"
        frames.append(pd.read_csv(path))
    results = pd.concat(frames, ignore_index=True)
    missing = {"dataset", "method", "fold", "metric", "value"} - set(results.columns)
    if missing:
        raise SystemExit(f"error: results lack column(s) {', '.join(sorted(missing))}")
    return results.drop_duplicates(["dataset", "method", "fold", "metric"], keep="last")


def read_paper(path):
    return pd.read_csv(path)


def paper_name(dataset):
    return DATASET_NAMES.get(dataset, dataset)


def method_label(method):
    return METHOD_LABELS.get(method, method)


def threshold(metric):
    return THRESHOLDS.get(metric, DEFAULT_THRESHOLD)


def _order(values, reference):
    present = list(dict.fromkeys(values))
    return [v for v in reference if v in present] + sorted(v for v in present if v not in reference)


def comparison(results, paper):
    """One row per (metric, dataset, method) we ran: ours (mean, std, n folds), paper, diff, gap.

    ``paper`` is NaN where the paper reports no value (e.g. MLKNN/IBLR on
    multi-class sets, or a data set the paper did not use).
    """
    g = results.groupby(["metric", "dataset", "method"], sort=False)["value"]
    ours = pd.DataFrame({"mean": g.mean(), "std": g.std(ddof=0), "folds": g.size()}).reset_index()
    lookup = {}
    for _, row in paper.iterrows():
        for col in paper.columns[3:]:
            if pd.notna(row[col]):
                lookup[(row["metric"], row["dataset"], col)] = float(row[col])
    ours["paper_dataset"] = ours["dataset"].map(paper_name)
    ours["label"] = ours["method"].map(method_label)
    ours["paper"] = [
        lookup.get((m, d, lab), float("nan"))
        for m, d, lab in zip(ours["metric"], ours["paper_dataset"], ours["label"], strict=True)
    ]
    ours["diff"] = ours["mean"] - ours["paper"]
    ours["threshold"] = ours["metric"].map(threshold)
    # a tiny tolerance so that e.g. 0.93 - 0.95 (= -0.020000000000000018) is not a gap
    ours["gap"] = ours["diff"].abs() > ours["threshold"] + 1e-9
    # order: metric as in the paper, data sets in the paper's order, methods in column order
    metric_order = _order(ours["metric"], list(METRIC_LABELS))
    ds_order = _order(ours["paper_dataset"], list(dict.fromkeys(paper["dataset"])))
    method_order = _order(ours["method"], list(METHOD_LABELS))
    ours["_m"] = ours["metric"].map(metric_order.index)
    ours["_d"] = ours["paper_dataset"].map(ds_order.index)
    ours["_k"] = ours["method"].map(method_order.index)
    ours = ours.sort_values(["_m", "_d", "_k"]).drop(columns=["_m", "_d", "_k"])
    return ours.reset_index(drop=True)


def _round3(values):
    """Round to 3 decimals as the report prints them (``f"{v:.3f}"`` and ``round`` agree)."""
    return [round(float(v), 3) for v in values]


def selection_comparison(results, inner, paper):
    """One row per (metric, dataset, method) in both runs: the 10%-split run and the inner
    k-fold run (mean, std over folds), the paper's value and the change ``diff`` = inner - split.

    ``verdict`` reads ``diff`` in the metric's direction ("better", "worse", or "equal" when it
    rounds to 0.000); ``nearer`` names the run whose mean is closer to the paper's value
    ("inner", "split", "tie" at 3 decimals, "" without a paper value); ``gap_split`` and
    ``gap_inner`` are the report's gap flags of each run.  Ordered as :func:`comparison`.
    """
    keys = ["metric", "dataset", "method"]
    split = comparison(results, paper).drop(columns=["diff"])
    other = comparison(inner, paper)[keys + ["mean", "std", "folds", "gap"]]
    both = split.merge(other, on=keys, how="inner", suffixes=("_split", "_inner"))
    both["diff"] = both["mean_inner"] - both["mean_split"]
    lower = ~both["metric"].isin(LARGER_IS_BETTER)
    rounded = pd.Series(_round3(both["diff"]), index=both.index)
    both["verdict"] = [
        "equal" if r == 0 else ("better" if (r < 0) == low else "worse")
        for r, low in zip(rounded, lower, strict=True)
    ]
    both["scaled"] = both["diff"].abs() / both["std_split"].where(both["std_split"] > 0)
    closer = (both["mean_inner"] - both["paper"]).abs() - (both["mean_split"] - both["paper"]).abs()
    both["nearer"] = [
        "" if pd.isna(c) else ("tie" if r == 0 else ("inner" if r < 0 else "split"))
        for c, r in zip(closer, _round3(closer.fillna(0.0)), strict=True)
    ]
    return both.reset_index(drop=True)


def selection_summary(sel):
    """One dict per method of :func:`selection_comparison`: counts and mean fold stds."""
    rows = []
    for method in _order(sel["method"], list(METHOD_LABELS)):
        sub = sel[sel["method"] == method]
        with_paper = sub[sub["paper"].notna()]
        unit = sub[~sub["metric"].isin(LABEL_SCALE)]
        labels = sub[sub["metric"].isin(LABEL_SCALE)]
        std_change = pd.Series(_round3(sub["std_inner"] - sub["std_split"]), index=sub.index)
        rows.append(
            {
                "label": method_label(method),
                "cells": len(sub),
                "better": int((sub["verdict"] == "better").sum()),
                "worse": int((sub["verdict"] == "worse").sum()),
                "equal": int((sub["verdict"] == "equal").sum()),
                "with_paper": len(with_paper),
                "nearer_inner": int((with_paper["nearer"] == "inner").sum()),
                "nearer_split": int((with_paper["nearer"] == "split").sum()),
                "nearer_tie": int((with_paper["nearer"] == "tie").sum()),
                "gaps_split": int(with_paper["gap_split"].sum()),
                "gaps_inner": int(with_paper["gap_inner"].sum()),
                "unit_cells": len(unit),
                "std_split": unit["std_split"].mean(),
                "std_inner": unit["std_inner"].mean(),
                "label_cells": len(labels),
                "label_std_split": labels["std_split"].mean(),
                "label_std_inner": labels["std_inner"].mean(),
                "std_lower": int((std_change < 0).sum()),
                "std_higher": int((std_change > 0).sum()),
                "std_equal": int((std_change == 0).sum()),
            }
        )
    return rows


# --------------------------------------------------------------------------- markdown
def _fmt(v, decimals=3):
    return "n/a" if pd.isna(v) else f"{v:.{decimals}f}"


def _signed(v, decimals=3):
    return "" if pd.isna(v) else f"{v:+.{decimals}f}"


def table_row(r):
    """The Markdown row of one comparison row."""
    cells = [
        r["paper_dataset"],
        r["label"],
        f"{_fmt(r['mean'])} ± {_fmt(r['std'])}",
        _fmt(r["paper"]),
        _signed(r["diff"]),
        "**gap**" if r["gap"] else "",
    ]
    return "| " + " | ".join(cells) + " |"


def _data_arguments(results):
    """The benchmark's data arguments for the data sets of ``results``, in DATA_SPECS order."""
    datasets = _order(results["dataset"], list(DATA_SPECS))
    return " ".join(
        f'"{DATA_SPECS[d]}"' if "::" in DATA_SPECS.get(d, "") else DATA_SPECS.get(d, d)
        for d in datasets
    )


def _benchmark_commands(results):
    folds = int(results["fold"].max()) + 1
    data = _data_arguments(results)
    methods = _order(results["method"], list(METHOD_LABELS))
    main = [m for m in methods if m not in SEPARATE_RUNS]
    cmds = [
        f"python -m sblr benchmark {data} --methods {','.join(main)} --folds {folds} "
        f"{PAPER_DECISIONS} --out /tmp/repro --n-jobs 1"
    ]
    for m in methods:
        if m in SEPARATE_RUNS:
            cmds.append(
                f"python -m sblr benchmark {data} --methods {m} --folds {folds} "
                f"{PAPER_DECISIONS} --out /tmp/repro_{m.replace('br_', '')} "
                "--cache /tmp/repro/cache --n-jobs 1"
            )
    merge = (
        'python -c "import pandas as pd; pd.concat([pd.read_csv(f) for f in '
        "['/tmp/repro/results.csv', '/tmp/repro_svm/results.csv']])"
        ".to_csv('docs/reproduction_results.csv', index=False)\""
        if len(cmds) > 1
        else "cp /tmp/repro/results.csv docs/reproduction_results.csv"
    )
    return cmds, merge


def _inner_commands(inner):
    """The benchmark command of the inner-selection run and the copy into ``docs/``."""
    folds = int(inner["fold"].max()) + 1
    methods = _order(inner["method"], list(METHOD_LABELS))
    return [
        f"python -m sblr benchmark {_data_arguments(inner)} --methods {','.join(methods)} "
        f"--folds {folds} --selection inner_kfold --inner-folds {INNER_FOLDS} "
        f"{PAPER_DECISIONS} --out /tmp/repro_inner --n-jobs 1",
        f"cp /tmp/repro_inner/results.csv {INNER_RESULTS}",
    ]


def not_run(results, paper):
    """Bullet lines: paper methods and data sets we did not run, and why."""
    lines = []
    ran_methods = set(results["method"])
    ours_by_label = {v: k for k, v in METHOD_LABELS.items()}
    for label in paper.columns[3:]:
        method = ours_by_label.get(label, label)
        if method in ran_methods:
            continue
        tables = sorted(set(paper.loc[paper[label].notna(), "table"]))
        reason = NOT_RUN_METHOD_REASONS.get(method, "not part of this run")
        lines.append(f"- {label} (paper tables: {', '.join(tables)}): {reason}.")
    ran_sets = {paper_name(d) for d in results["dataset"]}
    missing = [d for d in dict.fromkeys(paper["dataset"]) if d not in ran_sets]
    if missing:
        n_paper = paper["dataset"].nunique()
        lines.append(
            f"- Data sets {', '.join(missing)} ({len(missing)} of the paper's {n_paper}): "
            "not in `../shared/datasets/`, the only data this reproduction uses."
        )
    extra = sorted(
        {(paper_name(d), method_label(m)) for (d, m), sub in results.groupby(["dataset", "method"])}
        - {
            (d, lab)
            for _, row in paper.iterrows()
            for lab in paper.columns[3:]
            if pd.notna(row[lab])
            for d in [row["dataset"]]
        }
    )
    by_method = {}
    for d, lab in extra:
        by_method.setdefault(lab, []).append(d)
    for lab, sets in by_method.items():
        lines.append(
            f"- Run by us but not reported by the paper (no comparison): {lab} on "
            f"{', '.join(sets)}."
        )
    return lines


def _cells(n):
    return f"{n} cell" if n == 1 else f"{n} cells"


def selection_section(results, inner, paper):
    """Markdown lines of the section comparing the 10%-split run with the inner k-fold run."""
    sel = selection_comparison(results, inner, paper)
    n_folds = int(inner["fold"].max()) + 1
    out = [f"## Hyper-parameter selection: the paper's 10% split vs inner {INNER_FOLDS}-fold CV\n"]
    out.append(
        f"A second {n_folds}-fold run of "
        + ", ".join(method_label(m) for m in _order(inner["method"], list(METHOD_LABELS)))
        + " on the same outer folds, with γ (and λ for SparseSBLR) chosen on each training "
        f"fold by the mean validation score of an inner {INNER_FOLDS}-fold CV "
        f"(`--selection inner_kfold --inner-folds {INNER_FOLDS}`) instead of the paper's single "
        "10% validation split (the tables above); same grid, same selection metric. "
        "Δ = inner − split; *inner is* reads Δ in the metric's direction (equal: Δ is 0.000 at "
        "3 decimals). |Δ| / std: Δ in units of the 10%-split run's fold std. *Nearer the "
        "paper*: the run whose mean is closer to the paper's value (tie at 3 decimals).\n"
    )
    for r in selection_summary(sel):
        line = (
            f"- **{r['label']}** ({_cells(r['cells'])}, data set × metric): inner "
            f"{INNER_FOLDS}-fold better on {r['better']}, worse on {r['worse']}, equal on "
            f"{r['equal']} (at 3 decimals). Nearer the paper's value on {r['nearer_inner']}, "
            f"farther on {r['nearer_split']}, tied on {r['nearer_tie']} of the "
            f"{_cells(r['with_paper'])} with a paper value; gaps to the paper: "
            f"{r['gaps_split']} with the 10% split, {r['gaps_inner']} with inner "
            f"{INNER_FOLDS}-fold."
        )
        if r["unit_cells"]:
            line += (
                f" Mean fold std on the [0, 1] metrics ({_cells(r['unit_cells'])}): "
                f"{_fmt(r['std_split'])} with the 10% split, {_fmt(r['std_inner'])} with inner "
                f"{INNER_FOLDS}-fold"
            )
            if r["label_cells"]:
                line += (
                    f"; on coverage ({_cells(r['label_cells'])}): "
                    f"{_fmt(r['label_std_split'])} and {_fmt(r['label_std_inner'])}"
                )
            line += "."
        line += (
            f" Fold std lower with inner {INNER_FOLDS}-fold on {r['std_lower']}, higher on "
            f"{r['std_higher']}, equal on {r['std_equal']} (at 3 decimals)."
        )
        out.append(line)
    out.append("")
    out.append(
        f"| metric | dataset | method | 10% split | inner {INNER_FOLDS}-fold | Δ | "
        "\\|Δ\\| / std | inner is | paper | nearer the paper |"
    )
    out.append("|---|---|---|---:|---:|---:|---:|---|---:|---|")
    for _, r in sel.iterrows():
        scaled = "—" if pd.isna(r["scaled"]) else f"{r['scaled']:.1f}"
        out.append(
            f"| {r['metric']} | {r['paper_dataset']} | {r['label']} | "
            f"{_fmt(r['mean_split'])} ± {_fmt(r['std_split'])} | "
            f"{_fmt(r['mean_inner'])} ± {_fmt(r['std_inner'])} | {_signed(r['diff'])} | "
            f"{scaled} | {r['verdict']} | {_fmt(r['paper'])} | {r['nearer']} |"
        )
    out.append("")
    keys = ["metric", "dataset", "method"]
    only = inner.merge(results[keys].drop_duplicates(), on=keys, how="left", indicator=True)
    only = only[only["_merge"] == "left_only"]
    if not only.empty:
        cells = sorted(
            {
                (paper_name(d), method_label(m))
                for d, m in zip(only["dataset"], only["method"], strict=True)
            }
        )
        out.append(
            "Only in the inner run (no 10%-split result to compare): "
            + ", ".join(f"{lab} on {d}" for d, lab in cells)
            + ".\n"
        )
    return out


def impossible_cells(paper, label_sets):
    """Published (coverage, ranking loss) pairs no ranking can have on the data set's label
    sets: coverage below :func:`sblr.metrics.coverage_floor` at the published ranking loss
    (beyond 0.0005, the published values' rounding).  ``label_sets``: paper data set name ->
    0/1 label matrix.  One row per method and data set checked, with the floor."""
    from sblr.metrics import coverage_floor

    rows = []
    methods = [c for c in paper.columns if c not in ("table", "dataset", "metric")]
    for name, Y in label_sets.items():
        cov = paper[(paper.dataset == name) & (paper.metric == "coverage")]
        rl = paper[(paper.dataset == name) & (paper.metric == "ranking_loss")]
        if cov.empty or rl.empty:
            continue
        for method in methods:
            c, r = cov[method].iloc[0], rl[method].iloc[0]
            if pd.isna(c) or pd.isna(r):
                continue
            floor = coverage_floor(Y, min(max(float(r) - 0.0005, 0.0), 1.0))
            rows.append(
                {
                    "dataset": name,
                    "method": method,
                    "coverage": float(c),
                    "ranking_loss": float(r),
                    "floor": floor,
                    "impossible": float(c) + 0.0005 < floor,
                }
            )
    return pd.DataFrame(rows)


def impossible_section(paper, label_sets):
    """The report's section on published cells that contradict each other."""
    checked = impossible_cells(paper, label_sets)
    if checked.empty:
        return []
    bad = checked[checked.impossible]
    out = ["## Published cells that no ranking can have\n"]
    out.append(
        "For a row with y relevant of m labels, coverage ≥ y − 1 + RL · (m − y) (each relevant "
        "label has at most as many irrelevant labels above it as the lowest one has), so on a "
        "data set's label sets coverage ≥ mean(y) − 1 + share empty + share defined · RL · "
        "min(m − y) (`sblr.metrics.coverage_floor`, on the data files found: "
        + ", ".join(sorted(label_sets))
        + "). A published coverage below the floor at its own published ranking loss (both "
        "rounded to 3 decimals, allowed for) cannot come from the standard definitions: a gap "
        "there is not ours to explain.\n"
    )
    out.append(f"Checked pairs: {len(checked)}; impossible: {len(bad)}.\n")
    if not bad.empty:
        out.append("| dataset | method | paper coverage | paper ranking loss | floor |")
        out.append("|---|---|---:|---:|---:|")
        for r in bad.itertuples():
            out.append(
                f"| {r.dataset} | {r.method} | {r.coverage:.3f} | {r.ranking_loss:.3f} | "
                f"{r.floor:.3f} |"
            )
        out.append("")
    return out


def label_sets_from(folder, names):
    """Paper data set name -> label matrix, for the multi-label files found in ``folder``."""
    import numpy as np

    from sblr import load_dataset

    out = {}
    for name in names:
        path = Path(folder) / f"{name}.arff"
        if path.exists():
            ds = load_dataset(str(path))
            if ds.task == "multilabel":
                out[name] = np.asarray(ds.y, dtype=int)
    return out


def render(
    results,
    paper,
    *,
    runtime=None,
    discussion=None,
    inner=None,
    inner_runtime=None,
    label_sets=None,
):
    """The report as a Markdown string; ``inner`` (results of an inner k-fold selection run)
    adds the section comparing the two selections."""
    comp = comparison(results, paper)
    cmds, merge = _benchmark_commands(results)
    runtime_text = runtime or "not recorded"
    n_folds = int(results["fold"].max()) + 1
    compared = comp[comp["paper"].notna()]
    gaps = compared[compared["gap"]]
    out = ["# Reproduction of Ma & Chen's experiments\n"]
    sources = "docs/reproduction_results.csv" + (f", {INNER_RESULTS}" if inner is not None else "")
    out.append(
        f"<!-- GENERATED by benchmarks/reproduction.py from {sources} and "
        "the paper's results.csv; do not edit by hand. -->\n"
    )
    out.append(
        f"Our {n_folds}-fold cross-validation results (mean ± std over folds, population std) "
        "beside the paper's published means. Δ = ours − paper; **gap** marks "
        f"|Δ| > {DEFAULT_THRESHOLD:g} ("
        + ", ".join(f"{k.replace('_', ' ')} > {v:g}" for k, v in THRESHOLDS.items())
        + "; flags use the unrounded means, so a printed Δ of ±0.020 can be flagged). "
        "Data set names follow the paper ("
        + ", ".join(f"{k} → {v}" for k, v in DATASET_NAMES.items())
        + ").\n"
    )
    out.append(
        f"Compared cells: {len(compared)}; gaps: {len(gaps)} "
        f"(ours better: {int(_better(gaps).sum())}, ours worse: {int((~_better(gaps)).sum())}).\n"
    )
    out.append("## How to regenerate\n")
    out.append("Benchmark (from the repository root):\n")
    out.append("```\n" + "\n".join(cmds) + "\n" + merge + "\n```\n")
    inner_runtime_text = inner_runtime or "not recorded"
    inner_options = ""
    if inner is not None:
        out.append(
            f'Inner {INNER_FOLDS}-fold selection run (section "Hyper-parameter selection"):\n'
        )
        out.append("```\n" + "\n".join(_inner_commands(inner)) + "\n```\n")
        inner_options = INNER_REPORT_OPTIONS.format(path=INNER_RESULTS, runtime=inner_runtime_text)
    out.append("Report:\n")
    out.append(
        "```\n" + REPORT_COMMAND.format(runtime=runtime_text, inner=inner_options) + "\n```\n"
    )
    out.append(f"Run time: {runtime_text}.\n")
    if inner is not None:
        out.append(f"Inner {INNER_FOLDS}-fold run time: {inner_runtime_text}.\n")
    lines = not_run(results, paper)
    if lines:
        out.append("## Not run\n")
        out.extend(lines)
        out.append("")
    for metric in _order(comp["metric"], list(METRIC_LABELS)):
        sub = comp[comp["metric"] == metric]
        out.append(f"## {METRIC_LABELS.get(metric, metric)}\n")
        out.append(f"Gap threshold: {threshold(metric):g}.\n")
        out.append("| dataset | method | ours (mean ± std) | paper | Δ | |")
        out.append("|---|---|---:|---:|---:|---|")
        out.extend(table_row(r) for _, r in sub.iterrows())
        out.append("")
    out.append("## Gaps\n")
    if gaps.empty:
        out.append("None.\n")
    else:
        out.append(
            "|Δ| / SE: the gap in standard errors of our mean (SE = std / √folds), a rough "
            "guide to how far the paper's value is from ours given our fold-to-fold spread.\n"
        )
        out.append(
            "| metric | dataset | method | ours | std | paper | Δ | \\|Δ\\| / SE | ours is |"
        )
        out.append("|---|---|---|---:|---:|---:|---:|---:|---|")
        better = _better(gaps)
        for (_, r), b in zip(gaps.iterrows(), better, strict=True):
            se = r["std"] / r["folds"] ** 0.5
            z = f"{abs(r['diff']) / se:.1f}" if se > 0 else "—"
            out.append(
                f"| {r['metric']} | {r['paper_dataset']} | {r['label']} | {_fmt(r['mean'])} | "
                f"{_fmt(r['std'])} | {_fmt(r['paper'])} | {_signed(r['diff'])} | {z} | "
                f"{'better' if b else 'worse'} |"
            )
        out.append("")
    ranks = rank_comparison(comp)
    if not ranks.empty:
        out.append("## Average ranks, ours and the paper's\n")
        out.append(
            "Ranks among the methods we ran that the paper also reports, over the data sets "
            "both have (1 = best; ties averaged on the 3-decimal values, as in the paper). "
            "The paper's ranks here are recomputed from its values on this subset, so they "
            "differ from its tables' average ranks.\n"
        )
        out.append("| metric | data sets | method | our average rank | paper's average rank |")
        out.append("|---|---:|---|---:|---:|")
        for r in ranks.itertuples():
            out.append(f"| {r.metric} | {r.datasets} | {r.method} | {r.ours:.2f} | {r.paper:.2f} |")
        out.append("")
    out.extend(friedman_section(results))
    out.extend(impossible_section(paper, label_sets or {}))
    if inner is not None:
        out.extend(selection_section(results, inner, paper))
    if discussion:
        out.append("## Discussion\n")
        out.append(discussion.strip() + "\n")
    return "\n".join(out)


def friedman_section(results):
    """Per metric, over the data sets where every method ran: the Friedman test, the average
    ranks, the Nemenyi critical difference, SparseSBLR's p-value against each other method,
    and what that lets one say about the paper's claim (SparseSBLR ranks best)."""
    from sblr.stats import friedman_nemenyi, method_label

    out = ["## Friedman test and Nemenyi post-hoc, our results\n"]
    out.append(
        "Per metric, over the data sets on which every method has a value (Demšar 2006: the "
        "Friedman test on the ranks of the 3-decimal means, then Nemenyi's test; α = 0.05). "
        "The paper's claim is that SparseSBLR ranks best; the last column says what these "
        "data support.\n"
    )
    out.append(
        "| metric | data sets | methods | Friedman p | CD | SparseSBLR's rank (of k) | best "
        "| SparseSBLR vs the others, Nemenyi p | these data support |"
    )
    out.append("|---|---:|---:|---:|---:|---:|---|---|---|")
    for metric in _order(results["metric"].unique(), list(METRIC_LABELS)):
        sub = results[results["metric"] == metric]
        try:
            fr = friedman_nemenyi(sub, metric, decimals=3)
        except ValueError:
            continue
        ranks = fr.average_ranks.sort_values()
        if SPARSE_SBLR.key not in ranks.index:
            continue
        position = int((ranks < ranks[SPARSE_SBLR.key]).sum()) + 1
        p_vs = fr.nemenyi.loc[SPARSE_SBLR.key].drop(SPARSE_SBLR.key)
        pairs = ", ".join(f"{method_label(m)} {p:.2f}" for m, p in p_vs.sort_values().items())
        worse = [
            method_label(m)
            for m in p_vs.index
            if p_vs[m] < 0.05 and ranks[m] < ranks[SPARSE_SBLR.key]
        ]
        better = [
            method_label(m)
            for m in p_vs.index
            if p_vs[m] < 0.05 and ranks[m] > ranks[SPARSE_SBLR.key]
        ]
        if fr.pvalue >= 0.05:
            verdict = "no difference among the methods can be shown"
        elif worse:
            verdict = "SparseSBLR is significantly worse than " + ", ".join(worse)
        elif better:
            verdict = "SparseSBLR is significantly better than " + ", ".join(better)
        else:
            verdict = "methods differ, but SparseSBLR from none significantly"
        out.append(
            f"| {metric} | {fr.n_datasets} | {fr.n_methods} | {fr.pvalue:.3f} | {fr.cd:.2f} | "
            f"{ranks[SPARSE_SBLR.key]:.2f} ({position} of {fr.n_methods}) | "
            f"{method_label(ranks.index[0])} ({ranks.iloc[0]:.2f}) | {pairs} | {verdict} |"
        )
    out.append("")
    return out


def rank_comparison(comp):
    """Average ranks (1 = best; ties averaged; values rounded to 3 decimals as printed) of the
    methods, ours and the paper's, over the same data sets, for every metric.

    Only data sets and methods that have both our value and the paper's value enter.
    """
    rows = []
    for metric in _order(comp["metric"], list(METRIC_LABELS)):
        sub = comp[(comp["metric"] == metric) & comp["paper"].notna()]
        ours = sub.pivot(index="paper_dataset", columns="label", values="mean").round(3)
        paper = sub.pivot(index="paper_dataset", columns="label", values="paper")
        keep = ours.columns[ours.notna().all()]
        if len(keep) < 2:
            continue
        ascending = metric not in LARGER_IS_BETTER
        r_ours = ours[keep].rank(axis=1, ascending=ascending).mean()
        r_paper = paper[keep].rank(axis=1, ascending=ascending).mean()
        order = [lab for lab in METHOD_LABELS.values() if lab in keep]
        for lab in order:
            rows.append((metric, len(ours), lab, r_ours[lab], r_paper[lab]))
    return pd.DataFrame(rows, columns=["metric", "datasets", "method", "ours", "paper"])


def _better(rows):
    lower = ~rows["metric"].isin(LARGER_IS_BETTER)
    return (rows["diff"] < 0) == lower


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument(
        "--results",
        action="append",
        required=True,
        help="results CSV or benchmark output folder (repeat to merge runs)",
    )
    p.add_argument("--paper", type=Path, default=DEFAULT_PAPER, help="the paper's results.csv")
    p.add_argument("--discussion", type=Path, default=DEFAULT_DISCUSSION)
    p.add_argument("--runtime", help='wall time of the benchmark, e.g. "5 min 8 s on 2 cores"')
    p.add_argument(
        "--inner-results",
        action="append",
        help=f"results CSV or benchmark output folder of the run with inner {INNER_FOLDS}-fold "
        "selection (repeat to merge); adds the section comparing the two selections",
    )
    p.add_argument("--inner-runtime", help="wall time of the --inner-results benchmark")
    p.add_argument(
        "--data",
        type=Path,
        default=DEFAULT_DATA,
        help="folder of the multi-label ARFF files (by the paper's names) whose label sets "
        "check the published coverage against the published ranking loss",
    )
    p.add_argument("--out", type=Path, required=True, help="Markdown file to write")
    args = p.parse_args(argv)
    if args.inner_runtime and not args.inner_results:
        p.error("--inner-runtime needs --inner-results")
    if not args.paper.exists():
        p.error(f"no paper results at {args.paper} (give --paper)")
    discussion = args.discussion.read_text(encoding="utf-8") if args.discussion.exists() else None
    text = render(
        read_results(args.results),
        read_paper(args.paper),
        runtime=args.runtime,
        discussion=discussion,
        inner=read_results(args.inner_results) if args.inner_results else None,
        inner_runtime=args.inner_runtime,
        label_sets=label_sets_from(
            args.data, read_paper(args.paper).query("table == 'mlc'").dataset.unique()
        ),
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(f"Wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
