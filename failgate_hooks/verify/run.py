"""Running a verifier on exactly commit C (DESIGN §6).

A clean checkout of C's tree, the pinned verifier files laid over it from the
revision the event was read from, an allow-listed environment, a process group
killed whole on timeout, a bounded read of its output, and two local facts
consulted before anything runs: whether this machine trusts the verifier, and
whether the same verifier already passed on the same content.

Git is reached only through `GitRepo`; tree objects are parsed here, so the
content key costs one object read per level of the ledger's path.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import selectors
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

from failgate_hooks.cachefile import sources_digest, write_whole
from failgate_hooks.core import wildmatch
from failgate_hooks.core.errors import FailgateError, UsageError
from failgate_hooks.core.events import Verification, Workdir, is_safe_relative_path
from failgate_hooks.core.gates import VerifierOutcome, VerifierResult
from failgate_hooks.git.repo import GitRepo, TreeEntry
from failgate_hooks.verify.trust import PassCache, TrustStore, fingerprint, pass_key

CONTENT_KEY_VERSION = "ck1"
INPUT_KEY_VERSION = "ik1"
DEFAULT_TIMEOUT_S = 300
NO_VERDICT_EXIT = 125  # as `git bisect run`'s "skip": the verifier could not judge

UNTRUSTED_DETAIL = "verifier not trusted on this machine: review it with `failgate trust`"
NO_VERDICT_DETAIL = "the verifier could not judge: its set-up failed"

OUTPUT_TAIL_LINES = 20
OUTPUT_TAIL_CHARS = 4096
# After SIGTERM, how long the group gets to exit before SIGKILL. Short, because a
# killed orphan stays a member (a zombie) until PID 1 reaps it, and some never hurry.
KILL_GRACE_S = 1.0
# After the verifier exits, how long a grandchild holding its pipe may keep us reading.
DRAIN_S = 0.5
# How often the exit is checked while a grandchild keeps the pipe open and silent.
_POLL_S = 0.05

_TREE = b"40000"
_SYMLINK = b"120000"
_GITLINK = b"160000"

_ALLOWED_ENV = ("PATH", "HOME", "LANG", "TMPDIR", "TERM")

# read-tree runs the user's post-index-change hook, even on a temporary index.
_NO_HOOKS = ("-c", f"core.hooksPath={os.devnull}")

Progress = Callable[[str], None]


# --------------------------------------------------------------------------- tree objects


def _raw(entry: TreeEntry) -> tuple[bytes, bytes, bytes]:
    """An entry as git stores it (mode without padding, name bytes, raw id): what is hashed."""
    return (
        entry.mode.lstrip("0").encode("ascii"),
        entry.path.encode("utf-8", "surrogateescape"),
        bytes.fromhex(entry.oid),
    )


_Triple = tuple[bytes, bytes, bytes]  # mode, name, tagged id


def _serialise(entries: Sequence[_Triple]) -> bytes:
    """Entries as `<mode> <name>\\0<tag><id>`: the tag tells a git id from one of our digests."""
    return b"".join(mode + b" " + name + b"\0" + ident for mode, name, ident in entries)


def _entries_without(repo: GitRepo, tree: str, parts: Sequence[str]) -> list[_Triple]:
    """`tree`'s entries with the path `parts` removed, rewriting only the trees along it."""
    out: list[_Triple] = []
    for entry in repo.tree_entries(tree):
        mode, name, raw_id = _raw(entry)
        if entry.path != parts[0]:
            out.append((mode, name, b"g" + raw_id))
            continue
        if len(parts) == 1:
            continue  # the ledger itself: whatever it holds, it is not content
        if mode != _TREE:
            out.append((mode, name, b"g" + raw_id))
            continue
        inner = _entries_without(repo, entry.oid, parts[1:])
        # A folder left empty is as if absent: git stores no empty trees, so the
        # commit that adds the first ledger event must keep the key of the one before.
        if inner:
            digest = hashlib.sha256(_serialise(inner)).digest()
            out.append((mode, name, b"k" + digest))
    return out


def _ledger_parts(ledger_dir: str) -> list[str]:
    path = ledger_dir.strip("/")
    if not is_safe_relative_path(path):
        raise UsageError(
            f"ledger folder {ledger_dir!r} is not a relative path inside the repository"
        )
    return path.split("/")


