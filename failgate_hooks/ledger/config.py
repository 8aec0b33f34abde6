"""Configuration (DESIGN §9): `[tool.failgate]` in pyproject.toml, or failgate.toml.

Always read from committed bytes of a chosen revision, never from the working
tree: a pushed commit must not be able to move the ledger, switch to warn mode,
or change who may relax a gate.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from failgate_hooks.core.errors import UsageError
from failgate_hooks.core.events import is_safe_relative_path

CONFIG_FILES = ("failgate.toml", "pyproject.toml")
DEFAULT_PROTECTED_REFS = (
    "refs/heads/main",
    "refs/heads/master",
    "refs/heads/release/*",
    "refs/tags/*",
)


@dataclass(frozen=True)
class Config:
    ledger: str = "ledger"
    protected_refs: tuple[str, ...] = DEFAULT_PROTECTED_REFS
    block_on: str = "protected"
    mode: str = "enforce"
    default_timeout_s: int = 300
    ledger_refs: tuple[str, ...] = ()
    relaxers: tuple[str, ...] = ()
    identity_env: str | None = None
    source: str = "defaults"  # where it was read from, for messages


def parse_config(files: Mapping[str, bytes], source: str) -> Config:
    """The configuration from the bytes of `failgate.toml` / `pyproject.toml`.

    failgate.toml wins when both exist; a file without failgate settings means
    defaults; an invalid value is a usage error naming the file and the key.
    """
    for name in CONFIG_FILES:
        if name not in files:
            continue
        where = f"{name} ({source})"
        doc = _parse_toml(files[name], where)
        if name == "pyproject.toml":
            table = doc.get("tool", {}).get("failgate")
            if table is None:
                continue
            prefix = "tool.failgate."
        else:
            table, prefix = doc, ""
        if not isinstance(table, dict):
            raise UsageError(f"{where}: {prefix or 'the file'} must be a table")
        return _from_table(table, where, prefix, source)
    return Config(source=source)


def _from_table(table: Mapping[str, Any], where: str, prefix: str, source: str) -> Config:
    known = set(Config.__dataclass_fields__) - {"source"}
    for key in table:
        if key not in known:
            raise UsageError(
                f"{where}: unknown key {prefix}{key}; expected one of {', '.join(sorted(known))}"
            )

    def text(key: str, default: str, choices: tuple[str, ...] | None = None) -> str:
        value = table.get(key, default)
        if not isinstance(value, str) or (choices and value not in choices):
            expected = " or ".join(f'"{c}"' for c in choices) if choices else "a string"
            raise UsageError(f"{where}: {prefix}{key} must be {expected}, got {value!r}")
        return value

    def strings(key: str, default: tuple[str, ...]) -> tuple[str, ...]:
        value = table.get(key, list(default))
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise UsageError(f"{where}: {prefix}{key} must be a list of strings, got {value!r}")
        return tuple(value)

    ledger = text("ledger", "ledger")
    if not is_safe_relative_path(ledger):
        raise UsageError(f"{where}: {prefix}ledger must be a relative folder, got {ledger!r}")
    timeout = table.get("default_timeout_s", 300)
    if not isinstance(timeout, int) or isinstance(timeout, bool) or timeout <= 0:
        raise UsageError(f"{where}: {prefix}default_timeout_s must be a positive integer")
    identity_env = table.get("identity_env")
    if identity_env is not None and not (isinstance(identity_env, str) and identity_env):
        raise UsageError(f"{where}: {prefix}identity_env must be a variable name")
    return Config(
        ledger=ledger,
        protected_refs=strings("protected_refs", DEFAULT_PROTECTED_REFS),
        block_on=text("block_on", "protected", ("protected", "all")),
        mode=text("mode", "enforce", ("enforce", "warn")),
        default_timeout_s=timeout,
        ledger_refs=strings("ledger_refs", ()),
        relaxers=strings("relaxers", ()),
        identity_env=identity_env,
        source=source,
    )


def _parse_toml(raw: bytes, where: str) -> dict[str, Any]:
    """The TOML document in `raw`, or a usage error naming the file."""
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError, TOMLDecodeError too
        raise UsageError(f"{where}: not valid TOML: {exc}") from None
