"""Cache files: written whole or not at all, never a failure, versioned by their rules."""

from __future__ import annotations

import contextlib
import hashlib
import os


def sources_digest(*sources: str | None) -> str:
    """A hash of the source files of the rules a cache's values come from.

    In a cache's version, so that a value worked out under edited rules is never
    used, even when nobody bumped a version number."""
    digest = hashlib.sha256()
    for source in sources:
        try:
            with open(str(source), "rb") as handle:
                digest.update(handle.read())
        except (OSError, TypeError):
            digest.update(b"?")
    return digest.hexdigest()[:16]


def write_whole(path: str, data: bytes) -> bool:
    """Write `data` beside `path`, then rename it over `path`; False if it could not be.

    Readers see the old file or the new one, never half of one. A read-only,
    full or foreign folder is no cache: the caller works the value out again."""
    temp = f"{path}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(temp, "wb") as handle:
            handle.write(data)
        os.replace(temp, path)
        return True
    except OSError:
        return False
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temp)  # gone already once renamed
