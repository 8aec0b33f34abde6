"""An event file that does not validate is retracted, never edited or deleted.

Short ref names in `applies_to.refs` are invalid now, so a team's old events can
block as ledger integrity errors; append-only forbids editing or deleting them.
`failgate record --retracts ID` names such a file by its file name's stem, and a
valid retraction of the entity clears it: for the client hook, the server (once
reviewed), fsck and append-only alike. A file not named as an event (`oops.toml`)
has no id: it is named by its stem when that is portable, and `record` refuses one
that is not, saying it takes a history rewrite. Every test runs the real commands
and real pushes through installed hooks to a real bare remote."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

from failgate_hooks.core import exitcodes
from tests.conftest import Repo
from tests.e2e.test_pre_push import push
from tests.e2e.test_pre_receive import RELAXERS, install_pre_receive
from tests.e2e.test_pre_receive import push as push_past_the_client
from tests.worlds import KEY, budget_repo, fix_budget, record_failure, remote_ref, with_remote

OTHER = "deploy:testnet:gas-budget"
COMMAND = re.compile(r"`(failgate record [^`]+)`")


def _shorten_refs(repo: Repo, path: str) -> None:
    """What an old failgate wrote: the event's refs scope as a short name."""
    event = repo.path / path
    text = event.read_text()
    assert '"refs/heads/main"' in text, text
    event.write_text(text.replace('"refs/heads/main"', '"main"'))


def _old_short_ref_event(tmp_path: Path, config: str = "") -> tuple[Repo, Path, str]:
    """The remote's main holds a valid gate on release branches and a later event, meant
    to move it to main, written short by an old failgate: (repo, remote, its path)."""
    repo = budget_repo(tmp_path / "work")
    if config:
        repo.write("failgate.toml", config)
        repo.commit("who may relax gates")
    remote = with_remote(repo, tmp_path / "remote.git")
    record_failure(repo, "push", "--ref", "refs/heads/release/*")
    later = repo.record(KEY, "--status", "diagnosed", "--ref", "refs/heads/main")
    _shorten_refs(repo, later)
    repo.commit("the gate moved to main, written short by an old failgate")
    assert push_past_the_client(repo, "main").returncode == 0  # no hook then
    return repo, remote, later


def _the_hinted_command(output: str) -> list[str]:
    found = COMMAND.findall(output)
    assert found, output
    words = shlex.split(found[0])
    assert words[:2] == ["failgate", "record"], words
    return words[2:]


def test_an_old_short_ref_event_blocks_until_record_retracts_it(tmp_path: Path) -> None:
    repo, remote, later = _old_short_ref_event(tmp_path)
    stem = Path(later).stem
    assert repo.failgate("install").code == 0
    hint = f"failgate record {KEY} --status observed --retracts {stem}"

    checked = repo.failgate("check", "--trigger", "push", "--ref", "refs/heads/main")
    assert checked.code == exitcodes.INTEGRITY, checked
    assert f"INVALID {KEY}" in checked.output, checked
    assert hint in checked.output, checked
    fsck = repo.failgate("fsck")
    assert fsck.code == exitcodes.INTEGRITY, fsck
    assert f"{later}: applies_to.refs[0]" in fsck.output, fsck
    assert f"hint: {KEY}:" in fsck.output and hint in fsck.output, fsck
    repo.write("src.txt", "work on main\n")
    repo.commit("work on main")
    refused = push(repo, "main")
    assert refused.code != 0 and f"INVALID {KEY}" in refused.output, refused

    # the command fsck names, word for word
    retracted = repo.failgate("record", *_the_hinted_command(fsck.output))
    assert retracted.code == 0, retracted
    assert f"note: retracts {later}, which does not validate" in retracted.err, retracted
    path = retracted.out.strip().splitlines()[-1]
    assert tomllib.loads((repo.path / path).read_text())["retracts"] == [stem]
    before = repo.head()
    repo.commit("retract the short-ref event", path)

    assert repo.failgate("fsck").code == 0
    checked = repo.failgate("check", "--trigger", "push", "--ref", "refs/heads/main")
    assert checked.code == exitcodes.ALLOWED, checked
    assert "INVALID" not in checked.output, checked
    accepted = push(repo, "main")  # the client hook: append-only, and the decision
    assert accepted.code == 0, accepted
    assert "RELAXED" in accepted.output and "retracts" in accepted.output, accepted
    assert remote_ref(remote, "refs/heads/main") == repo.head()
    ranged = repo.failgate("fsck", "--range", f"{before}~1..HEAD")
    assert ranged.code == 0, ranged

    # and the file, retracted, may now go
    repo.git("rm", "-q", later)
    repo.commit("delete the retracted file")
    assert repo.failgate("fsck", "--range", f"{before}..HEAD").code == 0
    assert push(repo, "main").code == 0


