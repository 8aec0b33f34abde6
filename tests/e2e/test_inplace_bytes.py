"""`workdir = "inplace"` runs in the work tree only when its files are the commit's bytes.

`git status` calls a tree clean after undoing the commit's own conversions
(working-tree-encoding, eol, text, ident, filter, core.autocrlf), and trusts a
file whose timestamps match the index. Each world here has a work tree status
calls clean whose data file a verifier would read as other bytes than its blob:
the gate must stay open (the verifier runs in a clean checkout instead), the
push must be refused, and no pass may be cached.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Repo, make_repo
from tests.worlds import remote_ref, trusted_shell_gate, with_remote

# Fails while the flag is on, as a whole line: read as UTF-16, with CRLF or through a
# smudge filter, the work tree's copy no longer says so.
CHECK = """\
#!/bin/sh
echo "ran in $(pwd)"
if grep -qx 'bad_flag=1' data/config.txt; then echo "bad flag present"; exit 1; fi
exit 0
"""
CHECK_ARGS = ("check", "--ref", "refs/heads/main")
UTF16 = "data/config.txt working-tree-encoding=UTF-16\n"


def inplace_gate(tmp_path: Path) -> tuple[Repo, Path]:
    """A repository whose data file has the bad flag, gated by an inplace verifier that
    fails on it; a remote holding the commit before the gate; the pre-push hook in."""
    repo = make_repo(tmp_path / "work")
    repo.write("data/config.txt", "bad_flag=1\n")
    repo.write("checks/check.sh", CHECK)
    repo.commit("the bad flag and its check")
    remote = with_remote(repo, tmp_path / "remote.git")
    trusted_shell_gate(repo, "bad flag", 'workdir = "inplace"')
    assert repo.failgate("install").code == 0
    return repo, remote


def written_again(repo: Repo) -> None:
    """The data file written anew by git, under whatever conversion is in force."""
    (repo.path / "data" / "config.txt").unlink()
    repo.git("checkout", "--", "data/config.txt")


def committed_attributes(path: str, text: str) -> Callable[[Repo, Path], None]:
    def convert(repo: Repo, tmp_path: Path) -> None:
        repo.write(path, text)
        repo.commit(f"attributes in {path}", path)
        written_again(repo)

    return convert


def info_attributes(repo: Repo, tmp_path: Path) -> None:
    (repo.path / ".git" / "info").mkdir(exist_ok=True)
    (repo.path / ".git" / "info" / "attributes").write_text(UTF16)
    written_again(repo)


def attributes_file(repo: Repo, tmp_path: Path) -> None:
    outside = tmp_path / "attributes"
    outside.write_text(UTF16)
    repo.git("config", "core.attributesFile", str(outside))
    written_again(repo)


def autocrlf(repo: Repo, tmp_path: Path) -> None:
    repo.git("config", "core.autocrlf", "true")
    written_again(repo)


def smudge_filter(repo: Repo, tmp_path: Path) -> None:
    repo.git("config", "filter.hide.smudge", "sed s/bad_flag=1/bad_flag=0/")
    repo.git("config", "filter.hide.clean", "sed s/bad_flag=0/bad_flag=1/")
    committed_attributes(".gitattributes", "data/config.txt filter=hide\n")(repo, tmp_path)


def stale_conversion(repo: Repo, tmp_path: Path) -> None:
    # Written under a commit's attributes, then that commit left: the blob is the same,
    # so git leaves the file, and status trusts its timestamps.
    committed_attributes(".gitattributes", UTF16)(repo, tmp_path)
    # Older than the index, so status trusts the timestamps rather than look (racy git).
    os.utime(repo.path / "data" / "config.txt", (1_000_000_000, 1_000_000_000))
    repo.git("update-index", "-q", "--refresh")
    repo.git("checkout", "-q", "HEAD~1")


CONVERSIONS = {
    "working-tree-encoding": committed_attributes(".gitattributes", UTF16),
    "in a subfolder's .gitattributes": committed_attributes(
        "data/.gitattributes", "config.txt working-tree-encoding=UTF-16\n"
    ),
    "eol=crlf": committed_attributes(".gitattributes", "data/config.txt eol=crlf\n"),
    "info/attributes": info_attributes,
    "core.attributesFile": attributes_file,
    "core.autocrlf": autocrlf,
    "a filter driver": smudge_filter,
    "an earlier checkout's attributes": stale_conversion,
}


def pass_cache(repo: Repo) -> list[str]:
    folder = repo.path / ".git" / "failgate" / "cache"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


@pytest.mark.parametrize("convert", CONVERSIONS.values(), ids=CONVERSIONS.keys())
def test_a_converted_work_tree_never_stands_for_the_commit(
    tmp_path: Path, convert: Callable[[Repo, Path], None]
) -> None:
    repo, _ = inplace_gate(tmp_path)
    convert(repo, tmp_path)
    assert repo.git("status", "--porcelain", "--ignored") == ""  # status calls it clean
    assert b"bad_flag=1\n" not in (repo.path / "data" / "config.txt").read_bytes()
    result = repo.failgate(*CHECK_ARGS)
    assert "Traceback" not in result.err, result
    assert result.code == 1, result
    assert "OPEN" in result.out and "bad flag present" in result.out, result
    assert "workdir inplace not used (data/config.txt " in result.out, result
    assert "the work tree is not the commit's bytes; use the default workdir" in result.out
    assert f"ran in {repo.path}\n" not in result.out, result
    assert pass_cache(repo) == []


def test_a_push_from_a_converted_work_tree_is_refused_and_caches_no_pass(tmp_path: Path) -> None:
    repo, remote = inplace_gate(tmp_path)
    before = remote_ref(remote, "refs/heads/main")
    committed_attributes(".gitattributes", UTF16)(repo, tmp_path)
    pushed = subprocess.run(
        ["git", "push", "origin", "main"], cwd=repo.path, capture_output=True, text=True,
        check=False, timeout=300,
    )  # fmt: skip
    assert pushed.returncode != 0, pushed.stderr
    assert "BLOCKED" in pushed.stderr, pushed.stderr
    assert "data/config.txt is converted by working-tree-encoding=UTF-16" in pushed.stderr
    assert remote_ref(remote, "refs/heads/main") == before
    assert pass_cache(repo) == []


def test_attributes_that_convert_nothing_here_keep_the_work_tree(tmp_path: Path) -> None:
    # The control: text=auto on files with LF endings writes each blob as it is, so the
    # work tree is the commit's bytes and the verifier runs there.
    repo, _ = inplace_gate(tmp_path)
    repo.write(".gitattributes", "* text=auto\n*.sh text eol=lf\n")
    repo.commit("attributes that change nothing on this machine")
    written_again(repo)
    result = repo.failgate(*CHECK_ARGS)
    assert result.code == 1, result
    assert f"ran in {repo.path}\n" in result.out, result
    assert "workdir inplace not used" not in result.out, result
