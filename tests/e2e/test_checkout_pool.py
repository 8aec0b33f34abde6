"""Verifier checkouts kept between runs, through the real `failgate check` and a real pre-receive."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import Repo, git, make_repo
from tests.e2e.test_pre_receive import install_pre_receive, push
from tests.worlds import remote_ref, verified_tree, with_remote

KEY = "ci:leftovers:clean-tree"

# Holds unless a file a previous run left behind is visible: it must never be.
LEFTOVER_CHECK = """\
import os, sys
if os.path.exists("leftover.txt"):
    print("cleared by a leftover")
    sys.exit(0)
open("leftover.txt", "w").write("from an earlier run\\n")
os.chmod("checks", 0o555)
print("held")
sys.exit(1)
"""


def gated(path: Path, check: str, object_format: str = "sha1") -> Repo:
    """A repository whose push gate runs `check`, recorded and committed."""
    repo = make_repo(path, object_format)
    repo.write("checks/v.py", textwrap.dedent(check))
    repo.commit("the verifier")
    recorded = repo.failgate(
        "record", KEY, "--status", "observed", "--title", "a gate", "--trigger", "push",
        "--verify", f"{sys.executable} checks/v.py", "--verify-file", "checks/v.py",
        "--no-probe",
    )  # fmt: skip
    assert recorded.code == 0, recorded
    repo.commit("record the gate")
    return repo


def slots(cache: Path) -> list[Path]:
    return sorted(cache.glob("failgate/checkouts/*/[0-9]*"))


def test_what_one_run_leaves_never_clears_the_next(tmp_path: Path) -> None:
    repo = gated(tmp_path / "repo", LEFTOVER_CHECK)
    first = repo.failgate("check", "--trigger", "push", "--no-cache")
    assert first.code == 1, first
    assert "held" in first.out
    repo.write("notes.txt", "a new commit, the same verifier\n")
    repo.commit("another commit")
    second = repo.failgate("check", "--trigger", "push", "--no-cache")
    assert second.code == 1, second
    assert "cleared by a leftover" not in second.out
    (slot,) = slots(Path(os.environ["XDG_CACHE_HOME"]))  # one checkout, used by both runs
    state = json.loads((slot / "state.json").read_text())
    assert state["tree"] == verified_tree(repo.path, repo.head())
    assert (slot / "tree" / "leftover.txt").exists()  # the second run's, left as it was


def test_git_inside_a_checkout_finds_no_repository(tmp_path: Path) -> None:
    home = make_repo(tmp_path / "home")  # a home folder kept in git, the cache inside it
    cache = home.path / ".cache"
    seen = tmp_path / "seen.json"
    check = f"""\
    import json, os, subprocess, sys
    def top(where):
        run = subprocess.run(["git", "-C", where, "rev-parse", "--show-toplevel"],
                             capture_output=True, text=True)
        return [run.returncode, run.stdout.strip()]
    json.dump({{"cwd": os.getcwd(), "here": top("."), "sub": top("checks"),
               "parent": top("node_modules"),
               "parent_files": sorted(os.listdir("node_modules"))}},
              open({str(seen)!r}, "w"))
    """
    repo = gated(tmp_path / "repo", check)
    os.symlink("..", repo.path / "node_modules")
    repo.commit("node_modules pointing up, as a workspace link can")
    result = repo.failgate(
        "check", "--trigger", "push", "--no-cache", env={"XDG_CACHE_HOME": str(cache)}
    )
    assert result.code == 0, result
    found = json.loads(seen.read_text())
    assert Path(found["cwd"]).is_relative_to(cache)
    for where in ("here", "sub", "parent"):
        code, top = found[where]
        assert code != 0 and top == "", (where, found)
    assert found["parent_files"] == ["index", "lock", "state.json", "tree"]


def test_a_cache_inside_the_work_tree_is_never_used(tmp_path: Path) -> None:
    seen = tmp_path / "cwd"
    repo = gated(tmp_path / "repo", f"import os\nopen({str(seen)!r}, 'w').write(os.getcwd())\n")
    repo.write(".gitignore", ".cache/\n")
    repo.commit("ignore the cache")
    cache = repo.path / ".cache"
    result = repo.failgate(
        "check", "--trigger", "push", "--no-cache", env={"XDG_CACHE_HOME": str(cache)}
    )
    assert result.code == 0, result
    cwd = Path(seen.read_text())
    assert not cwd.is_relative_to(repo.path)
    assert not cwd.exists()  # a temporary checkout, removed with its run
    assert not cache.exists()


def test_pre_receive_moves_one_checkout_through_a_refused_push_and_its_fix(
    tmp_path: Path,
) -> None:
    """The refused commit's objects leave with the quarantine; the checkout still moves."""
    check = """\
    import pathlib, sys
    sys.exit(0 if pathlib.Path("fixed.txt").exists() else 1)
    """
    repo = gated(tmp_path / "work", check, "sha256")
    remote = with_remote(repo, tmp_path / "remote.git")
    server_cache = tmp_path / "server-cache"
    hook = remote / "hooks" / "pre-receive"
    install_pre_receive(remote, "--exec")
    hook.write_text(hook.read_text().replace("exec ", f"XDG_CACHE_HOME={server_cache} exec ", 1))
    repo.write("work.txt", "more work, not yet the fix\n")
    refused_commit = repo.commit("more work")
    refused = push(repo, "main")
    assert refused.returncode != 0, refused.stderr
    assert "BLOCKED" in refused.stderr
    assert git(remote, "cat-file", "-t", refused_commit, check=False) == ""
    repo.write("fixed.txt", "the fix\n")
    fixed = repo.commit("the fix")
    accepted = push(repo, "main")
    assert accepted.returncode == 0, accepted.stderr
    assert "CLEARED" in accepted.stderr
    assert remote_ref(remote, "refs/heads/main") == fixed
    (slot,) = slots(server_cache)
    assert json.loads((slot / "state.json").read_text())["tree"] == verified_tree(remote, fixed)
    listed = subprocess.run(
        ["ls", str(slot / "tree")], capture_output=True, text=True, check=True
    ).stdout.split()
    assert listed == ["README", "checks", "fixed.txt", "work.txt"]  # no ledger: not content


def test_a_verifier_that_makes_a_file_immutable_changes_no_decision(tmp_path: Path) -> None:
    """Hole 7b: `chattr +i` in a verifier (as root) once ended `check` in a PermissionError."""
    if os.geteuid() != 0:
        pytest.fail("a verifier making a file immutable needs root (chattr +i): run as root")
    check = """\
    import subprocess, sys
    subprocess.run(["chattr", "+i", "checks/v.py", "README"], check=True)
    sys.exit(0)
    """
    repo = gated(tmp_path / "repo", check)
    cache = Path(os.environ["XDG_CACHE_HOME"])
    try:
        first = repo.failgate("check", "--trigger", "push", "--no-cache")
        assert first.code == 0, first
        repo.write("README", "a project, changed where the file is immutable\n")
        repo.commit("change the immutable file")
        second = repo.failgate("check", "--trigger", "push", "--no-cache")
        assert second.code == 0, second
        assert "Traceback" not in second.output
        assert "failgate: warning: could not remove " in second.err
        assert "(Operation not permitted: " in second.err and "chattr -R -i" in second.err
        assert "CLEARED" in second.out
        (left,) = cache.glob("failgate/checkouts/*/broken/*")
        assert (left / "tree" / "README").read_text() == "a project\n"
    finally:
        subprocess.run(["chattr", "-R", "-i", str(cache)], capture_output=True, check=False)
