"""git/conversion: one reading of `check-attr -z`, and files hashed as git sees them.

`verify/inplace.py` and the agent hook's restore check both read attributes
through `check_attr`, and judge a value by the one `NO_CONVERSION`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from failgate_hooks.core.attributes import NO_CONVERSION, Attribute
from failgate_hooks.core.errors import GitError
from failgate_hooks.core.ids import blob_id
from failgate_hooks.git.conversion import check_attr, hash_files, parse_check_attr
from failgate_hooks.git.repo import GitRepo
from tests.conftest import Repo, make_repo

ODD = 'new\nline "quoted" é.txt'


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    repo = make_repo(tmp_path / "repo")
    repo.write(".gitattributes", "*.txt text eol=crlf\n*.bin -text\n")
    repo.write("a.txt", "one\ntwo\n")
    repo.write(ODD, "odd\n")
    repo.write("b.bin", "raw\n")
    repo.commit("attributes")
    return repo


def test_check_attr_output_is_read_as_triples() -> None:
    output = "a.txt\0text\0set\0new\nline\0eol\0unspecified\0"
    assert parse_check_attr(output) == [
        Attribute("a.txt", "text", "set"),
        Attribute("new\nline", "eol", "unspecified"),
    ]
    assert parse_check_attr("") == []
    with pytest.raises(GitError, match="check-attr gave output"):
        parse_check_attr("a.txt\0text\0")


def test_only_unspecified_and_unset_convert_nothing() -> None:
    assert frozenset({"unspecified", "unset"}) == NO_CONVERSION
    assert not Attribute("f", "text", "unset").converts
    assert not Attribute("f", "filter", "unspecified").converts
    assert all(Attribute("f", "text", value).converts for value in ("set", "auto", "crlf"))


def test_attributes_of_many_paths_come_from_one_call(repo: Repo) -> None:
    with GitRepo.open(repo.path) as grepo:
        found = check_attr(grepo, ["a.txt", ODD, "b.bin"], ("text", "eol"))
        assert found == [
            Attribute("a.txt", "text", "set"),
            Attribute("a.txt", "eol", "crlf"),
            Attribute(ODD, "text", "set"),
            Attribute(ODD, "eol", "crlf"),
            Attribute("b.bin", "text", "unset"),
            Attribute("b.bin", "eol", "unspecified"),
        ]
        (repo.path / ".gitattributes").unlink()  # the index's still count, and alone cached
        assert check_attr(grepo, ["a.txt"], ("text",))[0].value == "set"
        repo.write(".gitattributes", "")
        assert check_attr(grepo, ["a.txt"], ("text",))[0].value == "unspecified"
        assert check_attr(grepo, ["a.txt"], ("text",), cached=True)[0].value == "set"
        assert check_attr(grepo, [], ("text",)) == []


def test_files_are_hashed_as_they_lie_or_as_git_add_would_store_them(repo: Repo) -> None:
    (repo.path / "a.txt").write_bytes(b"one\r\ntwo\r\n")
    paths = ["a.txt", ODD]
    with GitRepo.open(repo.path) as grepo:
        raw = hash_files(grepo, paths, filters=False)
        added = hash_files(grepo, paths, filters=True)
        assert hash_files(grepo, [], filters=True) == []
    assert raw == [blob_id(b"one\r\ntwo\r\n", "sha1"), blob_id(b"odd\n", "sha1")]
    assert added == [repo.git("rev-parse", "HEAD:a.txt"), blob_id(b"odd\n", "sha1")]
