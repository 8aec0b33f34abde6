"""Object ids: as people read them, and which hash made them. Pure."""

from __future__ import annotations

# Long enough to stay unambiguous in a big history; JSON and receipts keep full ids.
SHORT_ID_LENGTH = 12


def short_id(commit: str) -> str:
    """`commit` shortened for a line of text."""
    return commit[:SHORT_ID_LENGTH]


def object_format_of(oid: str) -> str:
    """The repository's hash, read off one of its ids: SHA-256 ids are 64 digits."""
    return "sha256" if len(oid) == 64 else "sha1"
