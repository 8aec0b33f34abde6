"""Nothing a verifier starts outlives the run: through the real `failgate check`, unsandboxed.

The reaper shim ends what the verifier left (a `setsid()` grandchild included)
when it exits; SIGTERM, SIGHUP and SIGINT to failgate end the verifier and
remove failgate's folders; after a SIGKILL, the shim's parent-death signal
ends the run, and when the shim was killed too, the next run ends what is left.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from failgate_hooks.verify.process import run_command
from tests.conftest import Repo, make_repo
from tests.processes import dead, eventually_dead, gated_repo, kill_quietly, wait_for
from tests.worlds import with_remote

CHECK = ("check", "--trust-ledger", "--ref", "refs/heads/main", "--no-cache")


def start_check(repo: Repo, tmpdir: Path) -> subprocess.Popen[str]:
    """`failgate check` in the background, its temporary folders in `tmpdir`."""
    tmpdir.mkdir(exist_ok=True)
    return subprocess.Popen(
        [sys.executable, "-m", "failgate_hooks", *CHECK], cwd=repo.path, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "TMPDIR": str(tmpdir)},
    )  # fmt: skip


def started(reports: Path) -> tuple[int, int, int, str]:
    """The running verifier's pid, its parent's (the shim), the grandchild's, and its cwd."""
    verifier, parent, cwd = wait_for(reports / "verifier").split(" ", 2)
    return int(verifier), int(parent), int(wait_for(reports / "grandchild")), cwd


