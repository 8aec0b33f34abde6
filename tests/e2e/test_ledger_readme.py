"""A file under the ledger folder that is not a `.toml` file is the team's, not an event.

A README beside the events is the first thing a team adds to a folder it did not
know. It used to be an integrity error of the whole ledger ("names no entity"), and
append-only kept it forever: once a server's main held one, no push could land,
its removal included, and the advice ("record an event that retracts it") named
nothing a person could do. Now it is never read, may be edited or removed, and a
misnamed `.toml` file still blocks as it did. Real commands, real hooks, real pushes
to a real bare remote."""

from __future__ import annotations

from pathlib import Path

from failgate_hooks.core import exitcodes
from failgate_hooks.core.events import entity_folder
from tests.conftest import Repo
from tests.e2e.test_pre_push import push
from tests.e2e.test_pre_receive import RELAXERS, install_pre_receive
from tests.e2e.test_pre_receive import push as push_past_the_client
from tests.worlds import KEY, budget_repo, record_failure, remote_ref, with_remote

FOLDER = f"ledger/{entity_folder(KEY)}"
NOTES = {
    "ledger/README.md": "# The ledger\n\nOne file per failure; see docs/event-format.md.\n",
    f"{FOLDER}/NOTES.md": "the post-mortem lives in the wiki\n",
}


def _team_repo(tmp_path: Path) -> tuple[Repo, Path]:
    """A deploy gate on KEY, and the team's notes beside the events, on the remote's main
    before any hook: (repo, remote)."""
    repo = budget_repo(tmp_path / "work")
    repo.write("failgate.toml", RELAXERS)
    repo.commit("who may relax gates")
    remote = with_remote(repo, tmp_path / "remote.git")
    record_failure(repo, "deploy")
    for path, text in NOTES.items():
        repo.write(path, text)
    repo.commit("say what the ledger is")
    assert push_past_the_client(repo, "main").returncode == 0  # no hook yet
    return repo, remote


def test_notes_beside_the_events_neither_block_nor_count(tmp_path: Path) -> None:
    repo, remote = _team_repo(tmp_path)
    fsck = repo.failgate("fsck")
    assert fsck.code == 0, fsck
    checked = repo.failgate("check", "--trigger", "push", "--ref", "refs/heads/main")
    assert checked.code == exitcodes.ALLOWED, checked
    assert "README" not in checked.output and "NOTES" not in checked.output, checked
    gated = repo.failgate("check", "--trigger", "deploy", "--ref", "refs/heads/main")
    assert gated.code == exitcodes.HELD and f"OPEN {KEY}" in gated.output, gated

    # an uncommitted edit of a note is not an uncommitted ledger file
    repo.write("ledger/README.md", "# The ledger, said better\n")
    edited = repo.failgate("check", "--trigger", "push", "--ref", "refs/heads/main")
    assert edited.code == exitcodes.ALLOWED and "not committed" not in edited.output, edited
    repo.commit("say it better")

    assert repo.failgate("install").code == 0
    accepted = push(repo, "main")  # through the client hook: append-only, and the decision
    assert accepted.code == 0, accepted
    assert remote_ref(remote, "refs/heads/main") == repo.head()


def test_on_the_server_notes_may_be_edited_and_removed(tmp_path: Path) -> None:
    repo, remote = _team_repo(tmp_path)
    install_pre_receive(remote)
    repo.write("ledger/README.md", "# The ledger, said better\n")
    repo.commit("say it better")
    edited = push_past_the_client(repo, "main")
    assert edited.returncode == 0, edited.stderr
    assert remote_ref(remote, "refs/heads/main") == repo.head()

    repo.git("rm", "-q", *NOTES)
    repo.commit("the notes move to the wiki")
    removed = push_past_the_client(repo, "main")
    assert removed.returncode == 0, removed.stderr
    assert remote_ref(remote, "refs/heads/main") == repo.head()


def test_a_misnamed_toml_file_still_blocks_on_the_server(tmp_path: Path) -> None:
    """Only the `.toml` suffix makes a ledger file: one that has it and is no event's name
    may be a person's event with a typo, and fails closed as before."""
    repo, remote = _team_repo(tmp_path)
    install_pre_receive(remote)
    before = remote_ref(remote, "refs/heads/main")
    repo.write(f"{FOLDER}/20261201T000000Z-0BADC0DE.toml", "schema = 1\n")  # upper-case hex
    repo.commit("an event written by hand")
    refused = push_past_the_client(repo, "main")
    assert refused.returncode != 0, refused.stderr
    assert "not an event file name" in refused.stderr, refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before