def content_key(repo: GitRepo, commit: str, ledger_dir: str) -> str:
    """C's content without the ledger folder: equal for commits that differ only in ledger files."""
    parts = _ledger_parts(ledger_dir)
    entries = _entries_without(repo, repo.commit_tree(commit), parts)
    payload = CONTENT_KEY_VERSION.encode() + b"\0" + _serialise(entries)
    return f"{CONTENT_KEY_VERSION}:{hashlib.sha256(payload).hexdigest()}"


def input_key(repo: GitRepo, commit: str, patterns: Sequence[str]) -> str:
    """The sorted (path, mode, blob) of C's files that match any `inputs` glob, hashed.

    Every file a glob matches lies in the folder its literal prefix names, so the
    key is a function of those folders' tree ids: it is kept by them (InputKeys),
    and a folder not seen before is listed alone, never the commit's whole tree
    (50,000 files in a monorepo, for each of its gates)."""
    folders = sorted({wildmatch.literal_prefix(p).rpartition("/")[0] for p in patterns})
    if not patterns or "" in folders:
        return _input_key(repo.sorted_files(commit)[0], patterns)  # the root: keyed by nothing
    where = []
    for folder in folders:
        entry = repo.tree_entry(commit, folder)
        where.append([folder, None if entry is None else [entry.mode, entry.oid]])
    memo = json.dumps(
        [INPUT_KEY_VERSION, _matching_rules(), sorted(set(patterns)), where], separators=(",", ":")
    )
    keys = InputKeys.of(repo)
    found = keys.get(memo)
    if found is None:
        entries = {e.path: e for folder in folders for e in repo.ls_folder(commit, folder)}
        found = _input_key(sorted(entries.values(), key=lambda e: e.path), patterns)
        keys.put(memo, found)
    return found


@functools.cache
def _matching_rules() -> str:
    """A hash of the glob matcher's source: a key kept under other rules is never used."""
    return sources_digest(wildmatch.__file__)


def _input_key(entries: Sequence[TreeEntry], patterns: Sequence[str]) -> str:
    """The key of the entries (sorted by path) that match any of `patterns`."""
    paths = [e.path for e in entries]
    matched = [
        [entries[i].path, entries[i].mode, entries[i].oid]
        for i in wildmatch.matching(patterns, paths)
    ]
    # The mode is kept too: a file turned into a symlink to the same text is not the same input.
    payload = json.dumps([INPUT_KEY_VERSION, matched], separators=(",", ":")).encode("utf-8")
    return f"{INPUT_KEY_VERSION}:{hashlib.sha256(payload).hexdigest()}"


class InputKeys:
    """Input keys by the tree ids of their folders, in `<git-common-dir>/failgate/inputs.json`.

    A tree id names its files forever, so a key never goes stale. The file is
    data another process can write: a value that is not an input key is a miss,
    and an unreadable or unwritable file is no cache. At most KEEP keys are kept."""

    KEEP = 4096
    _open: ClassVar[dict[str, InputKeys]] = {}  # one per file in a process

    def __init__(self, path: str | None) -> None:
        self.path = path
        self._keys: dict[str, str] | None = None

    @classmethod
    def of(cls, repo: GitRepo) -> InputKeys:
        try:
            folder: str | None = os.path.join(repo.common_dir, "failgate")
        except FailgateError:
            folder = None
        path = None if folder is None else os.path.join(folder, "inputs.json")
        if str(path) not in cls._open:
            cls._open[str(path)] = cls(path)
        return cls._open[str(path)]

    def _load(self) -> dict[str, str]:
        if self._keys is None:
            self._keys = {}
            if self.path is None:
                return self._keys
            try:
                with open(self.path, "rb") as handle:
                    data = json.loads(handle.read())
            except (OSError, ValueError, RecursionError):
                data = None
            ours = type(data) is list and len(data) == 2 and data[0] == INPUT_KEY_VERSION
            if ours and type(data[1]) is dict:
                prefix = f"{INPUT_KEY_VERSION}:"
                self._keys = {
                    k: v
                    for k, v in data[1].items()
                    if type(v) is str and v.startswith(prefix) and len(v) == len(prefix) + 64
                }
        return self._keys

    def get(self, memo: str) -> str | None:
        return self._load().get(memo)

    def put(self, memo: str, key: str) -> None:
        keys = self._load()
        keys[memo] = key
        while len(keys) > self.KEEP:
            del keys[next(iter(keys))]  # the oldest first
        if self.path is None:
            return
        body = json.dumps([INPUT_KEY_VERSION, keys], separators=(",", ":")).encode("utf-8")
        write_whole(self.path, body)  # unwritable: the key is worked out again next time


