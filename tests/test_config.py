"""Reading the configuration: its TOML, and the usage error an unreadable file gives."""

from __future__ import annotations

import pytest

from failgate_hooks.core.errors import UsageError
from failgate_hooks.ledger.config import Config, parse_config


def test_failgate_toml_wins_over_pyproject() -> None:
    files = {
        "failgate.toml": b'mode = "warn"\n',
        "pyproject.toml": b'[tool.failgate]\nmode = "enforce"\n',
    }
    config = parse_config(files, "HEAD")
    assert config.mode == "warn" and config.source == "HEAD"


def test_a_pyproject_without_failgate_settings_means_defaults() -> None:
    assert parse_config({"pyproject.toml": b'[project]\nname = "x"\n'}, "HEAD") == Config(
        source="HEAD"
    )


@pytest.mark.parametrize(
    "raw",
    [
        b"mode = \n",
        b"\xff\xfe",
        b"x = " + b"[" * 100_000 + b"]" * 100_000,
        b"default_timeout_s = " + b"1" * 5000 + b"\n",  # int() refuses, tomllib lets it raise
    ],
    ids=["broken-toml", "invalid-utf8", "deep-nesting", "huge-integer"],
)
def test_an_unreadable_file_is_a_usage_error_naming_it(raw: bytes) -> None:
    with pytest.raises(UsageError, match=r"^failgate\.toml \(HEAD\): not valid TOML: "):
        parse_config({"failgate.toml": raw}, "HEAD")
