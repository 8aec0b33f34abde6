"""Pushes that try to route around a held gate through the ledger's own rules.

Each test pushes through a real server hook (pre-receive, authority `protected`)
from a pusher who is not a relaxer, and asserts on the remote ref.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from failgate_hooks.core.events import entity_folder
from tests.conftest import Repo
from tests.e2e.test_pre_receive import RELAXERS, install_pre_receive, push
from tests.worlds import KEY, budget_repo, record_failure, remote_ref, with_remote


def _event(event_id: str, *follows: str, **keys: str) -> str:
    extra = "".join(f"{k} = {v}\n" for k, v in keys.items())
    return (
        f'schema = 1\nid = "{event_id}"\nentity_key = "{KEY}"\nstatus = "observed"\n'
        f"follows = {json.dumps(list(follows))}\neffective_at = 2026-11-30T00:00:00Z\n{extra}"
    )


def _write_event(repo: Repo, event_id: str, text: str) -> None:
    repo.write(f"ledger/{entity_folder(KEY)}/{event_id}.toml", text)


def _id_of(path: str) -> str:
    return Path(path).stem


def test_a_supersedes_cycle_of_new_events_cannot_drop_a_protected_event(tmp_path: Path) -> None:
    """Two new events that supersede each other are both dropped, and a dropped event's
    own `supersedes` still drops what it names: the pair must count as a relaxation."""
    repo = budget_repo(tmp_path / "work")
    repo.write("failgate.toml", RELAXERS)
    repo.commit("who may relax gates")
    remote = with_remote(repo, tmp_path / "remote.git")
    record_failure(repo, "deploy")
    # the gate, widened later (reviewed, protected): it now holds pushes too
    widened = _id_of(repo.record(KEY, "--status", "observed", "--trigger", "push", "--trigger", "deploy",
                "--note", "pushes too", "--no-probe"))  # fmt: skip
    repo.commit("the gate holds pushes")
    assert push(repo, "main").returncode == 0  # no server hook yet
    install_pre_receive(remote, "--exec")
    repo.write("notes.txt", "more work\n")
    repo.commit("more work")
    held = push(repo, "main", user="bob")
    assert held.returncode != 0, held.stderr  # the gate holds a plain push
    x, y = "20261130T000000Z-0000000a", "20261130T000000Z-0000000b"
    _write_event(repo, x, _event(x, widened, supersedes=f'["{widened}", "{y}"]'))
    _write_event(repo, y, _event(y, widened, supersedes=f'["{x}"]'))
    repo.write("notes.txt", "more work on the broken budget\n")
    repo.commit("two notes")
    before = remote_ref(remote, "refs/heads/main")
    refused = push(repo, "main", user="bob")
    assert refused.returncode != 0, refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before


WIDE, NARROW = "20261130T000000Z-0000000a", "20261130T000000Z-0000000b"


def _conflicted_server(tmp_path: Path) -> tuple[Repo, Path]:
    """A server whose main holds two reviewed heads that disagree on the triggers (one
    widened the gate, one narrowed it to deploys; the narrow one last by id): the
    conflict holds every push until a person settles it."""
    repo = budget_repo(tmp_path / "work")
    repo.write("failgate.toml", RELAXERS)
    repo.commit("who may relax gates")
    remote = with_remote(repo, tmp_path / "remote.git")
    first = _id_of(record_failure(repo, "push"))
    _write_event(repo, WIDE, _event(WIDE, first, triggers='["push", "deploy"]'))
    _write_event(repo, NARROW, _event(NARROW, first, triggers='["deploy"]'))
    repo.commit("two branches' events, merged")
    assert push(repo, "main").returncode == 0  # no server hook yet
    install_pre_receive(remote, "--exec")
    repo.write("notes.txt", "more work\n")
    repo.commit("more work")
    held = push(repo, "main", user="bob")
    assert held.returncode != 0, held.stderr  # the conflict holds a plain push
    return repo, remote


def test_an_event_that_settles_a_conflict_without_saying_how_is_a_relaxation(
    tmp_path: Path,
) -> None:
    """An event that follows both heads and sets nothing settles the conflict by id
    order, for the head that takes pushes out of the gate: a choice between reviewed
    states that only a relaxer may make."""
    repo, remote = _conflicted_server(tmp_path)
    settle = "20261130T000001Z-0000000c"
    _write_event(repo, settle, _event(settle, WIDE, NARROW))
    repo.commit("settle it")
    before = remote_ref(remote, "refs/heads/main")
    refused = push(repo, "main", user="bob")
    assert refused.returncode != 0, refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before


def test_a_broken_file_cannot_turn_a_conflict_into_a_narrower_gate(tmp_path: Path) -> None:
    """An invalid entity is judged on its best-effort fold, which for heads that
    disagree takes the keys of the head last by id: a broken file pushed into the
    folder of a conflicted entity must not make the narrow head's triggers decide."""
    repo, remote = _conflicted_server(tmp_path)
    broken = "20261130T000002Z-0000000d"
    _write_event(repo, broken, "not = [valid toml\n")
    repo.commit("a broken event")
    before = remote_ref(remote, "refs/heads/main")
    refused = push(repo, "main", user="bob")
    assert refused.returncode != 0, refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before