# --------------------------------------------------------------------------- pinned files


class PinError(Exception):
    """A pinned verifier file cannot be taken from its revision; the verifier does not run."""


@dataclass(frozen=True)
class Pin:
    """One pinned verifier file as its revision holds it."""

    path: str
    mode: str
    oid: str

    @property
    def executable(self) -> bool:
        return self.mode == "100755"


def _short(rev: str) -> str:
    return rev[:12]


def _lookup(repo: GitRepo, rev: str, path: str) -> TreeEntry | str:
    """The entry at `path` in `rev`'s tree, or why there is no file there.

    Walks the path one tree at a time instead of asking `ls-tree`, whose path
    argument is a pathspec: `checks/*.py` would match other files."""
    where = f"pinned verifier file {path}"
    tree = repo.commit_tree(rev)
    parts = path.split("/")
    for depth, part in enumerate(parts):
        entry = next((e for e in repo.tree_entries(tree) if e.path == part), None)
        so_far = "/".join(parts[: depth + 1])
        last = depth == len(parts) - 1
        if entry is None:
            return f"{where} is missing at {_short(rev)}"
        mode = _raw(entry)[0]
        if mode == _SYMLINK:
            what = "is a symlink" if last else f"lies under {so_far}, a symlink"
            return f"{where} {what} at {_short(rev)}; symlinks are never followed"
        if last:
            if mode == _TREE:
                return f"{where} is a folder at {_short(rev)}, not a file"
            if mode == _GITLINK:
                return f"{where} is a submodule at {_short(rev)}, not a file"
            return entry
        if mode != _TREE:
            return f"{where} is missing at {_short(rev)} ({so_far} is not a folder)"
        tree = entry.oid
    raise AssertionError("unreachable: a path has at least one part")


def resolve_pins(repo: GitRepo, rev: str, files: Sequence[str]) -> list[Pin]:
    """Each pinned path's regular-file entry at `rev`; PinError naming the path and why not."""
    pins = []
    for path in files:
        if not is_safe_relative_path(path):
            raise PinError(f"pinned verifier file {path!r} is not a safe relative path")
        found = _lookup(repo, rev, path)
        if isinstance(found, str):
            raise PinError(found)
        pins.append(
            Pin(path=path, mode="100755" if found.mode == "100755" else "100644", oid=found.oid)
        )
    return pins


def write_pins(repo: GitRepo, root: str, pins: Sequence[Pin]) -> None:
    """Write each pinned file over the checkout at `root`: a regular file, never through a link."""
    blobs = repo.read_blobs(pin.oid for pin in pins)
    for pin in pins:
        _write_regular_file(root, pin.path, blobs[pin.oid], pin.executable)


def _write_regular_file(root: str, path: str, data: bytes, executable: bool) -> None:
    parts = path.split("/")
    folder = root
    for part in parts[:-1]:
        folder = os.path.join(folder, part)
        # The checkout is C's, and C may hold a symlink where the pinned revision has
        # a folder: replace it, so nothing is written outside the checkout.
        if os.path.islink(folder) or (os.path.lexists(folder) and not os.path.isdir(folder)):
            os.unlink(folder)
        if not os.path.lexists(folder):
            os.mkdir(folder)
    target = os.path.join(folder, parts[-1])
    _remove_tree(target)  # a symlink is unlinked, never followed
    mode = 0o755 if executable else 0o644
    # O_EXCL fails on anything still there, a symlink included: never write through one.
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(target, flags, mode)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.chmod(target, mode)  # the umask must not take the exec bit away


# --------------------------------------------------------------------------- checkouts


