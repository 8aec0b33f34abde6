"""A pathspec failgate writes means the same whatever GIT_*_PATHSPECS the user exports:
every git process failgate starts is given them pinned (git/repo.PATHSPECS_AS_WRITTEN)."""

from __future__ import annotations

from pathlib import Path

import pytest

from failgate_hooks.git.checkoutgit import CheckoutGit, object_dirs
from failgate_hooks.git.repo import GitRepo, run_git
from tests.conftest import Repo

VARIABLES = [
    {"GIT_LITERAL_PATHSPECS": "1"},
    {"GIT_GLOB_PATHSPECS": "1"},
    {"GIT_NOGLOB_PATHSPECS": "1"},
    {"GIT_ICASE_PATHSPECS": "1"},
    {"GIT_ICASE_PATHSPECS": "1", "GIT_GLOB_PATHSPECS": "1"},
]
IDS = ["literal", "glob", "noglob", "icase", "icase-glob"]
# Each variable reads one of these otherwise: `:(glob)` as a name, `notes*` as a name or
# as a glob whose `*` stops at `/`, `ledger` case-blind.
SPECS = (":(glob)ledger/*/*.toml", "notes*")
WANTED = ["ledger/e/a.toml", "notes*", "notes-2", "notes-dir/x"]


@pytest.fixture
def listed(repo: Repo) -> Repo:
    """Files a case-blind, literal or glob reading of SPECS would select differently."""
    for path in ("ledger/e/a.toml", "LEDGER/e/b.toml", "notes*", "notes-2", "notes-dir/x"):
        repo.write(path, "x\n")
    repo.commit("files")
    return repo


def _listed(out: str) -> list[str]:
    return sorted(filter(None, out.split("\0")))


@pytest.mark.parametrize("variables", VARIABLES, ids=IDS)
def test_a_repositorys_git_reads_pathspecs_as_written(
    listed: Repo, monkeypatch: pytest.MonkeyPatch, variables: dict[str, str]
) -> None:
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    with GitRepo.open(listed.path) as git_repo:
        assert _listed(git_repo.run("ls-files", "-z", "--", *SPECS, strip=False)) == WANTED


@pytest.mark.parametrize("variables", VARIABLES, ids=IDS)
def test_git_outside_a_repository_object_reads_pathspecs_as_written(
    listed: Repo, monkeypatch: pytest.MonkeyPatch, variables: dict[str, str]
) -> None:
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    code, out = run_git(str(listed.path), "ls-files", "-z", "--", *SPECS)
    assert (code, _listed(out)) == (0, WANTED)


def test_a_checkouts_clean_reads_its_glob_pathspecs_under_git_literal_pathspecs(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.write("sub/kept.txt", "x\n")
    commit = repo.commit("a folder")
    with GitRepo.open(repo.path) as git_repo:
        checkout = CheckoutGit(str(tmp_path / "git"), object_dirs(git_repo), str(tmp_path / "home"))
    checkout.ensure("sha1")
    work, index = tmp_path / "work", str(tmp_path / "index")
    work.mkdir()
    checkout.move(str(work), index, commit)
    (work / "sub" / "left-behind.txt").write_text("a verifier's leftover\n")
    monkeypatch.setenv("GIT_LITERAL_PATHSPECS", "1")
    checkout.clean(str(work), index, ["sub"])
    assert sorted(p.name for p in (work / "sub").iterdir()) == ["kept.txt"]
