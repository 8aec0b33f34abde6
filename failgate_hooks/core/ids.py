"""Commit ids as people read them. Pure."""

from __future__ import annotations

# Long enough to stay unambiguous in a big history; JSON and receipts keep full ids.
SHORT_ID_LENGTH = 12


def short_id(commit: str) -> str:
    """`commit` shortened for a line of text."""
    return commit[:SHORT_ID_LENGTH]
