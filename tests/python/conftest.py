"""Shared paths for the Python package's tests: the source tree (for
examples/) comes from SMELT_SOURCE_DIR, set by ctest, else this file's
place in the tree."""
import os

import pytest

SRC = os.environ.get("SMELT_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))


@pytest.fixture
def examples():
    return os.path.join(SRC, "examples")
