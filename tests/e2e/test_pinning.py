"""Pinned verifier files against a pushed commit that tries to route around them.

Each world has the gate on main, on a real bare remote. The server runs a real
`failgate-pre-receive --exec`; CI runs a real `failgate ci` on a fresh clone.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from failgate_hooks.app import demo
from failgate_hooks.core.events import (
    Event,
    Status,
    Verification,
    entity_folder,
    event_to_toml,
)
from tests.conftest import Repo
from tests.e2e.test_ci import pr_world, pull_request
from tests.e2e.test_pre_receive import push, server
from tests.worlds import KEY, remote_ref

GUTTED = "import sys\nsys.exit(0)\n"
HELD = "budget 50M < required 120M"


def restate_and_gut(repo: Repo) -> str:
    """A new event repeating the identical verification, and the pinned file emptied of
    its check: the restatement is no relaxation, so nothing lists it."""
    repo.record(
        KEY, "--status", "observed", "--verify", f"python3 {demo.CHECK_PATH}",
        "--verify-file", demo.CHECK_PATH, "--note", "still seen", "--no-probe",
    )  # fmt: skip
    repo.write(demo.CHECK_PATH, GUTTED)
    return repo.commit("restate the gas budget verifier")


def test_a_restated_verification_cannot_re_pin_on_the_server(tmp_path: Path) -> None:
    repo, remote = server(tmp_path, "--exec")
    before = remote_ref(remote, "refs/heads/main")
    restate_and_gut(repo)
    refused = push(repo, "main")
    assert refused.returncode != 0, refused.stderr
    assert HELD in refused.stderr
    assert "RELAXED" not in refused.stderr and "PENDING" not in refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before


def test_a_restated_verification_cannot_re_pin_in_ci(tmp_path: Path) -> None:
    repo = pr_world(tmp_path)
    restate_and_gut(repo)
    result = pull_request(repo, tmp_path)
    assert result.code == 1, result
    [error] = result.annotations("error")
    assert HELD in error
    assert not result.annotations("warning")


def recorded_id(repo: Repo) -> str:
    [event] = (repo.path / "ledger").rglob("*.toml")
    return event.stem


def test_a_restatement_beside_the_reviewed_event_cannot_re_pin_by_its_id(tmp_path: Path) -> None:
    """An event that follows nothing is ordered among its peers by id, which the pusher
    writes: one whose id sorts first is still not what introduced the verification."""
    repo = pr_world(tmp_path)
    reviewed = recorded_id(repo)
    early = Event(
        id="20000101T000000Z-00000000",
        entity_key=KEY,
        status=Status.OBSERVED,
        effective_at=dt.datetime(2000, 1, 1, tzinfo=dt.UTC),
        title=demo.TITLE,
        triggers=("push",),
        verification=Verification(command=("python3", demo.CHECK_PATH), files=(demo.CHECK_PATH,)),
    )
    assert early.id < reviewed
    folder = f"ledger/{entity_folder(KEY)}"
    repo.write(f"{folder}/{early.id}.toml", event_to_toml(early).decode())
    repo.write(demo.CHECK_PATH, GUTTED)
    repo.commit("an event that sorts before the reviewed one")
    result = pull_request(repo, tmp_path)
    assert result.code == 1, result
    assert HELD in result.annotations("error")[0]


def test_superseding_the_reviewed_event_with_the_same_verification_cannot_re_pin(
    tmp_path: Path,
) -> None:
    repo = pr_world(tmp_path)
    repo.record(KEY, "--status", "observed", "--supersedes", recorded_id(repo), "--no-probe")
    repo.write(demo.CHECK_PATH, GUTTED)
    repo.commit("supersede the event, its keys carried forward")
    result = pull_request(repo, tmp_path)
    assert result.code == 1, result
    assert HELD in result.annotations("error")[0]
