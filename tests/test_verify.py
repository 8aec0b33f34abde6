"""Running verifiers on real repositories with real processes."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from failgate_hooks.core.events import Verification, Workdir
from failgate_hooks.core.gates import VerifierOutcome, VerifierResult
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.verify.checkout import Checkouts
from failgate_hooks.verify.execute import NO_VERDICT_DETAIL, run_in_worktree
from failgate_hooks.verify.pins import resolve_pins
from failgate_hooks.verify.process import own_virtualenv, verifier_env
from failgate_hooks.verify.run import UNTRUSTED_DETAIL, run_gate_verifier
from failgate_hooks.verify.trust import TrustedVerifier, TrustStore
from tests.conftest import Repo, git, make_repo
from tests.worlds import budget_repo, record_failure

ENTITY = "deploy:mainnet:gas-budget"
PY = sys.executable

# Passes when the budget is 120, or when any fix that is not part of C is visible:
# each must be one that *would* pass the check if the verifier could see it.
CHECK = """\
import os, pathlib, sys
with open(sys.argv[1], "a") as marker:
    marker.write(os.getcwd() + "\\n")
budget = pathlib.Path("budget.txt").read_text().strip()
print("budget", budget)
fixed = budget == "120" or os.path.exists("fix.txt") or os.path.exists("build/out.txt")
sys.exit(0 if fixed else 1)
"""


@pytest.fixture(autouse=True)
def _no_trust_ledger_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FAILGATE_TRUST_LEDGER", raising=False)


@pytest.fixture
def world(tmp_path: Path) -> Repo:
    """A repository whose commit holds a failing budget check and an ignored build folder."""
    repo = make_repo(tmp_path / "repo")
    repo.write("budget.txt", "50\n")
    repo.write("checks/check.py", CHECK)
    repo.write(".gitignore", "build/\n")
    repo.commit("budget and its check")
    return repo


def check(marker: Path, **kw: object) -> Verification:
    """The budget check, pinned, writing one line per run to `marker`."""
    kw.setdefault("files", ("checks/check.py",))
    return Verification(command=(PY, "checks/check.py", str(marker)), **kw)  # type: ignore[arg-type]


def runs(marker: Path) -> list[str]:
    """The working directory of each run the marker recorded."""
    return marker.read_text().splitlines() if marker.exists() else []


def verify(
    repo: Repo,
    verification: Verification,
    commit: str | None = None,
    *,
    pinned_from: str | None = None,
    ledger_dir: str = "ledger",
    trust_ledger: bool = True,
    trust: TrustStore | None = None,
    no_cache: bool = False,
    environment: str | None = None,
    progress: list[str] | None = None,
    default_timeout_s: float = 60,
) -> VerifierResult:
    with GitRepo.open(repo.path) as grepo, Checkouts(grepo) as checkouts:
        return run_gate_verifier(
            grepo,
            entity_key=ENTITY,
            verification=verification,
            commit=commit or repo.head(),
            pinned_from=pinned_from,
            ledger_dir=ledger_dir,
            environment=environment,
            checkouts=lambda: checkouts,
            trust=trust,
            trust_ledger=trust_ledger,
            default_timeout_s=default_timeout_s,
            no_cache=no_cache,
            progress=None if progress is None else progress.append,
        )


def script(repo: Repo, body: str, path: str = "checks/check.py") -> str:
    """Commit a verifier script; returns the new commit."""
    repo.write(path, textwrap.dedent(body))
    return repo.commit(f"verifier {path}")


# --------------------------------------------------------------------------- exactly C


def test_a_fix_outside_the_commit_never_clears_the_gate(world: Repo, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    commit = world.head()
    world.write("budget.txt", "120\n")  # uncommitted
    assert verify(world, check(marker), commit).outcome is VerifierOutcome.FAILED
    world.git("add", "budget.txt")  # staged
    assert verify(world, check(marker), commit).outcome is VerifierOutcome.FAILED
    world.git("reset", "-q", "--hard")
    world.write("fix.txt", "untracked\n")
    assert verify(world, check(marker), commit).outcome is VerifierOutcome.FAILED
    (world.path / "fix.txt").unlink()
    world.write("build/out.txt", "ignored build output\n")
    result = verify(world, check(marker), commit)
    assert result.outcome is VerifierOutcome.FAILED
    assert result.exit_code == 1
    assert "budget 50" in result.output_tail
    assert all(cwd != str(world.path) for cwd in runs(marker))


def test_the_same_fixes_would_pass_if_the_verifier_saw_them(world: Repo, tmp_path: Path) -> None:
    # The control for the test above: each fix is one the check accepts.
    marker = tmp_path / "marker"
    for relpath, text in (("budget.txt", "120\n"), ("fix.txt", "x"), ("build/out.txt", "x")):
        world.write(relpath, text)
        with GitRepo.open(world.path) as grepo:
            result = run_in_worktree(grepo, entity_key=ENTITY, verification=check(marker))
        assert result.outcome is VerifierOutcome.PASSED, relpath
        assert "never clears" in result.detail
        world.git("checkout", "-q", "--", "budget.txt")
        for leftover in ("fix.txt", "build/out.txt"):
            (world.path / leftover).unlink(missing_ok=True)


def test_inplace_falls_back_to_a_checkout_when_the_work_tree_is_dirty(
    world: Repo, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    world.write("build/out.txt", "ignored build output\n")
    result = verify(world, check(marker, workdir=Workdir.INPLACE))
    assert result.outcome is VerifierOutcome.FAILED
    assert "workdir inplace not used" in result.detail
    assert "ignored" in result.detail
    assert runs(marker)[-1] != str(world.path)


def test_inplace_falls_back_when_head_is_not_the_commit(world: Repo, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    commit = world.head()
    world.write("other.txt", "x")
    world.commit("later")
    result = verify(world, check(marker, workdir=Workdir.INPLACE), commit)
    assert f"HEAD is not {commit[:12]}" in result.detail
    assert runs(marker)[-1] != str(world.path)


def test_inplace_runs_in_the_clean_work_tree_at_the_commit(world: Repo, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    result = verify(world, check(marker, workdir=Workdir.INPLACE))
    assert result.outcome is VerifierOutcome.FAILED
    assert result.detail == ""
    assert runs(marker) == [str(world.path)]


@pytest.mark.parametrize("flag", ["--assume-unchanged", "--skip-worktree"])
def test_inplace_never_runs_in_a_work_tree_whose_index_hides_a_change(
    world: Repo, tmp_path: Path, flag: str
) -> None:
    # `git status` says nothing of a file the index marks assume-unchanged or
    # skip-worktree (a sparse checkout marks every file it leaves out): such a work
    # tree is not C, and a pass there would be cached for C.
    marker = tmp_path / "marker"
    world.git("update-index", flag, "budget.txt")
    world.write("budget.txt", "120\n")
    assert world.git("status", "--porcelain", "--ignored").strip() == ""
    result = verify(world, check(marker, workdir=Workdir.INPLACE))
    assert result.outcome is VerifierOutcome.FAILED, result
    assert "workdir inplace not used" in result.detail
    assert str(world.path) not in runs(marker)


def test_the_checkout_is_the_commit_tree_outside_the_repository(
    world: Repo, tmp_path: Path
) -> None:
    listing = tmp_path / "listing.json"
    commit = script(
        world,
        f"""\
        import json, os
        files = sorted(
            os.path.relpath(os.path.join(d, f), ".") for d, _, fs in os.walk(".") for f in fs
        )
        json.dump({{"cwd": os.getcwd(), "files": files}}, open({str(listing)!r}, "w"))
        """,
    )
    result = verify(world, Verification(command=(PY, "checks/check.py")), commit)
    assert result.outcome is VerifierOutcome.PASSED, result
    seen = json.loads(listing.read_text())
    assert seen["files"] == [".gitignore", "README", "budget.txt", "checks/check.py"]
    assert Path(seen["cwd"]).is_relative_to(os.environ["XDG_CACHE_HOME"])


# --------------------------------------------------------------------------- pinning


def test_a_verifier_gutted_in_the_commit_is_not_the_one_that_runs(
    world: Repo, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    reviewed = world.head()
    gutted = script(world, "import sys\nsys.exit(0)\n")
    result = verify(world, check(marker), gutted, pinned_from=reviewed)
    assert result.outcome is VerifierOutcome.FAILED
    assert len(runs(marker)) == 1
    # The control: pinned from the pushed commit itself, the gutted file runs.
    control = verify(world, check(marker), gutted, pinned_from=gutted)
    assert control.outcome is VerifierOutcome.PASSED


def test_a_pinned_symlink_never_runs(world: Repo, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    (world.path / "checks/check.py").rename(world.path / "checks/real.py")
    os.symlink("real.py", world.path / "checks/check.py")
    rev = world.commit("verifier behind a symlink")
    result = verify(world, check(marker), rev)
    assert result.outcome is VerifierOutcome.CANNOT_START
    assert result.detail == (
        f"pinned verifier file checks/check.py is a symlink at {rev[:12]}; "
        "symlinks are never followed"
    )
    assert runs(marker) == []


def test_a_pinned_file_under_a_symlinked_folder_never_runs(world: Repo, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    (world.path / "checks").rename(world.path / "real-checks")
    os.symlink("real-checks", world.path / "checks")
    rev = world.commit("verifier folder behind a symlink")
    result = verify(world, check(marker), rev)
    assert result.outcome is VerifierOutcome.CANNOT_START
    assert "lies under checks, a symlink" in result.detail
    assert runs(marker) == []


def test_a_missing_or_unsafe_pinned_file_never_runs(world: Repo, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    missing = verify(world, check(marker, files=("checks/gone.py",)))
    assert missing.outcome is VerifierOutcome.CANNOT_START
    assert "checks/gone.py is missing" in missing.detail
    unsafe = verify(world, check(marker, files=("../outside.py",)))
    assert unsafe.outcome is VerifierOutcome.CANNOT_START
    assert "not a safe relative path" in unsafe.detail
    assert runs(marker) == []


def test_a_pinned_file_replaces_a_symlink_in_the_checkout_without_writing_through_it(
    world: Repo, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    victim = tmp_path / "victim.py"
    victim.write_text("untouched\n")
    reviewed = world.head()
    (world.path / "checks/check.py").unlink()
    os.symlink(str(victim), world.path / "checks/check.py")
    pushed = world.commit("verifier swapped for a link out of the checkout")
    result = verify(world, check(marker), pushed, pinned_from=reviewed)
    assert result.outcome is VerifierOutcome.FAILED  # the reviewed check ran
    assert "budget 50" in result.output_tail
    assert victim.read_text() == "untouched\n"


def test_a_pinned_file_replaces_a_symlinked_folder_without_writing_through_it(
    world: Repo, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    outside = tmp_path / "real"
    outside.mkdir()
    reviewed = world.head()
    world.git("rm", "-q", "-r", "checks")
    (world.path / "checks").symlink_to(outside)
    pushed = world.commit("the verifier's folder swapped for a link out of the checkout")
    result = verify(world, check(marker), pushed, pinned_from=reviewed)
    assert result.outcome is VerifierOutcome.FAILED  # the reviewed check ran
    assert "budget 50" in result.output_tail
    assert list(outside.iterdir()) == []


def test_a_pinned_file_keeps_its_exec_bit(world: Repo, tmp_path: Path) -> None:
    world.write("checks/run.sh", "#!/bin/sh\necho pinned-ran\n")
    os.chmod(world.path / "checks/run.sh", 0o755)
    reviewed = world.commit("an executable verifier")
    os.chmod(world.path / "checks/run.sh", 0o644)
    pushed = world.commit("exec bit dropped")
    verification = Verification(command=("checks/run.sh",), files=("checks/run.sh",))
    result = verify(world, verification, pushed, pinned_from=reviewed)
    assert result.outcome is VerifierOutcome.PASSED, result
    assert "pinned-ran" in result.output_tail


LISTING = """\
import json, os, sys
found = {}
for folder, _, names in os.walk("checks"):
    for name in names:
        path = os.path.join(folder, name)
        found[path] = "link" if os.path.islink(path) else open(path).read()
