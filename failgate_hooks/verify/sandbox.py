"""The optional bubblewrap sandbox a verifier runs in (`sandbox = "bwrap"`, `--sandbox`).

Inside it the checkout is the one writable folder of the filesystem and the
rest is read-only; the home folder, every work tree of the repository, the
repository and every other checkout are hidden behind empty folders; /tmp,
/var/tmp, /run and failgate's own TMPDIR are private and empty (no other run's
files, no daemon's socket); Python's bytecode cache (PYCACHE_PREFIX) is an empty
read-only folder and no Python in it writes bytecode, so every run compiles each
module from its source, the cost of no process planting a `.pyc` that a later one
loads; the pinned files, the folders pinned whole and each pinned Python file's
folder are read-only in the writable checkout (`read_only`); there is no
network unless `sandbox_network = true`; and it has a PID namespace, so every
process the verifier started ends with it, or with failgate; and a syscall
filter (seccomp.py) refuses every call that reaches into another process, and
its /proc is read-only, so no process in it can write another's memory and make
its exit status say what it did not.

Hiding the home folder would hide a virtualenv that lives there, and the
Python it was made from (pyenv, uv): their folders are bound back, read-only.
They are read from the files, never asked of the interpreter: a pushed commit
chooses the interpreter (its `#!` line can name a file it wrote into a work
tree or a pool slot), and what an interpreter says it cannot be let to decide.
The checkout is bound after them, at its own path, so nothing hidden before covers
it; then the paths of it kept read-only, over it.
"""

from __future__ import annotations

import contextlib
import functools
import glob
import os
import pwd
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from typing import NamedTuple

from failgate_hooks.verify.programs import (
    PYTHON_NAME,
    find_program,
    program_and_interpreter,
    pyvenv_settings,
)
from failgate_hooks.verify.seccomp import UnknownArchitecture, syscall_filter

INSTALL_HINT = "install bubblewrap (Debian, Ubuntu: apt-get install bubblewrap)"
USERNS_HINT = (
    "where it is the user namespaces bwrap needs that are forbidden (Ubuntu 24.04), allow "
    "them first: `sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`"
)
# Private and empty inside: other runs' files, sockets (a daemon's, an ssh agent's) stay out.
PRIVATE_FOLDERS = ("/tmp", "/var/tmp", "/run")
# Inside the private /tmp: no compiled file of the checkout (an unchecked-hash
# `__pycache__/x.*.pyc`, one an earlier run left) is read in place of its source. Empty and
# read-only: a writable one let the code under test plant an unchecked-hash `.pyc` for a
# pinned module that the verifier imported after it, in place of the module's source.
PYCACHE_PREFIX = "/tmp/failgate-pycache"
_PYCACHE_MOUNT = ("--tmpfs", PYCACHE_PREFIX, "--remount-ro", PYCACHE_PREFIX)
# With the cache read-only, a Python would try each write and fail; none is made.
_NO_BYTECODE_WRITTEN = {"PYTHONPYCACHEPREFIX": PYCACHE_PREFIX, "PYTHONDONTWRITEBYTECODE": "1"}
_PROBE_TIMEOUT_S = 30
_PROBE_ATTEMPTS = 3
_SAID_LIMIT = 200
# Root keeps its capabilities in a sandbox without them dropped: it could remount / writable.
_NO_ROOT = ("--cap-drop", "ALL")
# A fresh /proc leaves the kernel's settings writable to uid 0 without any capability (the
# kernel checks the file's owner): core_pattern or modprobe would run a checkout's file as
# the host's root. Read-only inside, as container runtimes keep them.
_PROC_READ_ONLY = ("/proc/sys", "/proc/sysrq-trigger", "/proc/fs")
# What reports a verifier's exit status (bwrap's pid 1, a verifier judging a child) runs as
# the pushed code's uid. The syscall filter keeps ptrace and process_vm_writev off them; a
# process's /proc/<pid>/mem is the other way in, and no pid is known before bwrap mounts:
# the whole /proc is read-only, so no file in it opens for writing (EROFS). Inside, it stays
# so: the mount is locked, and a fresh proc mount is refused.
_PROC_WRITES_REFUSED = ("--remount-ro", "/proc")
# What bwrap says when the kernel refuses --seccomp's program (a kernel without seccomp
# filtering, or a program it rejects): "Unable to set up system call filtering as requested:
# prctl(PR_SET_SECCOMP) reported EINVAL. (Hint: ...)", or "prctl(PR_SET_SECCOMP): <error>".
_FILTER_NOT_LOADED = re.compile(r"system call filtering|seccomp", re.IGNORECASE)
_ASK_EXECUTABLE = "import sys; print(sys.executable)"
# A user namespace of its own gives the pushed code every capability over what it unshares
# next (mounts, netfilter): the kernel surface most unprivileged escalations start from.
# bwrap 0.8 refuses it; --disable-userns needs --unshare-user, which --unshare-all only tries.
_NO_NESTED_USERNS = ("--unshare-user", "--disable-userns")


