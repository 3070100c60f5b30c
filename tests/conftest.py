"""Shared test helpers."""

from pathlib import Path

import pytest

#: Public benchmark data on the development machines (not part of the project).
SHARED_DATASETS = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"


@pytest.fixture
def shared_datasets() -> Path:
    """``../shared/datasets``, or skip: the benchmark data is not on users' machines."""
    if not SHARED_DATASETS.is_dir():
        pytest.skip(
            "../shared/datasets not found: benchmark data is only on the development machines"
        )
    return SHARED_DATASETS