json.dump(found, open(sys.argv[1], "w"))
"""


def test_a_pinned_folder_is_taken_whole_from_its_revision(world: Repo, tmp_path: Path) -> None:
    listing = tmp_path / "listing.json"
    world.write("checks/list.py", LISTING)
    world.write("checks/lib/strict.py", "STRICT = True\n")
    reviewed = world.commit("a verifier folder")
    world.write("checks/lib/strict.py", "STRICT = False\n")
    world.write("checks/lib/added.py", "pushed\n")
    (world.path / "checks/check.py").unlink()
    pushed = world.commit("the folder changed in the pushed commit")
    verification = Verification(command=(PY, "checks/list.py", str(listing)), files=("checks",))
    result = verify(world, verification, pushed, pinned_from=reviewed)
    assert result.outcome is VerifierOutcome.PASSED, result
    seen = json.loads(listing.read_text())
    assert seen == {
        "checks/check.py": CHECK,
        "checks/list.py": LISTING,
        "checks/lib/strict.py": "STRICT = True\n",
    }


def test_every_file_of_a_pinned_folder_is_a_pin(world: Repo) -> None:
    world.write("checks/lib/a.py", "a\n")
    first = world.commit("a pinned folder")
    world.write("checks/lib/deeper/b.py", "b\n")
    second = world.commit("a file added to it")
    with GitRepo.open(world.path) as grepo:
        before = [(p.path, p.folder) for p in resolve_pins(grepo, first, ("checks",))]
        after = [p.path for p in resolve_pins(grepo, second, ("checks/lib", "checks/lib/a.py"))]
    assert before == [("checks/check.py", "checks"), ("checks/lib/a.py", "checks")]
    assert sorted(after) == ["checks/lib/a.py", "checks/lib/deeper/b.py"]


def test_a_link_or_submodule_in_a_pinned_folder_never_runs(world: Repo, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    os.symlink("check.py", world.path / "checks/alias.py")
    rev = world.commit("a link in the verifier's folder")
    result = verify(world, check(marker, files=("checks",)), rev)
    assert result.outcome is VerifierOutcome.CANNOT_START
    assert result.detail == (
        f"pinned verifier folder checks holds checks/alias.py, a symlink, at {rev[:12]}; "
        "symlinks are never followed"
    )
    assert runs(marker) == []


def test_a_pinned_folder_is_emptied_without_going_through_a_link(
    world: Repo, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    outside = tmp_path / "outside"
    (outside / "lib").mkdir(parents=True)
    (outside / "lib/keep.txt").write_text("not the checkout's\n")
    world.write("checks/lib/strict.py", "STRICT = True\n")
    reviewed = world.commit("a pinned folder")
    world.git("rm", "-q", "-r", "checks")
    (world.path / "checks").symlink_to(outside)
    pushed = world.commit("the folder's parent swapped for a link out of the checkout")
    result = verify(world, check(marker, files=("checks/check.py", "checks/lib")), pushed,
                    pinned_from=reviewed)  # fmt: skip
    assert result.outcome is VerifierOutcome.FAILED, result  # the reviewed check ran
    assert (outside / "lib/keep.txt").read_text() == "not the checkout's\n"


def test_inplace_needs_the_pinned_folder_as_the_commit_holds_it(
    world: Repo, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    reviewed = world.head()
    world.write("checks/extra.py", "pushed\n")
    pushed = world.commit("a file the pinned folder lacks")
    inplace = check(marker, files=("checks",), workdir=Workdir.INPLACE)
    result = verify(world, inplace, pushed, pinned_from=reviewed)
    assert f"{pushed[:12]} has checks/extra.py in the pinned folder checks" in result.detail
    assert runs(marker)[-1] != str(world.path)
    same = verify(world, inplace, pushed)
    assert same.detail == "", same
    assert runs(marker)[-1] == str(world.path)


# --------------------------------------------------------------------------- the process


def _dead(pid: int) -> bool:
    """Gone, or a zombie: PID 1 in a container may never reap an orphan."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def _eventually_dead(pid: int) -> bool:
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        if _dead(pid):
            return True
        time.sleep(0.05)
    return False