class SandboxError(Exception):
    """The verifier cannot run in the sandbox: the message says why and what to do."""


class Launch(NamedTuple):
    """The command line and environment that run a verifier inside the sandbox, and the
    file descriptors it must be given (the syscall filter's, which bwrap reads)."""

    argv: list[str]
    env: dict[str, str]
    pass_fds: tuple[int, ...]


class Sandbox:
    """bubblewrap for a run's verifiers: found and tried once, then one launch per verifier.

    `hidden` names the folders to hide besides the home folder and the other
    checkouts (the repository and its work trees); `asked_by` says where
    the sandbox was asked for, for the message when it cannot be had."""

    def __init__(self, *, network: bool, hidden: Sequence[str], asked_by: str) -> None:
        self.network = network
        self.asked_by = asked_by
        self._hidden = tuple(hidden)
        self._bwrap: str | None = None
        self._problem: str | None = None
        self._filter: bytes | None = None

    @property
    def isolation(self) -> str:
        """What a pass in it is cached under: an unsandboxed pass never stands for one."""
        return "bwrap+network" if self.network else "bwrap"

    @contextlib.contextmanager
    def launch(
        self,
        argv: Sequence[str],
        *,
        cwd: str,
        env: Mapping[str, str],
        read_only: Sequence[str] = (),
    ) -> Iterator[Launch]:
        """How to run `argv` in `cwd` inside the sandbox, good until the block ends;
        the `read_only` paths (relative to `cwd`: what failgate wrote there) stay so.

        Raises OSError as starting the program would (not found, not executable),
        and SandboxError when there is no sandbox to run it in, or the program
        lives where the sandbox hides it."""
        bwrap = self._usable_bwrap()
        checkout = os.path.realpath(cwd)
        program = find_program(argv[0], cwd=checkout, path=env.get("PATH", os.defpath))
        chain = program_and_interpreter(program, cwd=checkout, env=env)
        hidden = self._hidden_folders(checkout, env)
        writable = commit_writable(hidden, env)
        pythons = [path for path in chain if PYTHON_NAME.match(os.path.basename(path))]
        bound = [] if not pythons else python_folders(pythons[0], hidden, writable)
        covered = _outermost(hidden)
        hidden_launcher = not _is_visible(program, covered, [*bound, checkout])
        not_learnt = ""
        if pythons and pythons[0] == program and hidden_launcher:
            # A launcher the sandbox hides (a pyenv shim): run the Python it resolves to.
            launched, not_learnt = self._launched_python(bwrap, program, hidden, env)
            if launched is not None:
                bound = python_folders(launched, hidden, writable)
                chain = [launched]
                argv = [launched, *argv[1:]]
        seen = [*bound, checkout]
        for path in chain:
            if not _is_visible(path, covered, seen):
                raise SandboxError(
                    f"cannot start {argv[0]!r} in the sandbox: {path} is in a folder it hides "
                    "(the home folder, the repository and its work trees, /tmp, TMPDIR)"
                    f"{not_learnt}; install it elsewhere, or in a virtualenv whose Python it "
                    "runs outside the repository's work trees and the temporary folders"
                )
        with self._filter_fd() as filter_fd:
            args = self._read_only(bwrap, filter_fd)
            for folder in covered:
                args += ["--tmpfs", folder]
            if self.network:
                resolver = os.path.realpath("/etc/resolv.conf")  # often a link into /run
                if os.path.exists(resolver) and _under_any(resolver, covered):
                    args += ["--ro-bind", resolver, resolver]
            for folder in bound:
                args += ["--ro-bind", folder, folder]
            args += ["--bind", checkout, checkout]
            for path in read_only_in(checkout, read_only):
                args += ["--ro-bind", path, path]
            # A hidden folder inside the checkout (the .git of a work tree used in place) stays
            # hidden: the trust store and the pass cache are in it.
            for folder in hidden:
                if folder != checkout and _under_any(folder, [checkout]):
                    args += ["--tmpfs", folder]
            args += [*_PYCACHE_MOUNT, "--chdir", checkout, "--", *argv]
            sandboxed_env = {**env, "TMPDIR": "/tmp", **_NO_BYTECODE_WRITTEN}
            yield Launch(args, sandboxed_env, (filter_fd,))

    def _read_only(self, bwrap: str, filter_fd: int) -> list[str]:
        """bwrap in its namespaces, over a read-only root with its own /dev and /proc, and
        the syscall filter that `filter_fd` holds on what it runs."""
        # --new-session: a verifier cannot push keystrokes into failgate's terminal (TIOCSTI).
        network = ["--share-net"] if self.network else []
        namespaces = ["--unshare-all", *network, *nested_userns_refused(bwrap)]
        namespaces += ["--die-with-parent", "--new-session", *_NO_ROOT]
        namespaces += ["--seccomp", str(filter_fd)]
        proc = ["--proc", "/proc"]
        for path in _PROC_READ_ONLY:
            proc += ["--ro-bind-try", path, path]
        proc += _PROC_WRITES_REFUSED
        return [bwrap, *namespaces, "--ro-bind", "/", "/", "--dev", "/dev", *proc]

    @contextlib.contextmanager
    def _filter_fd(self) -> Iterator[int]:
        """A pipe's read end holding the syscall filter, for one bwrap to read to its end."""
        program = self._syscall_filter()
        read_end, write_end = os.pipe()
        try:
            # A few hundred bytes, far under a pipe's buffer: written whole before bwrap runs.
            with open(write_end, "wb") as pipe:
                pipe.write(program)
            yield read_end
        finally:
            os.close(read_end)

    def _syscall_filter(self) -> bytes:
        """The filter for this machine; SandboxError where failgate has no table for it."""
        if self._filter is None:
            try:
                self._filter = syscall_filter(os.uname().machine)
            except UnknownArchitecture as exc:
                asked = f"a sandbox was asked for ({self.asked_by})"
                raise SandboxError(f"{asked}, but failgate {exc}") from None
        return self._filter

    def _usable_bwrap(self) -> str:
        """bwrap's path, once it has been seen to make a sandbox here; else SandboxError."""
        if self._bwrap is None and self._problem is None:
            self._bwrap, self._problem = self._try_bwrap()
        if self._bwrap is None:
            raise SandboxError(self._problem or "no sandbox")
        return self._bwrap

    def _try_bwrap(self) -> tuple[str | None, str | None]:
        asked = f"a sandbox was asked for ({self.asked_by})"
        try:
            self._syscall_filter()
        except SandboxError as exc:
            return None, str(exc)
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            return None, f"{asked}, but bwrap is not on PATH: {INSTALL_HINT}"
        try:
            with self._filter_fd() as filter_fd:
                probe = [*self._read_only(bwrap, filter_fd), "--", sys.executable, "-I", "-S"]
                done = subprocess.run(
                    [*probe, "-c", ""],
                    capture_output=True,
                    stdin=subprocess.DEVNULL,
                    timeout=_PROBE_TIMEOUT_S,
                    pass_fds=(filter_fd,),
                )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return None, f"{asked}, but {bwrap} does not run: {exc}"
        if done.returncode != 0:
            said = done.stderr.decode("utf-8", "replace").strip().splitlines()
            why = said[-1] if said else f"exit {done.returncode}"
            if _FILTER_NOT_LOADED.search(why):
                return None, f"{asked}, but {bwrap} cannot load the syscall filter ({why})"
            return None, f"{asked}, but {bwrap} cannot make one on this machine ({why}); " + (
                USERNS_HINT
            )
        return bwrap, None

    def _launched_python(
        self, bwrap: str, launcher: str, hidden: Sequence[str], env: Mapping[str, str]
    ) -> tuple[str | None, str]:
        """The Python a launcher runs, as it says; else None, and why it was not learnt.

        Only a launcher outside every folder a pushed commit could write is asked (the
        user's own program), in a sandbox that hides those folders, and TMPDIR unless the
        launcher lives there. Its answer is only
        a path: the folders shown for it are read from its files, as any Python's."""
        named, real = os.path.abspath(launcher), os.path.realpath(launcher)
        temporary = os.path.realpath(tempfile.gettempdir())
        # Other runs' checkouts come and go in TMPDIR: hiding it whole hides them all, those
        # made after the listing too, with no mount point that can vanish before bwrap's mount.
        whole_tmpdir = not _under_any(named, [temporary]) and not _under_any(real, [temporary])
        for _ in range(_PROBE_ATTEMPTS):
            writable = commit_writable(hidden, env)
            if _under_any(named, writable) or _under_any(real, writable):
                return None, ""
            if whole_tmpdir:
                writable = [*writable, temporary]
            try:
                with self._filter_fd() as filter_fd:
                    ask = self._read_only(bwrap, filter_fd)
                    for folder in _outermost(writable):
                        ask += ["--tmpfs", folder]
                    ask += ["--", launcher, "-I", "-c", _ASK_EXECUTABLE]
                    done = subprocess.run(
                        ask,
                        capture_output=True,
                        stdin=subprocess.DEVNULL,
                        env=dict(env),
                        cwd="/",
                        timeout=_PROBE_TIMEOUT_S,
                        pass_fds=(filter_fd,),
                    )
            except (OSError, subprocess.TimeoutExpired) as exc:
                return None, f"; asked which Python it runs, it did not answer ({exc})"
            # A launcher in TMPDIR leaves it in sight, and a checkout there can go between
            # the listing and bwrap's mounting over it, where bwrap cannot make the mount
            # point in the read-only root: then ask again, over a fresh listing.
            if done.returncode == 0 or all(os.path.isdir(folder) for folder in writable):
                break
        lines = done.stdout.decode("utf-8", "replace").splitlines()
        if done.returncode != 0 or len(lines) != 1 or not os.path.isabs(lines[0]):
            if done.returncode == 0:
                return None, "; asked which Python it runs, it printed no one path"
            said = done.stderr.decode("utf-8", "replace").strip().splitlines()
            why = said[-1][:_SAID_LIMIT] if said else "nothing on stderr"
            return None, f"; asked which Python it runs, it exited {done.returncode} ({why})"
        executable = lines[0]
        if not os.path.isfile(executable):
            return None, "; asked which Python it runs, it named no file"
        return executable, ""

    def _hidden_folders(self, checkout: str, env: Mapping[str, str]) -> list[str]:
        """Every folder to hide that exists, resolved; never / itself."""
        wanted = [*PRIVATE_FOLDERS, *home_folders(env), *self._hidden]
        # failgate's own TMPDIR, wherever it is: the temporary checkouts of other runs.
        wanted.append(tempfile.gettempdir())
        wanted.append(os.path.dirname(checkout))  # the other checkouts beside this one
        resolved = {os.path.realpath(folder) for folder in wanted if folder}
        return sorted(f for f in resolved if f != "/" and os.path.isdir(f))