class Checkouts:
    """Clean checkouts of exactly C, each commit's tree read once, all removed on exit.

    Each commit's tree goes once into a temporary index (`read-tree`); every
    verifier then gets its own folder written from that index by
    `checkout-index`. A fresh write from the objects, rather than a copy of a
    pristine folder, means nothing one verifier did (a chmod, a hard link, a
    file swapped for a symlink) can reach the next, and no pristine copy has
    to sit on disk beside the working ones.
    """

    def __init__(self, repo: GitRepo, *, parent_dir: str | None = None) -> None:
        self._repo = repo
        self._parent = parent_dir
        self._base: str | None = None
        self._indexes: dict[str, str] = {}
        self._count = 0

    def __enter__(self) -> Checkouts:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Remove every checkout and index this object made."""
        base, self._base = self._base, None
        self._indexes.clear()
        if base is not None:
            _remove_tree(base)

    @contextlib.contextmanager
    def checkout(self, commit: str) -> Iterator[str]:
        """A new folder holding exactly `commit`'s tree, removed when the block ends."""
        path = self.fresh(commit)
        try:
            yield path
        finally:
            _remove_tree(path)

    def fresh(self, commit: str) -> str:
        """A new folder holding exactly `commit`'s tree, removed by `close`."""
        index = self._index_for(commit)
        self._count += 1
        path = os.path.join(self._base_dir(), f"{_short(commit)}-{self._count}")
        os.mkdir(path)
        with self._repo._git.custom_environment(GIT_INDEX_FILE=index, GIT_LFS_SKIP_SMUDGE="1"):
            # --work-tree, not --prefix: checkout-index refuses a bare repository otherwise.
            # export-ignore does not apply here, and gitlinks stay empty folders.
            self._repo.run(*_NO_HOOKS, f"--work-tree={path}", "checkout-index", "--all", "--force")
        return path

    def _base_dir(self) -> str:
        if self._base is None:
            self._base = tempfile.mkdtemp(prefix="failgate-", dir=self._parent)
        return self._base

    def _index_for(self, commit: str) -> str:
        index = self._indexes.get(commit)
        if index is None:
            index = os.path.join(self._base_dir(), f"index-{len(self._indexes)}")
            # A temporary index leaves the user's own index, and a quarantine, untouched.
            with self._repo._git.custom_environment(GIT_INDEX_FILE=index):
                self._repo.run(*_NO_HOOKS, "read-tree", commit)
            self._indexes[commit] = index
        return index


def _remove_tree(path: str) -> None:
    """Remove a folder even where a verifier made parts of it read-only."""

    def retry(func: Callable[..., object], failed: str, _exc: object) -> None:
        with contextlib.suppress(OSError):
            os.chmod(os.path.dirname(failed), stat.S_IRWXU)
            if os.path.isdir(failed) and not os.path.islink(failed):
                os.chmod(failed, stat.S_IRWXU)
        with contextlib.suppress(FileNotFoundError):
            func(failed)

    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, onerror=retry)
    elif os.path.lexists(path):
        os.unlink(path)  # a file, or a symlink itself (never what it points at)


# --------------------------------------------------------------------------- environment


def _path_without_our_venv(path: str) -> str:
    """PATH minus failgate's own virtualenv, so `python` in a verifier is the project's."""
    if sys.prefix == sys.base_prefix:
        return path
    ours = {
        os.path.normcase(os.path.abspath(folder))
        for folder in (
            os.path.dirname(sys.executable),
            os.path.join(sys.prefix, "bin"),
            os.path.join(sys.prefix, "Scripts"),
        )
    }
    kept = [
        folder
        for folder in path.split(os.pathsep)
        if not folder or os.path.normcase(os.path.abspath(folder)) not in ours
    ]
    return os.pathsep.join(kept)