def test_a_verifier_past_its_timeout_is_killed_with_its_whole_group(
    world: Repo, tmp_path: Path
) -> None:
    pid_file = tmp_path / "grandchild.pid"
    commit = script(
        world,
        f"""\
        import signal, subprocess, sys, time
        # A grandchild that ignores SIGTERM and holds the output pipe.
        child = subprocess.Popen([sys.executable, "-c",
            "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"])
        open({str(pid_file)!r}, "w").write(str(child.pid))
        print("started", flush=True)
        time.sleep(60)
        """,
    )
    started = time.monotonic()
    result = verify(world, Verification(command=(PY, "checks/check.py"), timeout_s=1), commit)
    elapsed = time.monotonic() - started
    assert result.outcome is VerifierOutcome.TIMEOUT
    assert result.exit_code is None
    assert "started" in result.output_tail
    assert elapsed < 8, elapsed
    assert _eventually_dead(int(pid_file.read_text()))


def test_ctrl_c_kills_the_running_verifier_and_releases_its_checkout(
    world: Repo, tmp_path: Path
) -> None:
    pid_file = tmp_path / "grandchild.pid"
    cwd_file = tmp_path / "cwd"
    commit = script(
        world,
        f"""\
        import os, subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        open({str(pid_file)!r}, "w").write(str(child.pid))
        open({str(cwd_file)!r}, "w").write(os.getcwd())
        time.sleep(60)
        """,
    )

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 1.0)
    started = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            verify(world, Verification(command=(PY, "checks/check.py")), commit)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert time.monotonic() - started < 5
    assert _eventually_dead(int(pid_file.read_text()))
    with (
        GitRepo.open(world.path) as grepo,
        Checkouts(grepo) as checkouts,
        checkouts.checkout(commit, "ledger") as again,
    ):
        assert again == cwd_file.read_text()  # free again, and proven again


