"""`failgate check` on real repositories: relaxations listed once, and the work tree's warnings."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from pathlib import Path

import pytest

from failgate_hooks.app.check import start_uncommitted_warnings
from failgate_hooks.core.events import Event, Status, entity_folder, event_to_toml
from failgate_hooks.git.repo import GitRepo
from tests.conftest import Repo
from tests.worlds import with_remote

WHEN = dt.datetime(2026, 11, 30, 1, tzinfo=dt.UTC)
CHECK = ("check", "--ref", "refs/heads/topic")


def retired_entity(repo: Repo, number: int) -> str:
    """An entity observed then expired (the expiry relaxes its gate); the expiry's id."""
    key = f"svc:risk-{number:03d}"
    observed = Event(
        id=f"20261130T010000Z-{number:08x}",
        entity_key=key,
        status=Status.OBSERVED,
        effective_at=WHEN,
        title="t",
        triggers=("push",),
    )
    expired = Event(
        id=f"20261130T020000Z-{number:08x}",
        entity_key=key,
        status=Status.EXPIRED,
        effective_at=WHEN,
        follows=(observed.id,),
    )
    for event in (observed, expired):
        repo.write(f"ledger/{entity_folder(key)}/{event.id}.toml", event_to_toml(event).decode())
    return expired.id


def relaxed_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("RELAXED")]


def test_relaxed_lines_name_only_what_no_protected_revision_holds(
    repo: Repo, tmp_path: Path
) -> None:
    repo.write("pyproject.toml", '[tool.failgate]\nledger_refs = ["refs/remotes/origin/main"]\n')
    for number in range(5):
        retired_entity(repo, number)
    repo.commit("five retired risks")
    with_remote(repo, tmp_path / "remote.git")
    new = retired_entity(repo, 5)
    repo.commit("a sixth, not pushed yet")
    check = repo.failgate(*CHECK)
    assert check.code == 0, check
    assert relaxed_lines(check.out) == [
        f"RELAXED by {new} (svc:risk-005: status expired)",
    ]


def test_gates_reads_the_revisions_ledger_refs_names_as_check_does(repo: Repo) -> None:
    """gates once left out the revisions ledger_refs names: with no remote it read
    nothing protected, and counted every relaxation where check listed one."""
    repo.write("pyproject.toml", '[tool.failgate]\nledger_refs = ["refs/heads/reviewed"]\n')
    for number in range(5):
        retired_entity(repo, number)
    repo.commit("five retired risks, reviewed")
    repo.git("branch", "reviewed")
    new = retired_entity(repo, 5)
    repo.commit("a sixth, not reviewed yet")
    expected = [f"RELAXED by {new} (svc:risk-005: status expired)"]
    check = repo.failgate(*CHECK)
    gates = repo.failgate("gates", "--ref", "refs/heads/topic")
    assert check.code == gates.code == 0, (check, gates)
    assert relaxed_lines(check.out) == relaxed_lines(gates.out) == expected
    read = json.loads(repo.failgate("gates", "--ref", "refs/heads/topic", "--json").out)
    assert [r["event_id"] for r in read["relaxations"]] == [new]


def test_a_ledger_ref_this_repository_lacks_stops_check_and_gates_alike(repo: Repo) -> None:
    repo.write("pyproject.toml", '[tool.failgate]\nledger_refs = ["refs/heads/reviewed"]\n')
    retired_entity(repo, 0)
    repo.commit("a retired risk; nothing named reviewed")
    check = repo.failgate(*CHECK)
    gates = repo.failgate("gates", "--ref", "refs/heads/topic")
    for result in (check, gates):
        assert result.code == 4, result  # git could not answer: integrity, never allowed
        assert "ledger_refs names 'refs/heads/reviewed', which this repository lacks" in (
            result.err
        ), result
        assert "Traceback" not in result.err


def test_without_a_protected_revision_relaxations_are_counted_on_one_line(repo: Repo) -> None:
    expiries = [retired_entity(repo, number) for number in range(6)]
    repo.commit("six retired risks, no remote, no ledger_refs")
    check = repo.failgate(*CHECK)
    assert check.code == 0, check
    (line,) = relaxed_lines(check.out)
    assert line.startswith("RELAXED 6 relaxing event(s) accepted: no protected revision")
    assert "ledger_refs" in line and "--verbose lists them" in line
    verbose = repo.failgate(*CHECK, "--verbose")
    assert relaxed_lines(verbose.out) == [
        f"RELAXED by {event_id} (svc:risk-{n:03d}: status expired)"
        for n, event_id in enumerate(expiries)
    ]
    doc = json.loads(repo.failgate(*CHECK, "--json").out)
    assert [r["event_id"] for r in doc["relaxations"]] == expiries


