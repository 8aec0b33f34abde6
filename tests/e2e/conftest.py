"""Fixtures the end-to-end tests share."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

# pytest's folders are in /tmp, which the sandbox hides whole: a folder that the home or
# work-tree rule alone must hide lives here instead (build/ is ignored by git).
VISIBLE_BASE = Path(__file__).resolve().parents[2] / "build" / "sandbox-tests"


@pytest.fixture
def visible() -> Iterator[Path]:
    """A temporary folder outside /tmp, so no rule but the one under test hides it."""
    VISIBLE_BASE.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(dir=VISIBLE_BASE))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)
