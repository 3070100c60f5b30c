"""Packaging: pyproject.toml's metadata, requirements.txt, the `sblr` command, shipped samples.

The slow test at the end builds the package, installs it into a fresh virtual
environment and uses it from a folder outside the checkout.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import numpy as np
import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from sblr import cli, samples
from sblr.samples import SAMPLES, load_sample

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli", reason="reading pyproject.toml needs tomli on 3.10")

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT = PYPROJECT["project"]


def _key(req: Requirement) -> tuple[str, str, str]:
    extras = ",".join(sorted(req.extras))
    return canonicalize_name(req.name), extras, str(req.specifier)


def _requirements_file(name: str) -> list[Requirement]:
    reqs = []
    for line in (ROOT / name).read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):  # -r requirements.txt
            reqs.append(Requirement(line))
    return reqs


def _self_extras(reqs: list[str]) -> tuple[list[Requirement], set[str]]:
    """Requirements other than sblr itself, and the extras of sblr[...] they pull in."""
    own, pulled = [], set()
    for text in reqs:
        req = Requirement(text)
        if canonicalize_name(req.name) == "sblr":
            pulled |= req.extras
        else:
            own.append(req)
    return own, pulled


CORE = [Requirement(r) for r in PROJECT["dependencies"]]
EXTRAS = PROJECT["optional-dependencies"]


def _extra(name: str) -> set[tuple[str, str, str]]:
    """Every requirement of an extra, following sblr[...] references."""
    own, pulled = _self_extras(EXTRAS[name])
    keys = {_key(r) for r in own}
    for other in pulled:
        keys |= _extra(other)
    return keys


# --------------------------------------------------------------------------- metadata
def test_requirements_txt_agrees_with_pyproject():
    declared = {_key(r) for r in CORE}.union(*(_extra(name) for name in EXTRAS))
    for req in _requirements_file("requirements.txt"):
        assert _key(req) in declared, f"requirements.txt's {req} is not in pyproject.toml"
    listed = {_key(r) for r in _requirements_file("requirements.txt")}
    for req in CORE:
        assert _key(req) in listed, f"pyproject.toml's dependency {req} is not in requirements.txt"


def test_requirements_test_txt_is_the_test_extra():
    test = _extra("test")
    for req in _requirements_file("requirements-test.txt"):
        assert _key(req) in test, f"requirements-test.txt's {req} is not in the [test] extra"
    # requirements-test.txt includes requirements.txt; the extra includes all of it too.
    assert {_key(r) for r in _requirements_file("requirements.txt")} <= test | {
        _key(r) for r in CORE
    }


def test_extras():
    assert set(EXTRAS) == {"dashboard", "benchmark", "test", "all"}
    assert [canonicalize_name(Requirement(r).name) for r in EXTRAS["dashboard"]] == [
        "streamlit",
        "fsspec",
    ]
    assert "distributed" in {k[0] for k in _extra("benchmark")}
    assert _extra("all") == _extra("dashboard") | _extra("benchmark") | _extra("test")
    core = {canonicalize_name(r.name) for r in CORE}
    # imported at module level by sblr.stats / sblr.plots (the CLI imports sblr.stats), and
    # by `sblr benchmark`'s Friedman-Nemenyi tables: not optional
    assert {"plotly", "scikit-posthocs", "joblib", "liac-arff"} <= core
    assert "streamlit" not in core and "distributed" not in core


def test_one_version_source():
    assert "version" not in PROJECT
    assert "version" in PROJECT["dynamic"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "sblr.__version__"}
    # A plain string literal, so setuptools reads it with ast, without importing sblr.
    tree = ast.parse((ROOT / "sblr" / "__init__.py").read_text(encoding="utf-8"))
    literals = [
        node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and [getattr(t, "id", None) for t in node.targets] == ["__version__"]
        and isinstance(node.value, ast.Constant)
    ]
    import sblr

    assert literals == [sblr.__version__]


def test_console_script_and_markers():
    assert PROJECT["scripts"] == {"sblr": "sblr.cli:main"}
    markers = {m.split(":")[0] for m in PYPROJECT["tool"]["pytest"]["ini_options"]["markers"]}
    assert {"slow", "browser", "dask"} <= markers


def test_every_subpackage_is_listed():
    """setuptools ships only the packages listed: sblr.interpret was missing from the list."""
    folders = {
        ".".join(path.parent.relative_to(ROOT).parts)
        for path in (ROOT / "sblr").rglob("__init__.py")
    }
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"]) - {"sblr.sample_data"}
    assert listed == folders


def test_sample_data_folder_is_shipped_as_package_data():
    setuptools = PYPROJECT["tool"]["setuptools"]
    assert "sblr.sample_data" in setuptools["packages"]
    assert setuptools["package-dir"]["sblr.sample_data"] == "sample_data"
    patterns = setuptools["package-data"]["sblr.sample_data"]
    data = [p for p in (ROOT / "sample_data").iterdir() if p.is_file() and p.suffix != ".py"]
    for path in data:
        assert any(path.match(pattern) for pattern in patterns), f"{path.name} is not shipped"
    needed = {samples.sample_path(name).name for name in SAMPLES} | {"planted.xml"}
    assert needed <= {p.name for p in data}


def test_sample_dir_in_a_checkout_and_installed(tmp_path, monkeypatch):
    assert samples.SAMPLE_DIR == ROOT / "sample_data"
    package = tmp_path / "site-packages" / "sblr"
    package.mkdir(parents=True)
    monkeypatch.setattr(samples, "_PACKAGE_DIR", package)
    assert samples._sample_dir() == tmp_path / "site-packages" / "sample_data"
    (package / "sample_data").mkdir()
    assert samples._sample_dir() == package / "sample_data"


def test_benchmarks_do_not_touch_sys_path():
    for script in sorted((ROOT / "benchmarks").glob("*.py")):
        text = script.read_text(encoding="utf-8")
        assert "sys.path" not in text, f"{script.name} changes sys.path"
        if "from sblr" in text or "import sblr" in text:
            docstring = ast.get_docstring(ast.parse(text)) or ""
            assert "pip install -e ." in docstring, f"{script.name}: say how to get sblr"


# --------------------------------------------------------------------------- sblr dashboard
def test_dashboard_is_found_next_to_a_checked_out_package(tmp_path):
    assert cli.find_dashboard() == ROOT / "app.py"
    assert cli.find_dashboard(tmp_path / "site-packages" / "sblr") is None


def test_dashboard_outside_a_checkout_exits_2_with_directions(monkeypatch, capsys):
    monkeypatch.setattr(cli, "find_dashboard", lambda: None)
    assert cli.main(["dashboard"]) == 2
    err = capsys.readouterr().err
    assert "not part of the installed sblr package" in err
    assert "streamlit run app.py" in err and 'pip install -e ".[dashboard]"' in err


class _FakePopen:
    calls: list = []

    def __init__(self, cmd, cwd=None):
        self.calls.append((cmd, cwd))

    def wait(self):
        return 3


def test_dashboard_runs_streamlit_with_the_args_after_dashes(monkeypatch):
    monkeypatch.setattr(cli.subprocess, "Popen", _FakePopen)
    _FakePopen.calls.clear()
    assert cli.main(["dashboard", "--", "--server.port", "8502"]) == 3  # streamlit's status
    assert cli.main(["dashboard"]) == 3
    app = str(ROOT / "app.py")
    assert _FakePopen.calls == [
        ([sys.executable, "-m", "streamlit", "run", app, "--server.port", "8502"], ROOT),
        ([sys.executable, "-m", "streamlit", "run", app], ROOT),
    ]


def test_dashboard_without_streamlit_says_how_to_install_it(monkeypatch, capsys):
    real = cli.importlib.util.find_spec
    monkeypatch.setattr(
        cli.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "streamlit" else real(name, *a),
    )
    assert cli.main(["dashboard"]) == 2
    assert 'pip install -e ".[dashboard]"' in capsys.readouterr().err


# --------------------------------------------------------------------------- installed
#: What a build needs (as in the sdist); copied so that the build writes nothing here.
BUILD_INPUTS = ["pyproject.toml", "README.md", "sblr", "sample_data"]

_CHECK_INSTALLED = """
import json, sys
from pathlib import Path
import numpy as np
import sblr
from sblr.samples import SAMPLES, SAMPLE_DIR, load_sample
out = Path(sys.argv[1])
info = {"sblr": sblr.__file__, "sample_dir": str(SAMPLE_DIR), "version": sblr.__version__}
import sblr.plots, sblr.attribution  # every subpackage shipped
info["plots"] = sblr.plots.__file__
import sblr.logistic  # SparseSBLR's compiled solver, compiled (or loaded) where installed
sblr.logistic.prepare_compiled_solver()
info["compiled"] = [sys.modules["sblr._compiled"].__file__, sblr.logistic.compiled_solver_ready()]
for name in SAMPLES:
    ds = load_sample(name)
    np.savez(out / f"{name}.npz", X=ds.X, y=ds.y)
    info[name] = [ds.name, ds.task, ds.feature_names, ds.class_names]
