"""`failgate ci` on a push that creates a protected ref at a commit main already holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Repo
from tests.e2e.test_ci import KEY, NULL, ci_checkout, github, run_ci
from tests.worlds import budget_repo, record_failure, with_remote


def _main_moved_on(tmp_path: Path) -> tuple[Repo, str]:
    """origin/main holds a gate recorded after `old`, the commit a new ref is cut at."""
    repo = budget_repo(tmp_path / "work")
    with_remote(repo, tmp_path / "remote.git")
    old = repo.head()
    record_failure(repo, "push")
    repo.git("push", "-q", "--no-verify", "origin", "main")
    return repo, old


@pytest.mark.parametrize("ref", ["refs/heads/release/1.1", "refs/tags/v1.1"])
def test_a_new_protected_ref_at_an_old_commit_is_held_by_main_s_later_gate(
    tmp_path: Path, ref: str
) -> None:
    repo, old = _main_moved_on(tmp_path)
    repo.git("push", "-q", "--no-verify", "origin", f"{old}:{ref}")
    repo.git("switch", "-q", "--detach", old)
    payload = {"ref": ref, "before": NULL, "after": old, "created": True,
               "repository": {"default_branch": "main"}}  # fmt: skip
    env = github(tmp_path, "push", payload, GITHUB_REF=ref, GITHUB_SHA=old)
    result = run_ci(ci_checkout(repo, tmp_path), tmp_path, env)
    # main's ledger is read although the pushed commit is one of main's ancestors
    assert result.code == 1, result
    assert "against nothing (a new ref)" in result.out
    [error] = result.annotations("error")
    assert error.startswith(f"OPEN {KEY}")
