"""failgate reads a tree as git checks it out, or refuses it: real objects, written raw."""

from __future__ import annotations

import subprocess

import pytest

from failgate_hooks.core.errors import GitError
from failgate_hooks.git.repo import GitRepo
from tests.conftest import Repo


def raw_tree(repo: Repo, *entries: tuple[bytes, bytes, str]) -> str:
    """A tree object of exactly `entries` (mode, name, id), written without git's checks."""
    data = b"".join(mode + b" " + name + b"\0" + bytes.fromhex(oid) for mode, name, oid in entries)
    done = subprocess.run(
        ["git", "hash-object", "-w", "-t", "tree", "--literally", "--stdin"],
        cwd=repo.path, input=data, capture_output=True, check=True,
    )  # fmt: skip
    return done.stdout.decode().strip()


@pytest.mark.parametrize(
    ("stored", "read"),
    [
        (b"40755", ("040000", "tree")),
        (b"40000", ("040000", "tree")),
        (b"120644", ("120000", "blob")),
        (b"100664", ("100644", "blob")),
        (b"100775", ("100755", "blob")),
        (b"160000", ("160000", "commit")),
    ],
)
def test_a_mode_is_read_by_its_file_type_as_git_reads_it(
    repo: Repo, stored: bytes, read: tuple[str, str]
) -> None:
    blob = repo.git("hash-object", "-w", "--stdin", input="x\n")
    inner = raw_tree(repo, (b"100644", b"f", blob))
    target = inner if read[1] == "tree" else blob
    tree = raw_tree(repo, (stored, b"entry", target))
    with GitRepo.open(repo.path) as grepo:
        [entry] = grepo.tree_entries(tree)
    assert (entry.mode, entry.type) == read


@pytest.mark.parametrize("name", [b"a/b", b"", b".", b"..", b".git", b".GIT"])
def test_a_name_git_fsck_refuses_is_refused(repo: Repo, name: bytes) -> None:
    blob = repo.git("hash-object", "-w", "--stdin", input="x\n")
    tree = raw_tree(repo, (b"100644", name, blob))
    with GitRepo.open(repo.path) as grepo, pytest.raises(GitError, match="git fsck refuses"):
        grepo.tree_entries(tree)


def test_two_entries_of_one_name_are_refused(repo: Repo) -> None:
    blob = repo.git("hash-object", "-w", "--stdin", input="x\n")
    inner = raw_tree(repo, (b"100644", b"f", blob))
    tree = raw_tree(repo, (b"100644", b"deploy", blob), (b"40000", b"deploy", inner))
    with GitRepo.open(repo.path) as grepo, pytest.raises(GitError, match="duplicateEntries"):
        grepo.tree_entries(tree)