def test_the_default_timeout_applies_when_the_event_sets_none(world: Repo, tmp_path: Path) -> None:
    commit = script(world, "import time\ntime.sleep(60)\n")
    started = time.monotonic()
    result = verify(
        world, Verification(command=(PY, "checks/check.py")), commit, default_timeout_s=1
    )
    assert result.outcome is VerifierOutcome.TIMEOUT
    assert time.monotonic() - started < 8


def test_a_grandchild_holding_the_pipe_does_not_hang_a_finished_verifier(
    world: Repo, tmp_path: Path
) -> None:
    pid_file = tmp_path / "grandchild.pid"
    commit = script(
        world,
        f"""\
        import subprocess, sys
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        open({str(pid_file)!r}, "w").write(str(child.pid))
        print("done", flush=True)
        """,
    )
    started = time.monotonic()
    result = verify(world, Verification(command=(PY, "checks/check.py")), commit)
    assert result.outcome is VerifierOutcome.PASSED
    assert "done" in result.output_tail
    assert time.monotonic() - started < 5
    assert _eventually_dead(int(pid_file.read_text()))


def test_a_command_that_cannot_start(world: Repo) -> None:
    result = verify(world, Verification(command=("no-such-verifier-here",)))
    assert result.outcome is VerifierOutcome.CANNOT_START
    assert "not found on the verifier's PATH" in result.detail
    assert result.exit_code is None
    world.write("checks/plain.sh", "#!/bin/sh\nexit 0\n")
    commit = world.commit("not executable")
    result = verify(world, Verification(command=("checks/plain.sh",)), commit)
    assert result.outcome is VerifierOutcome.CANNOT_START
    assert "Permission denied" in result.detail


def test_exit_125_is_no_verdict(world: Repo) -> None:
    commit = script(world, "import sys\nprint('fixture missing')\nsys.exit(125)\n")
    result = verify(world, Verification(command=(PY, "checks/check.py")), commit)
    assert result.outcome is VerifierOutcome.NO_VERDICT
    assert result.exit_code == 125
    assert result.detail == NO_VERDICT_DETAIL
    assert "fixture missing" in result.output_tail


def test_other_exits_fail_and_keep_the_last_lines(world: Repo) -> None:
    commit = script(
        world,
        "import sys\nfor i in range(100): print('line', i, flush=True)\nprint('oops', file=sys.stderr)\n"
        "sys.exit(3)\n",
    )
    result = verify(world, Verification(command=(PY, "checks/check.py")), commit)
    assert result.outcome is VerifierOutcome.FAILED
    assert result.exit_code == 3
    lines = result.output_tail.splitlines()
    assert len(lines) == 20
    assert lines[-1] == "oops"
    assert lines[0] == "line 81"
    assert result.duration_s is not None and result.duration_s > 0


