"""Regenerate the sample data sets in ``sample_data/``.

Usage::

    python sample_data/make_samples.py            # rewrite the files beside this script
    python sample_data/make_samples.py --out DIR  # write them to DIR instead

The output is deterministic (fixed seed, fixed number formatting, no network):
running the script again gives byte-identical files.  It writes

* ``wine.csv`` -- scikit-learn's bundled copy of the UCI Wine data (multi-class);
* ``planted.arff`` + ``planted.xml`` (Mulan format) and ``planted.csv`` (the same
  data as CSV) -- a synthetic multi-label data set with planted label
  dependencies, described in ``PLANTED_DESCRIPTION`` below and in README.md.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

SEED = 1
N_ROWS = 500
HERE = Path(__file__).resolve().parent

FEATURE_NAMES = [
    "hour_sin",
    "hour_cos",
    "season_sin",
    "season_cos",
    "wind_sin",
    "wind_cos",
    "moon_sin",
    "moon_cos",
]
LABEL_NAMES = ["daylight", "birdsong", "rain", "thunder", "frost", "spring_tide", "noise"]

PLANTED_DESCRIPTION = """\
planted: synthetic multi-label data with PLANTED label dependencies.

500 simulated weather-station observations.  Four hidden periodic quantities
are drawn uniformly at random: the hour of the day, the day of the year, the
wind direction and the moon phase.  Each is given to the learner as a
(sin, cos) pair, so there are 8 numeric features (plus Gaussian measurement
noise, sd 0.02, rounded to 3 decimals):
    hour_sin, hour_cos      time of day
    season_sin, season_cos  day of the year
    wind_sin, wind_cos      wind direction
    moon_sin, moon_cos      moon phase
Because the points lie (almost) uniformly on a product of circles, the data
density is flat, so differences in label evidence come from the planted
rules, not from crowded versus sparse regions of feature space.

7 labels (the last 7 attributes, nominal {0,1}), planted as follows:
    daylight     hour in [6, 18)
    birdsong     co-occurs with daylight: P = 0.9 in daylight, 0.05 at night
                 (a noisy copy of daylight; no region of its own)
    rain         wind from the west: direction in [180, 300) degrees
    thunder      ONLY together with rain (thunder => rain): a rainy observation
                 has thunder with P = 0.9 from April to September and P = 0.4
                 otherwise (day of year in [91, 274) is the warm half)
    frost        winter (day of year < 60 or >= 335) AND night; hence frost and
                 daylight are mutually exclusive
    spring_tide  moon phase within 0.1 cycle of new or full moon (two arcs)
    noise        pure noise: Bernoulli(0.3), independent of X and of every label

