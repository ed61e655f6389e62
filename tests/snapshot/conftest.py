"""Shared fixtures for the snapshot tests (the ``scenario`` fixture is in ``tests/conftest.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def fixtures_dir() -> Path:
    """The folder of checked-in snapshot fixtures."""
    return FIXTURES