@functools.cache
def nested_userns_refused(bwrap: str) -> tuple[str, ...]:
    """bwrap's options that keep the sandbox from making user namespaces, where it has them:
    not before 0.8, nor a setuid bwrap (its --disable-userns refuses to run)."""
    try:
        if os.stat(bwrap).st_mode & stat.S_ISUID:
            return ()
        done = subprocess.run(
            [bwrap, "--help"], capture_output=True, stdin=subprocess.DEVNULL,
            timeout=_PROBE_TIMEOUT_S,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return ()  # then bwrap cannot run for the probe either: no sandbox, and it says why
    return _NO_NESTED_USERNS if b"--disable-userns" in done.stdout + done.stderr else ()


def read_only_in(checkout: str, paths: Sequence[str]) -> list[str]:
    """Each of `paths` under `checkout` that is there, folders before what they hold;
    SandboxError for one reached through a link.

    failgate wrote them as real files and folders (pins.write_regular_file), and nothing
    of the commit has run since: a link on the way means something else wrote it, and
    bwrap would follow it, maybe out of the checkout."""
    found = []
    for path in sorted(dict.fromkeys(paths), key=lambda p: (p.count("/"), p)):
        target = os.path.join(checkout, path)
        if not os.path.lexists(target):
            continue
        if os.path.realpath(target) != os.path.normpath(target):
            raise SandboxError(f"cannot keep {path} read-only in the sandbox: it is a link")
        found.append(target)
    return found


def commit_writable(hidden: Sequence[str], env: Mapping[str, str]) -> list[str]:
    """The hidden folders that may hold a file a pushed commit wrote: the repository and
    its work trees, the checkouts kept and the temporary ones (`failgate-*` in TMPDIR).
    Not the home folders, nor /tmp or TMPDIR as such, where the user's own Python may
    live (a CI job's virtualenv in /tmp): what is bound from there is read from its files."""
    shared = {os.path.realpath(folder) for folder in home_folders(env)}
    shared |= {os.path.realpath(folder) for folder in (*PRIVATE_FOLDERS, tempfile.gettempdir())}
    runs = glob.glob(os.path.join(glob.escape(tempfile.gettempdir()), "failgate-*"))
    return [*(f for f in hidden if f not in shared), *(os.path.realpath(f) for f in runs)]


def home_folders(env: Mapping[str, str]) -> list[str]:
    """The home folder as HOME says and as the password database says (they may differ)."""
    homes = [os.environ.get("HOME", ""), env.get("HOME", "")]
    with contextlib.suppress(KeyError):  # a uid with no entry (a container's)
        homes.append(pwd.getpwuid(os.getuid()).pw_dir)
    return [home for home in homes if home]


def python_folders(python: str, hidden: Sequence[str], writable: Sequence[str]) -> list[str]:
    """The folders the Python at `python` runs from, to bind back: a virtualenv's, the
    base Python's; none for one in a `writable` folder.

    Read from the files without running it: a virtualenv is the folder above `bin/`
    holding `pyvenv.cfg`, whose `home` names the base Python's `bin/`; else the
    base Python is the one the path resolves to. A base folder counts only when it
    holds a standard library (`lib/*/os.py`), so no path a file names can show a
    folder that is not a Python's; and never one in, or holding, a hidden folder
    other than the home folders."""
    named, real = os.path.abspath(python), os.path.realpath(python)
    if not os.path.isabs(python) or _under_any(named, writable) or _under_any(real, writable):
        return []
    found = []
    venv = os.path.dirname(os.path.dirname(named))
    home = _venv_home(os.path.join(venv, "pyvenv.cfg"))
    if home is None:
        base = os.path.dirname(os.path.dirname(real))
    else:
        found.append(os.path.realpath(venv))
        base = os.path.dirname(os.path.realpath(home))
    if glob.glob(os.path.join(glob.escape(base), "lib", "*", "os.py")):
        found.append(base)
    return [
        folder
        for folder in dict.fromkeys(found)
        if not _under_any(folder, writable) and _may_bind(folder, hidden)
    ]


def _venv_home(config: str) -> str | None:
    """The absolute `home` a virtualenv's pyvenv.cfg names, or None (no virtualenv)."""
    for key, value in pyvenv_settings(config) or ():
        if key == "home" and os.path.isabs(value):
            return value
    return None


def _is_visible(path: str, hidden: Sequence[str], bound: Sequence[str]) -> bool:
    """Whether `path`, as named and as resolved, can be reached inside the sandbox."""
    for form in (os.path.abspath(path), os.path.realpath(path)):
        if _under_any(form, hidden) and not _under_any(form, bound):
            return False
    return True


def _may_bind(folder: str, hidden: Sequence[str]) -> bool:
    """A prefix that holds a hidden folder (/, the home folder itself) would show it again."""
    return folder != "/" and not any(_under_any(h, [folder]) for h in hidden)


def _outermost(folders: Sequence[str]) -> list[str]:
    """The folders that lie in no other one of them: covering those covers all."""
    kept: list[str] = []
    for folder in sorted(folders, key=len):
        if not _under_any(folder, kept):
            kept.append(folder)
    return kept


def _under_any(path: str, folders: Sequence[str]) -> bool:
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders)
