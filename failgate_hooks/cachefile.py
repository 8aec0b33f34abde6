"""Writing a cache file: whole or not at all, and never a failure (a cache is optional)."""

from __future__ import annotations

import contextlib
import os


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
