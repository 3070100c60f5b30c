"""Bundled sample data sets, ready to load.

The files live in ``sample_data/`` at the repository root and are regenerated
by ``python sample_data/make_samples.py`` (see ``sample_data/README.md``); an
installed sblr (``pip install .``) carries the same files as ``sblr/sample_data``:

* ``planted`` -- synthetic multi-label data (500 rows, 8 features, 7 labels)
  with planted label dependencies that SparseSBLR's beta matrix recovers;
* ``wine`` -- the UCI Wine data (178 rows, 13 features, 3 classes).

Examples
--------
>>> from sblr.samples import SAMPLES, load_sample
>>> list(SAMPLES)
['planted', 'wine']
>>> ds = load_sample("planted")
>>> ds
Dataset(name='planted', task='multilabel', n_samples=500, n_features=8, n_classes=7)
>>> ds.class_names
['daylight', 'birdsong', 'rain', 'thunder', 'frost', 'spring_tide', 'noise']
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sblr.exceptions import DataError
from sblr.io import Dataset, load_dataset

_PACKAGE_DIR = Path(__file__).resolve().parent


def _sample_dir() -> Path:
    # Installed: pyproject.toml ships <repository>/sample_data as the package directory
    # sblr/sample_data.  In a checkout (or an editable install) that directory does not
    # exist and the files are read where they are kept, <repository root>/sample_data.
    installed = _PACKAGE_DIR / "sample_data"
    return installed if installed.is_dir() else _PACKAGE_DIR.parent / "sample_data"


#: Directory holding the sample files: ``<repository root>/sample_data`` in a checkout,
#: ``<site-packages>/sblr/sample_data`` once installed.
SAMPLE_DIR = _sample_dir()

#: Name of the sample shown first (e.g. by the dashboard).
DEFAULT_SAMPLE = "planted"

#: Sample name -> one-line description, in display order.
SAMPLES: dict[str, str] = {
    "planted": (
        "Synthetic multi-label weather observations (500 rows, 8 features, 7 labels) with "
        "planted dependencies: birdsong copies daylight, thunder occurs only with rain, "
        "frost excludes daylight, and 'noise' is a coin flip that no model should use."
    ),
    "wine": (
        "UCI Wine (Forina et al.; via scikit-learn, CC BY 4.0): 178 wines, 13 chemical "
        "measurements, 3 cultivars (multi-class)."
    ),
}

# File name and load_dataset keyword arguments of each sample.
_FILES: dict[str, tuple[str, dict[str, Any]]] = {
    "planted": ("planted.arff", {}),  # labels from planted.xml beside it
    "wine": ("wine.csv", {"target": "class"}),
}


def _check_name(name: str) -> None:
    if name not in SAMPLES:
        raise DataError(
            f"Unknown sample {name!r}; the available samples are: {', '.join(SAMPLES)}."
        )


def sample_path(name: str) -> Path:
    """Path of the data file of a sample.

    Parameters
    ----------
    name : str
        A key of :data:`SAMPLES`.

    Returns
    -------
    Path
        ``sample_data/planted.arff`` (with ``planted.xml`` beside it) or
        ``sample_data/wine.csv``.

    Raises
    ------
    DataError
        If ``name`` is not a known sample.

    Examples
    --------
    >>> sample_path("wine").name
    'wine.csv'
    >>> sample_path("planted").with_suffix(".xml").is_file()
    True
    """
    _check_name(name)
    return SAMPLE_DIR / _FILES[name][0]


def load_sample(name: str = DEFAULT_SAMPLE) -> Dataset:
    """Load a bundled sample data set.

    Parameters
    ----------
    name : str, default "planted"
        A key of :data:`SAMPLES`.

    Returns
    -------
    Dataset
        As returned by :func:`sblr.io.load_dataset`.

    Raises
    ------
    DataError
        If ``name`` is unknown (the message lists the available samples) or
        the file is missing.

    Examples
    --------
    >>> ds = load_sample("wine")
    >>> ds.task, ds.X.shape, ds.class_names
    ('multiclass', (178, 13), ['cultivar_1', 'cultivar_2', 'cultivar_3'])
    >>> load_sample("iris")
    Traceback (most recent call last):
    ...
    sblr.exceptions.DataError: Unknown sample 'iris'; the available samples are: planted, wine.
    """
    path = sample_path(name)
    if not path.is_file():
        fix = (
            "reinstall sblr"
            if SAMPLE_DIR.parent == _PACKAGE_DIR
            else "regenerate it with 'python sample_data/make_samples.py'"
        )
        raise DataError(f"The sample file {path} is missing; {fix}.")
    return load_dataset(path, **_FILES[name][1])