What the SparseSBLR beta heatmap (rows k = model of label k, columns t =
evidence of label t) should show, e.g. at gamma="scale", lam=1e-3:
  * a strong diagonal for the region labels (daylight, rain, frost,
    spring_tide, thunder);
  * row birdsong: the weight sits on the DAYLIGHT column, not on birdsong's
    own column -- daylight evidence is the cleaner signal of the same thing;
  * row thunder: a positive weight on the RAIN column (beta[thunder, rain]
    > 0) besides its own column -- thunder needs rain, so rain evidence is
    part of thunder's evidence;
  * rows daylight and birdsong: a negative weight on the FROST column --
    frost only happens at night;
  * column noise: exactly zero in every other row (no label uses the noise
    label's evidence), and row noise (the model of the noise label) is zero
    or negligible: only its intercept, about logit(0.3), matters.
"""


# --------------------------------------------------------------------------- planted data
def make_planted(seed: int = SEED, n: int = N_ROWS) -> tuple[np.ndarray, np.ndarray]:
    """Draw the planted multi-label data set.

    Returns
    -------
    X : ndarray of shape (n, 8)
        Features, rounded to 3 decimals.
    Y : ndarray of shape (n, 7)
        0/1 labels in ``LABEL_NAMES`` order.
    """
    rng = np.random.default_rng(seed)
    hour = rng.uniform(0.0, 24.0, n)
    day = rng.uniform(0.0, 365.0, n)
    wind = rng.uniform(0.0, 360.0, n)
    moon = rng.uniform(0.0, 1.0, n)
    angles = 2.0 * np.pi * np.column_stack([hour / 24.0, day / 365.0, wind / 360.0, moon])
    X = np.column_stack([f(angles[:, i]) for i in range(4) for f in (np.sin, np.cos)])
    X = X + rng.normal(0.0, 0.02, X.shape)
    X = np.round(X, 3) + 0.0  # + 0.0 turns -0.0 into 0.0
    u = rng.random((n, 3))

    daylight = (hour >= 6.0) & (hour < 18.0)
    birdsong = u[:, 0] < np.where(daylight, 0.9, 0.05)
    rain = (wind >= 180.0) & (wind < 300.0)
    warm_half = (day >= 91.0) & (day < 274.0)
    thunder = rain & (u[:, 1] < np.where(warm_half, 0.9, 0.4))
    winter = (day < 60.0) | (day >= 335.0)
    frost = winter & ~daylight
    phase = moon % 0.5
    spring_tide = (phase < 0.1) | (phase >= 0.4)
    noise = u[:, 2] < 0.3
    Y = np.column_stack([daylight, birdsong, rain, thunder, frost, spring_tide, noise])
    return X, Y.astype(int)


def _fmt(value: float) -> str:
    """Shortest text that reads back as the same float (no exponent)."""
    return np.format_float_positional(float(value), trim="-")


def _rows(X: np.ndarray, Y: np.ndarray) -> list[str]:
    return [
        ",".join([_fmt(v) for v in x] + [str(int(v)) for v in y]) for x, y in zip(X, Y, strict=True)
    ]


def planted_arff(X: np.ndarray, Y: np.ndarray) -> str:
    """Mulan ARFF text: the labels are the last attributes, nominal {0,1}."""
    lines = ["% " + line if line else "%" for line in PLANTED_DESCRIPTION.splitlines()]
    lines += ["%", f"% Generated by sample_data/make_samples.py (seed {SEED}).", ""]
    lines += ["@relation planted", ""]
    lines += [f"@attribute {name} numeric" for name in FEATURE_NAMES]
    lines += [f"@attribute {name} {{0,1}}" for name in LABEL_NAMES]
    lines += ["", "@data"] + _rows(X, Y)
    return "\n".join(lines) + "\n"


def planted_xml() -> str:
    """Mulan XML label file naming the label attributes."""
    lines = [
        '<?xml version="1.0" encoding="utf-8"?>',
        '<labels xmlns="http://mulan.sourceforge.net/labels">',
    ]
    lines += [f'<label name="{name}"></label>' for name in LABEL_NAMES]
    lines += ["</labels>"]
    return "\n".join(lines) + "\n"


def planted_csv(X: np.ndarray, Y: np.ndarray) -> str:
    """CSV twin of the ARFF file: same values, label columns last."""
    header = ",".join(FEATURE_NAMES + LABEL_NAMES)
    return "\n".join([header] + _rows(X, Y)) + "\n"


# --------------------------------------------------------------------------- wine
WINE_CLASS_NAMES = ["cultivar_1", "cultivar_2", "cultivar_3"]


def wine_csv() -> str:
    """scikit-learn's bundled UCI Wine data as CSV with a ``class`` column."""
    from sklearn.datasets import load_wine

    data = load_wine()
    header = ",".join(list(data.feature_names) + ["class"])
    rows = []
    for x, target in zip(data.data, data.target, strict=True):
        cells = [_fmt(v) for v in x]
        if any(float(c) != v for c, v in zip(cells, x, strict=True)):  # pragma: no cover
            raise AssertionError("wine value does not round-trip through its text")
        rows.append(",".join(cells + [WINE_CLASS_NAMES[int(target)]]))
    return "\n".join([header] + rows) + "\n"


# --------------------------------------------------------------------------- driver
def render_all() -> dict[str, str]:
    """File name -> text of every generated file."""
    X, Y = make_planted()
    return {
        "planted.arff": planted_arff(X, Y),
        "planted.xml": planted_xml(),
        "planted.csv": planted_csv(X, Y),
        "wine.csv": wine_csv(),
    }


def write_all(out_dir: str | Path = HERE) -> list[Path]:
    """Write every sample file into ``out_dir`` (created if needed); return the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, text in render_all().items():
        path = out / name
        path.write_bytes(text.encode("utf-8"))
        paths.append(path)
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out",
        type=Path,
        default=HERE,
        help="output directory (default: the directory of this script)",
    )
    args = parser.parse_args(argv)
    for path in write_all(args.out):
        print(f"wrote {path} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
