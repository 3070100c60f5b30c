"""Command line: ``python -m sblr benchmark ...`` and ``python -m sblr evaluate ...``
(``sblr benchmark ...`` once installed), and ``sblr dashboard`` in a checkout.

Exit status: 0 on success; 2 for bad arguments (argparse's usage message), for
output folders that cannot be written, for data problems (:class:`sblr.DataError`)
and for the value, file-system and memory errors a run can meet (``ValueError``,
``OSError``, ``MemoryError``): a one-line ``error:`` message, no traceback.

The commands that run the protocol (benchmark, evaluate, fit, predict) are in
``sblr.cli._commands``, imported only when one of them runs.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import signal
import subprocess
import sys
from pathlib import Path

_BENCHMARK_HELP = "cross-validate several methods on several data sets; write tables"
_EVALUATE_HELP = (
    "cross-validate one method on one data set (or train on it and score a --test file) and "
    "print its metrics"
)
_FIT_HELP = "fit one method on a data file and save the model (a skops file)"
_PREDICT_HELP = "predict the rows of a file with a saved model; write a CSV"
#: The commands that parse their arguments with the protocol's method list.
_PROTOCOL_COMMANDS = ("benchmark", "evaluate", "fit", "predict")


def _protocol_commands():
    """``sblr.cli._commands``, imported now."""
    # lazy: it imports the protocol -- scikit-learn, SciPy and pandas, 2-3 s that `sblr --help`
    # and `sblr dashboard` do without (benchmarks/startup.py)
    return importlib.import_module("sblr.cli._commands")


def build_parser(*, full=True):
    """The argument parser of ``python -m sblr``.

    ``full=False`` leaves out the arguments and descriptions of ``benchmark`` and ``evaluate``
    (their method list imports the protocol, scikit-learn with it): enough for the top-level
    help and for ``dashboard``, which :func:`main` answers with it.
    """
    parser = argparse.ArgumentParser(
        prog="python -m sblr",
        description="Similarity-based classification (SML, SBLR, SparseSBLR; Ma & Chen): "
        "reproduce the paper's cross-validated comparison.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    if full:
        _protocol_commands()._add_protocol_commands(sub)
    else:
        sub.add_parser("benchmark", help=_BENCHMARK_HELP)
        sub.add_parser("evaluate", help=_EVALUATE_HELP)
        sub.add_parser("fit", help=_FIT_HELP)
        sub.add_parser("predict", help=_PREDICT_HELP)

    d = sub.add_parser(
        "dashboard",
        help="start the Streamlit dashboard (from a checkout of the repository)",
        usage="%(prog)s [-h] [-- STREAMLIT_ARGS ...]",
        description="Runs 'streamlit run app.py' with this Python, in the checkout that holds "
        'this sblr package (pip install -e ".[dashboard]" there). An installed copy of '
        "sblr has no app.py: the command then says how to get it and exits with status 2.",
        epilog="Arguments after -- go to streamlit run, e.g.  "
        "sblr dashboard -- --server.port 8502 --server.headless true",
    )
    d.add_argument(
        "streamlit_args", nargs="*", metavar="STREAMLIT_ARGS", help="given to streamlit run"
    )
    return parser


# --------------------------------------------------------------------------- dashboard
NO_DASHBOARD = """\
The dashboard (app.py and pages/) is not part of the installed sblr package; it runs
from a checkout of the sblr repository. In the checkout:
    pip install -r requirements.txt && streamlit run app.py
or, to start it with this command from any folder:
    pip install -e ".[dashboard]"
    sblr dashboard"""


def find_dashboard(package_dir=None):
    """``app.py`` of the checkout that holds the sblr package, or None (an installed copy).

    ``package_dir`` defaults to the folder of the sblr package (this module's is
    ``sblr/cli``): in a checkout (or an editable install) it is ``<checkout>/sblr``, with
    ``app.py`` and ``pages/`` beside it.
    """
    package_dir = Path(__file__).resolve().parents[1] if package_dir is None else Path(package_dir)
    root = package_dir.parent
    app = root / "app.py"
    return app if app.is_file() and (root / "pages").is_dir() else None


class _Terminated(Exception):
    """SIGTERM reached ``sblr dashboard``: its Streamlit child is stopped too."""


def _dashboard(args):
    app = find_dashboard()
    if app is None:
        print(f"error: {NO_DASHBOARD}", file=sys.stderr)
        return 2
    if importlib.util.find_spec("streamlit") is None:
        print(
            f'error: the dashboard needs Streamlit: pip install -e ".[dashboard]" in {app.parent}',
            file=sys.stderr,
        )
        return 2
    extra = list(args.streamlit_args)
    if extra[:1] == ["--"]:  # argparse keeps it on some Python versions
        extra = extra[1:]
    # a service manager stops `sblr dashboard` with SIGTERM: the child must stop with it (it
    # kept serving, found by an audit). The handler is in place before the child starts: a
    # SIGTERM while it was being started killed this process with the default action and left
    # the child serving (a loaded CI machine); one that comes before the child exists is
    # noted and acted on as soon as it does.
    state = {"process": None, "terminated": False}

    def _on_term(signum, frame):
        state["terminated"] = True
        if state["process"] is not None:
            raise _Terminated

    previous = signal.signal(signal.SIGTERM, _on_term)
    try:
        # From the checkout, so that Streamlit reads its .streamlit/config.toml.
        process = state["process"] = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(app), *extra], cwd=app.parent
        )
        if state["terminated"]:
            raise _Terminated
        return process.wait()
    except KeyboardInterrupt:  # Ctrl-C reached Streamlit too; let it shut down
        return _stop(state["process"], 130) if state["process"] is not None else 130
    except _Terminated:
        state["process"].terminate()
        return _stop(state["process"], 143)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _stop(process, code, grace=10.0):
    """Wait for the Streamlit child to end (killing it after ``grace`` seconds); ``code``."""
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    except KeyboardInterrupt:  # a second Ctrl-C: stop waiting
        process.kill()
        process.wait()
    return code


def _cap_jobs(args):
    """``--n-jobs`` beyond this machine's cores is capped, with a note: 64 processes on 2 cores
    took 115 s where one took 14 s (their start-up and memory, no gain). A remote
    ``--scheduler`` has cores of its own: no cap there."""
    n = getattr(args, "n_jobs", None)
    cores = os.cpu_count() or 1
    if n is None or getattr(args, "scheduler", None) or n <= cores:
        return
    print(
        f"note: --n-jobs {n} is more than this machine's {cores} cores; using {cores}.",
        file=sys.stderr,
    )
    args.n_jobs = cores


class _OutputError(Exception):
    """An output or cache folder that cannot be used (shown as one line, exit 2)."""


def _one_line(exc):
    text = " ".join(str(exc).split())
    if isinstance(exc, MemoryError):
        return f"not enough memory{f' ({text})' if text else ''}; try smaller data or fewer jobs."
    return text or type(exc).__name__


def main(argv=None):
    """Run the command line; returns the exit status (130 after Ctrl-C, with one line)."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def _main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    # only benchmark and evaluate need the protocol (and its imports) to parse their arguments
    parser = build_parser(full=bool(argv[:1]) and argv[0] in _PROTOCOL_COMMANDS)
    args = parser.parse_args(argv)
    _cap_jobs(args)
    try:
        if args.command == "dashboard":
            return _dashboard(args)
        return _protocol_commands().run(args, parser)
    # DataError is a ValueError; OSError covers unreadable inputs and full disks.
    except (_OutputError, ValueError, OSError, MemoryError) as exc:
        print(f"error: {_one_line(exc)}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
