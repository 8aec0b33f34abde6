"""This machine's files under `<git-common-dir>/failgate/`: the trust store and the caches.

None is ever committed. Every write is a temp file renamed into place, so a
reader never sees half a file; every hash is taken over one canonical JSON.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
from collections.abc import Iterable

Pinned = tuple[str, str]  # (path, blob id)


def canonical_json(value: object) -> bytes:
    """One byte string per value: what every hash here is taken over."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def pins_json(pinned: Iterable[Pinned]) -> list[list[str]]:
    """Pinned (path, blob) pairs sorted, as JSON lists: their order never matters."""
    return [[path, blob] for path, blob in sorted(pinned)]


def utc_now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def read_quietly(path: str) -> bytes | None:
    """The file's bytes, or None when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def write_atomically(path: str, data: bytes, *, durable: bool) -> None:
    """Write a temp file beside `path`, then rename it over `path`; OSError if that fails.

    `durable` syncs the data to disk before the rename, so that a crash just
    after it cannot leave an empty file under that name."""
    tmp = f"{path}.{os.getpid()}-{os.urandom(4).hex()}.tmp"
    try:
        with open(tmp, "xb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
