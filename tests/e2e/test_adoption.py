"""A team adopts failgate on a real project's history, with a real pre-commit.

The project is tomli (tests/data/tomli.bundle: its 1.2.2 release, which rejects
lower case "t" and "z" in datetimes, and 1.2.3, which fixes that; see
tests/data/README.md). The team installs failgate through pre-commit's pre-push
stage, pushes cleanly, records the bug, is refused with what to do next, applies
tomli's own fix and pushes it; at every step gates, export, log and check agree.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.conftest import Repo, git
from tests.e2e.test_pre_commit import git_push, hook_repo, pre_commit, pre_commit_home
from tests.worlds import remote_ref

DATA = Path(__file__).resolve().parents[1] / "data"
KEY = "tomli:datetime:lowercase-t-z"
CHECK = "checks/check_tomli_datetime.py"

__all__ = ["hook_repo", "pre_commit_home"]  # pytest's fixtures, shared with test_pre_commit


def tomli_at_1_2_2(tmp_path: Path) -> tuple[Repo, Path]:
    """tomli's history with main at its 1.2.2 release, and a bare remote holding it."""
    git(tmp_path, "clone", "-q", str(DATA / "tomli.bundle"), "tomli")
    repo = Repo(tmp_path / "tomli")
    repo.git("reset", "-q", "--hard", "1.2.2")
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    repo.git("remote", "set-url", "origin", str(remote))
    repo.git("push", "-q", "--no-verify", "origin", "main")
    return repo, remote


def agreed_state(repo: Repo) -> str:
    """The gate's state as gates, export, log and check each give it; they must agree."""
    check = json.loads(repo.failgate("check", "--json").out)
    gates = json.loads(repo.failgate("gates", "--json").out)
    export = json.loads(repo.failgate("export", "--json").out)
    log = json.loads(repo.failgate("log", KEY, "--json").out)
    found = {
        "check": [g["state"] for g in check["gates"] if g["entity_key"] == KEY],
        "gates": [g["state"] for g in gates["gates"] if g["entity_key"] == KEY],
        "export": [e["state"] for e in export["entities"] if e["entity_key"] == KEY],
        "log": [log["gate"]["state"]],
    }
    states = {state for listed in found.values() for state in listed}
    assert len(states) == 1 and all(len(v) == 1 for v in found.values()), found
    return states.pop()


def test_a_team_adopts_failgate_on_tomlis_history_with_pre_commit(
    tmp_path: Path, hook_repo: tuple[Path, str], pre_commit_home: Path
) -> None:
    repo, remote = tomli_at_1_2_2(tmp_path)
    hook_path, rev = hook_repo
    repo.write(
        ".pre-commit-config.yaml",
        f"repos:\n  - repo: {hook_path}\n    rev: {rev}\n    hooks:\n      - id: failgate\n",
    )
    repo.commit("run failgate before every push")
    installed = pre_commit(repo, pre_commit_home, "install", "--hook-type", "pre-push")
    assert installed.returncode == 0, installed.stderr

    clean = git_push(repo, pre_commit_home, "main")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert remote_ref(remote, "refs/heads/main") == repo.head()

    # The bug is seen and recorded, with a verifier that fails on 1.2.2.
    (repo.path / "checks").mkdir()
    shutil.copy(DATA / "check_tomli_datetime.py", repo.path / CHECK)
    recorded = repo.failgate(
        "record", KEY, "--status", "observed", "--trigger", "push",
        "--title", 'tomli rejects lower case "t" and "z" in datetimes',
        "--verify", f"python3 {CHECK}", "--verify-file", CHECK,
        "--note", "1979-05-27t07:32:00z is valid TOML (RFC 3339); tomli 1.2.2 rejects it",
    )  # fmt: skip
    assert recorded.code == 0, recorded
    assert "probe: the verifier fails on HEAD" in recorded.err, recorded
    repo.commit("record the lower case datetime failure")
    landed = remote_ref(remote, "refs/heads/main")

    held = git_push(repo, pre_commit_home, "main")
    output = held.stdout + held.stderr
    assert held.returncode != 0, output
    assert "BLOCKED: 1 gate(s) still open." in output
    assert "tomli 1.2.2 rejects 'odt = 1979-05-27t07:32:00z'" in output
    assert f"  next: `failgate try {KEY}` runs {KEY}'s verifier on your work tree" in output
    assert f"`failgate expire {KEY} --note WHY`" in output
    assert remote_ref(remote, "refs/heads/main") == landed
    assert agreed_state(repo) == "open"

    # tomli's own fix, as 1.2.3 shipped it, then the push lands and every command agrees.
    repo.git("checkout", "1.2.3", "--", "tomli")
    fixed = repo.commit("allow lower case t and z in datetimes (tomli 1.2.3)")
    allowed = git_push(repo, pre_commit_home, "main")
    output = allowed.stdout + allowed.stderr
    assert allowed.returncode == 0, (
        output
    )  # pre-commit shows a passing hook's output only as "Passed"
    assert remote_ref(remote, "refs/heads/main") == fixed
    gates = repo.failgate("gates")  # nothing runs: the hook's pass is cached
    assert f"CLEARED {KEY}" in gates.out and gates.code == 0, gates
    assert agreed_state(repo) == "cleared"
