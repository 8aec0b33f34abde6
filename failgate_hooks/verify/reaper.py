"""The subreaper shim: start one verifier, wait for it, then end everything it started.

    python -I -S reaper.py PARENT_PID STATUS_FD GRACE_S -- ARGV...

A separate process between failgate and the verifier, never failgate itself. A
subreaper inherits every orphan below it, `setsid()` ones included, and must
`waitpid(-1)` to reap them; in failgate's own process that call would take the
exit status meant for `Popen.wait()`, and a verifier that exited 3 would read as 0.

It exits with the verifier's code (or dies by the verifier's signal) once no
descendant is left. If it cannot start the verifier, it writes the step and
the errno to STATUS_FD ("exec 2") and exits 127. On SIGTERM, SIGHUP or SIGINT,
and when failgate dies (the parent-death signal), it ends the verifier and all
below it, then exits.
Standard library only, and nothing from failgate: `-S` leaves site-packages out.
It starts before every verifier, so it imports little (no contextlib, no typing).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
START_FAILED = 127
# How long a descendant stuck in the kernel (state D) may keep the shim waiting after SIGKILL.
GIVE_UP_S = 5.0


def main(args: list[str]) -> int:
    parent, status_fd, grace_s = int(args[0]), int(args[1]), float(args[2])
    argv = args[args.index("--") + 1 :]

    def stop(signum: int, frame: object) -> None:
        # Never returns: an exception here could land in the cleanup below and cut it short.
        end_descendants(grace_s)
        _exit_like(-signum)

    for sig in STOP_SIGNALS:
        signal.signal(sig, stop)
    libc = ctypes.CDLL(None, use_errno=True)
    for option, value in ((PR_SET_CHILD_SUBREAPER, 1), (PR_SET_PDEATHSIG, signal.SIGTERM)):
        if libc.prctl(option, value, 0, 0, 0) != 0:
            return _start_failed(status_fd, "prctl", ctypes.get_errno())
    if os.getppid() != parent:  # failgate died before the death signal was armed
        return START_FAILED
    os.set_inheritable(status_fd, False)
    try:
        verifier = os.posix_spawnp(
            argv[0], argv, os.environ, setsigdef=(signal.SIGPIPE, signal.SIGXFSZ)
        )
    except OSError as exc:
        return _start_failed(status_fd, "exec", exc.errno or 0)
    _, status = os.waitpid(verifier, 0)
    end_descendants(grace_s)
    return os.waitstatus_to_exitcode(status)


def _start_failed(status_fd: int, step: str, errno: int) -> int:
    os.write(status_fd, f"{step} {errno}\n".encode())
    return START_FAILED


def end_descendants(grace_s: float) -> None:
    """SIGTERM every descendant, SIGKILL what is left after `grace_s`, and reap them all."""
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    asked: set[int] = set()  # SIGTERM once each, the ones forked meanwhile too
    deadline = time.monotonic() + grace_s
    while True:
        fresh = [pid for pid in descendants(os.getpid()) if pid not in asked]
        _signal_all(fresh, signal.SIGTERM)
        asked.update(fresh)
        if not _children_left() or time.monotonic() >= deadline:
            break
        time.sleep(0.02)
    deadline = time.monotonic() + GIVE_UP_S
    while _children_left() and time.monotonic() < deadline:
        _signal_all(descendants(os.getpid()), signal.SIGKILL)
        time.sleep(0.01)


def descendants(root: int) -> list[int]:
    """Every live process below `root`, from the parent ids in /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        children.setdefault(int(fields[1]), []).append(int(entry))
    found: list[int] = []
    queue = [root]
    while queue:
        below = children.get(queue.pop(), [])
        found += below
        queue += below
    return found


def _signal_all(pids: list[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except OSError:
            continue  # gone meanwhile


def _children_left() -> bool:
    """Reap every child that has exited; whether any child is still running."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        if pid == 0:
            return True


def _exit_like(code: int) -> None:
    """Exit with the verifier's code; when a signal killed it, die by that signal too."""
    if code >= 0:
        os._exit(code)
    sig = -code
    try:
        signal.signal(sig, signal.SIG_DFL)  # raises for SIGKILL, whose default it always is
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # the verifier dumped, not the shim
    except (OSError, ValueError):
        pass
    os.kill(os.getpid(), sig)
    os._exit(128 + sig)  # a signal that does not kill (SIGCHLD, SIGWINCH…) ends here


if __name__ == "__main__":
    _exit_like(main(sys.argv[1:]))