def test_gates_counts_relaxations_too_and_lists_them_when_verbose(repo: Repo) -> None:
    for number in range(3):
        retired_entity(repo, number)
    repo.commit("three retired risks")
    gates = repo.failgate("gates", "--ref", "refs/heads/main")
    (line,) = relaxed_lines(gates.out)
    assert line.startswith("RELAXED 3 relaxing event(s) accepted")
    assert "gates reads the remote's default branch too once this repository has it" in line
    verbose = repo.failgate("gates", "--ref", "refs/heads/main", "--verbose")
    assert len(relaxed_lines(verbose.out)) == 3


def test_a_ledger_file_moved_in_the_work_tree_is_named_as_new_and_as_changed(repo: Repo) -> None:
    retired_entity(repo, 0)
    repo.commit("one retired risk")
    old = f"ledger/svc/risk-000/20261130T020000Z-{0:08x}.toml"
    new = f"ledger/svc/risk-001/20261130T020000Z-{0:08x}.toml"
    (repo.path / new).parent.mkdir(parents=True)
    repo.git("mv", old, new)  # staged: git status reports it as one rename
    check = repo.failgate(*CHECK)
    assert (
        "1 ledger file(s) in the work tree are not committed, so they were not read and not "
        f"applied (e.g. {new})" in (check.err)
    ), check
    assert f"1 committed ledger file(s) are changed or deleted in the work tree (e.g. {old})" in (
        check.err
    ), check


def test_a_ledger_file_taken_out_of_the_index_is_named_once(repo: Repo) -> None:
    retired_entity(repo, 0)
    repo.commit("one retired risk")
    path = f"ledger/svc/risk-000/20261130T020000Z-{0:08x}.toml"
    repo.git("rm", "-q", "--cached", path)  # git status: deleted, and untracked
    check = repo.failgate(*CHECK)
    assert f"1 committed ledger file(s) are changed or deleted in the work tree (e.g. {path})" in (
        check.err
    ), check


def test_a_first_push_to_an_empty_remote_counts_relaxations_on_one_line(
    repo: Repo, tmp_path: Path
) -> None:
    for number in range(4):
        retired_entity(repo, number)
    repo.commit("four retired risks")
    assert repo.failgate("install").code == 0
    remote = tmp_path / "remote.git"
    repo.git("init", "-q", "--bare", "-b", "main", str(remote))
    repo.git("remote", "add", "origin", str(remote))
    push = subprocess.run(
        ["git", "push", "-q", "origin", "main"], cwd=repo.path, capture_output=True, text=True
    )
    assert push.returncode == 0, push.stderr
    (line,) = relaxed_lines(push.stderr)
    assert line.startswith("RELAXED 4 relaxing event(s) accepted")
    assert "the hook reads the remote's default branch" in line


def test_a_gate_s_paths_past_the_matching_budget_make_it_apply(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Git's answer, through the matching budget of one decision: within it a glob that
    matches no file misses; past it, failgate cannot say it misses, so the gate applies."""
    from failgate_hooks.app import evaluate
    from failgate_hooks.core import wildmatch
    from failgate_hooks.git.repo import GitRepo
    from tests.worlds import long_file_names

    repo, commit = long_file_names(tmp_path / "repo")
    globs = ("*" + "?" * 60 + "*z",)
    with GitRepo.open(repo.path) as opened:
        assert evaluate.GitFacts(opened, commit, "ledger").tree_matches(globs) is False
        monkeypatch.setattr(wildmatch, "MATCH_WORK", len(globs[0]) * 215 * 10)
        assert evaluate.GitFacts(opened, commit, "ledger").tree_matches(globs) is None


def test_a_folder_the_ledgers_name_would_match_as_a_pattern_is_not_warned_about(
    repo: Repo,
) -> None:
    repo.write("risks*/svc/risk-000/20261130T020000Z-00000000.toml", "x = 1\n")
    repo.write("risks-archive/svc/risk-000/20261130T020000Z-00000001.toml", "x = 1\n")
    with GitRepo.open(repo.path) as git_repo:
        (warning,) = start_uncommitted_warnings(git_repo, "risks*")()
    assert "1 ledger file(s) in the work tree are not committed" in warning
    assert "(e.g. risks*/svc/risk-000/20261130T020000Z-00000000.toml)" in warning