(out / "info.json").write_text(json.dumps(info))
"""


def _run(cmd, **kwargs):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kwargs)


@pytest.mark.slow
def test_installed_package_in_a_fresh_venv(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name in BUILD_INPUTS:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(path, src / name)

    env_dir = tmp_path / "venv"
    try:
        venv.EnvBuilder(with_pip=False, symlinks=os.name != "nt").create(env_dir)
    except Exception as exc:  # pragma: no cover - e.g. Debian's python3 without python3-venv
        pytest.skip(f"cannot create a virtual environment here: {exc}")
    bindir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    python = bindir / ("python.exe" if os.name == "nt" else "python")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env |= {"PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}

    # The dependencies (and pip) are this interpreter's: its site-packages go on the new
    # environment's path, after the environment's own (works when this is itself a venv,
    # where --system-site-packages would reach the base interpreter's instead).
    site_dirs = [
        p
        for p in sys.path
        if p and Path(p).is_dir() and Path(p).name in ("site-packages", "dist-packages")
    ]
    purelib = _run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], env=env
    ).stdout.strip()
    Path(purelib, "_sblr_test_parent.pth").write_text("\n".join(site_dirs) + "\n")

    probe = _run(
        [
            python,
            "-c",
            "import importlib.util as u, setuptools as s; v = tuple(map(int, "
            "s.__version__.split('.')[:2])); print(v >= (70, 1) or bool(u.find_spec('wheel')))",
        ],
        env=env,
    )
    offline = probe.returncode == 0 and probe.stdout.strip() == "True"
    # Without a setuptools that can build wheels here, pip fetches one from PyPI.
    options = ["--no-build-isolation", "--no-index"] if offline else []
    install = _run([python, "-m", "pip", "install", "--no-deps", "-q", *options, str(src)], env=env)
    assert install.returncode == 0, install.stdout + install.stderr

    show = _run([python, "-m", "pip", "show", "sblr"], env=env, cwd=tmp_path)
    assert show.returncode == 0, show.stderr
    requires = next(line for line in show.stdout.splitlines() if line.startswith("Requires:"))
    listed = {canonicalize_name(n.strip()) for n in requires.split(":", 1)[1].split(",")}
    assert listed == {canonicalize_name(r.name) for r in CORE}, requires

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    script = bindir / ("sblr.exe" if os.name == "nt" else "sblr")
    helped = _run([script, "--help"], env=env, cwd=elsewhere)
    assert helped.returncode == 0, helped.stderr
    assert all(c in helped.stdout for c in ("benchmark", "evaluate", "dashboard"))

    loaded = _run([python, "-c", _CHECK_INSTALLED, str(elsewhere)], env=env, cwd=elsewhere)
    assert loaded.returncode == 0, loaded.stderr
    info = json.loads((elsewhere / "info.json").read_text())
    site = Path(purelib).resolve()
    assert Path(info["sblr"]).resolve().is_relative_to(site), info["sblr"]
    assert Path(info["sample_dir"]).resolve() == site / "sblr" / "sample_data"
    assert Path(info["plots"]).resolve() == site / "sblr" / "plots" / "__init__.py"
    assert Path(info["compiled"][0]).resolve() == site / "sblr" / "_compiled.py"
    assert info["compiled"][1] is True
    import sblr

    assert info["version"] == sblr.__version__
    for name in SAMPLES:  # the installed samples are exactly the checkout's
        ds = load_sample(name)
        with np.load(elsewhere / f"{name}.npz") as shipped:
            np.testing.assert_array_equal(shipped["X"], ds.X)
            np.testing.assert_array_equal(shipped["y"], ds.y)
        assert info[name] == [ds.name, ds.task, ds.feature_names, ds.class_names]

    dashboard = _run([script, "dashboard"], env=env, cwd=elsewhere)
    assert dashboard.returncode == 2, dashboard.stdout + dashboard.stderr
    assert "not part of the installed sblr package" in dashboard.stderr
    assert "streamlit run app.py" in dashboard.stderr


MODEL_NAMES = {"SML", "SBLR", "SparseSBLR"}


def test_no_page_compares_a_models_name():
    """Pages ask what a model is (Spec: l1, learns_beta, label), never which it is by name:
    a comparison with "SparseSBLR" was the house's way to say "takes λ" in 27 places, each a
    place to change for a new model. A test that finds one names it."""
    found = []
    for path in [*sorted((ROOT / "pages").rglob("*.py")), ROOT / "app.py"]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Compare):
                continue
            parts = [node.left, *node.comparators]
            names = {
                v.value
                for part in parts
                for v in (
                    [part] if not isinstance(part, (ast.Tuple, ast.List, ast.Set)) else part.elts
                )
                if isinstance(v, ast.Constant) and v.value in MODEL_NAMES
            }
            if names:
                found.append(f"{path.name}:{node.lineno} {sorted(names)}")
    assert not found, found


def test_no_dashboard_function_takes_more_than_five_parameters():
    """A page function of 7-10 loose parameters (the model as name, γ, λ beside the fit it
    named; an upload as five options) was the house's way to pass a question: it is passed
    as one typed value now (pages/_shared/questions: Spec, Scheme, Search, RowQuestion; an
    Upload; StoreLimits). A test that finds one names it."""
    found = []
    for path in [*sorted((ROOT / "pages").rglob("*.py")), ROOT / "app.py"]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            a = node.args
            names = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
            names += [x.arg for x in (a.vararg, a.kwarg) if x is not None]
            names = [n for n in names if n not in ("self", "cls")]
            if len(names) > 5:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}{tuple(names)}")
    assert not found, found


def test_the_library_imports_no_streamlit():
    """sblr/ is the library: nothing in it imports Streamlit (the dashboard's own code lives in
    pages/)."""
    found = []
    for path in sorted((ROOT / "sblr").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            if any(n == "streamlit" or n.startswith("streamlit.") for n in names):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found, found