def test_a_retracted_event_brought_back_cannot_settle_a_conflict(tmp_path: Path) -> None:
    """The narrow head retracted an event (its file deleted). A file of that id brought
    back is dropped, so no relaxation, but the narrow head follows it: made to follow
    the wide head, it would put the wide head first and leave the narrow one to decide."""
    repo = budget_repo(tmp_path / "work")
    repo.write("failgate.toml", RELAXERS)
    repo.commit("who may relax gates")
    remote = with_remote(repo, tmp_path / "remote.git")
    first = _id_of(record_failure(repo, "push"))
    leaked = "20261130T000000Z-00000009"
    _write_event(repo, WIDE, _event(WIDE, first, triggers='["push", "deploy"]'))
    _write_event(repo, leaked, _event(leaked, first, note='"a leaked secret"'))
    repo.commit("two branches' events, merged")
    _write_event(
        repo, NARROW, _event(NARROW, leaked, first, retracts=f'["{leaked}"]', triggers='["deploy"]')
    )
    repo.git("rm", "-q", f"ledger/{entity_folder(KEY)}/{leaked}.toml")
    repo.commit("retract the leak, narrow the gate")
    assert push(repo, "main").returncode == 0  # no server hook yet
    install_pre_receive(remote, "--exec")
    repo.write("notes.txt", "more work\n")
    repo.commit("more work")
    held = push(repo, "main", user="bob")
    assert held.returncode != 0, held.stderr  # the conflict holds a plain push
    _write_event(repo, leaked, _event(leaked, WIDE))
    repo.commit("bring it back")
    before = remote_ref(remote, "refs/heads/main")
    refused = push(repo, "main", user="bob")
    assert refused.returncode != 0, refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before


def test_a_retraction_too_large_for_the_ledger_cannot_delete_a_protected_event(
    tmp_path: Path,
) -> None:
    """Main keeps events under 2 KiB. A retraction over that is no event to the gate
    decision, so it brings no PENDING retraction: were append-only to read it with the
    default limit, the protected event's file would go with nobody's authority."""
    repo = budget_repo(tmp_path / "work")
    repo.write("failgate.toml", RELAXERS + "max_event_bytes = 2048\n")
    repo.commit("who may relax gates; small events")
    remote = with_remote(repo, tmp_path / "remote.git")
    protected = record_failure(repo, "deploy")  # no push is held by it: only its file matters
    assert push(repo, "main").returncode == 0  # no server hook yet
    install_pre_receive(remote, "--exec")
    repo.record(KEY, "--status", "observed", "--retracts", _id_of(protected),
                "--note", "a" * 3000)  # fmt: skip
    repo.git("rm", "-q", protected)
    repo.commit("retract it, in an event too large to be one")
    before = remote_ref(remote, "refs/heads/main")
    refused = push(repo, "main", user="bob")
    assert refused.returncode != 0, refused.stderr
    assert f"deletes event {_id_of(protected)}" in refused.stderr, refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before


