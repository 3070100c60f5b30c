"""The commands that run the paper's protocol: benchmark, evaluate, fit and predict.

Their arguments (the method list, the decision and selection options, checked values), the
data they read (``PATH::key=value`` specs, folders, one loader call per file), the output
folders they check before any work, and the runs themselves.  Imported by :mod:`sblr.cli`
only for these commands: it imports the protocol, so scikit-learn, SciPy and pandas (2-3 s),
which ``sblr --help`` and ``sblr dashboard`` do without.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from sblr._validation import StrOptions
from sblr.cli import _BENCHMARK_HELP, _EVALUATE_HELP, _FIT_HELP, _PREDICT_HELP, _OutputError
from sblr.decision import RULES, Decision
from sblr.display import duration
from sblr.exceptions import DataError
from sblr.io import load_dataset
from sblr.metrics import METRIC_LABELS, MULTILABEL_METRICS
from sblr.modelfile import load_model, save_model
from sblr.protocol import (
    METHODS,
    SELECTIONS,
    TASK_METRICS,
    _metric_values,
    _scores,
    build_decision,
    decisions_text,
    paper_metric,
    plan_selection,
    run_benchmark,
    select_params,
)
from sblr.registry import SPARSE_SBLR
from sblr.registry import get as get_method
from sblr.stats import (
    cd_diagram,
    friedman_nemenyi,
    markdown_table,
    mean_std_table,
    paper_tables_markdown,
)
from sblr.textsafe import escape_markdown, to_csv_bytes
from sblr.tuning import DECISION_GRID, PAPER_GRID

#: What a folder given as DATA contributes; a file given by name may have any extension.
DATA_SUFFIXES = (".arff", ".csv", ".tsv", ".data")
#: numpy's legacy seeding (used by scikit-learn's splitters) takes 0 ... 2**32 - 1.
MAX_SEED = 2**32 - 1
#: ``sblr benchmark``'s methods by default: the comparison of multi-label data (the registry's).
DEFAULT_METHODS = ",".join(m.key for m in METHODS.values() if m.default_for("multilabel"))
#: The keys of a data argument's ``PATH::key=value`` options.
DATA_KEYS = ("target", "drop", "header", "xml", "n_labels", "name")

_DATA_HELP = """\
DATA arguments are ARFF files (*.arff: labels from --xml, else the Mulan XML
file beside them as Mulan ships it (NAME.xml; for NAME-train.arff also
NAME.xml), else --n-labels (the last N attributes), else MEKA's -C N, else a
nominal last attribute), delimited text files (any other extension: .csv,
.tsv, UCI's headerless .data, .txt, .dat, none; the separator is detected),
or folders (every *.arff, *.csv, *.tsv, *.data file in them, not recursive;
name other files one by one, as a folder often holds a README.txt).
--target/--drop/--no-header apply to every delimited text file, --n-labels
to every ARFF file, --xml to the one ARFF file; a single file can override
them with PATH::key=value;key=value, keys target, drop (comma separated),
header (yes/no), xml, n_labels (ARFF) and name, e.g.
  "wine.data::target=0;header=no"   "glass.data::target=-1;drop=0;header=no"
  "delicious-train.arff::xml=labels/delicious.xml"   "tags.arff::target=-1"
"""


def _float_list(text):
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not a comma-separated list of numbers: {text!r}"
        ) from None
    if not values or not all(math.isfinite(v) and v > 0 for v in values):
        raise argparse.ArgumentTypeError(f"grid values must be finite numbers > 0: {text!r}")
    return values


def _finite_float(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"must be a finite number: {text!r}")
    return v


def _positive_float(text):
    v = _finite_float(text)
    if not v > 0:
        raise argparse.ArgumentTypeError(f"must be > 0: {text!r}")
    return v


def _nonnegative_float(text):
    v = _finite_float(text)
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0: {text!r}")
    return v


def _gamma_words(methods):
    """The words the estimators of ``methods`` take for gamma, as their parameter
    constraints declare them (the similarity models "scale"; BR-SVM also "auto")."""
    words = {}
    for spec in methods:
        for constraint in getattr(spec.factory, "_parameter_constraints", {}).get("gamma", []):
            if isinstance(constraint, StrOptions):
                # "scale", the estimators' default, first
                words.update(
                    dict.fromkeys(sorted(constraint.options, key=lambda w: (w != "scale", w)))
                )
    return list(words)


def _gamma(text):
    """``--gamma``: a number > 0, or a word an estimator takes for it (``scale``)."""
    words = _gamma_words(METHODS.values())
    if text in words:
        return text
    try:
        float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"a number > 0, {' or '.join(words)}; got {text!r}"
        ) from None
    return _positive_float(text)


def _param_text(given):
    """Parameters as the summary line writes them: ``gamma=scale, lam=0.01``."""
    return ", ".join(f"{k}={v if isinstance(v, str) else format(v, 'g')}" for k, v in given.items())


def _integer(text):
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None


def _label_count(text):
    v = _integer(text)
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1: {text!r}")
    return v


def _folds(text):
    v = _integer(text)
    if v < 2:
        raise argparse.ArgumentTypeError(f"need at least 2 folds: {text!r}")
    return v


def _n_jobs(text):
    v = _integer(text)
    if v < 1 and v != -1:
        raise argparse.ArgumentTypeError(f"must be -1 (all cores) or >= 1: {text!r}")
    return v


def _seed(text):
    v = _integer(text)
    if not 0 <= v <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"must be an integer from 0 to 2**32 - 1: {text!r}")
    return v


def _add_data_options(p):
    p.add_argument(
        "--target",
        help="CSV/.data class column (name or position, negative from the end) of a "
        "multi-class file, or comma-separated 0/1 label columns of a multi-label file",
    )
    p.add_argument("--drop", help="comma-separated CSV columns (names or positions) to leave out")
    p.add_argument(
        "--no-header", action="store_true", help="CSV/.data files have no header row (UCI style)"
    )
    p.add_argument(
        "--xml",
        metavar="PATH",
        type=Path,
        help="the Mulan XML label file of the ARFF file (default: the one beside it, e.g. "
        "delicious.xml for delicious-train.arff)",
    )
    p.add_argument(
        "--n-labels",
        type=_label_count,
        metavar="N",
        help="ARFF files: the last N attributes are the labels (when no XML file says which)",
    )


def _threshold(text):
    """``--threshold``: a probability strictly between 0 and 1 (a cut of 0 predicts every
    label, of 1 none), a rule of sblr.decision, or "paper"."""
    if text in (*RULES, "paper"):
        return text
    value = _finite_float(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(
            f"must be a probability between 0 and 1 (0 would predict every label, 1 none), "
            f"one of {', '.join(RULES)}, or paper; got {text!r}"
        )
    return value


def _decision(args):
    """The decision the command runs with: --threshold as given ("paper": None), else the
    fitted micro-F1 cut."""
    if args.threshold is None:
        return args.default_threshold
    return None if args.threshold == "paper" else args.threshold


def _check_threshold_used(args, parser, methods):
    """A --threshold given for methods none of which decides by one (the baselines: their own
    rule) is a mistake said in one line, not silently ignored."""
    if args.threshold is not None and not any(build_decision(METHODS[m], 0.5) for m in methods):
        how = (
            "does not use --threshold (it decides"
            if len(methods) == 1
            else ("do not use --threshold (each decides")
        )
        cut = [m.key for m in METHODS.values() if m.decides_by_cut]
        parser.error(
            f"{', '.join(methods)} {how} by its own rule); --threshold is for "
            f"{', '.join(cut[:-1])} and {cut[-1]}"
        )


def _add_decision_options(p):
    """``--threshold`` and ``--select-by``: the fitted micro-F1 cut and selection by micro-F1
    by default, as the dashboard decides; ``--threshold paper --select-by average_precision``
    is the paper's protocol."""
    p.set_defaults(default_threshold="micro_f1")
    p.add_argument(
        "--threshold",
        type=_threshold,
        default=None,
        help="multi-label decision of sml/sblr/sparse_sblr: a probability cut (0.5 is the "
        f"paper's), a cut fitted on out-of-fold training probabilities ({', '.join(RULES)}), "
        "or paper (0.5 on the paper's mean evidence; SML its own top-xi rule); default "
        "micro_f1",
    )
    p.add_argument(
        "--select-by",
        choices=MULTILABEL_METRICS,
        default="micro_f1",
        help="multi-label selection metric of gamma/lambda (multi-class: accuracy); default "
        "micro_f1 (the paper's: average_precision)",
    )


def _add_protocol_options(p, *, folds_default, selection_default="holdout", inner_default=3):
    p.add_argument(
        "--folds", type=_folds, default=folds_default, help=f"CV folds (default {folds_default})"
    )
    auto = selection_default == "auto"
    p.add_argument(
        "--selection",
        choices=(*SELECTIONS, "auto") if auto else SELECTIONS,
        default=selection_default,
        help="hyper-parameter selection on each training fold: 10%% validation split (the "
        "paper's), an inner k-fold, or loo (the similarity models scored on the leave-one-out "
        "evidence of every training row, the baselines on the inner folds)"
        + (
            "; auto: the inner k-fold where its estimated cost is within a budget, else a "
            "hold-out split, else the defaults (gamma scale, lam 1e-4, C 1), saying which"
            if auto
            else ""
        )
        + f" (default {selection_default})",
    )
    p.add_argument(
        "--inner-folds",
        type=_folds,
        default=inner_default,
        help=f"folds of --selection inner_kfold ({inner_default})",
    )
    p.add_argument("--seed", type=_seed, default=0, help="seed of the folds and splits (0)")
    p.add_argument(
        "--n-jobs",
        type=_n_jobs,
        default=1,
        help="parallel workers (joblib processes; -1: all cores; with --dask local, the number "
        "of Dask workers)",
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run the folds on the Dask distributed scheduler at ADDRESS (tcp://HOST:PORT; its "
        "workers need sblr installed); results are cached here as usual",
    )
    where.add_argument(
        "--dask",
        choices=["local"],
        help="run the folds on a Dask LocalCluster on this machine (127.0.0.1, --n-jobs workers)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    # Hidden: a smaller grid than the paper's {1e2, ..., 1e-5} (benchmark) or DECISION_GRID
    # (evaluate, fit), for tests and quick looks.
    p.add_argument("--grid", type=_float_list, default=None, help=argparse.SUPPRESS)


def _add_protocol_commands(sub):
    """The ``benchmark`` and ``evaluate`` commands, with their method list."""
    methods = ", ".join(
        f"{n} ({s.label}{'; multi-class only' if s.multiclass_only else ''})"
        for n, s in METHODS.items()
    )
    fmt = argparse.RawDescriptionHelpFormatter

    b = sub.add_parser(
        "benchmark",
        help=_BENCHMARK_HELP,
        description="10-fold CV of every method on every data set. Hyper-parameters (gamma; "
        "lambda for sparse_sblr; gamma and C for br_svm) are selected on each training fold "
        "over {1e2,...,1e-5}; ML-kNN and IBLR use k=10. Writes OUT/results.csv (one row per "
        "dataset, method, fold, metric), OUT/hyperparameters.csv, OUT/tables.md (mean ± std, "
        "the paper's rank tables, Friedman tests) and OUT/cd_<metric>.html "
        "(critical-difference diagrams, with >= 2 data sets and >= 3 methods). Fold results "
        "are cached, so an interrupted or extended run only computes what is missing. "
        "Multi-label decisions of sml/sblr/sparse_sblr: a cut fitted on out-of-fold training "
        "probabilities, gamma/lambda selected by micro-F1 (as `sblr evaluate` and the "
        "dashboard); the paper's protocol is --threshold paper --select-by "
        "average_precision.\n\n" + _DATA_HELP + f"\nMethods: {methods}.",
        formatter_class=fmt,
    )
    b.add_argument("data", nargs="+", metavar="DATA", help="data files or folders")
    b.add_argument(
        "--methods",
        default=DEFAULT_METHODS,
        help=f"comma-separated methods (default {DEFAULT_METHODS})",
    )
    b.add_argument("--out", required=True, type=Path, help="output folder (created)")
    b.add_argument(
        "--cache", type=Path, help="fold-result cache folder (default OUT/cache)", default=None
    )
    b.add_argument("--no-cache", action="store_true", help="do not read or write the cache")
    _add_data_options(b)
    _add_protocol_options(b, folds_default=10)
    _add_decision_options(b)

    e = sub.add_parser(
        "evaluate",
        help=_EVALUATE_HELP,
        description="k-fold CV of one method on one data set; prints the metrics per fold "
        "and their mean ± std. With --gamma/--lam/--C the given values are used on every "
        "fold (parameters not given keep the estimator's defaults: gamma 'scale', lam 1e-4, "
        "C 1); otherwise they are selected on each training fold (inner 3-fold, by micro-F1 "
        "for multi-label data), and multi-label decisions cut each class's probability at a "
        "cut fitted on out-of-fold training probabilities (--threshold).\n\n"
        + _DATA_HELP
        + f"\nMethods: {methods}.",
        formatter_class=fmt,
    )
    e.add_argument("file", metavar="FILE", help="a data file")
    e.add_argument(
        "--test",
        metavar="TEST",
        help="a test file (e.g. Mulan's *-test.arff): train on FILE (parameters selected on "
        "FILE only, unless given) and score every metric on TEST, read as FILE was (columns "
        "by name)",
    )
    _add_method_options(e)
    _add_data_options(e)
    # 5 inner folds: on Mulan's emotions (391 rows) 3 folds chose gamma 0.1 (test AP 0.793),
    # 5 chose 0.3 (0.807; SML 0.816): python -m benchmarks.leaderboard
    _add_protocol_options(e, folds_default=10, selection_default="auto", inner_default=5)
    _add_decision_options(e)

    f = sub.add_parser(
        "fit",
        help=_FIT_HELP,
        description="Fit one method on FILE and save it to MODEL (skops format: opening it runs "
        "no code). The file records the feature names, how FILE was encoded, the class names, "
        "the parameters and the sblr version, so `sblr predict` reads new files as FILE was "
        "read. With --gamma/--lam/--C the given values are used; otherwise they are selected "
        "on FILE (--selection).\n\n" + _DATA_HELP + f"\nMethods: {methods}.",
        formatter_class=fmt,
    )
    f.add_argument("file", metavar="FILE", help="the training data file")
    f.add_argument("--out", required=True, type=Path, help="the model file to write")
    _add_method_options(f)
    _add_data_options(f)
    _add_protocol_options(f, folds_default=10, selection_default="auto", inner_default=5)
    _add_decision_options(f)

    pr = sub.add_parser(
        "predict",
        help=_PREDICT_HELP,
        description="Read DATA as the model's training file was read (columns matched by "
        "name; label columns may be present or not) and write one row per input row: the "
        "predicted classes and each class's probability (formula-safe CSV).",
    )
    pr.add_argument("model", metavar="MODEL", type=Path, help="a model file from `sblr fit`")
    pr.add_argument("data", metavar="DATA", help="the rows to predict")
    pr.add_argument("--out", required=True, type=Path, help="the CSV to write")
    pr.add_argument("--no-header", action="store_true", help="DATA has no header row (UCI style)")


def _add_method_options(p):
    p.add_argument("--method", default=SPARSE_SBLR.key, help=f"method (default {SPARSE_SBLR.key})")
    p.add_argument(
        "--gamma",
        type=_gamma,
        help="fixed RBF width gamma: a number > 0, or scale (the estimators' default: "
        "1 / (features x variance)); br_svm also auto",
    )
    p.add_argument("--lam", type=_nonnegative_float, help="fixed L1 strength lambda (sparse_sblr)")
    p.add_argument("--C", dest="C", type=_positive_float, help="fixed SVM C (br_svm)")


# --------------------------------------------------------------------------- data
def _split_list(text):
    items = [t.strip() for t in str(text).split(",") if t.strip()]
    return [int(t) if re.fullmatch(r"-?[0-9]+", t) else t for t in items]


def _target(text):
    if text is None:
        return None
    items = _split_list(text)
    return items[0] if len(items) == 1 else items


def _parse_spec(spec, parser):
    path, _, opts = str(spec).partition("::")
    out = {}
    for item in filter(None, (s.strip() for s in opts.split(";"))):
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or key not in DATA_KEYS:
            parser.error(f"bad data option {item!r} in {spec!r} (keys: {', '.join(DATA_KEYS)})")
        if key == "header":
            if value.lower() not in ("yes", "no", "true", "false", "1", "0"):
                parser.error(f"header must be yes or no in {spec!r}")
            out["header"] = value.lower() in ("yes", "true", "1")
        elif key == "n_labels":
            try:
                out["n_labels"] = _label_count(value)
            except argparse.ArgumentTypeError as exc:
                parser.error(f"n_labels in {spec!r} {exc}")
        else:
            out[key] = value
    return Path(path), out


def _expand(paths, parser):
    files = []
    for spec in paths:
        path, opts = _parse_spec(spec, parser)
        if path.is_dir():
            found = sorted(
                p for p in path.iterdir() if p.suffix.lower() in DATA_SUFFIXES and p.is_file()
            )
            if not found:
                raise DataError(
                    f"No {', '.join(DATA_SUFFIXES)} files in the folder {path}; name other "
                    "data files one by one."
                )
            files.extend((p, opts) for p in found)
        elif path.is_file():
            files.append((path, opts))
        elif path.exists():  # a FIFO, a device, /dev/stdin: read it into a file first
            raise DataError(
                f"{_path_text(path)} is not a regular file (a pipe or a device); save the data "
                "to a file and name that."
            )
        else:
            raise DataError(f"No such file or folder: {_path_text(path)}.")
    for path, _ in files:  # before any fold runs: a name that cannot be printed or stored
        try:
            str(path).encode("utf-8")
        except UnicodeEncodeError:
            raise DataError(
                f"The file name {_path_text(path)} is not valid UTF-8; rename the file (its "
                "name goes into the results and reports)."
            ) from None
    return files


def _path_text(path) -> str:
    """A path as text that can always be printed (bytes that are not UTF-8 as \\x..)."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _is_arff(path):
    return path.suffix.lower() == ".arff"


def _check_label_options(files, args):
    """--xml names one ARFF file's labels, --n-labels those of every ARFF file: given for
    none, or --xml for several, they are refused before any file is read."""
    arff = [path for path, _ in files if _is_arff(path)]
    given = [o for o, v in (("--xml", args.xml), ("--n-labels", args.n_labels)) if v is not None]
    if given and not arff:
        raise DataError(
            "--xml and --n-labels are for ARFF files; a delimited text file names its label "
            "columns with --target."
        )
    if args.xml is not None and len(arff) > 1:
        raise DataError(
            f"--xml names the labels of one ARFF file, and {len(arff)} were given; name each "
            "file's XML with PATH::xml=FILE."
        )


def _load(path, opts, args):
    kwargs = {"name": opts.get("name")}
    if _is_arff(path):
        xml = opts.get("xml", args.xml)
        kwargs["xml"] = None if xml is None else Path(xml)
        kwargs["n_labels"] = opts.get("n_labels", args.n_labels)
        if "target" in opts:  # a file of its own: PATH::target=-1 reads one class
            kwargs["target"] = _target(opts["target"])
    else:
        kwargs["format"] = "csv"
        kwargs["header"] = opts.get("header", not args.no_header)
        target = opts.get("target", args.target)
        if target is None:
            raise DataError(
                f"{path.name}: a CSV or other delimited text file needs --target (the class "
                f'column, or the label columns), or a per-file option "{path}::target=COL".'
            )
        kwargs["target"] = _target(target)
        drop = opts.get("drop", args.drop)
        if drop is not None:
            kwargs["drop"] = _split_list(drop)
    if kwargs["name"] is None:
        kwargs.pop("name")
    ds = load_dataset(path, **kwargs)
    for note in ds.notes:  # the loader's loud notes (what it assumed): never only in a file
        if note.startswith("Warning: "):
            print(f"warning: {path.name}: {note.removeprefix('Warning: ')}", file=sys.stderr)
    return ds


def _load_all(specs, args, parser):
    files = _expand(specs, parser)
    _check_label_options(files, args)
    datasets = [_load(path, opts, args) for path, opts in files]
    names = [d.name for d in datasets]
    for name in names:
        if names.count(name) > 1:
            raise DataError(
                f"Two data sets are named {name!r}; give one a name with PATH::name=OTHER."
            )
    return datasets


def _methods(text, parser):
    names = [m.strip() for m in text.split(",") if m.strip()]
    bad = [m for m in names if m not in METHODS]
    if bad or not names:
        parser.error(
            f"unknown method(s) {', '.join(bad) or '(none)'}; choose from {', '.join(METHODS)}"
        )
    return list(dict.fromkeys(names))


def _writable_folder(path, option):
    """Create the folder ``path`` if needed and check that a file can be written in it."""
    if path.exists() and not path.is_dir():
        raise _OutputError(f"{option} {path} is a file, not a folder.")
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise _OutputError(
            f"{option} {path}: cannot create the folder or write in it ({exc.strerror or exc})."
        ) from exc


def _writable_file(path, option):
    """``path`` may be written: not a folder, not a device or pipe, in a writable folder;
    checked before any work (a fit, a prediction), not after it."""
    if path.is_dir():
        raise _OutputError(f"{option} {path} is a folder; give a file name in it.")
    if path.exists() and not path.is_file():
        raise _OutputError(f"{option} {path} is not a regular file (a device or a pipe).")
    _writable_folder(path.resolve().parent, option)


# --------------------------------------------------------------------------- commands
def _benchmark(args, parser):
    methods = _methods(args.methods, parser)
    _check_threshold_used(args, parser, methods)
    datasets = _load_all(args.data, args, parser)
    out = args.out
    _writable_folder(out, "--out")
    cache = None if args.no_cache else (args.cache or out / "cache")
    if cache is not None:
        _writable_folder(cache, "--cache" if args.cache else "the cache folder")
    grid = args.grid or list(PAPER_GRID)
    results, hyper = run_benchmark(
        datasets,
        methods,
        folds=args.folds,
        selection=args.selection,
        grid=grid,
        inner_folds=args.inner_folds,
        seed=args.seed,
        n_jobs=args.n_jobs,
        scheduler=args.scheduler or args.dask,
        cache_dir=cache,
        progress=not args.quiet,
        metric=args.select_by,
        threshold=_decision(args),
    )
    (out / "results.csv").write_bytes(to_csv_bytes(results, index=False))
    (out / "hyperparameters.csv").write_bytes(to_csv_bytes(hyper, index=False))
    skipped = [
        f"{METHODS[m].label} on {escape_markdown(d.name, readable=True)}"
        for d in datasets
        for m in methods
        if not METHODS[m].supports(d.task)
    ]
    md = ["# Benchmark results\n"]
    md.append(
        f"{args.folds}-fold CV (seed {args.seed}), selection: {args.selection}, "
        f"grid {', '.join(f'{g:g}' for g in grid)}.\n"
    )
    md.append(_decisions_markdown(args, datasets))
    if skipped:
        md.append(f"Not run (multi-class only): {', '.join(skipped)}.\n")
    md.append("## Mean ± std over folds\n")
    summary = mean_std_table(results).reset_index()
    summary["dataset"] = summary["dataset"].map(lambda name: escape_markdown(name, readable=True))
    md.append(markdown_table(summary) + "\n")
    md.append("## Ranked tables\n")
    md.append(paper_tables_markdown(results))
    (out / "tables.md").write_text("\n".join(md), encoding="utf-8")
    written = ["results.csv", "hyperparameters.csv", "tables.md"]
    for metric in dict.fromkeys(results["metric"]):
        try:
            fr = friedman_nemenyi(results, metric)
        except ValueError:
            continue  # fewer than 3 methods or 2 complete data sets
        fig = cd_diagram(fr.average_ranks, fr.cd, title=METRIC_LABELS.get(metric, metric))
        fig.write_html(out / f"cd_{metric}.html", include_plotlyjs="cdn")
        written.append(f"cd_{metric}.html")
    print(f"Wrote {', '.join(written)} to {out}")
    return 0


def _decisions_markdown(args, datasets):
    """The decisions of a benchmark in one line of its tables.md (who decides how, chosen by
    which metric): the numbers below mean nothing without it."""
    tasks = {d.task for d in datasets}
    parts = []
    if "multilabel" in tasks:
        parts.append(
            f"multi-label data, SML, SBLR and SparseSBLR: {decisions_text(_decision(args))}, "
            f"selected by {args.select_by}; the baselines by their own rules"
        )
    if "multiclass" in tasks:
        parts.append(
            f"multi-class data: {decisions_text(_decision(args), multilabel=False)}, selected "
            "by accuracy"
        )
    return "Decisions: " + "; ".join(parts) + ".\n"


def _evaluate(args, parser):
    method, spec, given = _one_method(args, parser)
    files = _expand([args.file], parser)
    if len(files) != 1:
        raise DataError(f"evaluate takes one data file; {args.file} holds {len(files)}.")
    _check_label_options(files, args)
    ds = _load(*files[0], args)
    _cost_note(method, ds)
    n_fit = ds.n_samples * (args.folds - 1) // args.folds
    selection, note = _planned_selection(args, method, ds, n_fit)
    if selection is None and not given:
        given = _defaults(spec)
    results, hyper = run_benchmark(
        [ds],
        [method],
        folds=args.folds,
        selection=selection or "holdout",
        grid=args.grid or DECISION_GRID,
        inner_folds=args.inner_folds,
        params={method: given} if given else None,
        seed=args.seed,
        n_jobs=args.n_jobs,
        scheduler=args.scheduler or args.dask,
        progress=not args.quiet,
        metric=_selection_metric(args, ds),
        threshold=_decision(args),
    )
    if results.empty:
        raise DataError(f"{spec.label} handles multi-class data only; {ds.name} is multi-label.")
    per_fold = results.pivot(index="fold", columns="metric", values="value")
    per_fold = per_fold[list(dict.fromkeys(results["metric"]))]
    counted = ["test_rows", "no_label_rows", "truth_no_label_rows"]
    counts = hyper[counted].sum() if set(counted) <= set(hyper.columns) else None
    hyper = hyper.drop(columns=[c for c in counted if c in hyper.columns])
    params = hyper.drop(columns=["dataset", "method"]).set_index("fold").dropna(axis=1, how="all")
    table = per_fold.join(params)
    summary = pd.DataFrame({"mean": per_fold.mean(), "std": per_fold.std(ddof=0)})
    summary.index = [METRIC_LABELS.get(m, m) for m in summary.index]
    how = f"fixed {_param_text(given)}" if given else selection
    print(f"{ds.name}: {spec.label}, {args.folds}-fold CV, parameters: {how}")
    if note:
        print(f"note: parameters: {note}")
    print(table.to_string(float_format=lambda v: f"{v:.4g}"))
    print()
    print(summary.to_string(float_format=lambda v: f"{v:.4f}"))
    if counts is not None:
        print(
            f"Rows with no label: {int(counts['no_label_rows']):,} of "
            f"{int(counts['test_rows']):,} test rows over the folds (truth: "
            f"{int(counts['truth_no_label_rows']):,})"
        )
    return 0


def _planned_selection(args, method, ds, n_fit):
    """``(selection, note)``: ``--selection`` itself, or for ``auto`` the plan for the data's
    shape (:func:`sblr.protocol.plan_selection`; selection None: the defaults), the note
    saying what was done instead of the inner k-fold (empty when nothing was changed)."""
    if args.selection != "auto":
        return args.selection, ""
    plan = plan_selection(
        method,
        n_fit,
        ds.n_features,
        len(ds.class_names),
        grid=args.grid or DECISION_GRID,
        inner_folds=args.inner_folds,
    )
    return plan.selection, plan.note


def _cost_note(method, ds):
    """Say, before a long fit starts, what an L2 layer (SBLR's) costs on this shape and what
    bounds it (the L1 layer, SparseSBLR's)."""
    n, m = ds.n_samples, len(ds.class_names)
    spec = get_method(method)
    cost = spec.layer_cost(n, m)
    if spec.layer != "l2" or spec.layer_plan(n, m) == "auto":  # the dashboard's one budget
        return
    sparse = SPARSE_SBLR.layer_cost(n, m)
    print(
        f"note: {spec.label}'s layer on {m:,} classes and {n:,} rows costs about {cost:.1e} "
        f"multiply-adds a fit (every class solved on all {m:,} evidence columns: 8·n·(m+1)²·m), "
        f"{cost / sparse:,.0f}x {SPARSE_SBLR.label}'s ({sparse:.1e}: each class on the few "
        f"columns it keeps), about {duration(spec.layer_seconds(n, m))} here; --method "
        f"{SPARSE_SBLR.key} is the bounded alternative",
        flush=True,
    )


def _defaults(spec):
    """The estimator's own values of the parameters a method tunes (``gamma``, ``lam``, ``C``)."""
    params = spec.build().get_params()
    return {name: params[name] for name in spec.tuned if name in params}


def _selection_metric(args, ds):
    """--select-by for multi-label data; multi-class data select by accuracy (the default)."""
    return args.select_by if ds.task == "multilabel" else None


def _decision_text(est):
    """The fitted decision in words, for the command's summary line ("" if none)."""
    chosen = Decision.of(est)
    return "" if chosen.kind == "argmax" else f"; decision: {chosen.describe()}"


def _one_method(args, parser):
    """The --method and its fixed parameters (--gamma, --lam, --C) as ``(name, spec, given)``."""
    method = _methods(args.method, parser)
    if len(method) != 1:
        parser.error("--method takes one method")
    spec = METHODS[method[0]]
    given = {k: getattr(args, k) for k in ("gamma", "lam", "C") if getattr(args, k) is not None}
    unused = [k for k in given if k not in spec.tuned]
    if unused:
        parser.error(f"{method[0]} does not take --{', --'.join(unused)}")
    words = _gamma_words([spec])
    if isinstance(given.get("gamma"), str) and given["gamma"] not in words:
        parser.error(
            f"{method[0]} takes --gamma {' or '.join([*words, 'a number > 0'])}, not "
            f"{given['gamma']!r}"
        )
    _check_threshold_used(args, parser, method)
    return method[0], spec, given


def _one_file(spec_text, args, parser):
    files = _expand([spec_text], parser)
    if len(files) != 1:
        raise DataError(f"Give one data file; {spec_text} holds {len(files)}.")
    _check_label_options(files, args)
    return _load(*files[0], args)


def _trained(args, parser, ds):
    """The method fitted on all of ``ds``, its parameters given or selected on ``ds``."""
    method, spec, given = _one_method(args, parser)
    if not spec.supports(ds.task):
        raise DataError(f"{spec.label} handles multi-class data only; {ds.name} is multi-label.")
    X = spec.features(ds.X)
    y = np.asarray(ds.y)
    _cost_note(method, ds)
    selection, note = _planned_selection(args, method, ds, ds.n_samples)
    if given:
        chosen, how = dict(given), f"fixed {_param_text(given)}"
    elif selection is None:
        chosen, how = {}, note
    else:
        chosen = select_params(
            method,
            X,
            y,
            selection=selection,
            grid=args.grid or DECISION_GRID,
            inner_folds=args.inner_folds,
            random_state=args.seed,
            metric=_selection_metric(args, ds),
            threshold=_decision(args),
        )
        metric = _selection_metric(args, ds) or paper_metric(ds.task == "multilabel")
        how = f"selected on {ds.name} ({selection}, by {metric})" + (
            ": " + _param_text(chosen) if chosen else ""
        )
        if note:
            how += f" ({note})"
    est = spec.build(**chosen, **build_decision(spec, _decision(args))).fit(X, y)
    return method, spec, est, how + _decision_text(est)


def _fit(args, parser):
    _writable_file(args.out, "--out")
    ds = _one_file(args.file, args, parser)
    method, spec, est, how = _trained(args, parser, ds)
    save_model(est, args.out, dataset=ds)
    print(
        f"{ds.name}: {spec.label} on {ds.n_samples:,} rows, parameters {how}; saved to {args.out}"
    )
    return 0


def _predict(args):
    _writable_file(args.out, "--out")
    if args.model.exists() and not args.model.is_file():
        raise DataError(
            f"{_path_text(args.model)} is not a regular file (a folder, device or pipe)."
        )
    saved = load_model(args.model)
    path = Path(args.data)
    if not path.is_file():
        raise DataError(
            f"{_path_text(path)} is not a file."
            if path.exists()
            else f"No such file: {_path_text(path)}."
        )
    rows = saved.read(path, header=not args.no_header)
    table = saved.predictions(rows)
    args.out.write_bytes(to_csv_bytes(table, index=False))
    for note in [*saved.notes, *rows.notes]:
        print(f"note: {note}", file=sys.stderr)
    print(
        f"{rows.name}: {len(table):,} rows predicted with {saved.info['estimator']}; "
        f"written to {args.out}"
    )
    return 0


def _evaluate_on_test(args, parser):
    train = _one_file(args.file, args, parser)
    test_path = Path(args.test)
    if not test_path.is_file():
        raise DataError(f"No such test file: {_path_text(test_path)}.")
    test = load_dataset(test_path, like=train, header=not args.no_header)
    if not test.has_labels:
        raise DataError(
            f"The test file {test.name!r} has no label columns of {train.name!r}: there is "
            "nothing to score. Use `sblr predict` for rows without labels."
        )
    method, spec, est, how = _trained(args, parser, train)
    X_test = spec.features(test.X)
    multilabel = train.task == "multilabel"
    if multilabel:
        y_true = np.asarray(test.y, dtype=int)
        y_pred = np.asarray(est.predict(X_test), dtype=int)
    else:  # class codes in class_names order, for the metrics
        index = {n: i for i, n in enumerate(train.class_names)}
        y_true = np.array([index[str(v)] for v in test.y])
        y_pred = np.array([index[str(v)] for v in est.predict(X_test)])
    values = _metric_values(
        TASK_METRICS[train.task], y_true, y_pred, _scores(est, X_test, multilabel)
    )
    table = pd.Series({METRIC_LABELS.get(m, m): v for m, v in values.items()}, name="value")
    print(
        f"{train.name} → {test.name}: {spec.label}, trained on {train.n_samples:,} rows "
        f"(parameters {how}), scored on {test.n_samples:,} test rows"
    )
    for note in test.notes:
        print(f"note: {note}")
    print(table.to_string(float_format=lambda v: f"{v:.4f}"))
    if multilabel:
        empty, truth = int((y_pred.sum(axis=1) == 0).sum()), int((y_true.sum(axis=1) == 0).sum())
        print(f"Rows with no label: {empty:,} of {len(y_pred):,} (truth: {truth:,})")
    return 0


def run(args, parser):
    """Run the protocol command ``args.command`` (benchmark, evaluate, fit, predict)."""
    if args.command == "benchmark":
        return _benchmark(args, parser)
    if args.command == "fit":
        return _fit(args, parser)
    if args.command == "predict":
        return _predict(args)
    if getattr(args, "test", None):
        return _evaluate_on_test(args, parser)
    return _evaluate(args, parser)
