"""Real pre-commit: a project's .pre-commit-config.yaml points at this checkout.

pre-commit builds the hook's virtualenv from the package registry the first
time, as it does for a user; `make test` installs pre-commit, and this test
never skips.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Repo, git
from tests.worlds import (
    budget_repo,
    fix_budget,
    record_failure,
    remote_ref,
    single_branch_clone,
    with_remote,
)

PROJECT = Path(__file__).resolve().parents[2]
SHIPPED = ("failgate_hooks", "pyproject.toml", "README.md", ".pre-commit-hooks.yaml")


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """This checkout's current files as a git repository at one commit id."""
    path = tmp_path_factory.mktemp("failgate-hook-repo")
    for name in SHIPPED:
        source = PROJECT / name
        if source.is_dir():
            shutil.copytree(source, path / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, path / name)
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "failgate as shipped")
    return path, git(path, "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


def pre_commit(repo: Repo, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "pre-commit"
    return subprocess.run(
        [str(exe), *args], cwd=repo.path, capture_output=True, text=True, check=False,
        env={**os.environ, "PRE_COMMIT_HOME": str(home)}, timeout=600,
    )  # fmt: skip


def git_push(repo: Repo, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "push", "origin", *args], cwd=repo.path, capture_output=True, text=True,
        check=False, env={**os.environ, "PRE_COMMIT_HOME": str(home)}, timeout=600,
    )  # fmt: skip


def pre_commit_config(hook_repo: tuple[Path, str], extra: str = "") -> str:
    hook_path, rev = hook_repo
    return (
        f"repos:\n  - repo: {hook_path}\n    rev: {rev}\n    hooks:\n      - id: failgate\n{extra}"
    )


def install_pre_push(repo: Repo, home: Path) -> None:
    """`pre-commit install --hook-type pre-push`, as the README says."""
    installed = pre_commit(repo, home, "install", "--hook-type", "pre-push")
    assert installed.returncode == 0, installed.stderr


def test_pre_commit_refuses_a_held_push_and_allows_the_fix(
    tmp_path: Path, hook_repo: tuple[Path, str], pre_commit_home: Path
) -> None:
    repo = budget_repo(tmp_path / "work")
    remote = with_remote(repo, tmp_path / "remote.git")
    repo.write(".pre-commit-config.yaml", pre_commit_config(hook_repo))
    record_failure(repo, "push")
    install_pre_push(repo, pre_commit_home)
    before = remote_ref(remote, "refs/heads/main")

    refused = git_push(repo, pre_commit_home, "main")
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0, output
    assert "BLOCKED" in output
    assert "budget 50M < required 120M" in output
    assert "only the first pushed ref is checked" in output
    assert remote_ref(remote, "refs/heads/main") == before

    fixed = fix_budget(repo)
    allowed = git_push(repo, pre_commit_home, "main")
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    assert remote_ref(remote, "refs/heads/main") == fixed


def test_under_pre_commit_the_hook_refuses_when_nothing_names_the_pushed_commit(
    repo: Repo,
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRE_COMMIT")}
    proc = subprocess.run(
        [sys.executable, "-c", "from failgate_hooks.commands.cli import pre_push_main; pre_push_main()"],
        cwd=repo.path, capture_output=True, text=True, input="", check=False,
        env={**env, "PRE_COMMIT": "1"},
    )  # fmt: skip
    assert proc.returncode != 0
    assert "nothing identifies the pushed commit" in proc.stderr
    assert "--from-ref" in proc.stderr


LOCAL_PRE_PUSH_HOOK = """\
repos:
  - repo: local
    hooks:
      - id: team-check
        name: the team's own pre-push check
        entry: "true"
        language: system
        stages: [pre-push]
        always_run: true
        pass_filenames: false
"""


def test_install_chain_keeps_a_pre_commit_hook_working_beside_failgate(
    tmp_path: Path, pre_commit_home: Path
) -> None:
    repo = budget_repo(tmp_path / "work")
    remote = with_remote(repo, tmp_path / "remote.git")
    repo.write(".pre-commit-config.yaml", LOCAL_PRE_PUSH_HOOK)
    repo.commit("the team's pre-commit config")
    install_pre_push(repo, pre_commit_home)
    chained = repo.failgate("install", "--chain")
    assert chained.code == 0, chained

    clean = git_push(repo, pre_commit_home, "main")
    output = clean.stdout + clean.stderr
    assert clean.returncode == 0, output
    assert "the team's own pre-push check" in output  # pre-commit's hook still ran
    assert "migration mode" not in output
    assert remote_ref(remote, "refs/heads/main") == repo.head()

    record_failure(repo, "push")
    held = git_push(repo, pre_commit_home, "main")
    output = held.stdout + held.stderr
    assert held.returncode != 0, output
    assert "BLOCKED" in output
    assert remote_ref(remote, "refs/heads/main") != repo.head()


def test_under_pre_commit_an_older_commit_s_configuration_never_decides_a_new_branch(
    tmp_path: Path, hook_repo: tuple[Path, str], pre_commit_home: Path
) -> None:
    """release/2.0 from an old commit that said mode = "warn": pre-commit names that
    commit as FROM_REF (the parent of the first commit the remote lacks), yet main's
    configuration decides, as it does for the plain hook: the gate holds."""
    repo = budget_repo(tmp_path / "work")
    repo.write(".pre-commit-config.yaml", pre_commit_config(hook_repo))
    repo.write("failgate.toml", 'mode = "warn"\n')
    lax = repo.commit("only warnings, for now")
    repo.git("rm", "-q", "failgate.toml")
    repo.commit("failgate enforces")
    record_failure(repo, "push")
    remote = with_remote(repo, tmp_path / "remote.git")
    install_pre_push(repo, pre_commit_home)
    repo.git("switch", "-q", "-c", "release/2.0", lax)
    repo.write("hotfix.txt", "a fix for 2.0\n")
    repo.commit("a hotfix on 2.0")

    refused = git_push(repo, pre_commit_home, "release/2.0")
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0, output
    assert "BLOCKED" in output and "budget 50M < required 120M" in output
    assert "may proceed" not in output
    assert remote_ref(remote, "refs/heads/release/2.0") is None


def test_under_pre_commit_a_remote_tip_not_where_it_was_fetched_is_refused(
    tmp_path: Path, hook_repo: tuple[Path, str], pre_commit_home: Path
) -> None:
    """A colleague pushed a gate to main; this clone never fetched it and force-pushes
    new work based below its origin/main. pre-commit cannot name the tip it lacks (its
    FROM_REF is an older commit): failgate refuses, and says to fetch."""
    repo = budget_repo(tmp_path / "work")
    repo.write(".pre-commit-config.yaml", pre_commit_config(hook_repo))
    fetched = repo.commit("the team's pre-commit config")
    remote = with_remote(repo, tmp_path / "remote.git")
    colleague = Repo(tmp_path / "colleague")
    subprocess.run(["git", "clone", "-q", str(remote), str(colleague.path)], check=True)
    record_failure(colleague, "push")
    colleague.git("push", "-q", "--no-verify", "origin", "main")
    gated_tip = colleague.head()
    install_pre_push(repo, pre_commit_home)
    repo.git("switch", "-q", "-c", "redo", "HEAD~1")
    repo.write(".pre-commit-config.yaml", pre_commit_config(hook_repo))
    repo.commit("the same config, on other work")

    refused = git_push(repo, pre_commit_home, "--force", "redo:main")
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0, output
    assert f"origin's refs/heads/main is not at {fetched[:12]}, where it was last fetched" in (
        output
    )
    assert "git fetch --prune origin), then push again" in output
    assert remote_ref(remote, "refs/heads/main") == gated_tip


def test_under_pre_commit_a_from_ref_no_tracking_ref_confirms_is_not_reviewed(
    tmp_path: Path, hook_repo: tuple[Path, str], pre_commit_home: Path
) -> None:
    """A single-branch clone of feature pushes a commit there that only warns, then work
    on it to release/1. pre-commit names feature's tip as release/1's FROM_REF (the
    parent of the first commit no tracking ref holds): nothing confirms it is
    release/1's, so it is not reviewed. Nothing else is, and the built-in defaults
    decide that the gate holds."""
    repo = budget_repo(tmp_path / "work")
    repo.write(".pre-commit-config.yaml", pre_commit_config(hook_repo))
    record_failure(repo, "push")
    remote = with_remote(repo, tmp_path / "remote.git")
    repo.git("push", "-q", "--no-verify", "origin", "main:refs/heads/feature")
    clone = single_branch_clone(remote, tmp_path / "clone", "feature")
    install_pre_push(clone, pre_commit_home)
    clone.write("failgate.toml", 'mode = "warn"\n')
    lax = clone.commit("only warnings")
    warned = git_push(clone, pre_commit_home, "HEAD:refs/heads/feature")
    assert warned.returncode == 0, warned.stdout + warned.stderr
    assert clone.git("rev-parse", "refs/remotes/origin/feature") == lax
    clone.write("notes.txt", "more work\n")
    clone.commit("more work")

    refused = git_push(clone, pre_commit_home, "HEAD:refs/heads/release/1")
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0, output
    assert "BLOCKED" in output and "may proceed" not in output, output
    assert '"enforce" -> "warn"' in output, output
    assert remote_ref(remote, "refs/heads/release/1") is None


def test_under_pre_commit_a_from_ref_the_pusher_names_is_not_main_s_reviewed_tip(
    tmp_path: Path, hook_repo: tuple[Path, str], pre_commit_home: Path
) -> None:
    """`pre-commit run --hook-stage pre-push --from-ref L` names the remote's old tip as
    the pusher likes: here a local commit that only warns, for main. origin/main stands
    elsewhere, so L is not main's tip as fetched: unknown, never the revision whose
    configuration decides, and the push is refused."""
    repo = budget_repo(tmp_path / "work")
    repo.write(".pre-commit-config.yaml", pre_commit_config(hook_repo))
    record_failure(repo, "push")
    remote = with_remote(repo, tmp_path / "remote.git")
    fetched = repo.head()
    install_pre_push(repo, pre_commit_home)
    repo.git("switch", "-q", "-c", "lax")
    repo.write("failgate.toml", 'mode = "warn"\n')
    lax = repo.commit("only warnings")
    repo.git("switch", "-q", "main")
    repo.write("notes.txt", "more work\n")
    pushed = repo.commit("more work")

    claimed = pre_commit(
        repo, pre_commit_home, "run", "--hook-stage", "pre-push", "--from-ref", lax,
        "--to-ref", pushed, "--remote-name", "origin", "--remote-url", str(remote),
        "--remote-branch", "refs/heads/main", "--local-branch", "refs/heads/main",
    )  # fmt: skip
    output = claimed.stdout + claimed.stderr
    assert claimed.returncode != 0, output
    assert f"origin's refs/heads/main is not at {fetched[:12]}, where it was last fetched" in (
        output
    )
    assert "may proceed" not in output, output


@pytest.mark.parametrize("args", ["[-h]", "[upstream]"])
def test_pre_commit_args_cannot_make_failgate_check_nothing(
    tmp_path: Path, hook_repo: tuple[Path, str], pre_commit_home: Path, args: str
) -> None:
    """`args: [-h]` would print help and pass every push; `args: [upstream]` would read
    another remote. Under pre-commit failgate takes no argument, and says so."""
    repo = budget_repo(tmp_path / "work")
    remote = with_remote(repo, tmp_path / "remote.git")
    repo.write(".pre-commit-config.yaml", pre_commit_config(hook_repo, f"        args: {args}\n"))
    repo.commit("failgate, given arguments")
    install_pre_push(repo, pre_commit_home)
    before = remote_ref(remote, "refs/heads/main")

    refused = git_push(repo, pre_commit_home, "main")
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0, output
    assert "under pre-commit failgate-pre-push takes no arguments" in output
    assert "give the failgate hook no args" in output
    assert remote_ref(remote, "refs/heads/main") == before


def test_under_pre_commit_the_warning_for_an_unprotected_ref_reaches_the_pusher(
    tmp_path: Path, hook_repo: tuple[Path, str], pre_commit_home: Path
) -> None:
    """pre-commit shows a passing hook's output only when the hook is verbose: without
    it, a push to feature/x with a gate open said only "Passed". A passing push with
    nothing open stays a few lines."""
    repo = budget_repo(tmp_path / "work")
    remote = with_remote(repo, tmp_path / "remote.git")
    repo.write(".pre-commit-config.yaml", pre_commit_config(hook_repo))
    repo.commit("the team's pre-commit config")
    install_pre_push(repo, pre_commit_home)

    clean = git_push(repo, pre_commit_home, "main")
    quiet = clean.stdout + clean.stderr
    assert clean.returncode == 0, quiet
    hook_says = quiet[quiet.index("failgate...") : quiet.index("\nTo ")].strip().splitlines()
    assert [line for line in hook_says if line.strip()] == [
        hook_says[0], "- hook id: failgate", hook_says[2],
        f'GATES for "push" @ {repo.head()[:12]} -> refs/heads/main: 0 open / 0 cleared / 0 conflict',
        'OK: no gate applies. "push" may proceed.',
    ], quiet  # fmt: skip

    record_failure(repo, "push")
    warned = git_push(repo, pre_commit_home, "main:feature/x")
    output = warned.stdout + warned.stderr
    assert warned.returncode == 0, output
    assert "WARN: 1 gate(s) open, not blocking" in output, output
    assert remote_ref(remote, "refs/heads/feature/x") == repo.head()