def verifier_env(
    environ: Mapping[str, str],
    *,
    env_pass: Sequence[str],
    commit: str,
    entity_key: str,
    trigger: str,
    ref: str | None,
    environment: str | None,
) -> tuple[dict[str, str], tuple[str, ...]]:
    """The verifier's whole environment, and the `env_pass` names refused (git's own).

    An allow-list: nothing else reaches the verifier. No `GIT_*` variable ever
    does, even when `env_pass` names one: inside pre-receive they point into a
    quarantine, and in any hook they name the repository rather than the checkout.
    """
    refused = tuple(name for name in env_pass if name.upper().startswith("GIT_"))
    wanted = [*_ALLOWED_ENV, *(n for n in env_pass if n not in refused)]
    env = {name: environ[name] for name in wanted if name in environ}
    env.update({name: value for name, value in environ.items() if name.startswith("LC_")})
    if "PATH" in env:
        env["PATH"] = _path_without_our_venv(env["PATH"])
    env.update(
        FAILGATE_COMMIT=commit,
        FAILGATE_ENTITY_KEY=entity_key,
        FAILGATE_TRIGGER=trigger,
        FAILGATE_REF=ref or "",
        FAILGATE_ENVIRONMENT=environment or "",
    )
    return env, refused


# --------------------------------------------------------------------------- the process


@dataclass(frozen=True)
class CommandRun:
    """What one run of a command gave."""

    exit_code: int | None  # None: it timed out or never started
    duration_s: float
    output_tail: str = ""
    timed_out: bool = False
    start_error: str | None = None


class _Tail:
    """The last few KB of a stream: all a person reads under a gate."""

    def __init__(self, keep: int = 2 * OUTPUT_TAIL_CHARS) -> None:
        self._keep = keep
        self._data = bytearray()

    def add(self, chunk: bytes) -> None:
        self._data += chunk
        if len(self._data) > self._keep:
            del self._data[: len(self._data) - self._keep]

    def text(self) -> str:
        lines = self._data.decode("utf-8", "replace").rstrip("\n").split("\n")
        return "\n".join(lines[-OUTPUT_TAIL_LINES:])[-OUTPUT_TAIL_CHARS:]


def run_command(
    argv: Sequence[str], *, cwd: str, env: Mapping[str, str], timeout_s: float
) -> CommandRun:
    """Run `argv` (no shell, stdin closed) in its own process group, killed whole on timeout."""
    if not argv:
        return CommandRun(None, 0.0, start_error="the command is empty")
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
        )
    except OSError as exc:
        return CommandRun(None, 0.0, start_error=_start_error(argv[0], exc))
    assert proc.stdout is not None
    tail = _Tail()
    try:
        ended = _pump(proc, tail, started + timeout_s)
        # Kill the group in both cases: on timeout, everything it started; on exit,
        # whatever it left behind, which would outlive the checkout it runs in.
        _kill_group(proc, KILL_GRACE_S)
    except BaseException:  # Ctrl-C: its session escapes the terminal's SIGINT, so kill it here
        _kill_group(proc, 0.0)
        raise
    finally:
        proc.stdout.close()
        proc.wait()
    if ended is None:
        return CommandRun(None, float(timeout_s), tail.text(), timed_out=True)
    return CommandRun(proc.returncode, ended - started, tail.text())