def test_on_the_server_the_retraction_waits_for_a_relaxer(tmp_path: Path) -> None:
    """Clearing an invalid file relaxes the gate as any retraction does: pushed by
    someone who may not relax, it is PENDING and the file still blocks."""
    repo, remote, later = _old_short_ref_event(tmp_path, RELAXERS)
    install_pre_receive(remote)
    path = repo.record(KEY, "--status", "observed", "--retracts", Path(later).stem)
    repo.commit("retract the short-ref event", path)
    before = remote_ref(remote, "refs/heads/main")

    refused = push_past_the_client(repo, "main", user="bob")
    assert refused.returncode != 0, refused.stderr
    assert "PENDING" in refused.stderr and f"INVALID {KEY}" in refused.stderr, refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before
    accepted = push_past_the_client(repo, "main", user="alice")
    assert accepted.returncode == 0, accepted.stderr
    assert remote_ref(remote, "refs/heads/main") == repo.head()


def test_a_retraction_of_no_such_id_fails_and_writes_nothing(tmp_path: Path) -> None:
    repo, _, _ = _old_short_ref_event(tmp_path)
    folder = repo.path / "ledger" / Path(*KEY.split(":"))
    files = sorted(folder.iterdir())
    names = ("20991231T235959Z-0badc0de", "oops", "2026-01-01 note", "\x1b]0;owned\x07" + "x" * 500)
    for wanted in names:
        refused = repo.failgate("record", KEY, "--status", "observed", "--retracts", wanted)
        assert refused.code == exitcodes.USAGE, refused
        assert f"no event of {KEY} has that id" in refused.err, refused
        assert "\x1b" not in refused.output and "x" * 200 not in refused.output, refused
        assert "Traceback" not in refused.output
    assert sorted(folder.iterdir()) == files


def test_a_retraction_in_another_entity_does_not_clear_the_file(tmp_path: Path) -> None:
    """The file is of KEY; OTHER's events cannot retract it: `record` refuses, and a
    hand-written retraction in OTHER's folder leaves it blocking and undeletable."""
    repo, _, later = _old_short_ref_event(tmp_path)
    stem = Path(later).stem
    repo.record(OTHER, "--status", "observed", "--title", "t", "--trigger", "deploy")
    repo.commit("another entity")
    refused = repo.failgate("record", OTHER, "--status", "observed", "--retracts", stem)
    assert refused.code == exitcodes.USAGE, refused
    assert f"no event of {OTHER} has that id" in refused.err, refused

    forged = repo.record(OTHER, "--status", "diagnosed", "--note", "placeholder")
    text = (repo.path / forged).read_text().replace("retracts = []", f'retracts = ["{stem}"]')
    (repo.path / forged).write_text(text)
    base = repo.commit("retract KEY's file from OTHER")
    fsck = repo.failgate("fsck")
    assert fsck.code == exitcodes.INTEGRITY, fsck
    assert f"{later}: applies_to.refs[0]" in fsck.output, fsck
    checked = repo.failgate("check", "--trigger", "push", "--ref", "refs/heads/main")
    assert checked.code == exitcodes.INTEGRITY and f"INVALID {KEY}" in checked.output, checked

    repo.git("rm", "-q", later)
    repo.commit("delete it on OTHER's word")
    ranged = repo.failgate("fsck", "--range", f"{base}..HEAD")
    assert ranged.code == exitcodes.INTEGRITY, ranged
    assert "deletes event" in ranged.output, ranged


