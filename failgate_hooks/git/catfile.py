"""One persistent `git cat-file --batch`: objects read without a process each.

Started through GitPython on the first question. Its answers are parsed here,
so ids of 40 and 64 hex both work; every failure is a `GitError`.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterable, Iterator
from typing import IO, TYPE_CHECKING, Any, NamedTuple

from failgate_hooks.core.errors import GitError

if TYPE_CHECKING:
    import git

_BATCH_BYTES = 4096  # ids written to `cat-file --batch` before reading their answers
_SKIP_CHUNK = 1 << 16  # an object too large to keep is read past in pieces of this size


class Answer(NamedTuple):
    """One object as `cat-file --batch` gave it: `data` is None when `size` was over the
    bound asked for, and its bytes were read past, never kept."""

    kind: str
    size: int
    data: bytes | None


class BoundedBlob(NamedTuple):
    """A blob read under a bound: `data` is None when it is larger than that."""

    oid: str
    size: int
    data: bytes | None


class CatFile:
    """A repository's `cat-file --batch`, started lazily and restarted after a broken exchange."""

    def __init__(self, git_command: git.Git) -> None:
        self._git = git_command
        # GitPython's handle itself is kept: dropping it kills the process.
        self._handle: Any = None

    def _process(self) -> Any:
        if self._handle is None:
            import git

            try:
                self._handle = self._git.execute(
                    ["git", "cat-file", "--batch"],
                    as_process=True,
                    istream=subprocess.PIPE,
                )
            except git.GitCommandNotFound:
                raise GitError("git is not installed or not on PATH") from None
        return self._handle.proc

    def read(self, oid: str) -> tuple[str, bytes] | None:
        """(type, content) of an object, or None when it is missing."""
        proc = self._process()
        stdin: IO[bytes] = proc.stdin
        try:
            stdin.write(oid.encode("ascii") + b"\n")
            stdin.flush()
        except (OSError, UnicodeEncodeError) as exc:
            raise GitError(f"git cat-file stopped answering: {exc}") from None
        found = _read_answer(proc.stdout, oid)
        if found is None:
            return None
        assert found.data is not None  # no bound: every object is kept
        return found.kind, found.data

    def resolve(self, name: str) -> str | None:
        """The id `cat-file --batch` gives for an object name, or None when it has none."""
        proc = self._process()
        stdin: IO[bytes] = proc.stdin
        stdout: IO[bytes] = proc.stdout
        try:
            stdin.write(name.encode("utf-8", "surrogateescape") + b"\n")
            stdin.flush()
            header = stdout.readline()
        except OSError as exc:
            raise GitError(f"git cat-file stopped answering: {exc}") from None
        fields = header.rstrip(b"\n").split(b" ")
        if len(fields) != 3 or not fields[2].isdigit():
            return None  # "<name> missing" or "<name> ambiguous", whatever the name holds
        # the object and its newline, not needed here: read past, whatever its size
        _skip(stdout, int(fields[2]) + 1, repr(name))
        return fields[0].decode("ascii")

    def iter_blobs(
        self, oids: Iterable[str], *, missing_ok: bool = False
    ) -> Iterator[tuple[str, bytes]]:
        """Many blobs (full ids, checked by the caller), each given as soon as git answers
        (see `iter_bounded_blobs`); with `missing_ok`, a blob git lacks is left out."""
        for oid, _, data in self.iter_bounded_blobs(oids, None, missing_ok=missing_ok):
            assert data is not None  # no bound: every blob is kept
            yield oid, data

    def iter_bounded_blobs(
        self, oids: Iterable[str], max_bytes: int | None, *, missing_ok: bool = False
    ) -> Iterator[BoundedBlob]:
        """Many blobs (full ids, checked by the caller), each given as soon as git answers;
        one of more than `max_bytes` comes with its size and no data, its bytes never
        held in memory (git says the size before the content).

        Every id is asked at once: a few fit in the pipe, more are written by a
        thread while this one reads, so git never waits for a round trip and the
        caller's work on one blob overlaps git's on the next ones. (Writing them
        all before reading would deadlock once both pipes are full.) With
        `missing_ok`, a blob git lacks is left out instead of failing. A reader that
        stops early leaves the pipe out of step: the process is then stopped,
        and the next question starts another."""
        wanted = list(dict.fromkeys(oids))
        if not wanted:
            return
        proc = self._process()
        request = "".join(f"{oid}\n" for oid in wanted).encode("ascii")
        writer = None
        if len(request) <= _BATCH_BYTES:
            _feed(proc.stdin, request)
        else:
            import threading

            writer = threading.Thread(target=_feed, args=(proc.stdin, request), daemon=True)
            writer.start()
        answered = 0
        stdout: IO[bytes] = proc.stdout
        try:
            for oid in wanted:
                found = _read_answer(stdout, oid, max_bytes)
                answered += 1
                if found is not None and found.kind == "blob":
                    yield BoundedBlob(oid, found.size, found.data)
                elif not missing_ok:
                    raise GitError(f"blob {oid} is missing from the object database")
        finally:
            if answered < len(wanted):
                self._stop()
            if writer is not None:
                writer.join()

    def _stop(self) -> None:
        """Kill the process (its pipe is out of step); the next question starts another."""
        if self._handle is not None:
            proc = self._handle.proc
            self._handle = None
            proc.kill()
            proc.wait()

    def close(self) -> None:
        """Let the process end (its input closed), if one was started."""
        if self._handle is not None:
            proc = self._handle.proc
            self._handle = None
            try:
                proc.stdin.close()
                proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):  # pragma: no cover
                proc.kill()


def _read_answer(stdout: IO[bytes], oid: str, max_bytes: int | None = None) -> Answer | None:
    """Read `cat-file --batch`'s answer for `oid`, asked already; the content of an
    object over `max_bytes` is read past in pieces, never held."""
    try:
        header = stdout.readline()
    except OSError as exc:
        raise GitError(f"git cat-file stopped answering: {exc}") from None
    if not header:
        raise GitError("git cat-file stopped answering (no header)")
    fields = header.rstrip(b"\n").split(b" ")
    if len(fields) == 2 and fields[1] in (b"missing", b"ambiguous"):
        return None
    if len(fields) != 3 or not fields[2].isdigit():
        raise GitError(f"git cat-file gave an unexpected header: {header[:80]!r}")
    kind, size = fields[1].decode("ascii", "replace"), int(fields[2])
    if max_bytes is not None and size > max_bytes:
        _skip(stdout, size + 1, oid)
        return Answer(kind, size, None)
    data = stdout.read(size + 1)  # the object, and the newline after every object
    if len(data) != size + 1:
        raise GitError(f"git cat-file returned a short read for {oid}")
    return Answer(kind, size, data[:size])


def _skip(stdout: IO[bytes], count: int, what: str) -> None:
    """Read `count` bytes of `cat-file`'s answer and keep none of them."""
    while count > 0:
        try:
            piece = stdout.read(min(count, _SKIP_CHUNK))
        except OSError as exc:
            raise GitError(f"git cat-file stopped answering: {exc}") from None
        if not piece:
            raise GitError(f"git cat-file returned a short read for {what}")
        count -= len(piece)


def _feed(stdin: IO[bytes], request: bytes) -> None:
    """Write `request` to `cat-file`; a git that stopped is reported by the reader."""
    with contextlib.suppress(OSError, ValueError):
        stdin.write(request)
        stdin.flush()
