"""`failgate trust` and what it lets run: one version per gate, shown in full.

Real repositories and the real `failgate` command in a fresh interpreter, with
standard input not a terminal, as in a script or an editor's task runner.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from failgate_hooks.app import demo
from tests.conftest import Repo
from tests.worlds import KEY, budget_repo, fix_budget, record_failure

STRICTER = demo.CHECK_SCRIPT.replace("PER_MODULE = 20_000_000", "PER_MODULE = 30_000_000")


def check(repo: Repo) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "failgate_hooks", "check", "--ref", "refs/heads/main"],
        cwd=repo.path, capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL,
        timeout=300,
    )  # fmt: skip


def trust(repo: Repo, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "failgate_hooks", "trust", *args],
        cwd=repo.path, capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL,
        timeout=300,
    )  # fmt: skip


def stricter_world(tmp_path: Path) -> Repo:
    """The budget fixed for 20M a module; the verifier then made stricter (30M) and the
    stricter version approved, which holds the gate again."""
    repo = budget_repo(tmp_path / "work")
    record_failure(repo, "push")  # record trusts the version it writes
    fix_budget(repo)
    assert check(repo).returncode == 0
    repo.write(demo.CHECK_PATH, STRICTER)
    repo.commit("a module needs 30M")
    assert trust(repo, "--yes").returncode == 0
    held = check(repo)
    assert held.returncode == 1 and "< required 180M" in held.stdout, held
    return repo


def test_approving_a_new_version_revokes_the_old_and_a_downgrade_asks_again(
    tmp_path: Path,
) -> None:
    repo = stricter_world(tmp_path)
    repo.write(demo.CHECK_PATH, demo.CHECK_SCRIPT)
    repo.commit("back to 20M a module, quietly")
    downgraded = check(repo)
    assert downgraded.returncode == 1, downgraded
    assert "not trusted on this machine" in downgraded.stdout
    store = json.loads((repo.path / ".git/failgate/trust.json").read_text())
    assert [v["entity_key"] for v in store["verifiers"]] == [KEY]
