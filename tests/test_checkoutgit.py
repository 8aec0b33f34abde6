"""A verifier checkout's git: the shape of a commit, listed whole and moved by a tree diff."""

from __future__ import annotations

from pathlib import Path

from failgate_hooks.git.checkoutgit import CheckoutGit, Shape, object_dirs
from failgate_hooks.git.repo import GitRepo
from tests.conftest import Repo

ODD = 'odd\n"name\t'  # a folder's name git would quote without -z


def _checkout_git(repo: Repo, tmp_path: Path) -> CheckoutGit:
    with GitRepo.open(repo.path) as git_repo:
        checkout = CheckoutGit(str(tmp_path / "git"), object_dirs(git_repo), str(tmp_path / "home"))
    checkout.ensure("sha1")
    return checkout


def _with_gitlink(repo: Repo, path: str) -> str:
    """HEAD with a submodule entry at `path` (any commit id will do), committed."""
    repo.git("add", "-A")
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{repo.head()},{path}")
    repo.git("commit", "-q", "-m", "a submodule")
    return repo.head()


def test_a_diff_moves_the_shape_to_the_one_a_whole_listing_gives(
    repo: Repo, tmp_path: Path
) -> None:
    repo.write("gone/a.txt", "x\n")
    repo.write(f"{ODD}/b.txt", "x\n")
    repo.write("becomes-a-file/c.txt", "x\n")
    before = _with_gitlink(repo, "sub")
    repo.git("rm", "-q", "-r", "gone", "becomes-a-file")
    repo.git("rm", "-q", "--cached", "sub")
    repo.write("becomes-a-file", "now a file\n")
    repo.write("new/deep/d.txt", "x\n")
    after = _with_gitlink(repo, f"{ODD}/module")
    git = _checkout_git(repo, tmp_path)
    assert git.shape(before) == Shape(
        frozenset({"gone", ODD, "becomes-a-file"}), frozenset({"sub"})
    )
    expected = Shape(frozenset({ODD, "new", "new/deep"}), frozenset({f"{ODD}/module"}))
    assert git.shape(after) == expected
    assert git.reshape(git.shape(before), before, after) == expected