def test_a_file_is_retracted_by_the_id_it_holds_under_its_file_name(tmp_path: Path) -> None:
    """A file copied by hand keeps the id it holds, which is not its name: `--retracts`
    takes that id too, and writes the file name's stem, which is what the gate and
    append-only know it by."""
    repo, _, later = _old_short_ref_event(tmp_path)
    held, named = "20261201T000000Z-0000abcd", "20261201T000000Z-00c0ffee"
    copy = f"{Path(later).parent}/{named}.toml"
    repo.write(copy, (repo.path / later).read_text().replace(Path(later).stem, held))
    repo.commit("a copy of the later event, under another name")
    assert repo.failgate("fsck").code == exitcodes.INTEGRITY

    by_id = repo.failgate("record", KEY, "--status", "observed", "--retracts", held,
                          "--retracts", Path(later).stem)  # fmt: skip
    assert by_id.code == 0, by_id
    assert f"it holds id {held}; the retraction names its file, {named}" in by_id.err, by_id
    path = by_id.out.strip().splitlines()[-1]
    retracts = tomllib.loads((repo.path / path).read_text())["retracts"]
    assert retracts == [named, Path(later).stem], retracts
    repo.commit("retract both", path)
    fsck = repo.failgate("fsck")
    assert fsck.code == 0, fsck


def test_a_file_no_toml_reader_can_finish_is_retracted_without_a_traceback(
    tmp_path: Path,
) -> None:
    """A file nested too deeply, or holding an integer of thousands of digits, is
    unreadable; `record --retracts` names it like any other, and fails on none."""
    repo, _, _ = _old_short_ref_event(tmp_path)
    folder = repo.path / "ledger" / Path(*KEY.split(":"))
    nested, huge = "20261201T000000Z-0000dead", "20261201T000000Z-0000beef"
    (folder / f"{nested}.toml").write_text("id = " + "[" * 5000 + "]" * 5000 + "\n")
    (folder / f"{huge}.toml").write_text("schema = 1\nnote = " + "9" * 5000 + "\n")
    repo.commit("two files no TOML reader finishes")
    retracted = repo.failgate("record", KEY, "--status", "observed",
                              "--retracts", nested, "--retracts", huge)  # fmt: skip
    assert retracted.code == 0, retracted
    assert "Traceback" not in retracted.output, retracted
    for stem in (nested, huge):
        assert f"note: retracts {Path(folder, stem).relative_to(repo.path)}.toml" in retracted.err


def _misnamed_on_main(tmp_path: Path, name: str) -> tuple[Repo, Path, str]:
    """The remote's main holds a held push gate and, beside its event, a file not named
    as an event (`name`): (repo, remote, the file's path). The client hook is in."""
    repo = budget_repo(tmp_path / "work")
    remote = with_remote(repo, tmp_path / "remote.git")
    first = record_failure(repo, "push")
    misnamed = f"{Path(first).parent}/{name}"
    repo.write(misnamed, 'note = "a draft saved beside the events"\n')
    repo.commit("a note saved into the ledger")
    assert push_past_the_client(repo, "main").returncode == 0  # no hook then
    assert repo.failgate("install").code == 0
    return repo, remote, misnamed


