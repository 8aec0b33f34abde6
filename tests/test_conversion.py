"""git/conversion: one reading of `check-attr -z`, and files hashed as git sees them.

`verify/inplace.py` and the agent hook's restore check both read attributes
through `check_attr`, and judge a value by the one `NO_CONVERSION`. Files are
hashed with git's conversions only where a reading of the attributes proves that
no filter driver would run: `hash_files` asks for the proof itself.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from failgate_hooks.core.attributes import (
    CONVERTING_ATTRIBUTES,
    NO_CONVERSION,
    Attribute,
    unproven,
)
from failgate_hooks.core.errors import GitError
from failgate_hooks.core.ids import blob_id
from failgate_hooks.git.conversion import (
    as_hashed,
    check_attr,
    hash_files,
    parse_check_attr,
)
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
        added = hash_files(grepo, paths, filters=True, reading=as_hashed(grepo, paths))
        assert hash_files(grepo, [], filters=True) == []
    assert raw == [blob_id(b"one\r\ntwo\r\n", "sha1"), blob_id(b"odd\n", "sha1")]
    assert added == [repo.git("rev-parse", "HEAD:a.txt"), blob_id(b"odd\n", "sha1")]


def test_a_reading_proves_only_line_endings_when_it_names_each_attribute_of_each_path() -> None:
    proof = [Attribute("a", name, "unspecified") for name in CONVERTING_ATTRIBUTES]
    assert unproven(["a"], proof) is None
    assert unproven(["a", "b"], proof) == "nothing says what the attribute filter of b is"
    assert unproven(["a"], proof[1:]) == "nothing says what the attribute filter of a is"
    lfs = [*proof[1:], Attribute("a", "filter", "lfs")]
    assert unproven(["a"], lfs) == "a has the attribute filter=lfs"
    assert unproven(["a"], [*proof, Attribute("a", "text", "set")]) is None


def test_no_filter_driver_runs_without_a_reading_that_proves_none_would(repo: Repo) -> None:
    marker = repo.path.parent / "the-filter-ran"
    repo.git("config", "filter.x.clean", f"touch '{marker}'; cat")
    repo.write(".gitattributes", "a.txt filter=x\n")
    with GitRepo.open(repo.path) as grepo:
        found = as_hashed(grepo, ["a.txt", ODD])
        other = as_hashed(grepo, [ODD])
        readings = {
            "a.txt has the attribute filter=x": found,  # the reading that names the driver
            "nothing says what the attribute filter of a.txt is": other,  # another path's
            "of a.txt": None,  # none at all
        }
        for why, reading in readings.items():
            with pytest.raises(GitError, match="hash-object was not run with conversions") as e:
                hash_files(grepo, ["a.txt", ODD], filters=True, reading=reading)
            assert why in str(e.value), why
            assert not marker.exists()
        assert hash_files(grepo, [ODD], filters=True, reading=other) == [blob_id(b"odd\n", "sha1")]
        hash_files(grepo, ["a.txt"], filters=False)  # as it lies: no driver runs
        assert not marker.exists()
    repo.git("hash-object", "a.txt")  # the driver does run where git hashes the file
    assert marker.exists()


def test_the_reading_hash_files_needs_is_the_work_trees_alone(repo: Repo, tmp_path: Path) -> None:
    # hash-object reads no index, so the index's .gitattributes, which check-attr reads
    # where the work tree has none, sets nothing for it: here its `!filter`
    repo.write(".gitattributes", "*.txt filter=x\n")
    repo.write("sub/.gitattributes", "*.txt !filter\n")
    repo.write("sub/c.txt", "sub\n")
    repo.commit("a filter, turned off in sub/")
    (repo.path / "sub" / ".gitattributes").unlink()
    marker = tmp_path / "the-filter-ran"
    repo.git("config", "filter.x.clean", f"touch '{marker}'; cat")
    with GitRepo.open(repo.path) as grepo:
        assert check_attr(grepo, ["sub/c.txt"], ("filter",)) == [
            Attribute("sub/c.txt", "filter", "unspecified")
        ]
        reading = as_hashed(grepo, ["sub/c.txt"])
        assert Attribute("sub/c.txt", "filter", "x") in reading.attributes
        with pytest.raises(GitError) as refused:
            hash_files(grepo, ["sub/c.txt"], filters=True, reading=reading)
        assert "sub/c.txt has the attribute filter=x" in str(refused.value)
        assert not marker.exists()
        assert as_hashed(grepo, []).attributes == ()
    repo.git("hash-object", "sub/c.txt")
    assert marker.exists()
