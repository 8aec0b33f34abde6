"""The switches failgate takes from the environment, read here and passed down as values."""

from __future__ import annotations

from collections.abc import Mapping

TRUST_LEDGER_ENV = "FAILGATE_TRUST_LEDGER"


def trust_ledger_requested(environ: Mapping[str, str]) -> bool:
    """Whether `FAILGATE_TRUST_LEDGER=1` asks to trust every verifier (CI, servers)."""
    return environ.get(TRUST_LEDGER_ENV) == "1"
