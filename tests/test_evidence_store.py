"""The evidence ref in real repositories: lines appended, merged line-wise, pushed and fetched."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from failgate_hooks.app.evidence_store import append_lines, fetch_evidence, push_evidence
from failgate_hooks.core.errors import GitError
from failgate_hooks.git import evidence as store
from failgate_hooks.git.repo import GitRepo
from tests.conftest import Repo, git, make_repo
from tests.test_trees import raw_tree

PATH = "ck1/ab/" + "ab" * 31


def clone(remote: Path, where: Path) -> Repo:
    git(where.parent, "clone", "-q", str(remote), where.name)
    return Repo(where)


def lines_at(repo: Repo, ref: str) -> list[str]:
    return repo.git("show", f"{ref}:{PATH}").splitlines()


def test_appending_keeps_what_was_there_and_adds_each_line_once(repo: Repo) -> None:
    with GitRepo.open(repo.path) as opened:
        append_lines(opened, {PATH: ["fge1 b x"]})
        append_lines(opened, {PATH: ["fge1 a x", "fge1 b x"]})
    assert lines_at(repo, store.EVIDENCE_REF) == ["fge1 a x", "fge1 b x"]
    assert repo.git("rev-list", "--count", store.EVIDENCE_REF) == "2"


def test_two_ci_runs_attesting_at_once_both_land(tmp_path: Path) -> None:
    origin = make_repo(tmp_path / "origin")
    remote = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(origin.path), str(remote))
    runs = [clone(remote, tmp_path / f"ci{n}") for n in range(2)]
    script = (
        "import sys\n"
        "from failgate_hooks.app.evidence_store import append_lines, push_evidence\n"
        "from failgate_hooks.git.repo import GitRepo\n"
        "with GitRepo.open(sys.argv[1]) as repo:\n"
        f"    append_lines(repo, {{{PATH!r}: ['fge1 ' + sys.argv[2] + ' x']}})\n"
        "    push_evidence(repo, 'origin')\n"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(run.path), f"run{n}"])
        for n, run in enumerate(runs)
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    assert git(remote, "show", f"{store.EVIDENCE_REF}:{PATH}").splitlines() == [
        "fge1 run0 x",
        "fge1 run1 x",
    ]


def test_a_diverged_copy_is_merged_and_fetched_into_a_ref_of_its_own(tmp_path: Path) -> None:
    origin = make_repo(tmp_path / "origin")
    remote = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(origin.path), str(remote))
    first, second = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    with GitRepo.open(first.path) as a, GitRepo.open(second.path) as b:
        append_lines(a, {PATH: ["fge1 a x"]})
        append_lines(b, {PATH: ["fge1 b x"]})
        push_evidence(a, "origin")
        push_evidence(b, "origin")  # refused as not a fast forward, merged, pushed again
        assert fetch_evidence(a, "origin") is not None
    assert lines_at(first, store.tracking_ref("origin")) == ["fge1 a x", "fge1 b x"]
    assert lines_at(first, store.EVIDENCE_REF) == ["fge1 a x"]  # the local copy is untouched


def test_a_remote_without_evidence_fetches_nothing(tmp_path: Path) -> None:
    origin = make_repo(tmp_path / "origin")
    copy = clone(origin.path, tmp_path / "copy")
    with GitRepo.open(copy.path) as opened:
        assert fetch_evidence(opened, "origin") is None
        assert store.evidence_tips(opened) == []


def test_install_makes_git_fetch_bring_the_evidence_and_uninstall_stops_it(
    tmp_path: Path,
) -> None:
    origin = make_repo(tmp_path / "origin")
    with GitRepo.open(origin.path) as opened:
        append_lines(opened, {PATH: ["fge1 a x"]})
    copy = clone(origin.path, tmp_path / "copy")
    assert copy.failgate("install").code == 0
    assert store.config_refspec("origin") in copy.git("config", "--get-all", "remote.origin.fetch")
    assert copy.failgate("install").code == 0  # twice: still one refspec
    specs = copy.git("config", "--get-all", "remote.origin.fetch").splitlines()
    assert specs.count(store.config_refspec("origin")) == 1
    copy.git("fetch", "-q", "origin")
    assert lines_at(copy, store.tracking_ref("origin")) == ["fge1 a x"]
    assert copy.failgate("uninstall").code == 0
    assert "evidence" not in copy.git("config", "--get-all", "remote.origin.fetch")


def test_a_fetch_refspec_holding_a_newline_is_one_value_not_ours(tmp_path: Path) -> None:
    """A value that is our refspec, a newline and more is not our refspec: read line by
    line it was taken for ours, so install added nothing and uninstall failed to unset it."""
    copy = make_repo(tmp_path / "copy")
    copy.git("remote", "add", "origin", str(tmp_path / "origin"))
    ours = store.config_refspec("origin")
    copy.git("config", "--add", "remote.origin.fetch", f"{ours}\nrefs/x")
    with GitRepo.open(copy.path) as opened:
        assert store.add_fetch_refspec(opened, "origin")
        values = copy.git("config", "-z", "--get-all", "remote.origin.fetch").split("\0")
        assert values.count(ours) == 1 and f"{ours}\nrefs/x" in values
        assert store.remove_fetch_refspec(opened, "origin")
        assert not store.remove_fetch_refspec(opened, "origin")  # the other value stays
    values = copy.git("config", "-z", "--get-all", "remote.origin.fetch").split("\0")
    assert ours not in values and f"{ours}\nrefs/x" in values


def test_after_install_git_fetch_works_from_a_remote_with_no_evidence(tmp_path: Path) -> None:
    """Most remotes hold no evidence ref: a plain refspec for it fails every `git fetch`."""
    origin = make_repo(tmp_path / "origin")
    copy = clone(origin.path, tmp_path / "copy")
    copy.git("config", "--add", "remote.origin.fetch", store.fetch_refspec("origin"))  # 0.x's
    assert copy.failgate("install").code == 0
    specs = copy.git("config", "--get-all", "remote.origin.fetch").splitlines()
    assert store.fetch_refspec("origin") not in specs  # replaced
    copy.git("fetch", "-q", "origin")  # check=True: exit 0, or the test fails here
    with GitRepo.open(origin.path) as opened:
        append_lines(opened, {PATH: ["fge1 a x"]})
        origin.git("update-ref", "refs/failgate/evidence-old", "HEAD")  # any other commit
        origin.git("update-ref", "refs/failgate/evidence-x/evidence", "HEAD")
    copy.git("fetch", "-q", "origin")
    assert lines_at(copy, store.tracking_ref("origin")) == ["fge1 a x"]
    with GitRepo.open(copy.path) as opened:  # evidence-old came too: never read
        assert copy.git("for-each-ref", "refs/failgate/remotes/origin/evidence-old")
        assert copy.git("for-each-ref", "refs/failgate/remotes/origin/evidence-x/evidence")
        assert store.evidence_tips(opened) == [copy.git("rev-parse", store.tracking_ref("origin"))]
    assert copy.failgate("uninstall").code == 0
    assert "evidence" not in copy.git("config", "--get-all", "remote.origin.fetch")


def test_every_file_is_read_through_the_parser_that_refuses_two_of_one_name(repo: Repo) -> None:
    """`ls-tree -r` lists both: a reader keeping the last would compare what no lookup reads."""
    blob = repo.git("hash-object", "-w", "--stdin", input="fge1 a x\n")
    empty = repo.git("hash-object", "-w", "--stdin", input="")
    version, fanout, name = (part.encode() for part in PATH.split("/"))
    leaf = raw_tree(repo, (b"100644", name, empty), (b"100644", name, blob))
    root = raw_tree(repo, (b"40000", version, raw_tree(repo, (b"40000", fanout, leaf))))
    commit = repo.git("commit-tree", root, "-m", "two of one name")
    refused = f"commit {commit[:12]}, folder ck1/ab: .*duplicateEntries"
    with GitRepo.open(repo.path) as opened, pytest.raises(GitError, match=refused):
        store.files(opened, commit)


def test_an_update_walks_each_evidence_tree_once(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The layout check and the comparison of lines read one listing of each commit."""
    from failgate_hooks.app.evidence_update import update_problems

    with GitRepo.open(repo.path) as opened:
        old = append_lines(opened, {PATH: ["fge1 a x"]})
        new = append_lines(opened, {PATH: ["fge1 b y"]})
        walked: list[str] = []
        entries = store.entries

        def counted(repo: GitRepo, commit: str) -> dict[str, object]:
            walked.append(commit)
            return dict(entries(repo, commit))

        monkeypatch.setattr(store, "entries", counted)
        assert update_problems(opened, old, new) == []
        assert walked == [old, new]
        dropped = update_problems(opened, new, old)  # the control: the same walk finds a loss
        assert [p.code for p in dropped] == ["evidence-dropped"]


def test_a_path_holding_a_newline_is_written_as_one_file(repo: Repo) -> None:
    # A fetched evidence tree may name a file so: a merge writes what its tree holds.
    blob = repo.git("hash-object", "-w", "--stdin", input="planted\n")
    odd = f"{PATH}\n100644 {blob}\tplanted"
    with GitRepo.open(repo.path) as opened:
        commit = store.write_commit(opened, [], {odd: b"fge1 a x\n"}, "one file")
    listed = repo.git("ls-tree", "-r", "-z", "--name-only", commit)
    assert [path for path in listed.split("\0") if path] == [odd]
