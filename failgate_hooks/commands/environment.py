"""The switches failgate takes from the environment, read here and passed down as values."""

from __future__ import annotations

from collections.abc import Mapping

TRUST_LEDGER_ENV = "FAILGATE_TRUST_LEDGER"


def trust_ledger_requested(environ: Mapping[str, str]) -> bool:
    """Whether `FAILGATE_TRUST_LEDGER=1` asks to trust every verifier (CI, servers)."""
    return environ.get(TRUST_LEDGER_ENV) == "1"


GITHUB_ACTIONS_ENV = "GITHUB_ACTIONS"


def in_github_actions(environ: Mapping[str, str]) -> bool:
    """Whether failgate runs inside a GitHub Actions step, whose runner reads workflow
    commands in every line of its output (commands/output.py)."""
    return environ.get(GITHUB_ACTIONS_ENV) == "true"