# A ledger folder git quotes in a path (`"`, a tab) and reads as a pattern (`*`).
QUOTED_LEDGER = 'le"d\tger*'


def _server_with_a_ledger_in(tmp_path: Path, ledger_dir: str) -> tuple[Repo, Path, str]:
    """A server whose main holds an event under `ledger_dir`; every ref is enforced, and
    the event holds no push (only its file matters): (repo, remote, the event's path)."""
    repo = budget_repo(tmp_path / "work")
    repo.write("failgate.toml", RELAXERS + f'block_on = "all"\nledger = {json.dumps(ledger_dir)}\n')
    repo.commit("who may relax gates; the ledger's folder")
    remote = with_remote(repo, tmp_path / "remote.git")
    protected = record_failure(repo, "deploy")
    assert protected.startswith(f"{ledger_dir}/"), protected
    assert push(repo, "main").returncode == 0  # no server hook yet
    install_pre_receive(remote, "--exec")
    return repo, remote, protected


def test_an_event_under_a_folder_git_quotes_cannot_be_edited_on_a_new_branch(
    tmp_path: Path,
) -> None:
    """A new ref has no old tip to compare: the walk over its commits alone sees the edit."""
    repo, remote, protected = _server_with_a_ledger_in(tmp_path, QUOTED_LEDGER)
    repo.git("checkout", "-q", "-b", "wip")
    target = repo.path / protected
    target.write_text(target.read_text().replace("six modules", "one module"))
    repo.commit("quietly rewrite its note")
    refused = push(repo, "wip")
    assert refused.returncode != 0, refused.stderr
    assert f"changes event {_id_of(protected)}" in refused.stderr, refused.stderr
    assert remote_ref(remote, "refs/heads/wip") is None


def test_an_event_under_a_folder_git_quotes_cannot_be_deleted_on_a_new_branch(
    tmp_path: Path,
) -> None:
    repo, remote, protected = _server_with_a_ledger_in(tmp_path, QUOTED_LEDGER)
    repo.git("checkout", "-q", "-b", "wip")
    repo.git("rm", "-q", "--", protected)
    repo.commit("drop it")
    refused = push(repo, "wip")
    assert refused.returncode != 0, refused.stderr
    assert f"deletes event {_id_of(protected)}" in refused.stderr, refused.stderr
    assert remote_ref(remote, "refs/heads/wip") is None


PATHSPEC_VARIABLES = {"GIT_ICASE_PATHSPECS": "1", "GIT_GLOB_PATHSPECS": "1"}


@pytest.mark.parametrize("variables", [{}, PATHSPEC_VARIABLES], ids=["plain", "icase-glob"])
def test_pathspec_variables_in_the_pushers_environment_change_no_decision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variables: dict[str, str]
) -> None:
    """git hands the pusher's environment to a local server's hook. `LEDGER/` is the
    team's own folder: read case-blind, `ledger` would match it and an edit there
    would be an edited event; beside the walk's --literal-pathspecs, either makes git die."""
    repo = budget_repo(tmp_path / "work")
    repo.write("failgate.toml", RELAXERS + 'block_on = "all"\n')
    team = repo.write("LEDGER/notes/20261130T000000Z-0000000a.toml", "minutes = 1\n")
    repo.commit("who may relax gates; the team's own LEDGER folder")
    remote = with_remote(repo, tmp_path / "remote.git")
    protected = record_failure(repo, "deploy")
    assert push(repo, "main").returncode == 0  # no server hook yet
    install_pre_receive(remote, "--exec")
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    team.write_text("minutes = 2\n")
    edited = repo.commit("the team's minutes")
    accepted = push(repo, "main")
    assert accepted.returncode == 0, accepted.stderr
    assert remote_ref(remote, "refs/heads/main") == edited
    repo.git("rm", "-q", "--", protected)
    repo.commit("drop the event")
    refused = push(repo, "main")
    assert refused.returncode != 0, refused.stderr
    assert f"deletes event {_id_of(protected)}" in refused.stderr, refused.stderr
    assert remote_ref(remote, "refs/heads/main") == edited