def test_the_verifier_sees_only_the_allow_list(
    world: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dump = tmp_path / "env.json"
    commit = script(
        world,
        f"""\
        import json, os, sys
        json.dump({{"env": dict(os.environ), "cwd": os.getcwd(), "stdin": sys.stdin.read()}},
                  open({str(dump)!r}, "w"))
        """,
    )
    monkeypatch.setenv("GIT_DIR", str(world.path / ".git"))
    monkeypatch.setenv("SECRET_TOKEN", "hunter2")
    monkeypatch.setenv("NODE_OPTIONS", "--max-old-space-size=64")
    monkeypatch.setenv("LC_ALL", "C")
    monkeypatch.setenv("FAILGATE_REF", "refs/heads/main")  # as `failgate ci` is told it
    verification = Verification(
        command=(PY, "checks/check.py"), env_pass=("NODE_OPTIONS", "GIT_DIR", "UNSET_NAME")
    )
    # Data waiting on our own stdin must not reach the verifier.
    read_end, write_end = os.pipe()
    os.write(write_end, b"leaked stdin")
    os.close(write_end)
    saved = os.dup(0)
    os.dup2(read_end, 0)
    try:
        result = verify(world, verification, commit, environment=None)
    finally:
        os.dup2(saved, 0)
        os.close(saved)
        os.close(read_end)
    assert result.outcome is VerifierOutcome.PASSED, result
    assert "env_pass GIT_DIR not passed" in result.detail
    seen = json.loads(dump.read_text())
    env = seen["env"]
    assert "GIT_DIR" not in env
    assert "SECRET_TOKEN" not in env
    assert env["NODE_OPTIONS"] == "--max-old-space-size=64"
    # the locale is fixed: the one failgate runs in never decides a verdict cached for all
    assert "LC_ALL" not in env and env["LANG"] == "C.UTF-8"
    assert env["FAILGATE_COMMIT"] == commit
    assert env["FAILGATE_ENTITY_KEY"] == ENTITY
    assert env["FAILGATE_ENVIRONMENT"] == ""
    # nor the trigger or the ref: a pass stands on every ref, so no verdict may vary by it
    assert "FAILGATE_REF" not in env and "FAILGATE_TRIGGER" not in env
    # failgate's own two: the load watcher first on the path, a private bytecode cache
    assert env["PYTHONPATH"].endswith(f"{os.sep}site")
    assert Path(env["PYTHONPYCACHEPREFIX"]).parent == Path(env["PYTHONPATH"]).parent
    allowed = {"PATH", "HOME", "LANG", "TMPDIR", "TERM", "NODE_OPTIONS", "GIT_CEILING_DIRECTORIES"}
    allowed |= {"PYTHONPATH", "PYTHONPYCACHEPREFIX"}
    extra = {k for k in env if k not in allowed and not k.startswith("FAILGATE_")}
    assert extra == set()
    assert seen["stdin"] == ""
    assert seen["cwd"] != str(world.path)
    slot = os.path.dirname(seen["cwd"])
    assert env["GIT_CEILING_DIRECTORIES"] == f"{slot}:{os.path.dirname(slot)}"


@pytest.mark.parametrize(
    ("active", "kept"),
    [("another", False), ("ours", True), (None, True)],
    ids=["another-venv-active", "ours-is-the-active-one", "none-active"],
)
def test_the_hook_virtualenv_leaves_path_only_when_it_is_not_the_project_s(
    world: Repo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    active: str | None,
    kept: bool,
) -> None:
    assert sys.prefix != sys.base_prefix, "the suite runs in the project's virtualenv"
    ours = os.path.dirname(sys.executable)
    monkeypatch.setenv("PATH", os.pathsep.join([ours, "/usr/bin", "/bin"]))
    monkeypatch.delenv("PRE_COMMIT_HOME", raising=False)
    if active is None:
        monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    else:
        monkeypatch.setenv("VIRTUAL_ENV", sys.prefix if active == "ours" else str(tmp_path))
    dump = tmp_path / "path.txt"
    commit = script(world, f"import os\nopen({str(dump)!r}, 'w').write(os.environ['PATH'])\n")
    verify(world, Verification(command=(PY, "checks/check.py")), commit)
    expected = [ours, "/usr/bin", "/bin"] if kept else ["/usr/bin", "/bin"]
    assert dump.read_text().split(os.pathsep) == expected


PUSHER_SET = {"LANG": "C", "LC_ALL": "C", "LC_CTYPE": "C", "TERM": "dumb", "TZ": "UTC+5"}


def test_a_verifier_runs_in_the_fixed_locale_unless_env_pass_names_one() -> None:
    environ = {"PATH": "/bin", **PUSHER_SET}
    env, refused = verifier_env(environ, env_pass=(), commit="c", entity_key="k", environment=None)
    assert env["LANG"] == "C.UTF-8" and refused == ()
    assert not {"LC_ALL", "LC_CTYPE", "TZ"} & set(env) and env["TERM"] == "dumb"
    named = ("LANG", "LC_ALL", "TZ")
    env, refused = verifier_env(
        environ, env_pass=named, commit="c", entity_key="k", environment=None
    )
    assert (env["LANG"], env["LC_ALL"], env["TZ"]) == ("C", "C", "UTC+5") and refused == ()


def test_on_a_server_nothing_the_pusher_sets_reaches_the_verifier() -> None:
    environ = {"PATH": "/bin", "SERVER_TOKEN": "s", **PUSHER_SET}
    env, refused = verifier_env(
        environ, env_pass=("LANG", "LC_ALL", "TZ", "SERVER_TOKEN"), commit="c",
        entity_key="k", environment=None, pusher_env=True, reviewed=True,
    )  # fmt: skip
    assert env["LANG"] == "C.UTF-8" and env["SERVER_TOKEN"] == "s"
    assert not {"LC_ALL", "LC_CTYPE", "TZ", "TERM"} & set(env)
    assert refused == (
        "env_pass LANG, LC_ALL, TZ not passed: on a server the pusher sets it, "
        "and a pass stands for every pusher",
    )


# Every kind of name at once: the allow-list (TERM among them is a pusher's), an
# ordinary env_pass name, git's own, the signing key's, and names a pusher sets.
EVERY_KIND = {
    "PATH": "/bin", "HOME": "/h", "TMPDIR": "/t", "SERVER_TOKEN": "s", "GIT_DIR": "/r.git",
    "git_work_tree": "/w", "FAILGATE_EVIDENCE_KEY": "k", "HTTP_COOKIE": "c", **PUSHER_SET,
}  # fmt: skip
EVERY_PASS = ("SERVER_TOKEN", "GIT_DIR", "git_work_tree", "FAILGATE_EVIDENCE_KEY", "LANG",
              "LC_ALL", "TZ", "TERM", "HTTP_COOKIE", "UNSET")  # fmt: skip
OURS = {"FAILGATE_COMMIT": "c", "FAILGATE_ENTITY_KEY": "k", "FAILGATE_ENVIRONMENT": ""}
NEVER_NOTE = (
    "env_pass GIT_DIR, git_work_tree, FAILGATE_EVIDENCE_KEY not passed: git's own "
    "variables and the evidence signing key never are"
)


@pytest.mark.parametrize(
    ("env_pass", "pusher_env", "expected", "notes"),
    [
        ((), False, {"LANG": "C.UTF-8", "PATH": "/bin", "HOME": "/h", "TMPDIR": "/t", "TERM": "dumb"}, ()),
        ((), True, {"LANG": "C.UTF-8", "PATH": "/bin", "HOME": "/h", "TMPDIR": "/t"}, ()),
        (
            EVERY_PASS, False,
            {"LANG": "C", "PATH": "/bin", "HOME": "/h", "TMPDIR": "/t", "TERM": "dumb",
             "SERVER_TOKEN": "s", "LC_ALL": "C", "TZ": "UTC+5", "HTTP_COOKIE": "c"},
            (NEVER_NOTE,),
        ),
        (
            EVERY_PASS, True,
            {"LANG": "C.UTF-8", "PATH": "/bin", "HOME": "/h", "TMPDIR": "/t", "SERVER_TOKEN": "s"},
            (NEVER_NOTE, "env_pass LANG, LC_ALL, TZ, TERM, HTTP_COOKIE not passed: on a server "
             "the pusher sets it, and a pass stands for every pusher"),
        ),
    ],
    ids=["client", "server", "client-env_pass", "server-env_pass"],
)  # fmt: skip
def test_the_verifier_s_whole_environment_for_each_kind_of_name(
    env_pass: tuple[str, ...], pusher_env: bool, expected: dict[str, str], notes: tuple[str, ...]
) -> None:
    """The environment exactly, in order, and its notes: nothing more reaches the verifier."""
    env, refused = verifier_env(
        EVERY_KIND, env_pass=env_pass, commit="c", entity_key="k", environment=None,
        pusher_env=pusher_env, reviewed=True,
    )  # fmt: skip
    assert list(env.items()) == list({**expected, **OURS}.items())
    assert refused == notes


def test_a_server_verifier_not_said_to_be_reviewed_gets_no_env_pass_name() -> None:
    """Only a caller that knows a protected revision holds the event says `reviewed`:
    one that does not say gets the server's rule for a verification that came with the
    push."""
    env, refused = verifier_env(
        EVERY_KIND, env_pass=("SERVER_TOKEN",), commit="c", entity_key="k", environment=None,
        pusher_env=True,
    )  # fmt: skip
    assert "SERVER_TOKEN" not in env, env
    assert any("SERVER_TOKEN not passed" in note for note in refused), refused
    client, _ = verifier_env(
        EVERY_KIND, env_pass=("SERVER_TOKEN",), commit="c", entity_key="k", environment=None
    )
    assert client["SERVER_TOKEN"] == "s"


@pytest.mark.parametrize(
    "name", ["REQUEST_URI", "DOCUMENT_URI", "SCRIPT_URI", "SCRIPT_URL", "REDIRECT_QUERY_STRING"]
)
def test_a_web_server_s_request_variables_never_reach_a_server_verifier(name: str) -> None:
    """nginx and Apache make these from the request git-http-backend serves."""
    env, refused = verifier_env(
        {"PATH": "/bin", name: "pushed"}, env_pass=(name,), commit="c", entity_key="k",
        environment=None, pusher_env=True,
    )  # fmt: skip
    assert name not in env and refused, (env, refused)


def test_empty_and_relative_path_entries_never_reach_the_verifier(
    world: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each would be looked up in the checkout, where a program is the commit's own."""
    tools = os.path.dirname(shutil.which("git") or "/usr/bin/git")
    monkeypatch.setenv("PATH", os.pathsep.join(["", "bin", tools, ".", "/bin", "a/../b", ""]))
    dump = tmp_path / "path.txt"
    commit = script(world, f"import os\nopen({str(dump)!r}, 'w').write(os.environ['PATH'])\n")
    verify(world, Verification(command=(PY, "checks/check.py")), commit)
    assert dump.read_text().split(os.pathsep) == [tools, "/bin"]
    # Nothing absolute left: the default, never the checkout.
    env, _ = verifier_env(
        {"PATH": "bin"}, env_pass=(), commit=commit, entity_key="k",
        environment=None,
    )  # fmt: skip
    assert env["PATH"] == os.defpath


def test_pre_commit_s_hook_env_is_failgate_s_own_even_as_the_active_one(tmp_path: Path) -> None:
    store = tmp_path / "pre-commit"
    hook_env = store / "repo1a2b3c" / "py_env-python3.11"
    hook_env.mkdir(parents=True)
    # pre-commit sets VIRTUAL_ENV to its hook env and puts that env first on PATH
    environ = {"PRE_COMMIT_HOME": str(store), "VIRTUAL_ENV": str(hook_env)}
    assert own_virtualenv(environ, str(hook_env), "/usr") == str(hook_env)
    cache = {"XDG_CACHE_HOME": str(tmp_path), "VIRTUAL_ENV": str(hook_env)}
    assert own_virtualenv(cache, str(hook_env), "/usr") == str(hook_env)
    home = {"HOME": str(tmp_path / "home"), "VIRTUAL_ENV": str(hook_env)}
    assert own_virtualenv(home, str(hook_env), "/usr") is None  # not under ~/.cache/pre-commit
    assert own_virtualenv({}, "/usr", "/usr") is None  # no virtualenv at all


def test_one_progress_line_before_running(world: Repo, tmp_path: Path) -> None:
    lines: list[str] = []
    verify(world, check(tmp_path / "marker"), progress=lines)
    assert lines == [
        f"failgate: running verifier for {ENTITY} ({PY} checks/check.py {tmp_path / 'marker'})…"
    ]


# --------------------------------------------------------------------------- trust


def test_an_untrusted_verifier_does_not_run(world: Repo, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    store = TrustStore(str(world.path / ".git"))
    result = verify(world, check(marker), trust_ledger=False, trust=store)
    assert result.outcome is VerifierOutcome.UNTRUSTED
    assert result.detail == UNTRUSTED_DETAIL
    assert runs(marker) == []


def test_an_approved_verifier_runs_until_its_pinned_file_changes(
    world: Repo, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    verification = check(marker)
    store = TrustStore(str(world.path / ".git"))
    with GitRepo.open(world.path) as grepo:
        pins = resolve_pins(grepo, world.head(), verification.files)
    pinned = [(p.path, p.oid) for p in pins]
    store.approve([TrustedVerifier.new(ENTITY, verification, pinned, "Ada")])
    trusted = verify(
        world, verification, trust_ledger=False, trust=TrustStore(str(world.path / ".git"))
    )
    assert trusted.outcome is VerifierOutcome.FAILED
    assert len(runs(marker)) == 1
    script(world, CHECK + "# edited\n")
    edited = verify(world, verification, trust_ledger=False)
    assert edited.outcome is VerifierOutcome.UNTRUSTED
    assert len(runs(marker)) == 1


def test_the_verifier_layer_takes_trust_from_its_caller_never_from_the_environment(
    world: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "marker"
    monkeypatch.setenv("FAILGATE_TRUST_LEDGER", "1")
    result = verify(world, check(marker), trust_ledger=False)
    assert result.outcome is VerifierOutcome.UNTRUSTED
    assert runs(marker) == []


def test_check_takes_the_trust_switch_from_the_environment(tmp_path: Path) -> None:
    origin = budget_repo(tmp_path / "origin")
    record_failure(origin, "push")
    # a fresh clone: this machine trusts nothing in it yet
    git(tmp_path, "clone", "-q", str(origin.path), str(tmp_path / "clone"))
    clone = Repo(tmp_path / "clone")
    untrusted = clone.failgate("check", "--ref", "refs/heads/main")
    assert untrusted.code == 1 and "not trusted on this machine" in untrusted.out, untrusted
    trusted = clone.failgate(
        "check", "--ref", "refs/heads/main", env={"FAILGATE_TRUST_LEDGER": "1"}
    )
    assert trusted.code == 1, trusted
    assert "not trusted" not in trusted.out and "budget 50M < required 120M" in trusted.out


# --------------------------------------------------------------------------- cache


def _passing(world: Repo) -> str:
    world.write("budget.txt", "120\n")
    return world.commit("budget fixed")


def test_the_same_content_runs_once_and_survives_ledger_commits(
    world: Repo, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    fixed = _passing(world)
    first = verify(world, check(marker))
    assert (first.outcome, first.cached) == (VerifierOutcome.PASSED, False)
    again = verify(world, check(marker))
    assert (again.outcome, again.cached) == (VerifierOutcome.PASSED, True)
    assert len(runs(marker)) == 1
    world.write("ledger/deploy/mainnet/gas-budget/20261129T230500Z-7f3a9c1e.toml", "schema = 1\n")
    recorded = world.commit("record verified")
    after = verify(world, check(marker), recorded)
    assert (after.outcome, after.cached) == (VerifierOutcome.PASSED, True)
    assert f"passed on {fixed[:12]}" in after.detail
    assert len(runs(marker)) == 1
    forced = verify(world, check(marker), recorded, no_cache=True)
    assert (forced.outcome, forced.cached) == (VerifierOutcome.PASSED, False)
    assert len(runs(marker)) == 2
    world.write("README", "changed\n")
    changed = world.commit("content changed")
    assert verify(world, check(marker), changed).cached is False
    assert len(runs(marker)) == 3
    assert verify(world, check(marker), changed, environment="mainnet").cached is False
    assert len(runs(marker)) == 4


def test_failures_are_never_cached(world: Repo, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    verify(world, check(marker))
    verify(world, check(marker))
    assert len(runs(marker)) == 2


def test_inputs_narrow_the_cache_key(world: Repo, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    _passing(world)
    verification = check(marker, inputs=("budget.txt", "checks/**"))
    assert verify(world, verification).cached is False
    world.write("docs/notes.md", "unrelated\n")
    docs = world.commit("docs only")
    assert verify(world, verification, docs).cached is True
    world.write("budget.txt", "120 \n")
    budget = world.commit("an input changed")
    assert verify(world, verification, budget).cached is False
    assert len(runs(marker)) == 2


@pytest.mark.parametrize("inputs", [("./budget.txt",), ("budget.text",), ("checks//*.py",)])
def test_inputs_that_match_no_file_never_let_one_pass_stand_for_every_commit(
    world: Repo, tmp_path: Path, inputs: tuple[str, ...]
) -> None:
    # Globs that match nothing (`./`, a typo) key every commit alike: the verifier
    # still reads budget.txt, so a pass on one budget would clear every other.
    marker = tmp_path / "marker"
    _passing(world)
    verification = check(marker, inputs=inputs)
    assert verify(world, verification).outcome is VerifierOutcome.PASSED
    world.write("budget.txt", "50\n")
    broken = world.commit("the budget broken again")
    result = verify(world, verification, broken)
    assert result.outcome is VerifierOutcome.FAILED, result
    assert len(runs(marker)) == 2


def test_an_unwritable_cache_degrades_to_running(world: Repo, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    _passing(world)
    folder = world.path / ".git/failgate"
    folder.mkdir()
    (folder / "cache").write_text("a file where the cache folder should be\n")
    first = verify(world, check(marker))
    assert first.outcome is VerifierOutcome.PASSED
    assert "the pass cache could not be used" in first.detail
    second = verify(world, check(marker))
    assert second.outcome is VerifierOutcome.PASSED
    assert second.cached is False
    assert len(runs(marker)) == 2


def test_a_cached_pass_still_needs_trust(world: Repo, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    _passing(world)
    verify(world, check(marker))
    result = verify(world, check(marker), trust_ledger=False)
    assert result.outcome is VerifierOutcome.UNTRUSTED


# --------------------------------------------------------------------------- checkouts


def test_a_bare_repository_can_produce_a_checkout(world: Repo, tmp_path: Path) -> None:
    os.symlink("budget.txt", world.path / "link")
    world.write("run.sh", "#!/bin/sh\n")
    os.chmod(world.path / "run.sh", 0o755)
    world.write(".gitattributes", "run.sh export-ignore\n")
    commit = world.commit("symlink, exec bit, export-ignore")
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(world.path), str(bare))
    with GitRepo.open(bare) as grepo, Checkouts(grepo) as checkouts:
        assert grepo.working_dir is None  # bare
        with checkouts.checkout(commit, "ledger") as root:
            top = Path(root)
            assert (top / "budget.txt").read_text() == "50\n"
            assert os.readlink(top / "link") == "budget.txt"
            assert (top / "run.sh").stat().st_mode & stat.S_IXUSR
            assert not (top / ".git").exists()


def test_each_verifier_starts_from_the_pristine_tree(world: Repo) -> None:
    commit = world.head()
    with GitRepo.open(world.path) as grepo, Checkouts(grepo) as checkouts:
        with checkouts.checkout(commit, "ledger") as first:
            (Path(first) / "budget.txt").write_text("120\n")
            (Path(first) / "leftover.txt").write_text("x")
            (Path(first) / "checks").chmod(0o500)
        with checkouts.checkout(commit, "ledger") as second:
            assert second == first  # the same folder, moved by git rather than written again
            assert (Path(second) / "budget.txt").read_text() == "50\n"
            assert not (Path(second) / "leftover.txt").exists()
            assert (Path(second) / "checks").stat().st_mode & 0o777 == 0o755


def test_a_checkout_leaves_the_users_index_as_it_was(world: Repo) -> None:
    commit = world.head()
    world.write("budget.txt", "120\n")
    world.git("add", "budget.txt")
    staged = world.git("diff", "--cached")
    with GitRepo.open(world.path) as grepo, Checkouts(grepo) as checkouts:
        root = checkouts.fresh(commit, "ledger")
        assert (Path(root) / "budget.txt").read_text() == "50\n"
    assert world.git("diff", "--cached") == staged


def test_a_checkout_that_cannot_be_made_is_cannot_start(world: Repo, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    not_a_folder = tmp_path / "tmpdir-is-a-file"
    not_a_folder.write_text("x")
    with GitRepo.open(world.path) as grepo, Checkouts(grepo, parent_dir=str(not_a_folder)) as co:
        result = run_gate_verifier(
            grepo,
            entity_key=ENTITY,
            verification=check(marker),
            commit=world.head(),
            pinned_from=None,
            ledger_dir="ledger",
            environment=None,
            checkouts=lambda: co,
            trust_ledger=True,
        )
    assert result.outcome is VerifierOutcome.CANNOT_START
    assert result.detail.startswith(f"cannot prepare a clean checkout of {world.head()[:12]}")
    assert runs(marker) == []


def test_checkouts_are_removed_on_keyboard_interrupt(world: Repo) -> None:
    with GitRepo.open(world.path) as grepo:
        with pytest.raises(KeyboardInterrupt), Checkouts(grepo) as checkouts:
            path = checkouts.fresh(world.head(), "ledger")
            os.chmod(os.path.join(path, "checks"), 0o500)
            raise KeyboardInterrupt
        assert not os.path.exists(path)
        assert not os.path.exists(os.path.dirname(path))


def test_a_checkout_runs_no_hook(world: Repo, tmp_path: Path) -> None:
    marker = tmp_path / "hook-ran"
    for name in ("post-checkout", "post-index-change"):
        hook = world.path / ".git/hooks" / name
        hook.write_text(f"#!/bin/sh\necho {name} >> {marker}\n")
        hook.chmod(0o755)
    with GitRepo.open(world.path) as grepo, Checkouts(grepo) as checkouts:
        checkouts.fresh(world.head(), "ledger")
    assert not marker.exists()


def test_a_checkout_works_inside_the_pre_receive_quarantine(world: Repo, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    hook = remote / "hooks/pre-receive"
    hook.write_text(
        f"#!{PY}\n"
        + textwrap.dedent(
            """\
            import os, sys
            from failgate_hooks.git.repo import GitRepo
            from failgate_hooks.verify.checkout import Checkouts
            old, new, ref = sys.stdin.readline().split()
            assert "GIT_QUARANTINE_PATH" in os.environ
            with GitRepo.open(".") as repo, Checkouts(repo) as checkouts:
                with checkouts.checkout(new, "ledger") as root:
                    print("CHECKOUT", sorted(os.listdir(root)), file=sys.stderr)
            sys.exit(1)
            """
        )
    )
    hook.chmod(0o755)
    push = subprocess.run(
        ["git", "push", str(remote), "HEAD:refs/heads/main"],
        cwd=world.path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert push.returncode != 0  # the hook refuses, so nothing lands: only the checkout is tested
    assert "CHECKOUT ['.gitignore', 'README', 'budget.txt', 'checks']" in push.stderr


@pytest.mark.parametrize("where", ["file", "command"])
def test_a_verifier_that_reads_the_ref_failgate_no_longer_sets_has_no_verdict(
    world: Repo, tmp_path: Path, where: str
) -> None:
    """One that skipped its check unless the ref was main would skip it everywhere now:
    it must not pass, cached or not."""
    marker = tmp_path / "marker"
    body = """\
        import os, sys
        with open(sys.argv[1], "a") as m:
            m.write("ran\\n")
        if os.environ.get("FAILGATE_REF") != "refs/heads/main":
            sys.exit(0)
        sys.exit(1)
        """
    if where == "command":
        body = body.replace('os.environ.get("FAILGATE_REF")', "sys.argv[2]")
    script(world, body)
    verification = check(marker)
    if where == "command":
        command = (*verification.command, "$FAILGATE_REF")
        verification = verification._replace(command=command)
    result = verify(world, verification)
    assert result.outcome is VerifierOutcome.NO_VERDICT, result
    assert "FAILGATE_REF or FAILGATE_TRIGGER, which failgate no longer sets" in result.detail
    assert ("the command" in result.detail) == (where == "command")
    assert runs(marker) == []


def test_on_a_server_an_unreviewed_verification_gets_none_of_its_env_pass() -> None:
    """No protected revision holds the event that sets it: whoever pushed it chose the
    names, and would read the server's own variables in its output."""
    env, refused = verifier_env(
        EVERY_KIND, env_pass=EVERY_PASS, commit="c", entity_key="k", environment=None,
        pusher_env=True, reviewed=False,
    )  # fmt: skip
    assert list(env.items()) == list(
        {"LANG": "C.UTF-8", "PATH": "/bin", "HOME": "/h", "TMPDIR": "/t", **OURS}.items()
    )
    assert refused == (
        NEVER_NOTE,
        "env_pass SERVER_TOKEN, LANG, LC_ALL, TZ, TERM, HTTP_COOKIE, UNSET not passed: on a "
        "server only a verification a protected branch holds gets them, and this one came "
        "with the push",
    )
    # Off a server the person running failgate chose to run it: reviewed says nothing there.
    env, refused = verifier_env(
        EVERY_KIND, env_pass=("SERVER_TOKEN",), commit="c", entity_key="k", environment=None,
        reviewed=False,
    )  # fmt: skip
    assert env["SERVER_TOKEN"] == "s" and refused == ()
