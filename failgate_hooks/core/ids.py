"""Object ids: as people read them, and which hash made them. Pure."""

from __future__ import annotations

import hashlib

# Long enough to stay unambiguous in a big history; JSON and receipts keep full ids.
SHORT_ID_LENGTH = 12


def short_id(commit: str) -> str:
    """`commit` shortened for a line of text."""
    return commit[:SHORT_ID_LENGTH]


def object_format_of(oid: str) -> str:
    """The repository's hash, read off one of its ids: SHA-256 ids are 64 digits."""
    return "sha256" if len(oid) == 64 else "sha1"


def blob_id(data: bytes, object_format: str) -> str:
    """The id git gives a blob of these bytes, in `object_format` (`sha1` or `sha256`)."""
    digest = hashlib.sha256 if object_format == "sha256" else hashlib.sha1
    return digest(b"blob %d\0" % len(data) + data).hexdigest()