def _pump(proc: subprocess.Popen[bytes], tail: _Tail, deadline: float) -> float | None:
    """Read output until the process exits (then briefly more), or the deadline passes.

    Returns when the process exited, or None on timeout. Never blocks on the pipe:
    a grandchild may hold it open long after the verifier itself is gone."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    os.set_blocking(fd, False)
    exited: float | None = None
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        is_open = True
        while True:
            now = time.monotonic()
            if exited is None and proc.poll() is not None:
                exited = now
            if exited is not None:
                if not is_open or now >= exited + DRAIN_S:
                    return exited
                wait = exited + DRAIN_S - now
            elif now >= deadline:
                return None
            else:
                wait = deadline - now
            if not is_open:
                try:
                    proc.wait(timeout=wait)
                except subprocess.TimeoutExpired:
                    return None
                continue
            if selector.select(min(wait, _POLL_S)):
                try:
                    chunk = os.read(fd, 65536)
                except BlockingIOError:
                    continue
                if chunk:
                    tail.add(chunk)
                else:
                    is_open = False
                    selector.unregister(fd)


def _kill_group(proc: subprocess.Popen[bytes], grace_s: float) -> None:
    """SIGTERM the process group, give it `grace_s`, then SIGKILL what is left."""
    group = proc.pid  # start_new_session: the leader's pid names the group
    if grace_s > 0:
        if not _signal_group(group, signal.SIGTERM):
            return
        end = time.monotonic() + grace_s
        while time.monotonic() < end:
            proc.poll()  # reap the leader, or it stays a member of the group
            if not _signal_group(group, 0):
                return
            time.sleep(0.02)
    _signal_group(group, signal.SIGKILL)


def _signal_group(group: int, sig: int) -> bool:
    """Send `sig` to the group; False when no process is left in it."""
    try:
        os.killpg(group, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _start_error(program: str, exc: OSError) -> str:
    reason = exc.strerror or str(exc)
    if isinstance(exc, FileNotFoundError):
        if "/" not in program:
            return f"cannot start {program!r}: not found on the verifier's PATH"
        return f"cannot start {program!r}: {reason} (or its #! interpreter is missing)"
    if isinstance(exc, PermissionError):
        return f"cannot start {program!r}: {reason} (is it executable?)"
    return f"cannot start {program!r}: {reason}"


def _result(command: tuple[str, ...], run: CommandRun, notes: Sequence[str]) -> VerifierResult:
    """The VerifierResult of one run: exit 0 passes, 125 gives no verdict, the rest fail."""
    details = list(notes)
    if run.start_error is not None:
        outcome = VerifierOutcome.CANNOT_START
        details.insert(0, run.start_error)
    elif run.timed_out:
        outcome = VerifierOutcome.TIMEOUT
        details.insert(0, "the whole process group was killed; the gate stays open")
    elif run.exit_code == 0:
        outcome = VerifierOutcome.PASSED
    elif run.exit_code == NO_VERDICT_EXIT:
        outcome = VerifierOutcome.NO_VERDICT
        details.insert(0, NO_VERDICT_DETAIL)
    else:
        outcome = VerifierOutcome.FAILED
        if run.exit_code is not None and run.exit_code < 0:
            details.insert(0, f"killed by {_signal_name(-run.exit_code)}")
    return VerifierResult(
        command=command,
        outcome=outcome,
        exit_code=run.exit_code,
        duration_s=None if run.start_error is not None else run.duration_s,
        output_tail=run.output_tail,
        detail="; ".join(details),
    )


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


# --------------------------------------------------------------------------- the entry points


def _inplace_refusal(repo: GitRepo, commit: str, pins: Sequence[Pin]) -> str | None:
    """Why the user's work tree cannot stand for C, or None when it can (§6)."""
    if repo.working_dir is None:
        return "the repository is bare"
    if repo.try_resolve_commit("HEAD") != commit:
        return f"HEAD is not {_short(commit)}"
    # Every flag is explicit: a user's status.showUntrackedFiles=no or a submodule's
    # ignore setting must not hide what could feed the verifier.
    status = repo.run(
        "--no-optional-locks",
        "status",
        "--porcelain",
        "--ignored",
        "--untracked-files=normal",
        "--ignore-submodules=none",
    )
    if status.strip():
        return "the work tree has changes, untracked or ignored files"
    for pin in pins:
        found = _lookup(repo, commit, pin.path)
        # Writing a pinned file into the user's own tree is never an option.
        if isinstance(found, str) or found.oid != pin.oid or found.mode != pin.mode:
            return f"pinned file {pin.path} differs from {_short(commit)}'s"
    return None


