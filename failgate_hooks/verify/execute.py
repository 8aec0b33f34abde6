"""Running a verifier's process: in a clean checkout of a commit, or in the work tree.

`run.py` decides whether a gate's run is needed at all (trust, shadowing, the
pass cache); this module, loaded only when one is, makes the checkout, lays the
verifier's files over it, starts the process with its allow-listed environment
and reads what it gave. A gate's run, each step of `replay` and `record`'s
probe all go through `run_in_checkout` and `run_verifier`: one environment,
one work-tree watch, one reading of an exit code.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
from collections.abc import Callable, Sequence
from typing import NamedTuple

from failgate_hooks.core.errors import UsageError
from failgate_hooks.core.events import DEFAULT_TIMEOUT_S, Verification, Workdir
from failgate_hooks.core.gates import VerifierOutcome, VerifierResult
from failgate_hooks.core.ids import short_id
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.verify.checkout import Checkouts, verifier_git_env
from failgate_hooks.verify.inplace import inplace_refusal
from failgate_hooks.verify.leftovers import end_leftovers
from failgate_hooks.verify.pins import Pin, pins_read_only, write_pins
from failgate_hooks.verify.process import CommandRun, run_command, verifier_env
from failgate_hooks.verify.sandbox import Sandbox
from failgate_hooks.verify.worktree_loads import LoadWatch, work_trees

NO_VERDICT_EXIT = 125  # as `git bisect run`'s "skip": the verifier could not judge
NO_VERDICT_DETAIL = "the verifier could not judge: its set-up failed"

Progress = Callable[[str], None]


def _result(
    command: tuple[str, ...], run: CommandRun, notes: Sequence[str], leak: str | None = None
) -> VerifierResult:
    """The VerifierResult of one run: exit 0 passes, 125 gives no verdict, the rest fail.

    A run that loaded code from the work tree (`leak` says which) gives no verdict,
    whatever it exited with: it judged the work tree, not the commit. One that timed
    out stays a timeout, the leak said too."""
    details = list(notes)
    if run.start_error is not None:
        outcome = VerifierOutcome.CANNOT_START
        details.insert(0, run.start_error)
    elif run.timed_out:
        outcome = VerifierOutcome.TIMEOUT
        details.insert(0, "the whole process group was killed; the gate stays open")
        if leak is not None:
            details.insert(1, leak)
    elif leak is not None:
        outcome = VerifierOutcome.NO_VERDICT
        details.insert(0, leak)
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


def run_on_commit(
    repo: GitRepo,
    verification: Verification,
    *,
    commit: str,
    pins: Sequence[Pin],
    entity_key: str,
    environment: str | None,
    ledger_dir: str,
    checkouts: Callable[[], Checkouts],
    default_timeout_s: float,
    progress: Progress | None,
    sandbox: Sandbox | None,
    pusher_env: bool = False,
    reviewed: bool = False,
) -> VerifierResult:
    """One run of a gate's verifier on exactly `commit`: in its checkout (made by
    `checkouts()` on first use), or in the work tree when workdir is inplace and the
    tree is C. `pusher_env`, `reviewed`: as RunAs has them."""
    _progress(progress, entity_key, verification.command)  # a big checkout takes time too
    run = RunAs(commit, entity_key, environment, pusher_env, reviewed)
    timeout_s = verification.timeout_s or default_timeout_s
    watched = work_trees(repo)
    notes: list[str] = []
    if verification.workdir is Workdir.INPLACE:
        # In the sandbox the checkout is writable: the work tree never is (a linked
        # worktree's .git file, a submodule's, would point the user's next git elsewhere).
        why_not = (
            "the sandbox never gives a verifier the work tree"
            if sandbox is not None
            else inplace_refusal(repo, commit, pins)
        )
        if why_not is None:
            assert repo.working_dir is not None  # inplace_refusal refuses a bare repository
            return run_verifier(
                verification, run, cwd=repo.working_dir, git_env={}, timeout_s=timeout_s,
                watched=watched, sandbox=sandbox,
            )  # fmt: skip
        notes.append(f"workdir inplace not used ({why_not}): ran in a clean checkout")
    return run_in_checkout(
        checkouts(), verification, run, lambda root: write_pins(repo, root, pins),
        ledger_dir=ledger_dir, timeout_s=timeout_s, watched=watched, notes=notes,
        sandbox=sandbox, read_only=pins_read_only(pins),
    )  # fmt: skip


def run_in_worktree(
    repo: GitRepo,
    *,
    entity_key: str,
    verification: Verification,
    default_timeout_s: float = DEFAULT_TIMEOUT_S,
    progress: Progress | None = None,
) -> VerifierResult:
    """`failgate try`: the verifier on the work tree as it is; never cached, never a clearance."""
    root = repo.working_dir
    if root is None:
        raise UsageError("`failgate try` needs a work tree: this repository is bare")
    _progress(progress, entity_key, verification.command)
    head = repo.try_resolve_commit("HEAD") or ""
    return run_verifier(
        verification,
        RunAs(head, entity_key),
        cwd=root,
        git_env={},
        timeout_s=verification.timeout_s or default_timeout_s,
        notes=("ran on the work tree as it is: this never clears a gate",),
        watched=(),
    )


class RunAs(NamedTuple):
    """What a run is for, as the verifier's environment says it (FAILGATE_*), and whether
    failgate's own environment is a pusher's (a server's hook): then none of what they
    set reaches the verifier, nor any env_pass variable unless the verification is
    `reviewed` (a protected revision holds the event that sets it)."""

    commit: str
    entity_key: str
    environment: str | None = None
    pusher_env: bool = False
    reviewed: bool = False


def run_in_checkout(
    checkouts: Checkouts,
    verification: Verification,
    run: RunAs,
    lay_over: Callable[[str], None],
    *,
    ledger_dir: str,
    timeout_s: float,
    watched: Sequence[str],
    notes: Sequence[str] = (),
    sandbox: Sandbox | None = None,
    read_only: Sequence[str] = (),
) -> VerifierResult:
    """The verifier in a clean checkout of `run.commit` without its ledger folder, after
    `lay_over(root)` wrote the verifier's files into it (the pinned ones; the work
    tree's for record's probe), whose `read_only` paths the sandbox keeps read-only."""
    # Before the checkout is proven: a killed run's leftover could still be writing into it.
    end_leftovers()
    with contextlib.ExitStack() as stack:
        try:
            cwd = stack.enter_context(checkouts.checkout(run.commit, ledger_dir))
            lay_over(cwd)
        except OSError as exc:  # a full or read-only cache: the gate stays open, no traceback
            detail = f"cannot prepare a clean checkout of {short_id(run.commit)}: {exc}"
            return VerifierResult(verification.command, VerifierOutcome.CANNOT_START, detail=detail)
        return run_verifier(
            verification, run, cwd=cwd, git_env=verifier_git_env(cwd), timeout_s=timeout_s,
            notes=notes, sandbox=sandbox, watched=watched, read_only=read_only,
        )  # fmt: skip


def run_verifier(
    verification: Verification,
    run: RunAs,
    *,
    cwd: str,
    git_env: dict[str, str],
    timeout_s: float,
    watched: Sequence[str],
    notes: Sequence[str] = (),
    sandbox: Sandbox | None = None,
    read_only: Sequence[str] = (),
) -> VerifierResult:
    """Run the verifier in `cwd` with its allow-listed environment (and `git_env`) and timeout;
    in the sandbox, the `read_only` paths of `cwd` (what failgate wrote) stay read-only.

    A Python it starts that loads a module from one of the `watched` work trees,
    elsewhere than `cwd` (which inplace proved equal to C), makes it no verdict."""
    env, refused = verifier_env(
        os.environ,
        env_pass=verification.env_pass,
        commit=run.commit,
        entity_key=run.entity_key,
        environment=run.environment,
        pusher_env=run.pusher_env,
        reviewed=run.reviewed,
    )
    notes = [*notes, *refused]
    env.update(git_env)
    command = verification.command
    if sandbox is not None:
        # The sandbox hides every work tree of the repository: nothing there can be
        # loaded, so no watcher runs. Its own private folder is the bytecode cache.
        ran = run_command(
            command, cwd=cwd, env=env, timeout_s=timeout_s, sandbox=sandbox, read_only=read_only
        )
        return _result(command, ran, notes)
    with contextlib.ExitStack() as stack:
        try:
            watch = stack.enter_context(LoadWatch(watched, checkout=cwd))
        except OSError as exc:  # a full or read-only TMPDIR
            detail = f"cannot prepare a private folder for the verifier's Python: {exc}"
            return VerifierResult(command, VerifierOutcome.CANNOT_START, detail=detail)
        ran = run_command(command, cwd=cwd, env=watch.environ(env), timeout_s=timeout_s)
        return _result(command, ran, notes, watch.leak(run.commit))


def _progress(progress: Progress | None, entity_key: str, command: Sequence[str]) -> None:
    if progress is not None:
        progress(f"failgate: running verifier for {entity_key} ({shlex.join(command)})…")
