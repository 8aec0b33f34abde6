"""One verifier process: its allow-listed environment, its lifetime, its output's tail.

It runs with no shell and stdin closed, under the reaper shim (reaper.py) or in
the sandbox (sandbox.py), in a session of its own; whatever it starts ends
with it. Its output is read without ever blocking on a pipe a grandchild may
hold open.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from failgate_hooks.core.pusher_env import env_pass_withheld, is_pusher_controlled
from failgate_hooks.verify.leftovers import OWNER_VARIABLE, end_leftovers, end_strays, owner_tag
from failgate_hooks.verify.load_watcher import is_within
from failgate_hooks.verify.sandbox import Sandbox, SandboxError
from failgate_hooks.verify.signing import KEY_VARIABLE

OUTPUT_TAIL_LINES = 20
OUTPUT_TAIL_CHARS = 4096
# After SIGTERM, how long the verifier and what it started get before SIGKILL.
KILL_GRACE_S = 1.0
# How much longer than the grace the shim may take to report back before its group is killed.
_END_MARGIN_S = 2.0
_REAPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reaper.py")
# After the verifier exits, how long a grandchild holding its pipe may keep us reading.
DRAIN_S = 0.5
# How often the exit is checked while a grandchild keeps the pipe open and silent.
_POLL_S = 0.05

_ALLOWED_ENV = ("PATH", "HOME", "TMPDIR", "TERM")
# The locale a verifier runs in unless its env_pass names LANG or an LC_* variable: a
# pass is cached and stands for everyone, so no one's locale may decide it (`grep -i`,
# `sort`, a regex's \w). glibc builds C.UTF-8 in (2.35 and later; Debian ships it before).
FIXED_LOCALE = "C.UTF-8"


def own_virtualenv(
    environ: Mapping[str, str], prefix: str = sys.prefix, base_prefix: str = sys.base_prefix
) -> str | None:
    """The virtualenv failgate runs in when it is failgate's own, not the project's.

    Ours when pre-commit made it for the hook, or when another virtualenv is the
    active one (VIRTUAL_ENV, which activate, poetry, uv and tox set). Otherwise it
    may be the project's own, with failgate installed in it: None, and it stays.
    """
    if prefix == base_prefix:
        return None
    real = os.path.realpath(prefix)
    pre_commit = _pre_commit_home(environ)
    if pre_commit is not None and is_within(real, pre_commit):
        return prefix
    active = environ.get("VIRTUAL_ENV")
    if active and os.path.realpath(active) != real:
        return prefix
    return None


def _pre_commit_home(environ: Mapping[str, str]) -> str | None:
    """Where pre-commit keeps its hook environments, found as pre-commit finds it."""
    if environ.get("PRE_COMMIT_HOME"):
        return os.path.realpath(environ["PRE_COMMIT_HOME"])
    if environ.get("XDG_CACHE_HOME"):
        return os.path.realpath(os.path.join(environ["XDG_CACHE_HOME"], "pre-commit"))
    if environ.get("HOME"):
        return os.path.realpath(os.path.join(environ["HOME"], ".cache", "pre-commit"))
    return None


def _path_without(path: str, venv: str) -> str:
    """PATH without the folders of `venv` that hold its programs."""
    ours = {
        os.path.normcase(os.path.realpath(os.path.join(venv, folder)))
        for folder in ("bin", "Scripts")
    }
    kept = [
        folder
        for folder in path.split(os.pathsep)
        if not folder or os.path.normcase(os.path.realpath(folder)) not in ours
    ]
    return os.pathsep.join(kept)


def _absolute_only(path: str) -> str:
    """PATH without its empty and relative entries: each would be looked up in the
    verifier's working folder, the checkout, where a program is the commit's own."""
    kept = [folder for folder in path.split(os.pathsep) if os.path.isabs(folder)]
    return os.pathsep.join(kept) or os.defpath


def verifier_env(
    environ: Mapping[str, str],
    *,
    env_pass: Sequence[str],
    commit: str,
    entity_key: str,
    environment: str | None,
    pusher_env: bool = False,
    reviewed: bool = False,
) -> tuple[dict[str, str], tuple[str, ...]]:
    """The verifier's whole environment, and a note for each kind of `env_pass` name refused.

    An allow-list: nothing else reaches the verifier. No `GIT_*` variable ever
    does, even when `env_pass` names one: inside pre-receive they point into a
    quarantine, and in any hook they name the repository rather than the checkout.
    The locale is FIXED_LOCALE unless `env_pass` names LANG or an LC_* variable.

    `pusher_env`: `environ` is a pusher's (a server's hook, core/pusher_env.py). A
    pass there is cached for every pusher under the env_pass names, never their
    values: no variable a pusher sets is passed, whatever env_pass says. Nor, there,
    any env_pass name of a verification that is not `reviewed` (no protected revision
    holds the event that sets it): its pusher chose the names.

    Nor the trigger or the destination ref: a pass stands for its content on every
    ref and trigger (one run per commit, the pass cache, signed evidence), so a
    verdict must not depend on them. Where a gate applies is its own `triggers`
    and `applies_to.refs`.
    """
    # Nor the evidence signing key's variable: pushed code must never sign a pass.
    never = [name for name in env_pass if name.upper().startswith("GIT_") or name == KEY_VARIABLE]
    withheld = env_pass_withheld(pusher_env=pusher_env, reviewed=reviewed)
    unreviewed = [name for name in env_pass if withheld and name not in never]
    offered = [*_ALLOWED_ENV, *(n for n in env_pass if n not in never and n not in unreviewed)]
    # On a server, what a pusher sets: env_pass's names and the allow-list's (TERM) alike.
    held = {name for name in offered if pusher_env and is_pusher_controlled(name)}
    wanted = [name for name in offered if name not in held]
    pushers = [name for name in env_pass if name in held and name not in unreviewed]
    env = {"LANG": FIXED_LOCALE}
    env.update({name: environ[name] for name in wanted if name in environ})
    ours = own_virtualenv(environ)
    if "PATH" in env and ours is not None:
        env["PATH"] = _path_without(env["PATH"], ours)
    if "PATH" in env:
        env["PATH"] = _absolute_only(env["PATH"])
    env.update(
        FAILGATE_COMMIT=commit,
        FAILGATE_ENTITY_KEY=entity_key,
        FAILGATE_ENVIRONMENT=environment or "",
    )
    notes = []
    if never:
        notes.append(
            f"env_pass {', '.join(never)} not passed: git's own variables and the "
            "evidence signing key never are"
        )
    if pushers:
        notes.append(
            f"env_pass {', '.join(pushers)} not passed: on a server the pusher sets it, "
            "and a pass stands for every pusher"
        )
    if unreviewed:
        notes.append(
            f"env_pass {', '.join(unreviewed)} not passed: on a server only a verification "
            "a protected branch holds gets them, and this one came with the push"
        )
    return env, tuple(notes)


class CommandRun(NamedTuple):
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
    argv: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    timeout_s: float,
    sandbox: Sandbox | None = None,
    read_only: Sequence[str] = (),
) -> CommandRun:
    """Run `argv` (no shell, stdin closed) under the reaper shim, or in `sandbox` with the
    `read_only` paths of `cwd` kept read-only.

    Nothing it starts outlives it: not when it exits, not on timeout, not when
    failgate is interrupted or terminated."""
    if not argv:
        return CommandRun(None, 0.0, start_error="the command is empty")
    end_leftovers()
    env = {**env, OWNER_VARIABLE: owner_tag()}
    if sandbox is None:
        return _run_shimmed(argv, cwd=cwd, env=env, timeout_s=timeout_s)
    with contextlib.ExitStack() as launched:
        try:
            launch = launched.enter_context(
                sandbox.launch(argv, cwd=cwd, env=env, read_only=read_only)
            )
        except OSError as exc:
            return CommandRun(None, 0.0, start_error=_start_error(argv[0], exc))
        except SandboxError as exc:
            return CommandRun(None, 0.0, start_error=str(exc))
        return _run(
            launch.argv, cwd=cwd, env=launch.env, timeout_s=timeout_s, pass_fds=launch.pass_fds
        )


def _run_shimmed(
    argv: Sequence[str], *, cwd: str, env: Mapping[str, str], timeout_s: float
) -> CommandRun:
    """`argv` under the reaper shim, which says on a pipe when it could not start it."""
    status_read, status_write = os.pipe()
    try:
        try:
            shim = [sys.executable, "-I", "-S", _REAPER, str(os.getpid()), str(status_write)]
            shim += [str(KILL_GRACE_S), "--", *argv]
            run = _run(shim, cwd=cwd, env=env, timeout_s=timeout_s, pass_fds=(status_write,))
        finally:
            os.close(status_write)  # the shim is gone: no writer is left, the read cannot block
            end_strays()  # what escaped a shim the verifier killed
        what, _, number = os.read(status_read, 64).decode("ascii", "replace").partition(" ")
    finally:
        os.close(status_read)
    if not number.strip().isdigit():
        return run
    error = OSError(int(number), os.strerror(int(number)))  # FileNotFoundError for ENOENT…
    if what == "exec":
        return CommandRun(None, 0.0, start_error=_start_error(argv[0], error))
    return CommandRun(None, 0.0, start_error=f"the reaper shim cannot start: {what}: {error}")


def _run(
    argv: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    timeout_s: float,
    pass_fds: Sequence[int] = (),
) -> CommandRun:
    """Run the shim or bwrap in a session of its own; end it, and the run, however this ends."""
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
            pass_fds=tuple(pass_fds),
        )
    except OSError as exc:
        return CommandRun(None, 0.0, start_error=_start_error(argv[0], exc))
    assert proc.stdout is not None
    tail = _Tail()
    try:
        ended = _pump(proc, tail, started + timeout_s)
    finally:  # exited, timed out, Ctrl-C or SIGTERM: the same ending
        _end(proc)
        proc.stdout.close()
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


def _end(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the shim (it ends the verifier and all below it) or bwrap (its PID namespace
    goes with it), give it the grace and a margin, then SIGKILL whatever is left in its group."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=KILL_GRACE_S + _END_MARGIN_S)
    _signal_group(proc.pid, signal.SIGKILL)  # start_new_session: the leader's pid names it
    proc.wait()


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