def run_gate_verifier(
    repo: GitRepo,
    *,
    entity_key: str,
    verification: Verification,
    commit: str,
    pinned_from: str | None,
    ledger_dir: str,
    trigger: str,
    ref: str | None,
    environment: str | None,
    checkouts: Checkouts,
    trust: TrustStore | None = None,
    trust_ledger: bool = False,
    cache: PassCache | None = None,
    default_timeout_s: float = DEFAULT_TIMEOUT_S,
    no_cache: bool = False,
    progress: Progress | None = None,
) -> VerifierResult:
    """Run one gate's verifier on exactly `commit` (§6), or say why it did not run.

    `pinned_from` is the revision the event was read from (None: `commit`).
    `progress` gets one line before the verifier runs; it holds ledger text, so
    the caller sanitises it as any other output. A GitError propagates: git
    could not answer."""
    command = verification.command
    try:
        pins = resolve_pins(repo, pinned_from or commit, verification.files)
    except PinError as exc:
        return VerifierResult(command, VerifierOutcome.CANNOT_START, detail=str(exc))
    pinned = [(pin.path, pin.oid) for pin in pins]

    if not trust_ledger:
        store = trust if trust is not None else TrustStore(repo.common_dir)
        if not store.is_trusted(fingerprint(command, pinned)):
            return VerifierResult(command, VerifierOutcome.UNTRUSTED, detail=UNTRUSTED_DETAIL)

    passes = cache if cache is not None else PassCache(repo.common_dir)
    if verification.inputs:
        content = input_key(repo, commit, verification.inputs)
    else:
        content = content_key(repo, commit, ledger_dir)
    key = pass_key(command, pinned, entity_key, environment, content)
    if not no_cache:
        hit = passes.lookup(key)
        if hit is not None:
            same = (
                "" if hit.commit == commit else f"passed on {_short(hit.commit)}, the same content"
            )
            return VerifierResult(
                command,
                VerifierOutcome.PASSED,
                exit_code=0,
                duration_s=hit.duration_s,
                cached=True,
                detail=same,
            )

    _progress(progress, entity_key, command)  # before the checkout: a big one takes time too
    notes: list[str] = []
    cwd = None
    if verification.workdir is Workdir.INPLACE:
        why_not = _inplace_refusal(repo, commit, pins)
        if why_not is None:
            cwd = repo.working_dir
        else:
            notes.append(f"workdir inplace not used ({why_not}): ran in a clean checkout")
    with contextlib.ExitStack() as stack:
        if cwd is None:
            try:
                cwd = stack.enter_context(checkouts.checkout(commit))
                write_pins(repo, cwd, pins)
            except OSError as exc:  # a full or read-only TMPDIR: the gate stays open, no traceback
                detail = f"cannot prepare a clean checkout of {_short(commit)}: {exc}"
                return VerifierResult(command, VerifierOutcome.CANNOT_START, detail=detail)
        result = _run_verifier(
            verification,
            cwd=cwd,
            commit=commit,
            entity_key=entity_key,
            trigger=trigger,
            ref=ref,
            environment=environment,
            default_timeout_s=default_timeout_s,
            notes=notes,
        )

    if result.outcome is VerifierOutcome.PASSED:
        unstored = passes.record(key, commit=commit, duration_s=result.duration_s)
        if unstored is not None:
            result = replace(result, detail="; ".join(filter(None, [result.detail, unstored])))
    return result


def run_in_worktree(
    repo: GitRepo,
    *,
    entity_key: str,
    verification: Verification,
    trigger: str = "push",
    ref: str | None = None,
    environment: str | None = None,
    default_timeout_s: float = DEFAULT_TIMEOUT_S,
    progress: Progress | None = None,
) -> VerifierResult:
    """`failgate try`: the verifier on the work tree as it is; never cached, never a clearance."""
    root = repo.working_dir
    if root is None:
        raise UsageError("`failgate try` needs a work tree: this repository is bare")
    _progress(progress, entity_key, verification.command)
    return _run_verifier(
        verification,
        cwd=root,
        commit=repo.try_resolve_commit("HEAD") or "",
        entity_key=entity_key,
        trigger=trigger,
        ref=ref,
        environment=environment,
        default_timeout_s=default_timeout_s,
        notes=["ran on the work tree as it is: this never clears a gate"],
    )


def _run_verifier(
    verification: Verification,
    *,
    cwd: str,
    commit: str,
    entity_key: str,
    trigger: str,
    ref: str | None,
    environment: str | None,
    default_timeout_s: float,
    notes: Sequence[str],
) -> VerifierResult:
    """Run the verifier in `cwd` with its allow-listed environment and timeout."""
    env, refused = verifier_env(
        os.environ,
        env_pass=verification.env_pass,
        commit=commit,
        entity_key=entity_key,
        trigger=trigger,
        ref=ref,
        environment=environment,
    )
    if refused:
        notes = [*notes, f"env_pass {', '.join(refused)} not passed: git's own variables never are"]
    timeout_s = verification.timeout_s or default_timeout_s
    run = run_command(verification.command, cwd=cwd, env=env, timeout_s=timeout_s)
    return _result(verification.command, run, notes)


def _progress(progress: Progress | None, entity_key: str, command: Sequence[str]) -> None:
    if progress is not None:
        progress(f"failgate: running verifier for {entity_key} ({shlex.join(command)})…")
