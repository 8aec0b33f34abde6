"""`--raw -z` records read by position: git's own output of real repositories, and records
git never writes, which fail closed."""

from __future__ import annotations

import pytest

from failgate_hooks.core.errors import GitError
from failgate_hooks.git.changes import Change, parse_log_raw, parse_raw
from failgate_hooks.git.repo import GitRepo
from tests.conftest import Repo

BODY = "".join(f"line {n} of a file long enough for git to see it moved\n" for n in range(20))
ZERO = "0" * 40
ONE = "1" * 40
FILE, NONE = "100644", "000000"


def raw(repo: Repo, *args: str) -> str:
    """`git diff-tree --raw -z ARGS` as failgate reads it: through GitRepo.run, unstripped."""
    with GitRepo.open(repo.path) as git_repo:
        return git_repo.run("diff-tree", "-r", "--raw", "-z", "--no-abbrev", *args, strip=False)


def test_a_rename_is_a_deletion_of_the_old_path_and_an_addition_of_the_new(repo: Repo) -> None:
    repo.write("ledger/e/old.toml", BODY)
    repo.commit("add")
    repo.git("mv", "ledger/e/old.toml", "ledger/e/new.toml")
    repo.commit("rename")
    out = raw(repo, "-M", "HEAD~1", "HEAD")
    assert " R100\0" in out  # git said rename
    assert parse_raw(out) == [
        Change("D", "ledger/e/old.toml", FILE, NONE),
        Change("A", "ledger/e/new.toml", NONE, FILE),
    ]


def test_a_copy_adds_the_new_path_and_leaves_the_source_to_its_own_record(repo: Repo) -> None:
    repo.write("ledger/e/source.toml", BODY)
    repo.commit("add")
    repo.write("ledger/e/copy.toml", BODY)
    repo.write("ledger/e/source.toml", BODY + "an edit\n")
    repo.commit("copy, and edit the source")
    out = raw(repo, "-C", "--find-copies-harder", "HEAD~1", "HEAD")
    assert " C100\0" in out  # git said copy
    assert sorted(parse_raw(out)) == [
        Change("A", "ledger/e/copy.toml", NONE, FILE),
        Change("M", "ledger/e/source.toml", FILE, FILE),
    ]


def test_a_path_with_a_newline_a_quote_and_a_tab_comes_as_it_is(repo: Repo) -> None:
    name = 'ledger/\nle"d\tger\\/e/x.toml'
    repo.write(name, "a = 1\n")
    repo.commit("add")
    repo.write(name, "a = 2\n")
    edit = repo.commit("edit")
    with GitRepo.open(repo.path) as git_repo:
        out = git_repo.run(
            "log", "-z", "--raw", "--no-abbrev", "--format=\x01%H", "HEAD~1..HEAD", strip=False
        )
    assert list(parse_log_raw(out)) == [(edit, [Change("M", name, FILE, FILE)])]


def test_commits_without_changes_come_with_none() -> None:
    out = f"\x01{ONE}\0\n\x01{ZERO}\0\n:100644 100644 {ONE} {ZERO} M\0a.toml\0"
    assert list(parse_log_raw(out)) == [(ONE, []), (ZERO, [Change("M", "a.toml", FILE, FILE)])]


@pytest.mark.parametrize(
    "out",
    [
        pytest.param(f":100644 100644 {ONE} {ZERO} M\0", id="a record without its path"),
        pytest.param(f":100644 100644 {ONE} {ZERO} R100\0old.toml\0", id="a rename, one path"),
        pytest.param(f":100644 100644 {ONE} {ZERO} M", id="a record cut in its status"),
        pytest.param(f":100644 100644 {ONE[:12]} {ZERO} M\0a.toml\0", id="an abbreviated id"),
        pytest.param(f"::100644 100644 100644 {ONE} {ONE} {ZERO} MM\0a\0", id="combined diff"),
        pytest.param("ledger/e/x.toml\0", id="a path where a record should be"),
        pytest.param("\x01not-an-id\0", id="a header without an id"),
    ],
)
def test_a_malformed_record_is_an_error_never_a_change_skipped(out: str) -> None:
    with pytest.raises(GitError) as caught:
        list(parse_log_raw(out))
    assert "\0" not in caught.value.message


def test_an_error_quotes_a_bounded_clean_part_of_what_git_gave() -> None:
    flood = "\x1b[31m" + "x" * 100_000
    with pytest.raises(GitError) as caught:
        parse_raw(flood + "\0")
    assert "\x1b" not in caught.value.message
    assert len(caught.value.message) < 300


def test_diff_output_holds_no_commit_header() -> None:
    with pytest.raises(GitError):
        parse_raw(f"\x01{ONE}\0")
