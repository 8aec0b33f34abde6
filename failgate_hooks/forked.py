"""Work on the other core: a forked child computes, the parent takes its result.

The first run after a clone parses and resolves every event once; split between
two processes it takes about half as long. A forked child has the parent's
modules and data already, so it starts in a millisecond, where a new interpreter
would spend a hundred importing failgate. The child can only save time, never
change an answer: where fork is not safe (not Linux, another thread running) or
the child fails in any way, `result()` is None and the caller does the work
itself, as it would have without a child.

A child can also stream: each item its work yields reaches the parent as soon as
it is made (`arrived`, `rest`), so neither waits for the other to pickle or
unpickle everything at the end. Items are framed (length, then pickle): a child
that fails midway has still given every item it finished.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import signal
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

_LENGTH = 8  # bytes of a frame's length
_PIPE_BYTES = 1 << 20  # a streaming child seldom waits for its parent to read

# One byte shared with every child forked after import: 1 while this process's work
# has both cores (a first index, built by the process and a child). Work that can
# wait (`check`'s look at the work tree) holds back meanwhile and then runs at full
# speed: a lowered priority, the other way to yield, cannot be raised again, and on
# a machine busy with other work it starved the look for seconds.
_BOTH_CORES = mmap.mmap(-1, 1)
_PAUSE_S = 0.001


@contextlib.contextmanager
def both_cores() -> Iterator[None]:
    """Mark a piece of this process's work that keeps both cores busy."""
    _BOTH_CORES[0] = 1
    try:
        yield
    finally:
        _BOTH_CORES[0] = 0


def wait_for_a_core() -> None:
    """Wait while the process that forked this one has both cores busy (a parent killed
    midway never clears the byte: a child whose parent is gone waits no longer)."""
    while _BOTH_CORES[0] and os.getppid() == _forked_by:
        time.sleep(_PAUSE_S)


_forked_by = 0  # in a child: the pid of the process that forked it


class Child:
    """`work()` run in a forked child, for `with`: leaving the block ends the child.

    With `stream`, `work()` returns an iterable whose items are sent one by one:
    take them with `arrived()` (never waits) and `rest()`. Else its one result is
    taken with `result()`."""

    def __init__(self, work: Callable[[], Any], *, stream: bool = False) -> None:
        self._pid = 0
        self._pipe = -1
        self._buffer = bytearray()
        self._garbled = False  # a frame that would not unpickle: nothing after it is taken
        if sys.platform != "linux":
            return  # macOS and others: fork without exec is not safe with their libraries
        import threading

        if threading.active_count() != 1:
            return  # a lock another thread holds would stay held in the child forever
        read_end, write_end = os.pipe()
        parent = os.getpid()
        if stream:
            import fcntl

            with contextlib.suppress(OSError):  # a larger pipe, where the system allows it
                fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
        try:
            pid = os.fork()
        except OSError:
            os.close(read_end)
            os.close(write_end)
            return
        if pid == 0:
            os.close(read_end)
            _run_child(work, write_end, stream, parent)  # never returns
        os.close(write_end)
        with contextlib.suppress(OSError):
            os.setpgid(pid, pid)  # as the child does: the group exists whichever runs first
        if stream:
            os.set_blocking(read_end, False)  # arrived() takes what is there, never waits
        self._pid, self._pipe = pid, read_end

    @property
    def started(self) -> bool:
        """Whether a child runs the work (else `result()` is None)."""
        return bool(self._pid)

    def result(self) -> Any | None:
        """What `work()` returned in the child, or None when there is no such result."""
        if not self._pid:
            return None
        items, ok = self._end()
        return items[0] if ok and len(items) == 1 else None

    def arrived(self) -> list[Any]:
        """The items a streaming child has sent since last asked, without waiting."""
        if not self._pid:
            return []
        while True:
            try:
                chunk = os.read(self._pipe, _PIPE_BYTES)
            except BlockingIOError:
                break  # nothing more yet
            except OSError:
                break  # rest() says what became of the child
            if not chunk:
                break
            self._buffer += chunk
        return self._frames()

    def rest(self) -> list[Any]:
        """Every item a streaming child sent that `arrived()` has not given, once it has
        ended; a child that failed midway gives what it finished."""
        if not self._pid:
            return []
        os.set_blocking(self._pipe, True)
        items, _ = self._end()
        return items

    def _end(self) -> tuple[list[Any], bool]:
        """Read to the end, reap the child: its unread items, and whether it exited 0."""
        with open(self._pipe, "rb") as pipe:
            self._pipe = -1
            self._buffer += pipe.read()
        try:
            _, status = os.waitpid(self._pid, 0)
        except ChildProcessError:  # reaped already by someone's os.wait()
            status = 0  # the frames themselves say whether each came whole
        self._pid = 0
        return self._frames(), status == 0

    def _frames(self) -> list[Any]:
        """The whole frames in the buffer, unpickled; a torn or bad frame ends the stream."""
        import pickle

        items: list[Any] = []
        if self._garbled:
            self._buffer.clear()
            return items
        data, at = self._buffer, 0
        while len(data) - at >= _LENGTH:
            size = int.from_bytes(data[at : at + _LENGTH], "big")
            end = at + _LENGTH + size
            if len(data) < end:
                break  # the rest of this frame is still on its way
            try:
                items.append(pickle.loads(memoryview(data)[at + _LENGTH : end]))
            except Exception:  # a child that wrote garbage: take nothing more from it
                self._garbled = True
                data.clear()
                return items
            at = end
        del data[:at]
        return items

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


def _run_child(work: Callable[[], Any], out: int, stream: bool, parent: int) -> None:
    """The child's whole life: work, write each pickled result, exit without cleanup.

    `os._exit` runs no finalizers: the parent's open handles (its cat-file's
    among them) are the parent's to close. Nothing the child says reaches the
    terminal, and it holds none of the parent's output: a child that outlives its
    parent must not keep a pipe reading failgate's output open. A failed child is
    redone by the parent, which reports what fails."""
    global _forked_by
    _forked_by = parent
    code = 1
    try:
        os.setpgid(0, 0)  # a group of its own, which the parent can stop whole
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        import pickle

        with open(out, "wb") as pipe:
            made: Iterable[Any] = work() if stream else [work()]
            for item in made:
                data = pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL)
                pipe.write(len(data).to_bytes(_LENGTH, "big"))
                pipe.write(data)
                pipe.flush()  # the parent may take it now
        code = 0
    finally:
        os._exit(code)