def test_a_misnamed_file_on_main_blocks_until_record_retracts_it_by_its_stem(
    tmp_path: Path,
) -> None:
    repo, remote, misnamed = _misnamed_on_main(tmp_path, "oops.toml")
    hint = f"failgate record {KEY} --status observed --retracts oops"
    checked = repo.failgate("check", "--trigger", "push", "--ref", "refs/heads/main")
    assert checked.code == exitcodes.INTEGRITY, checked
    assert f"INVALID {KEY}" in checked.output and hint in checked.output, checked
    fix_budget(repo)  # the verifier passes: only the misnamed file holds the gate
    refused = push(repo, "main")
    assert refused.code != 0 and f"INVALID {KEY}" in refused.output, refused
    assert remote_ref(remote, "refs/heads/main") != repo.head()
    repo.git("reset", "-q", "--hard", "HEAD~1")  # the budget broken again, as main has it

    retracted = repo.failgate("record", *_the_hinted_command(checked.output))
    assert retracted.code == 0, retracted
    assert f"note: retracts {misnamed}" in retracted.err, retracted
    path = retracted.out.strip().splitlines()[-1]
    assert tomllib.loads((repo.path / path).read_text())["retracts"] == ["oops"]
    repo.commit("retract the note saved into the ledger", path)
    assert repo.failgate("fsck").code == 0

    # The file no longer makes the entity invalid: the gate decides as it would without
    # it, held while the verifier fails, and cleared by the fix.
    held = push(repo, "main")
    assert held.code != 0, held
    assert "BLOCKED" in held.output and "INVALID" not in held.output, held
    assert "budget 50M < required 120M" in held.output, held
    fix_budget(repo)
    accepted = push(repo, "main")
    assert accepted.code == 0, accepted
    assert "RELAXED" in accepted.output and "retracts" in accepted.output, accepted
    assert remote_ref(remote, "refs/heads/main") == repo.head()

    # and the file, retracted, may now go
    before = repo.head()
    repo.git("rm", "-q", misnamed)
    repo.commit("delete the retracted note")
    assert repo.failgate("fsck", "--range", f"{before}..HEAD").code == 0
    assert push(repo, "main").code == 0


def test_a_misnamed_file_whose_name_is_not_portable_is_refused_by_record(
    tmp_path: Path,
) -> None:
    repo, _, misnamed = _misnamed_on_main(tmp_path, "2026-01-01 note.toml")
    folder = repo.path / Path(misnamed).parent
    files = sorted(folder.iterdir())
    checked = repo.failgate("check", "--trigger", "push", "--ref", "refs/heads/main")
    assert checked.code == exitcodes.INTEGRITY and f"INVALID {KEY}" in checked.output, checked
    assert "nor one a retraction can name" in checked.output, checked
    assert not any("note" in c for c in COMMAND.findall(checked.output)), checked

    refused = repo.failgate("record", KEY, "--status", "observed", "--retracts",
                            "2026-01-01 note")  # fmt: skip
    assert refused.code == exitcodes.USAGE, refused
    assert f"{misnamed} cannot be retracted" in refused.err, refused
    assert f"keeps {KEY} invalid" in refused.err, refused
    assert "an administrator must rewrite that branch's history" in refused.err, refused
    assert "Traceback" not in refused.output, refused
    assert sorted(folder.iterdir()) == files


def test_on_the_server_the_retraction_of_a_misnamed_file_waits_for_a_relaxer(
    tmp_path: Path,
) -> None:
    repo = budget_repo(tmp_path / "work")
    repo.write("failgate.toml", RELAXERS)
    repo.commit("who may relax gates")
    remote = with_remote(repo, tmp_path / "remote.git")
    first = record_failure(repo, "push")
    repo.write(f"{Path(first).parent}/oops.toml", 'note = "a draft"\n')
    fix_budget(repo)  # the verifier passes: only the misnamed file holds the gate
    assert push_past_the_client(repo, "main").returncode == 0  # no hook then
    install_pre_receive(remote)
    repo.write("src.txt", "work on main\n")
    repo.commit("work on main")
    held = push_past_the_client(repo, "main", user="alice")
    assert held.returncode != 0 and f"INVALID {KEY}" in held.stderr, held.stderr

    path = repo.record(KEY, "--status", "observed", "--retracts", "oops")
    repo.commit("retract the draft saved into the ledger", path)
    before = remote_ref(remote, "refs/heads/main")
    refused = push_past_the_client(repo, "main", user="bob")
    assert refused.returncode != 0, refused.stderr
    assert "PENDING" in refused.stderr and f"INVALID {KEY}" in refused.stderr, refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before
    accepted = push_past_the_client(repo, "main", user="alice")
    assert accepted.returncode == 0, accepted.stderr
    assert remote_ref(remote, "refs/heads/main") == repo.head()
