"""Verifier processes a killed failgate left behind, found by a tag and ended by the next run.

Every verifier gets `FAILGATE_OWNER=<pid namespace>:<pid>:<start time>` of the
failgate process that started it, and its descendants inherit it. The reaper shim and the
sandbox end a run's processes when failgate exits or is signalled; this is the
backstop for when failgate and the shim are both killed (SIGKILL, the OOM
killer): the next failgate that runs a verifier ends every process whose tag
names an owner that no longer exists. A process that clears its environment
loses the tag and escapes it: only the sandbox's PID namespace is reliable.
"""

from __future__ import annotations

import functools
import os
import signal
from collections.abc import Callable

OWNER_VARIABLE = "FAILGATE_OWNER"


def owner_tag() -> str:
    """This process's tag: its PID namespace, pid and start time (a reused pid has another)."""
    pid = os.getpid()
    return f"{_pid_namespace()}:{pid}:{_start_time(pid)}"


@functools.cache
def end_leftovers() -> list[int]:
    """Once per process: SIGKILL every verifier process whose failgate is gone; their pids."""
    return _end_where(lambda owner: not _alive(owner))


def end_strays() -> list[int]:
    """SIGKILL every process that carries this process's own tag; their pids.

    For the moment a run has ended (failgate runs one verifier at a time): the shim
    ends all below it, so whatever is left escaped it, through a verifier that killed
    its shim and left its `setsid()` descendants to no one. Left running, one could
    write into the kept checkout while the next run proves it."""
    ours = owner_tag()
    return _end_where(lambda owner: owner == ours)


def _end_where(judge: Callable[[str], bool]) -> list[int]:
    ended = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        owner = _owner_of(int(entry))
        if owner is not None and judge(owner):
            try:
                os.kill(int(entry), signal.SIGKILL)
            except OSError:
                continue  # gone meanwhile, or another user's
            ended.append(int(entry))
    return ended


def _owner_of(pid: int) -> str | None:
    """The owner tag in a process's environment, or None (no tag, or not ours to read)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            environ = handle.read()
    except OSError:
        return None
    prefix = f"{OWNER_VARIABLE}=".encode()
    for item in environ.split(b"\0"):
        if item.startswith(prefix):
            return item[len(prefix) :].decode("ascii", "replace")
    return None


def _alive(tag: str) -> bool:
    """Whether the failgate process a tag names may still run (same pid, same start time).

    A tag from another PID namespace (a container's failgate, seen from the host)
    names a pid this one cannot look up: never judged dead."""
    namespace, pid, started = [*tag.split(":"), "", ""][:3]
    if namespace != _pid_namespace():
        return True
    return pid.isdigit() and started != "" and _start_time(int(pid)) == started


def _pid_namespace() -> str:
    try:
        return str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        return ""


def _start_time(pid: int) -> str:
    """A process's start time in clock ticks after boot, or "" when it does not exist."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return ""
    return fields[19].decode() if len(fields) > 19 else ""