def test_a_grandchild_that_left_the_session_does_not_outlive_the_run(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    repo = gated_repo(tmp_path / "repo", reports, "0")
    result = repo.failgate(*CHECK)
    grandchild = int(wait_for(reports / "grandchild"))
    try:
        assert result.code == 0, result
        assert "CLEARED" in result.out
        assert eventually_dead(grandchild, timeout_s=3)
    finally:
        kill_quietly(grandchild)


def test_a_failing_exit_code_is_the_verifier_s_while_the_shim_reaps(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    repo = gated_repo(tmp_path / "repo", reports, "3")
    result = repo.failgate(*CHECK)
    grandchild = int(wait_for(reports / "grandchild"))
    try:
        assert result.code == 1, result
        assert "exited 3" in result.out
        assert eventually_dead(grandchild, timeout_s=3)
    finally:
        kill_quietly(grandchild)


def test_failgate_itself_never_becomes_a_subreaper(tmp_path: Path) -> None:
    """Its waitpid(-1) would take the exit status `Popen.wait()` waits for."""
    ran = run_command(
        [sys.executable, "-c", "import subprocess, sys; subprocess.Popen(['true']); sys.exit(3)"],
        cwd=str(tmp_path), env={"PATH": os.environ["PATH"]}, timeout_s=30,
    )  # fmt: skip
    assert ran.exit_code == 3
    libc = ctypes.CDLL(None, use_errno=True)
    is_subreaper = ctypes.c_int(-1)
    assert libc.prctl(37, ctypes.byref(is_subreaper), 0, 0, 0) == 0  # PR_GET_CHILD_SUBREAPER
    assert is_subreaper.value == 0


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_to_check_ends_the_verifier_and_removes_the_folders(
    tmp_path: Path, sig: signal.Signals
) -> None:
    reports, tmpdir = tmp_path / "reports", tmp_path / "tmp"
    repo = gated_repo(tmp_path / "repo", reports, "wait")
    check = start_check(repo, tmpdir)
    verifier, _, grandchild, checkout = started(reports)
    try:
        assert list(tmpdir.glob("failgate-*"))
        check.send_signal(sig)
        _, err = check.communicate(timeout=30)
        assert eventually_dead(verifier), "the verifier outlived failgate"
        assert eventually_dead(grandchild), "the setsid() grandchild outlived failgate"
        # The checkout is a kept one, in the cache: the signal lets the next run take it.
        assert Path(checkout).is_relative_to(os.environ["XDG_CACHE_HOME"])
        with open(Path(checkout).parent / "lock", "rb") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert list(tmpdir.glob("failgate-*")) == []
        assert "Traceback" not in err
        if sig != signal.SIGINT:
            assert check.returncode == -sig  # it dies by the signal it was sent
        else:
            assert check.returncode != 0
    finally:
        check.kill()
        kill_quietly(verifier, grandchild)


def test_after_a_sigkill_of_check_the_shim_ends_the_run(tmp_path: Path) -> None:
    reports, tmpdir = tmp_path / "reports", tmp_path / "tmp"
    repo = gated_repo(tmp_path / "repo", reports, "wait")
    check = start_check(repo, tmpdir)
    verifier, shim, grandchild, _ = started(reports)
    try:
        check.kill()
        check.wait(timeout=30)
        # The shim's parent-death signal: it ends everything below it, then itself.
        assert eventually_dead(verifier)
        assert eventually_dead(grandchild)
        assert eventually_dead(shim)
    finally:
        kill_quietly(verifier, grandchild, shim)


def test_what_a_sigkill_of_check_and_shim_left_the_next_run_ends(tmp_path: Path) -> None:
    reports, tmpdir = tmp_path / "reports", tmp_path / "tmp"
    repo = gated_repo(tmp_path / "repo", reports, "wait")
    check = start_check(repo, tmpdir)
    verifier, shim, grandchild, _ = started(reports)
    try:
        os.kill(shim, signal.SIGKILL)
        check.kill()
        check.wait(timeout=30)
        assert eventually_dead(shim)
        assert not dead(verifier) and not dead(grandchild)  # orphans now, of no one's
        # The next run, in another repository: the leftovers are found by their tag.
        other = gated_repo(tmp_path / "other", tmp_path / "other-reports", "0")
        assert other.failgate(*CHECK).code == 0
        assert eventually_dead(verifier) and eventually_dead(grandchild)
    finally:
        kill_quietly(verifier, grandchild, shim)


# A process a killed failgate's run left behind (its tag names an owner that is gone):
# it waits for the next run to prove the kept checkout (the slot's state.json is
# written anew), then writes a budget that passes into it.
REWRITES_THE_PROVEN_CHECKOUT = """\
import os, sys
state, target, text = sys.argv[1:4]
def inode():
    try:
        return os.stat(state).st_ino
    except OSError:
        return None
first = inode()
while inode() == first:
    pass
open(target, "w").write(text)
"""


def test_a_dead_run_s_leftover_is_ended_before_the_next_run_proves_its_checkout(
    tmp_path: Path,
) -> None:
    from failgate_hooks.app import demo
    from tests.worlds import budget_repo, record_failure

    repo = budget_repo(tmp_path / "repo")
    record_failure(repo, "push")
    assert repo.failgate(*CHECK).code == 1  # held: the kept checkout now holds the commit
    (state,) = Path(os.environ["XDG_CACHE_HOME"]).glob("failgate/checkouts/*/0/state.json")
    gone = subprocess.Popen(["true"])
    gone.wait()
    namespace = os.stat("/proc/self/ns/pid").st_ino
    tag = {"FAILGATE_OWNER": f"{namespace}:{gone.pid}:1"}
    leftover = subprocess.Popen(
        [sys.executable, "-c", REWRITES_THE_PROVEN_CHECKOUT, str(state),
         str(state.parent / "tree" / demo.BUDGET_PATH), demo.budget_json(demo.FIXED_BUDGET)],
        env={**os.environ, **tag}, start_new_session=True,
    )  # fmt: skip
    try:
        result = repo.failgate(*CHECK)
        assert result.code == 1, result  # the commit's own budget, still broken
        assert eventually_dead(leftover.pid)
    finally:
        leftover.kill()
        leftover.wait()


def test_the_leftover_sweep_spares_the_runs_of_a_live_failgate(tmp_path: Path) -> None:
    reports, tmpdir = tmp_path / "reports", tmp_path / "tmp"
    repo = gated_repo(tmp_path / "repo", reports, "wait")
    check = start_check(repo, tmpdir)
    verifier, _, grandchild, _ = started(reports)
    from failgate_hooks.verify.leftovers import end_leftovers

    try:
        end_leftovers.cache_clear()
        assert verifier not in end_leftovers()
        assert not dead(verifier) and not dead(grandchild)
    finally:
        check.kill()
        kill_quietly(verifier, grandchild)


def test_a_verifier_that_kills_its_shim_is_held_not_passed(tmp_path: Path) -> None:
    """Killing the process that reports its exit must not turn a run into a pass."""
    repo = gated_repo(tmp_path / "repo", tmp_path / "reports", "0")
    repo.write("checks/verifier.py", "import os, sys\nos.kill(os.getppid(), 9)\nsys.exit(0)\n")
    repo.commit("a verifier that kills the shim, then exits 0")
    result = repo.failgate(*CHECK)
    assert result.code == 1, result
    assert "SIGKILL" in result.out


def test_a_verifier_that_kills_its_shim_leaves_nothing_running_after_its_run(
    tmp_path: Path,
) -> None:
    """Its setsid() grandchild would keep writing into the kept checkout, which the next
    run proves and hands to its verifier before any sweep of leftovers."""
    from tests.processes import VERIFIER

    reports = tmp_path / "reports"
    repo = gated_repo(tmp_path / "repo", reports, "0")
    killer = VERIFIER.replace("sys.exit(int(mode))", "os.kill(os.getppid(), 9)\nsys.exit(0)")
    repo.write("checks/verifier.py", killer)
    repo.commit("a verifier that leaves a grandchild, kills the shim, then exits 0")
    result = repo.failgate(*CHECK)
    grandchild = int(wait_for(reports / "grandchild"))
    try:
        assert result.code == 1, result
        assert eventually_dead(grandchild, timeout_s=3), "the grandchild outlived the run"
    finally:
        kill_quietly(grandchild)


def test_a_signalled_server_hook_refuses_the_push_and_ends_its_verifier(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    repo = gated_repo(tmp_path / "repo", reports, "wait")
    remote = with_remote(repo, tmp_path / "remote.git")
    old = repo.head()
    repo.write("notes.txt", "more work\n")
    new = repo.commit("more work")
    repo.git("push", "-q", "--no-verify", "origin", "HEAD:refs/heads/side")
    updates = tmp_path / "updates"
    updates.write_text(f"{old} {new} refs/heads/main\n")
    call = "from failgate_hooks.commands.hooks import pre_receive_main; pre_receive_main()"
    with updates.open() as stdin:
        hook = subprocess.Popen(
            [sys.executable, "-c", call, "--exec", "--no-sandbox"], cwd=remote, text=True,
            stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
    verifier, _, grandchild, checkout = started(reports)
    try:
        hook.send_signal(signal.SIGTERM)
        _, err = hook.communicate(timeout=30)
        assert hook.returncode == -signal.SIGTERM
        assert "failgate-pre-receive: SIGTERM: push refused." in err
        assert eventually_dead(verifier) and eventually_dead(grandchild)
        assert Path(checkout).is_relative_to(os.environ["XDG_CACHE_HOME"])  # kept, for the next
    finally:
        hook.kill()
        kill_quietly(verifier, grandchild)


IMMUTABLE = """\
import subprocess, sys
open("stuck.txt", "w").write("a verifier that makes a file immutable\\n")
subprocess.run(["chattr", "+i", "stuck.txt"], check=True)
sys.exit(1)
"""


def test_a_checkout_that_cannot_be_removed_is_reported_and_the_decision_stands(
    tmp_path: Path,
) -> None:
    assert os.geteuid() == 0, "chattr +i needs root, as CI and make test run"
    repo = make_repo(tmp_path / "repo")
    repo.write("checks/stuck.py", IMMUTABLE)
    repo.commit("a verifier")
    repo.record(
        "ops:stuck", "--status", "observed", "--title", "t", "--trigger", "push",
        "--verify", "python3 checks/stuck.py", "--verify-file", "checks/stuck.py", "--no-probe",
    )  # fmt: skip
    repo.commit("record it")
    assert repo.failgate("check", "--ref", "refs/heads/main").code == 1
    # The checkout is kept; the next run cannot clean it, discards it, and cannot remove it.
    repo.write("README", "a new commit\n")
    repo.commit("a new commit")
    result = repo.failgate("check", "--ref", "refs/heads/main")
    try:
        assert result.code == 1, result  # held, as the verifier said
        assert "Traceback" not in result.output
        assert "could not remove" in result.err and "chattr -R -i" in result.err
    finally:
        for line in result.err.splitlines():
            if "could not remove" in line:
                left = line.split("could not remove ", 1)[1].split(" (", 1)[0]
                subprocess.run(["chattr", "-R", "-i", left], check=False)
                shutil.rmtree(left, ignore_errors=True)
