"""One persistent `git cat-file --batch`: objects read without a process each.

Started through GitPython on the first question. Its answers are parsed here,
so ids of 40 and 64 hex both work; every failure is a `GitError`.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterable, Iterator
from typing import IO, TYPE_CHECKING, Any

from failgate_hooks.core.errors import GitError

if TYPE_CHECKING:
    import git

_BATCH_BYTES = 4096  # ids written to `cat-file --batch` before reading their answers


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
        return _read_answer(proc.stdout, oid)

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
        size = int(fields[2]) + 1  # the object and its newline, not needed here
        if len(stdout.read(size)) != size:
            raise GitError(f"git cat-file returned a short read for {name!r}")
        return fields[0].decode("ascii")

    def iter_blobs(
        self, oids: Iterable[str], *, missing_ok: bool = False
    ) -> Iterator[tuple[str, bytes]]:
        """Many blobs (full ids, checked by the caller), each given as soon as git answers.

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
                found = _read_answer(stdout, oid)
                answered += 1
                if found is not None and found[0] == "blob":
                    yield oid, found[1]
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


def _read_answer(stdout: IO[bytes], oid: str) -> tuple[str, bytes] | None:
    """Read `cat-file --batch`'s answer for `oid`, asked already."""
    try:
        header = stdout.readline()
    except OSError as exc:
        raise GitError(f"git cat-file stopped answering: {exc}") from None
    if not header:
        raise GitError("git cat-file stopped answering (no header)")
    fields = header.rstrip(b"\n").split(b" ")
    if len(fields) == 2 and fields[1] in (b"missing", b"ambiguous"):
        return None
    if len(fields) != 3:
        raise GitError(f"git cat-file gave an unexpected header: {header[:80]!r}")
    _, kind, size_text = fields
    size = int(size_text)
    data = stdout.read(size + 1)  # the object, and the newline after every object
    if len(data) != size + 1:
        raise GitError(f"git cat-file returned a short read for {oid}")
    return kind.decode("ascii"), data[:size]


def _feed(stdin: IO[bytes], request: bytes) -> None:
    """Write `request` to `cat-file`; a git that stopped is reported by the reader."""
    with contextlib.suppress(OSError, ValueError):
        stdin.write(request)
        stdin.flush()
