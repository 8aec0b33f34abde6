"""Which branch of which remote the inspecting commands read as protected, on real repositories."""

from __future__ import annotations

from pathlib import Path

import pytest

from failgate_hooks.git.remotes import Branch, fetches, inspected_branch
from failgate_hooks.git.repo import GitRepo
from tests.conftest import Repo, make_repo


def tracked(tmp_path: Path, *branches: str) -> Repo:
    """A repository with remote `origin` whose tracking refs are `branches`, and no
    refs/remotes/origin/HEAD: git sets none when a remote is added, not cloned."""
    repo = make_repo(tmp_path / "work")
    repo.write("README", "a project\n")
    repo.commit("start")
    remote = tmp_path / "remote.git"
    repo.git("init", "-q", "--bare", str(remote))
    repo.git("remote", "add", "origin", str(remote))
    for branch in branches:
        repo.git("push", "-q", "--no-verify", "origin", f"HEAD:refs/heads/{branch}")
    repo.git("fetch", "-q", "origin")
    return repo


def branch_of(repo: Repo) -> Branch | None:
    with GitRepo.open(repo.path) as opened:
        return inspected_branch(opened)


def test_without_origin_head_main_is_the_default_branch(tmp_path: Path) -> None:
    repo = tracked(tmp_path, "master", "main")
    assert branch_of(repo) == Branch("refs/remotes/origin/main", repo.head(), "refs/heads/main")


def test_without_origin_head_or_main_master_is_the_default_branch(tmp_path: Path) -> None:
    repo = tracked(tmp_path, "topic", "master")
    found = branch_of(repo)
    assert found == Branch("refs/remotes/origin/master", repo.head(), "refs/heads/master")


def test_origin_head_names_the_default_branch_before_main(tmp_path: Path) -> None:
    repo = tracked(tmp_path, "main", "trunk")
    repo.git("remote", "set-head", "origin", "trunk")
    assert branch_of(repo) == Branch("refs/remotes/origin/trunk", repo.head(), "refs/heads/trunk")


def test_a_remote_with_no_default_branch_here_and_no_remote_give_none(tmp_path: Path) -> None:
    assert branch_of(tracked(tmp_path / "a", "topic")) is None
    alone = make_repo(tmp_path / "b")
    alone.write("README", "x\n")
    alone.commit("start")
    assert branch_of(alone) is None


@pytest.mark.parametrize(
    ("specs", "ref", "fetched"),
    [
        (["+refs/heads/*:refs/remotes/origin/*"], "refs/heads/main", True),
        (["+refs/heads/feature:refs/remotes/origin/feature"], "refs/heads/main", False),
        (["+refs/heads/feature:refs/remotes/origin/feature"], "refs/heads/feature", True),
        (["+refs/heads/release/*:refs/remotes/origin/release/*"], "refs/heads/release/1", True),
        (["+refs/heads/*:refs/remotes/origin/*", "^refs/heads/main"], "refs/heads/main", False),
        ([], "refs/heads/main", False),
    ],
)
def test_a_remote_fetches_a_branch_only_where_a_refspec_brings_it(
    tmp_path: Path, specs: list[str], ref: str, fetched: bool
) -> None:
    """A single-branch clone's refspec names its one branch: `git fetch` brings no other."""
    repo = make_repo(tmp_path / "work")
    repo.git("remote", "add", "origin", str(tmp_path / "remote.git"))
    repo.git("config", "--unset-all", "remote.origin.fetch")
    for spec in specs:
        repo.git("config", "--add", "remote.origin.fetch", spec)
    with GitRepo.open(repo.path) as opened:
        assert fetches(opened, "origin", ref) is fetched
