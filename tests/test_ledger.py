"""The ledger across revisions, on real repositories: union, provenance, resolution."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest

from failgate_hooks.app.evaluate import Evaluator, Request
from failgate_hooks.core.events import Event, Status, entity_folder, event_to_toml
from failgate_hooks.core.gates import Context, GateState
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.ledger.config import MAX_EVENT_BYTES, Config
from failgate_hooks.ledger.union import Revision, read_union
from tests.conftest import Repo

KEY = "deploy:mainnet:gas-budget"
FOLDER = f"ledger/{entity_folder(KEY)}"
WHEN = dt.datetime(2026, 11, 30, 3, 0, tzinfo=dt.UTC)


def first(repo: Repo, *extra: str) -> str:
    path = repo.record(KEY, "--status", "observed", "--title", "Gas budget", "--trigger", "push",
                       "--no-probe", *extra)  # fmt: skip
    return Path(path).stem


def write(repo: Repo, event: Event) -> None:
    (repo.path / FOLDER / f"{event.id}.toml").write_bytes(event_to_toml(event))


def gate_state(repo: Repo, *args: str) -> tuple[int, dict[str, object]]:
    result = repo.failgate("check", "--ref", "refs/heads/main", "--json", *args)
    doc = json.loads(result.out)
    return result.code, {g["entity_key"]: g for g in doc["gates"]}.get(KEY, {})


def test_the_union_remembers_which_revisions_hold_each_event(repo: Repo) -> None:
    one = first(repo)
    old = repo.commit("one")
    repo.record(KEY, "--status", "diagnosed")
    new = repo.commit("two")
    with GitRepo.open(repo.path) as git_repo:
        ledger = read_union(
            git_repo,
            [Revision("new", new), Revision("old", old, protected=True)],
            "ledger",
            MAX_EVENT_BYTES,
        )
    by_id = {f.event_id: f for f in ledger.files.values()}
    assert [r.label for r in by_id[one].revisions] == ["new", "old"]
    assert by_id[one].protected
    assert ledger.protected_ids == frozenset({one})


def test_a_byte_different_duplicate_id_across_revisions_is_an_integrity_error(repo: Repo) -> None:
    eid = first(repo)
    old = repo.commit("record")
    path = repo.path / FOLDER / f"{eid}.toml"
    path.write_text(path.read_text().replace("Gas budget", "Gas budget (edited)"))
    new = repo.commit("edit in place")
    with GitRepo.open(repo.path) as git_repo:
        ledger = read_union(
            git_repo, [Revision("new", new), Revision("old", old)], "ledger", MAX_EVENT_BYTES
        )
    (problem,) = ledger.problems
    assert problem.code == "duplicate-id"
    assert "new" in problem.message and "old" in problem.message


def test_two_branches_changing_one_entity_merge_into_a_conflict_whatever_the_clocks(
    repo: Repo,
) -> None:
    first(repo)
    repo.commit("record")
    repo.git("checkout", "-q", "-b", "side")
    repo.record(KEY, "--status", "mitigated", "--effective-at", "2099-01-01T00:00:00Z")
    repo.commit("side says mitigated, in 2099")
    repo.git("checkout", "-q", "main")
    repo.record(KEY, "--status", "expired", "--note", "main says gone")
    repo.commit("main says expired")
    repo.git("merge", "-q", "--no-edit", "side")
    code, gate = gate_state(repo)
    assert code == 3
    assert gate["state"] == "conflict"


def test_an_event_dated_2099_does_not_win_over_one_that_follows_it(repo: Repo) -> None:
    first(repo)
    repo.record(KEY, "--status", "expired", "--effective-at", "2099-01-01T00:00:00Z")
    repo.record(KEY, "--status", "observed", "--note", "it came back")
    repo.commit("expired in 2099, then observed again")
    result = repo.failgate("gates", "--json", "--ref", "refs/heads/main")
    (gate,) = json.loads(result.out)["gates"]
    assert gate["status"] == "observed"
    assert gate["state"] == "open"


def test_a_superseded_event_is_dropped_before_any_filtering(repo: Repo) -> None:
    wrong = first(repo, "--path", "nothing-matches/**")
    # written by hand: it names title and triggers, and deliberately no scope
    write(repo, Event(
        id="20261130T000000Z-0000000b", entity_key=KEY, status=Status.OBSERVED,
        effective_at=dt.datetime(2026, 11, 30, tzinfo=dt.UTC), follows=(wrong,),
        supersedes=(wrong,), title="Gas budget", triggers=("push",),
    ))  # fmt: skip
    repo.commit("record, then replace it without a scope")
    result = repo.failgate("gates", "--json", "--ref", "refs/heads/main")
    (gate,) = json.loads(result.out)["gates"]
    assert gate["state"] == "open"  # the superseded scope would have made it not applicable


def test_superseding_the_newest_event_does_not_revive_the_one_before(repo: Repo) -> None:
    first(repo)
    typo = Path(repo.record(KEY, "--status", "mitigated", "--note", "budgte raised")).stem
    repo.record(KEY, "--status", "mitigated", "--note", "budget raised", "--supersedes", typo)
    repo.commit("a typo fix")
    result = repo.failgate("log", KEY)
    heads = [line for line in result.out.splitlines() if line.startswith("*")]
    assert len(heads) == 1 and "head" in heads[0]
    assert "RESOLUTION resolved: status mitigated" in result.out


def test_a_bad_file_on_one_entity_does_not_stop_pushes_it_does_not_apply_to(repo: Repo) -> None:
    first(repo)
    other = "release:notes"
    repo.record(other, "--status", "observed", "--title", "notes", "--trigger", "push",
                "--path", "no-such-dir/**")  # fmt: skip
    later = repo.path / repo.record(other, "--status", "diagnosed")
    later.write_text(later.read_text().replace('"diagnosed"', '"fixed"'))
    repo.commit("one good entity, one with a broken file")
    code, gate = gate_state(repo)
    assert gate["state"] == "open"
    assert code == 1  # held by the good entity, not an integrity error
    fsck = repo.failgate("fsck")
    assert fsck.code == 4 and later.name in fsck.out


def test_a_broken_entity_without_scope_applies_everywhere(repo: Repo) -> None:
    first(repo)
    repo.record("release:notes", "--status", "observed", "--title", "n", "--trigger", "push")
    broken = next((repo.path / "ledger/release/notes").glob("*.toml"))
    broken.write_text(broken.read_text().replace('"observed"', '"fixed"'))
    repo.commit("a broken first event")
    result = repo.failgate("check", "--ref", "refs/heads/main")
    assert result.code == 4, result
    assert re.search(r"INVALID release:notes", result.out)


def test_effective_at_is_written_but_never_orders(repo: Repo) -> None:
    eid = first(repo)
    event = Event(
        id="20000101T000000Z-00000001",
        entity_key=KEY,
        status=Status.EXPIRED,
        effective_at=dt.datetime(2000, 1, 1, tzinfo=dt.UTC),
        follows=(eid,),
    )
    write(repo, event)
    repo.commit("an event that follows the first, dated long before it")
    result = repo.failgate("gates", "--json", "--ref", "refs/heads/main")
    (gate,) = json.loads(result.out)["gates"]
    assert gate["state"] == "retired"


# --------------------------------------------------------------------------- odd trees


def test_two_entries_of_one_name_in_a_folder_are_a_duplicate_id_not_a_crash(repo: Repo) -> None:
    # git mktree writes such a tree; fsck only warns about it
    eid = "20261130T030000Z-00000001"
    event = Event(id=eid, entity_key="svc:r0", status=Status.OBSERVED, effective_at=WHEN,
                  title="t", triggers=("push",))  # fmt: skip
    one = repo.git("hash-object", "-w", "--stdin", input=event_to_toml(event).decode())
    edited = event_to_toml(event._replace(title="edited")).decode()
    two = repo.git("hash-object", "-w", "--stdin", input=edited)
    tree = repo.git(
        "mktree", input=f"100644 blob {one}\t{eid}.toml\n100644 blob {two}\t{eid}.toml\n"
    )
    for folder in ("r0", "svc", "ledger"):
        tree = repo.git("mktree", input=f"040000 tree {tree}\t{folder}\n")
    commit = repo.git("commit-tree", tree, "-m", "two entries of one name")
    with GitRepo.open(repo.path) as git_repo:
        ledger = read_union(git_repo, [Revision("C", commit)], "ledger", MAX_EVENT_BYTES)
    assert [p.code for p in ledger.problems] == ["duplicate-id"]
    assert [f.event for f in ledger.files.values()] == [None]


@pytest.mark.parametrize("char", ["\n", "\r", "\x85", "\u2028"])
def test_a_file_name_with_a_line_break_is_a_bad_name_not_a_crash(repo: Repo, char: str) -> None:
    name = f"ledger/{entity_folder(KEY)}/notes{char}draft.toml"
    blob = repo.git("hash-object", "-w", "--stdin", input="x = 1\n")
    tree = repo.git("mktree", "-z", input=f"100644 blob {blob}\t{name.rsplit('/', 1)[1]}\0")
    for folder in reversed(name.split("/")[:-1]):
        tree = repo.git("mktree", input=f"040000 tree {tree}\t{folder}\n")
    commit = repo.git("commit-tree", tree, "-m", "a name with a line break")
    with GitRepo.open(repo.path) as git_repo:
        ledger = read_union(git_repo, [Revision("C", commit)], "ledger", MAX_EVENT_BYTES)
    (file,) = ledger.files.values()
    assert file.path == name and file.entity_key == KEY
    assert [p.code for p in file.problems] == ["bad-file-name"]


def test_a_gate_moved_off_push_asks_nothing_beyond_a_shallow_clone(
    repo: Repo, tmp_path: Path
) -> None:
    # C scopes the gate to pushes since A; the protected revision moves it to deploy.
    # A clone without A decides the push without asking whether C descends from A.
    since = repo.head()
    repo.write("x.txt", "C's change\n")
    repo.commit("C's change")
    first(repo, "--since", since)
    tip = repo.commit("the gate, since A")
    repo.record(KEY, "--status", "diagnosed", "--trigger", "deploy")
    main = repo.commit("moved to deploy")
    repo.git("branch", "c", tip)
    clone = tmp_path / "shallow"
    repo.git("clone", "-q", "--depth", "1", "--no-single-branch", f"file://{repo.path}", str(clone))
    assert repo.git("-C", str(clone), "cat-file", "-t", since, check=False) != "commit"
    with GitRepo.open(clone) as git_repo:
        revisions = (Revision("C", tip), Revision("main", main, protected=True))
        request = Request(tip, Context("push", "refs/heads/main"), revisions)
        decision = Evaluator(git_repo, Config()).evaluate(request)
    assert decision.exit_code == 0 and not decision.errors
    assert [g.state for g in decision.gates] == [GateState.NOT_APPLICABLE]


def test_an_event_of_megabytes_is_refused_by_its_size_without_being_read(repo: Repo) -> None:
    import tracemalloc

    eid = first(repo)
    path = f"{FOLDER}/{eid}.toml"
    target = repo.path / path
    target.write_text(target.read_text() + f'note = "{"x" * (4 << 20)}"\n')
    commit = repo.commit("an event of four megabytes")
    with GitRepo.open(repo.path) as git_repo:
        tracemalloc.start()
        try:
            ledger = read_union(git_repo, [Revision("C", commit)], "ledger", 64 * 1024)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peak < 1 << 20, peak  # git said its size first; its bytes were never kept
    (problem,) = ledger.files[path].problems
    assert problem.code == "event-too-large"
    assert "more than max_event_bytes (65536)" in problem.message
    checked = repo.failgate("check", "--ref", "refs/heads/main")
    assert checked.code == 4, checked
    assert path in checked.output and "more than max_event_bytes (65536)" in checked.output


def test_fsck_scans_no_file_it_would_not_read_as_an_event(repo: Repo) -> None:
    import tracemalloc

    from failgate_hooks.ledger.fsck import run_fsck

    first(repo)
    # not an event's name, and huge; and no `.toml` at all, never read as a ledger file
    repo.write(f"{FOLDER}/notes.toml", "x" * (4 << 20))
    repo.write(f"{FOLDER}/notes.txt", "x" * (4 << 20))
    commit = repo.commit("eight megabytes beside the events")
    with GitRepo.open(repo.path) as git_repo:
        tracemalloc.start()
        try:
            report = run_fsck(git_repo, commit, None)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peak < 1 << 20, peak
    assert [(p.code, p.path) for p in report.problems] == [
        ("bad-file-name", f"{FOLDER}/notes.toml")
    ]


def test_fsck_resolves_each_entity_once_for_its_problems_and_its_hint(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    from failgate_hooks.ledger import union
    from failgate_hooks.ledger.fsck import run_fsck

    first(repo)
    repo.write(f"{FOLDER}/20261130T030000Z-0000beef.toml", "schema = 1\nid = [unterminated\n")
    other = "deploy:testnet:gas-budget"
    repo.record(other, "--status", "observed", "--title", "t", "--trigger", "push", "--no-probe")
    commit = repo.commit("one entity with a file that does not validate, one without")
    resolved: list[str] = []
    real = union.Ledger._resolve

    def counting(self: union.Ledger, entity_key: str, *args: object) -> object:
        resolved.append(entity_key)
        return real(self, entity_key, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(union.Ledger, "_resolve", counting)
    with GitRepo.open(repo.path) as git_repo:
        report = run_fsck(git_repo, commit, None)
    assert sorted(resolved) == sorted([KEY, other]), resolved
    assert [p.code for p in report.problems] == ["unreadable"], report.problems
    (hint,) = report.hints
    assert hint.startswith(f"{KEY}: ") and "--retracts 20261130T030000Z-0000beef" in hint
