"""Append-only as a property of trees, through `fsck --range`."""

from __future__ import annotations

from pathlib import Path

import pytest

from failgate_hooks.git.repo import GitRepo
from failgate_hooks.ledger import appendonly as history
from failgate_hooks.ledger.config import MAX_EVENT_BYTES
from tests.conftest import Repo

KEY = "deploy:mainnet:gas-budget"
FOLDER = "ledger/deploy/mainnet/gas-budget"


def record_first(repo: Repo) -> str:
    return repo.record(KEY, "--status", "observed", "--title", "t", "--trigger", "push")


def test_an_event_edited_in_place_is_caught_with_path_and_commit(any_repo: Repo) -> None:
    path = record_first(any_repo)
    base = any_repo.commit("record")
    target = any_repo.path / path
    target.write_text(target.read_text().replace('"observed"', '"verified"'))
    edit = any_repo.commit("quietly mark it verified")
    result = any_repo.failgate("fsck", "--range", f"{base}..HEAD")
    assert result.code == 4, result
    assert path in result.out
    assert edit[:12] in result.out
    assert Path(path).stem in result.out


def test_an_event_dropped_by_a_force_push_is_caught_between_tips(repo: Repo) -> None:
    record_first(repo)
    with_event = repo.commit("record")
    repo.git("reset", "-q", "--hard", "HEAD~1")
    repo.write("src.txt", "other work\n")
    rewritten = repo.commit("rewrite without the event")
    result = repo.failgate("fsck", "--range", f"{with_event}..{rewritten}")
    assert result.code == 4, result
    assert "missing from the new tip" in result.out
    assert FOLDER in result.out


def test_a_merge_whose_resolution_drops_the_side_event_is_caught(repo: Repo) -> None:
    base = repo.commit("base")
    repo.git("checkout", "-q", "-b", "side")
    side_event = record_first(repo)
    repo.commit("side records")
    repo.git("checkout", "-q", "main")
    repo.write("src.txt", "main work\n")
    repo.commit("main work")
    repo.git("merge", "-q", "--no-commit", "--no-ff", "side")
    repo.git("rm", "-q", "-f", side_event)
    merge = repo.commit("merge, dropping the event")
    result = repo.failgate("fsck", "--range", f"{base}..{merge}")
    assert result.code == 4, result
    assert side_event in result.out
    assert merge[:12] in result.out


def test_a_retracted_file_may_be_deleted(repo: Repo) -> None:
    leaked = record_first(repo)
    base = repo.commit("record")
    repo.record(KEY, "--status", "observed", "--title", "t", "--retracts", Path(leaked).stem)
    (repo.path / leaked).unlink()
    repo.commit("retract the leaked file")
    result = repo.failgate("fsck", "--range", f"{base}..HEAD")
    assert result.code == 0, result


def test_a_deletion_without_retraction_is_caught(repo: Repo) -> None:
    path = record_first(repo)
    base = repo.commit("record")
    (repo.path / path).unlink()
    repo.commit("delete it")
    result = repo.failgate("fsck", "--range", f"{base}..HEAD")
    assert result.code == 4, result
    assert "deletes event" in result.out


def test_adding_events_keeps_append_only_clean(any_repo: Repo) -> None:
    base = any_repo.head()
    record_first(any_repo)
    any_repo.commit("one")
    any_repo.record(KEY, "--status", "diagnosed")
    any_repo.commit("two")
    result = any_repo.failgate("fsck", "--range", f"{base}..HEAD")
    assert result.code == 0, result


def test_a_bad_range_is_a_usage_error(repo: Repo) -> None:
    result = repo.failgate("fsck", "--range", "HEAD")
    assert result.code == 2, result


# --------------------------------------------------------------------------- in process


def test_an_update_that_deletes_nothing_never_reads_the_ledger(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Reading every event for the retractions is what made append-only cost as much
    # as the decision at 10,000 events: only a deletion needs them.
    record_first(repo)
    old = repo.commit("record")
    repo.write("src.txt", "more work\n")
    new = repo.commit("work")

    def must_not_read(*args: object) -> None:
        raise AssertionError("read the ledger although nothing was deleted")

    monkeypatch.setattr(history, "read_union", must_not_read)
    with GitRepo.open(repo.path) as git_repo:
        assert history.check_update(git_repo, old, new, "ledger", MAX_EVENT_BYTES) == []


def test_a_deletion_still_asks_for_the_retractions(repo: Repo) -> None:
    leaked = record_first(repo)
    old = repo.commit("record")
    repo.git("rm", "-q", leaked)
    new = repo.commit("drop it without a retraction")
    with GitRepo.open(repo.path) as git_repo:
        problems = history.check_update(git_repo, old, new, "ledger", MAX_EVENT_BYTES)
    # found both ways: the new tip lacks the old tip's file, and the commit deleted it
    assert [p.path for p in problems] == [leaked]
    assert problems[0].commit == new


# --------------------------------------------------------------------------- folder names

EVENT = "20261130T000000Z-0000000a.toml"


def _event_in(repo: Repo, ledger_dir: str) -> tuple[str, str]:
    """An event file committed under `ledger_dir`: (its path, the commit)."""
    path = f"{ledger_dir}/deploy/mainnet/gas-budget/{EVENT}"
    repo.write(path, 'schema = 1\nstatus = "observed"\n')
    return path, repo.commit("record")


def _changes_of_a_new_ref(repo: Repo, ledger_dir: str) -> list[str]:
    """What the append-only walk alone finds on a ref pushed new (no old tip to compare)."""
    with GitRepo.open(repo.path) as git_repo:
        problems = history.check_update(git_repo, None, repo.head(), ledger_dir, MAX_EVENT_BYTES)
    return [f"{p.path} {p.message}" for p in problems]


# git quotes a path holding `"`, a tab or a backslash; `*`, `?` and `[` are patterns to it.
FOLDERS = ['le"d\tger', "risks*", "l[e]dger?", "dépôt"]


@pytest.mark.parametrize("ledger_dir", FOLDERS)
def test_an_edit_under_a_folder_git_quotes_or_matches_is_caught(
    repo: Repo, ledger_dir: str
) -> None:
    path, _ = _event_in(repo, ledger_dir)
    repo.write(path, 'schema = 1\nstatus = "verified"\n')
    edit = repo.commit("quietly mark it verified")
    assert _changes_of_a_new_ref(repo, ledger_dir) == [
        f"{path} commit {edit[:12]} changes event {EVENT[:-5]}, which a parent holds: "
        "events are never edited or dropped; to remove one, record an event that retracts it"
    ]


@pytest.mark.parametrize("ledger_dir", FOLDERS)
def test_a_deletion_under_a_folder_git_quotes_or_matches_is_caught(
    repo: Repo, ledger_dir: str
) -> None:
    path, _ = _event_in(repo, ledger_dir)
    repo.git("rm", "-q", "--", path)
    deletion = repo.commit("drop it")
    (found,) = _changes_of_a_new_ref(repo, ledger_dir)
    assert found.startswith(f"{path} commit {deletion[:12]} deletes event {EVENT[:-5]}")


def test_a_folder_the_ledgers_name_would_match_as_a_pattern_is_not_the_ledger(repo: Repo) -> None:
    # `risks*` read as a pattern is also `risks-archive`: an edit there is the team's own.
    other, _ = _event_in(repo, "risks-archive")
    _event_in(repo, "risks*")
    repo.write(other, "edited\n")
    repo.commit("edit the archive")
    assert _changes_of_a_new_ref(repo, "risks*") == []
