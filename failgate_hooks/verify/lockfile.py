"""A lock file for this machine's small state files: held while one is re-read, merged
and renamed into place, so that two writers at once lose nothing.

Holding it is only a read, a merge and a rename of a small file: a lock older than
LOCK_STALE_S was left by a process that died holding it, and is broken.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator

from failgate_hooks.verify.localfiles import read_quietly

LOCK_STALE_S = 30.0
LOCK_WAIT_S = 10.0
_LOCK_POLL_S = 0.05


class LockUnavailable(Exception):
    """The lock could not be had: `hint` says what to do."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.hint = hint


def _host() -> str:
    # The host name, as socket.gethostname() gives it on POSIX, without importing
    # socket into every check that holds a gate.
    return os.uname().nodename


@contextlib.contextmanager
def locked(lock_path: str, what: str) -> Iterator[None]:
    """Hold `lock_path` (created with O_EXCL) for the duration; break it when stale.
    LockUnavailable, naming `what` the lock guards, when it cannot be had."""

    token = f"{os.getpid()} {_host()} {os.urandom(8).hex()}\n".encode()
    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        try:
            fd = os.open(lock_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            if _break_if_stale(lock_path):
                continue
            if time.monotonic() > deadline:
                raise LockUnavailable(
                    f"{what} is locked by {lock_path}",
                    "if no failgate is running, remove that file and try again",
                ) from None
            time.sleep(_LOCK_POLL_S)
            continue
        except OSError as exc:
            raise LockUnavailable(f"cannot lock {lock_path}: {exc.strerror or exc}", "") from None
        try:
            os.write(fd, token)
        finally:
            os.close(fd)
        break
    try:
        yield
    finally:
        # Remove only our own lock: if ours was judged stale and broken, the
        # file there now belongs to someone else.
        if read_quietly(lock_path) == token:
            with contextlib.suppress(OSError):
                os.unlink(lock_path)


def _break_if_stale(lock_path: str) -> bool:
    """Remove a lock left by a dead process (or older than LOCK_STALE_S); True if removed."""
    seen = read_quietly(lock_path)
    try:
        age = time.time() - os.stat(lock_path).st_mtime
    except FileNotFoundError:
        return True  # released meanwhile: try again at once
    except OSError:
        return False
    if not _is_stale(seen, age):
        return False
    # Rename rather than unlink, then look at what was moved: if another process
    # took the lock between our look and the rename, give it back.
    grave = f"{lock_path}.stale-{os.getpid()}-{os.urandom(4).hex()}"
    try:
        os.rename(lock_path, grave)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    if read_quietly(grave) != seen:
        with contextlib.suppress(OSError):
            os.link(grave, lock_path)
    with contextlib.suppress(OSError):
        os.unlink(grave)
    return True


def _is_stale(content: bytes | None, age: float) -> bool:
    if age > LOCK_STALE_S:
        return True
    fields = (content or b"").split()
    if len(fields) != 3:
        # Created but not yet written: give the writer a moment.
        return content is not None and age > 2.0
    pid_text, host, _ = fields
    if host.decode("utf-8", "replace") != _host() or not pid_text.isdigit():
        return False
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False  # alive, owned by someone else
    return False
