"""Work on the other core: a forked child computes, the parent takes its result.

The first run after a clone parses and resolves every event once; split between
two processes it takes about half as long. A forked child has the parent's
modules and data already, so it starts in a millisecond, where a new interpreter
would spend a hundred importing failgate. The child can only save time, never
change an answer: where fork is not safe (not Linux, another thread running) or
the child fails in any way, `result()` is None and the caller does the work
itself, as it would have without a child.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable
from typing import Any


class Child:
    """`work()` run in a forked child, for `with`: leaving the block ends the child."""

    def __init__(self, work: Callable[[], Any]) -> None:
        self._pid = 0
        self._pipe = -1
        if sys.platform != "linux":
            return  # macOS and others: fork without exec is not safe with their libraries
        import threading

        if threading.active_count() != 1:
            return  # a lock another thread holds would stay held in the child forever
        read_end, write_end = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(read_end)
            os.close(write_end)
            return
        if pid == 0:
            os.close(read_end)
            _run_child(work, write_end)  # never returns
        os.close(write_end)
        with contextlib.suppress(OSError):
            os.setpgid(pid, pid)  # as the child does: the group exists whichever runs first
        self._pid, self._pipe = pid, read_end

    @property
    def started(self) -> bool:
        """Whether a child runs the work (else `result()` is None)."""
        return bool(self._pid)

    def result(self) -> Any | None:
        """What `work()` returned in the child, or None when there is no such result."""
        if not self._pid:
            return None
        import pickle

        with open(self._pipe, "rb") as pipe:
            self._pipe = -1
            data = pipe.read()
        try:
            _, status = os.waitpid(self._pid, 0)
        except ChildProcessError:  # reaped already by someone's os.wait()
            status = 0  # the pickle itself says whether the result came whole
        self._pid = 0
        if status != 0:
            return None
        try:
            return pickle.loads(data)
        except Exception:  # a child that died mid-write: the caller does the work
            return None

    def __enter__(self) -> Child:
        return self

    def __exit__(self, *exc: object) -> None:
        """The result not taken (the parent failed first): stop the child, and the
        processes it started (its group), and reap it."""
        if self._pipe != -1:
            os.close(self._pipe)
            self._pipe = -1
        if self._pid:
            try:
                os.killpg(self._pid, signal.SIGKILL)
            except OSError:
                with contextlib.suppress(OSError):
                    os.kill(self._pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.waitpid(self._pid, 0)
            self._pid = 0


def _run_child(work: Callable[[], Any], out: int) -> None:
    """The child's whole life: work, write the pickled result, exit without cleanup.

    `os._exit` runs no finalizers: the parent's open handles (its cat-file's
    among them) are the parent's to close. Nothing the child says reaches the
    terminal, and it holds none of the parent's output: a child that outlives its
    parent must not keep a pipe reading failgate's output open. A failed child is
    redone by the parent, which reports what fails."""
    code = 1
    try:
        os.setpgid(0, 0)  # a group of its own, which the parent can stop whole
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        import pickle

        data = pickle.dumps(work(), protocol=pickle.HIGHEST_PROTOCOL)
        with open(out, "wb") as pipe:
            pipe.write(data)
        code = 0
    finally:
        os._exit(code)
