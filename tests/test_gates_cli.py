"""`failgate gates` on real repositories: scope, hostile titles, recorded verified."""

from __future__ import annotations

import datetime as dt
import json

from failgate_hooks.core.events import (
    AppliesTo,
    Event,
    Evidence,
    EvidenceKind,
    Status,
    entity_folder,
    event_to_toml,
)
from tests.conftest import Repo

KEY = "deploy:mainnet:gas-budget"


def states(repo: Repo, *args: str) -> dict[str, str]:
    result = repo.failgate("gates", "--json", "--ref", "refs/heads/main", *args)
    doc = json.loads(result.out)
    assert result.code == doc["exit_code"], result  # as check exits: 1 while a gate is open
    return {g["entity_key"]: g["state"] for g in doc["gates"]}


def test_since_excludes_a_sibling_branch_and_includes_descendants(repo: Repo) -> None:
    base = repo.head()
    repo.git("checkout", "-q", "-b", "sibling")
    repo.write("x.txt", "sibling work\n")
    repo.commit("sibling")
    repo.git("checkout", "-q", "main")
    repo.write("y.txt", "the risky change\n")
    risky = repo.commit("the risky change")
    repo.record(KEY, "--status", "observed", "--title", "t", "--trigger", "push", "--since", risky)
    repo.commit("record, since the risky change")
    ledger_commit = repo.head()
    assert states(repo)[KEY] == "open"
    # the sibling lacks the event itself: bring the ledger over, keep the sibling's code
    repo.git("checkout", "-q", "sibling")
    repo.git("checkout", ledger_commit, "--", "ledger")
    repo.commit("sibling gets the ledger")
    assert states(repo)[KEY] == "not_applicable"
    assert base  # the sibling forked before `since`


def test_since_a_commit_this_repository_lacks_applies_and_says_so(repo: Repo) -> None:
    event = Event(
        id="20261130T010000Z-0000000c",
        entity_key=KEY,
        status=Status.OBSERVED,
        effective_at=dt.datetime(2026, 11, 30, 1, tzinfo=dt.UTC),
        title="t",
        triggers=("push",),
        applies_to=AppliesTo(since="1234567890abcdef" * 2 + "12345678"),
    )
    folder = repo.path / "ledger" / entity_folder(KEY)
    folder.mkdir(parents=True)
    (folder / f"{event.id}.toml").write_bytes(event_to_toml(event))
    repo.commit("recorded elsewhere, since a commit we never fetched")
    result = repo.failgate("gates", "--ref", "refs/heads/main")
    assert "OPEN" in result.out
    assert "not in this repository" in result.out


def test_paths_exclude_a_commit_whose_tree_lacks_the_files(repo: Repo) -> None:
    repo.record(KEY, "--status", "observed", "--title", "t", "--trigger", "push",
                "--path", "deploy/**")  # fmt: skip
    repo.commit("record, scoped to deploy/")
    assert states(repo)[KEY] == "not_applicable"
    repo.write("deploy/budget.json", "{}\n")
    repo.commit("add a deploy file")
    assert states(repo)[KEY] == "open"


def test_escape_and_osc_sequences_in_a_title_never_reach_the_output(repo: Repo) -> None:
    hostile = "Gas \x1b[31mbudget\x1b[0m \x1b]0;pwned\x07 \u202eevil \x9b2J"
    repo.record(KEY, "--status", "observed", "--title", hostile, "--trigger", "push")
    repo.commit("a hostile title")
    for args in ((), ("--json",)):
        result = repo.failgate("gates", "--ref", "refs/heads/main", *args)
        for bad in ("\x1b", "\x07", "\u202e", "\x9b"):
            assert bad not in result.output, (args, repr(result.output))
        assert "pwned" not in result.output  # the OSC payload goes with its sequence
    assert "Gas budget" in repo.failgate("gates", "--ref", "refs/heads/main").out


def test_a_recorded_verified_event_clears_nothing(repo: Repo) -> None:
    first = repo.record(KEY, "--status", "observed", "--title", "t", "--trigger", "push")
    event = Event(
        id="20261130T010000Z-0000000a",
        entity_key=KEY,
        status=Status.VERIFIED,
        effective_at=dt.datetime(2026, 11, 30, 1, tzinfo=dt.UTC),
        follows=(first.rsplit("/", 1)[-1].removesuffix(".toml"),),
        evidence=Evidence(kind=EvidenceKind.COMMAND, commit=repo.head(), exit_code=0),
    )
    (repo.path / "ledger" / entity_folder(KEY) / f"{event.id}.toml").write_bytes(
        event_to_toml(event)
    )
    repo.commit("recall: verified")
    assert states(repo)[KEY] == "open"
    check = repo.failgate("check", "--ref", "refs/heads/main")
    assert check.code == 1, check
