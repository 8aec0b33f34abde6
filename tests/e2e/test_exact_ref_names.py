"""A ref failgate reads by its full name is that ref, never another that git's rules for
revisions would take in its place.

git reads a missing `refs/heads/master`, as a revision, as `refs/refs/heads/master`,
`refs/tags/refs/heads/master` or `refs/heads/refs/heads/master`: refs anyone who may
push can create. A stock `git init --bare` points HEAD at master while the team pushes
main; the server took such a planted ref for its default branch, the protected base of
every decision, and a non-relaxer's expiry of a held gate then landed on main. Real
pushes through a real pre-receive hook to a real bare repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from failgate_hooks.app.report import inspection_revisions
from failgate_hooks.git.remotes import ref_tips
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.ledger.union import Revision
from tests.conftest import git
from tests.e2e.test_pre_receive import push, server
from tests.worlds import KEY, budget_repo, remote_ref


@pytest.mark.parametrize("plant", ["refs/refs/heads/master", "refs/heads/refs/heads/master"])
def test_a_ref_spelling_the_missing_default_branch_does_not_stand_in_for_it(
    tmp_path: Path, plant: str
) -> None:
    repo, remote = server(tmp_path)
    git(remote, "symbolic-ref", "HEAD", "refs/heads/master")  # stock: HEAD names master
    expired = repo.failgate("expire", KEY, "--note", "bob says it is gone")
    assert expired.code == 0, expired
    repo.commit("expire the gate, by someone who may not relax it")
    before = remote_ref(remote, "refs/heads/main")
    refused = push(repo, "main")
    assert refused.returncode != 0 and "PENDING" in refused.stderr, refused.stderr

    planted = push(repo, f"HEAD:{plant}")  # a ref no gate protects: it may be created
    assert planted.returncode == 0, planted.stderr
    assert remote_ref(remote, plant) == repo.head()
    again = push(repo, "main")
    assert again.returncode != 0, again.stderr
    assert "PENDING" in again.stderr, again.stderr
    assert remote_ref(remote, "refs/heads/main") == before


def test_a_tag_spelling_a_tracking_ref_is_not_that_tracking_ref(tmp_path: Path) -> None:
    """A narrow fetch leaves no `refs/remotes/origin/main`; a tag that spells it (stored as
    `refs/tags/refs/remotes/origin/main`) is no protected revision of the client's."""
    repo = budget_repo(tmp_path / "work")
    repo.git("remote", "add", "origin", str(tmp_path / "nowhere.git"))
    repo.git("tag", "refs/remotes/origin/main")
    tagged = repo.head()
    repo.write("src.txt", "work after the tag\n")
    repo.commit("work after the tag")
    assert repo.git("rev-parse", "refs/remotes/origin/main") == tagged  # as a revision
    with GitRepo.open(repo.path) as git_repo:
        for ref in ("refs/heads/main", "refs/heads/topic"):
            revisions, _ = inspection_revisions(git_repo, "HEAD", ref)
            assert [r.label for r in revisions] == ["HEAD"], revisions
    repo.git("update-ref", "refs/remotes/origin/main", tagged)  # fetched, now
    with GitRepo.open(repo.path) as git_repo:
        revisions, _ = inspection_revisions(git_repo, "HEAD", "refs/heads/main")
    assert revisions[1:] == [Revision("refs/remotes/origin/main", tagged, protected=True)]


def test_a_name_is_looked_up_whole_not_as_a_pattern(tmp_path: Path) -> None:
    """`for-each-ref NAME` also lists the refs below NAME and none that only begin with it:
    only the ref spelled so counts."""
    repo = budget_repo(tmp_path / "work")
    repo.git("update-ref", "refs/heads/release/1", repo.head())
    repo.git("tag", "-a", "-m", "an annotated tag", "v1")
    with GitRepo.open(repo.path) as git_repo:
        assert ref_tips(git_repo, ["refs/heads/release", "refs/heads/mai"]) == []
        assert ref_tips(git_repo, []) == []
        wanted = ["refs/tags/v1", "refs/heads/main", "refs/heads/main"]
        assert ref_tips(git_repo, wanted) == [
            ("refs/heads/main", repo.head()),
            ("refs/tags/v1", repo.head()),  # peeled
        ]
