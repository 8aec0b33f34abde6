"""`failgate check` on real repositories: the work tree's warnings."""

from __future__ import annotations

import datetime as dt

from failgate_hooks.core.events import Event, Status, entity_folder, event_to_toml
from tests.conftest import Repo

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


def test_a_ledger_file_moved_in_the_work_tree_is_named_as_new_and_as_changed(repo: Repo) -> None:
    retired_entity(repo, 0)
    repo.commit("one retired risk")
    old = f"ledger/svc/risk-000/20261130T020000Z-{0:08x}.toml"
    new = f"ledger/svc/risk-001/20261130T020000Z-{0:08x}.toml"
    (repo.path / new).parent.mkdir(parents=True)
    repo.git("mv", old, new)  # staged: git status reports it as one rename
    check = repo.failgate(*CHECK)
    assert (
        f"1 ledger file(s) in the work tree are not committed and were not read (e.g. {new})"
        in (check.err)
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
