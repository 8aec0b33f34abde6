"""This machine's pass cache: a verifier that passed on some content need not run again on it.

A cached pass is a fact about what ran here, never committed: one small file
per pass in `<git-common-dir>/failgate/cache/`, named by its key. An entry that
cannot be read is a miss, and a cache that cannot be written is no cache.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import NamedTuple

from failgate_hooks.git.repo import local_folder
from failgate_hooks.verify.localfiles import (
    canonical_json,
    read_quietly,
    utc_now,
    write_atomically,
)

# pc4: keyed by trust's fingerprint, so a pass stands only for the verifier as approved,
# its run settings and the shape of its pins (fp3) included. pc5: made in the fixed
# locale, and inplace only in a work tree proven byte for byte: a pc4 pass may have
# been earned in a pusher's locale or on converted files, and stands for nothing. pc6:
# inplace only where each link's target and each file's executable bit are proven too.
# pc7: the sandbox ("bwrap", the same isolation string as before) now filters syscalls,
# keeps /proc read-only, refuses nested user namespaces, keeps the pinned files and the
# bytecode cache read-only: a pc6 pass may have been earned by code under test that
# rewrote a pinned judge or forged an exit status, and must be earned again.
PASS_KEY_VERSION = "pc7"


def pass_key(
    fingerprint: str,
    entity_key: str,
    environment: str | None,
    content: str,
    isolation: str | None = None,
) -> str:
    """The cache key of one pass: the verifier's fingerprint (argv, pins, run settings) and
    what it ran on; `content` is a content key or an input key (both versioned).

    `isolation` names the sandbox a pass ran in: a pass outside it never stands for one in it."""
    payload = [PASS_KEY_VERSION, fingerprint, entity_key, environment, content]
    if isolation is not None:
        payload.append(isolation)
    return f"{PASS_KEY_VERSION}-{hashlib.sha256(canonical_json(payload)).hexdigest()}"


class CachedPass(NamedTuple):
    """A pass recorded earlier: the commit it ran on, and how long it took."""

    commit: str
    duration_s: float | None


class PassCache:
    """`<git-common-dir>/failgate/cache/`: one small file per pass, named by its key."""

    def __init__(self, common_dir: str) -> None:
        self.folder = os.path.join(local_folder(common_dir), "cache")

    def lookup(self, key: str) -> CachedPass | None:
        """The pass recorded under `key`, or None; an unreadable entry is a miss, never an error."""
        raw = read_quietly(os.path.join(self.folder, key))
        if raw is None:
            return None
        try:
            data = json.loads(raw.decode("utf-8"))
            if data["key"] != key or not isinstance(data["commit"], str):
                return None
            duration = data.get("duration_s")
            return CachedPass(
                commit=data["commit"],
                duration_s=float(duration) if isinstance(duration, int | float) else None,
            )
        except (UnicodeDecodeError, ValueError, KeyError, TypeError):
            return None

    def record(self, key: str, *, commit: str, duration_s: float | None) -> str | None:
        """Remember a pass; None when stored, else why it could not be (never raises)."""
        data = {"key": key, "commit": commit, "duration_s": duration_s, "recorded_at": utc_now()}
        try:
            os.makedirs(self.folder, exist_ok=True)
            body = canonical_json(data) + b"\n"
            write_atomically(os.path.join(self.folder, key), body, durable=True)
        except OSError as exc:
            return f"the pass cache could not be used ({self.folder}: {exc.strerror or exc})"
        return None
