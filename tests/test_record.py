"""`record`, `confirm`, `expire` and `fsck` on real repositories, SHA-1 and SHA-256."""

from __future__ import annotations

import json
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import Repo, failgate

KEY = "deploy:mainnet:gas-budget"
FOLDER = "ledger/deploy/mainnet/gas-budget"


def first_event(repo: Repo, *extra: str) -> str:
    return repo.record(
        KEY, "--status", "observed", "--title", "Gas budget must scale", "--trigger", "deploy",
        "--note", "six modules, budget for two and a half", *extra,
    )  # fmt: skip


def load(repo: Repo, relpath: str) -> dict[str, object]:
    return tomllib.loads((repo.path / relpath).read_text())


def ledger_files(repo: Repo) -> list[Path]:
    return sorted((repo.path / FOLDER).glob("*.toml"))


def test_record_writes_into_the_entity_folder_and_prints_its_path_last(any_repo: Repo) -> None:
    path = first_event(any_repo)
    assert path.startswith(FOLDER + "/") and path.endswith(".toml")
    doc = load(any_repo, path)
    assert doc["entity_key"] == KEY
    assert doc["id"] == Path(path).stem
    assert doc["follows"] == []
    assert doc["triggers"] == ["deploy"]
    assert doc["recorded_by"] == "Ada Tester <ada@example.org>"


def test_record_fills_follows_with_the_heads_committed_and_uncommitted(any_repo: Repo) -> None:
    first = Path(first_event(any_repo)).stem
    any_repo.commit("record the failure")
    second = any_repo.record(KEY, "--status", "diagnosed", "--note", "budget is per deploy")
    assert load(any_repo, second)["follows"] == [first]
    # not committed yet: the working tree's file still counts as the head
    third = any_repo.record(KEY, "--status", "mitigated")
    assert load(any_repo, third)["follows"] == [Path(second).stem]


def test_a_new_entity_without_trigger_is_a_usage_error(repo: Repo) -> None:
    result = repo.failgate("record", KEY, "--status", "observed", "--title", "t")
    assert result.code == 2, result
    assert "--trigger" in result.err
    assert not (repo.path / FOLDER).exists()


def test_verify_is_split_like_a_shell_into_an_argv_list(repo: Repo) -> None:
    path = first_event(
        repo, "--verify", "python checks/check.py --module 'six modules'", "--verify-file",
        "checks/check.py", "--timeout", "60",
    )  # fmt: skip
    verification = load(repo, path)["verification"]
    assert verification == {
        "command": ["python", "checks/check.py", "--module", "six modules"],
        "files": ["checks/check.py"],
        "timeout_s": 60,
    }


def test_an_uncommitted_pinned_file_is_warned_about(repo: Repo) -> None:
    result = repo.failgate(
        "record", KEY, "--status", "observed", "--title", "t", "--trigger", "push",
        "--verify", "python checks/check.py", "--verify-file", "checks/check.py", "--no-probe",
    )  # fmt: skip
    assert result.code == 0, result
    assert "checks/check.py is not committed" in result.err


def test_an_aws_access_key_in_the_note_writes_nothing(any_repo: Repo) -> None:
    result = any_repo.failgate(
        "record", KEY, "--status", "observed", "--title", "t", "--trigger", "push",
        "--note", "deployed with AKIAIOSFODNN7EXAMPLE",
    )  # fmt: skip
    assert result.code != 0, result
    assert "refused" in result.err
    assert "AKIAIOSFODNN7EXAMPLE" not in result.output
    assert not (any_repo.path / FOLDER).exists()


def test_a_pem_private_key_in_the_note_writes_nothing(repo: Repo) -> None:
    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----"
    result = repo.failgate(
        "record", KEY, "--status", "observed", "--title", "t", "--trigger", "push", "--note", pem
    )
    assert result.code != 0, result
    assert "MIIEowIBAAKCAQEA" not in result.output
    assert not (repo.path / FOLDER).exists()


def test_an_unknown_since_revision_is_a_clear_error(any_repo: Repo) -> None:
    result = any_repo.failgate(
        "record", KEY, "--status", "observed", "--title", "t", "--trigger", "push",
        "--since", "no-such-branch",
    )  # fmt: skip
    assert result.code == 4, result
    assert "unknown revision 'no-such-branch'" in result.err
    assert "Traceback" not in result.output


def test_since_is_stored_as_the_full_commit_id(any_repo: Repo) -> None:
    head = any_repo.head()
    path = first_event(any_repo, "--since", "HEAD")
    assert load(any_repo, path)["applies_to"] == {"since": head}


def test_outside_a_repository_is_a_clear_error(tmp_path: Path) -> None:
    result = failgate(tmp_path, "fsck")
    assert result.code == 2, result  # a usage matter, not the ledger's integrity
    assert "not a git repository" in result.err
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    "command",
    [("expire", "--note", "gone"), ("confirm", "--commit", "HEAD", "--note", "checked")],
    ids=["expire", "confirm"],
)
def test_a_mistyped_key_is_named_as_one_with_the_nearest_key(
    repo: Repo, command: tuple[str, ...]
) -> None:
    """It once said "is a new entity: say what must check it with --trigger"."""
    first_event(repo)
    repo.commit("record")
    name, *rest = command
    result = repo.failgate(name, "deploy:mainnet:gas-budgte", *rest)
    assert result.code == 2, result
    assert result.err.splitlines() == [
        f"failgate: no entity 'deploy:mainnet:gas-budgte' in the ledger: failgate {name} "
        "changes an entity that exists",
        f"  hint: did you mean {KEY}?",
    ]
    assert "--trigger" not in result.err
    assert len(ledger_files(repo)) == 1  # nothing written


def test_fsck_on_a_clean_ledger_exits_zero(any_repo: Repo) -> None:
    first_event(any_repo)
    any_repo.commit("record")
    result = any_repo.failgate("fsck")
    assert result.code == 0, result
    assert "ledger OK" in result.out


def test_fsck_names_a_malformed_file_and_every_problem(any_repo: Repo) -> None:
    path = first_event(any_repo)
    text = (any_repo.path / path).read_text()
    (any_repo.path / path).write_text(text.replace('status = "observed"', 'status = "fixed"'))
    any_repo.write(f"{FOLDER}/20261129T230500Z-0000000z.toml", "not = [valid")
    any_repo.commit("break it")
    result = any_repo.failgate("fsck", "--json")
    assert result.code == 4, result
    report = json.loads(result.out)
    assert report["ok"] is False
    by_path = {(e["path"], e["key"]) for e in report["errors"]}
    assert (path, "status") in by_path
    assert any((p or "").endswith("0000000z.toml") for p, _ in by_path)


def test_fsck_reads_the_committed_ledger_not_the_working_tree(repo: Repo) -> None:
    path = first_event(repo)
    repo.commit("record")
    (repo.path / path).write_text("garbage = [")
    assert repo.failgate("fsck").code == 0
    assert repo.failgate("fsck", "--rev", "HEAD~1").code == 0


def test_fsck_of_an_unknown_revision_is_a_clear_error(repo: Repo) -> None:
    result = repo.failgate("fsck", "--rev", "nope")
    assert result.code == 4 and "unknown revision 'nope'" in result.err, result


def test_a_file_outside_any_entity_folder_makes_the_ledger_invalid(repo: Repo) -> None:
    repo.write("ledger/20261129T230500Z-7f3a9c1e.toml", "schema = 1\n")
    repo.commit("stray")
    result = repo.failgate("fsck")
    assert result.code == 4, result
    assert "names no entity" in result.out


def test_confirm_records_human_evidence_bound_to_the_full_commit(repo: Repo) -> None:
    first_event(repo)
    head = repo.commit("record")
    result = repo.failgate("confirm", KEY, "--commit", "HEAD", "--note", "checked by hand")
    assert result.code == 0, result
    doc = load(repo, result.out.strip().splitlines()[-1])
    assert doc["status"] == "verified"
    assert doc["evidence"] == {
        "kind": "human",
        "commit": head,
        "confirmed_by": "Ada Tester <ada@example.org>",
    }


def test_expire_records_an_expired_event_following_the_head(repo: Repo) -> None:
    first = Path(first_event(repo)).stem
    result = repo.failgate("expire", KEY, "--note", "the module system is gone")
    assert result.code == 0, result
    doc = load(repo, result.out.strip().splitlines()[-1])
    assert doc["status"] == "expired" and doc["follows"] == [first]


def test_supersedes_copies_the_targets_keys_forward(repo: Repo) -> None:
    typo = Path(first_event(repo, "--path", "deploy/**")).stem
    fixed = repo.record(
        KEY, "--status", "observed", "--title", "Gas budget must scale with module count",
        "--supersedes", typo,
    )  # fmt: skip
    doc = load(repo, fixed)
    assert doc["supersedes"] == [typo]
    assert doc["triggers"] == ["deploy"]
    assert doc["applies_to"] == {"paths": ["deploy/**"]}
    assert doc["title"] == "Gas budget must scale with module count"


def test_twelve_concurrent_records_all_land(repo: Repo) -> None:
    first_event(repo)
    repo.commit("record")

    def one(i: int) -> int:
        return repo.failgate("record", KEY, "--status", "diagnosed", "--note", f"n{i}").code

    with ThreadPoolExecutor(max_workers=12) as pool:
        codes = list(pool.map(one, range(12)))
    assert codes == [0] * 12
    assert len(ledger_files(repo)) == 13
    assert not list((repo.path / FOLDER).glob(".*"))
    repo.commit("twelve at once")
    assert repo.failgate("fsck").code == 0


@pytest.mark.parametrize("link", ["ledger/deploy/mainnet", "ledger"])
def test_record_never_writes_through_a_symlinked_folder(repo: Repo, link: str) -> None:
    """git holds a link as a link: an event written through one is in no ledger, and the
    failure recorded would gate nothing while record said it was written."""
    (repo.path / "elsewhere").mkdir()
    (repo.path / link).parent.mkdir(parents=True, exist_ok=True)
    (repo.path / link).symlink_to(Path("../" * link.count("/")) / "elsewhere")
    result = repo.failgate(
        "record", KEY, "--status", "observed", "--title", "t", "--trigger", "push",
        "--no-probe",
    )  # fmt: skip
    assert result.code == 4, result
    assert "Traceback" not in result.err
    assert link in result.err
    assert not list((repo.path / "elsewhere").rglob("*.toml"))


def test_record_where_a_folder_is_a_file_is_a_clear_error(repo: Repo) -> None:
    repo.write("ledger/deploy/mainnet", "a file\n")
    result = repo.failgate(
        "record", KEY, "--status", "observed", "--title", "t", "--trigger", "push",
        "--no-probe",
    )  # fmt: skip
    assert result.code == 4, result
    assert "Traceback" not in result.err
    assert "ledger/deploy/mainnet" in result.err


def test_an_argument_that_is_not_utf8_is_a_clear_error(repo: Repo, tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "failgate_hooks", "record", KEY, "--status", "observed",
         "--title", os.fsdecode(b"T\xff"), "--trigger", "push", "--no-probe"],
        cwd=repo.path, capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "title" in proc.stderr
    assert not (repo.path / "ledger").exists()


def test_record_warns_when_the_verifier_already_passes_on_head(repo: Repo) -> None:
    repo.write("checks/check.py", "print('fine')\n")
    repo.commit("a check that always passes")
    result = repo.failgate(
        "record", KEY, "--status", "observed", "--title", "t", "--trigger", "push",
        "--verify", "python3 checks/check.py", "--verify-file", "checks/check.py",
    )  # fmt: skip
    assert result.code == 0, result
    assert "already passes on HEAD" in result.err


# An observed event with a verifier: record probes it on HEAD.
RECORD_PROBED = (
    "record", KEY, "--status", "observed", "--title", "t", "--trigger", "push",
    "--verify", "python3 checks/check.py", "--verify-file", "checks/check.py",
)  # fmt: skip


def test_record_says_the_verifier_fails_on_head_as_expected_and_no_probe_skips_it(
    repo: Repo,
) -> None:
    repo.write(
        "checks/check.py", "import sys; open('probed', 'w'); print('too small'); sys.exit(1)\n"
    )
    repo.commit("a check that fails")
    args = RECORD_PROBED
    result = repo.failgate(*args)
    assert result.code == 0, result
    head = repo.head()[:12]
    assert result.err.splitlines() == [
        f"probe: the verifier fails on HEAD ({head}), which this event says has the failure, "
        "as expected (its last line: too small): the gate holds"
    ]
    assert not (repo.path / "probed").exists()  # it ran in a clean checkout, not here
    skipped = repo.failgate(*args, "--no-probe")
    assert skipped.code == 0 and "probe" not in skipped.err, skipped


@pytest.mark.parametrize(
    ("script", "said"),
    [
        ("import sys; print('no budget file'); sys.exit(125)\n",
         "warning: probe: the verifier gives no verdict on HEAD ({head}), which this event says "
         "has the failure (its last line: no budget file): it holds the gate without judging "
         "it; make it exit non-zero for the failure"),
        ("print('fine')\n",
         "warning: probe: the verifier already passes on HEAD ({head}), which this event says "
         "has the failure: as written it guards nothing"),
    ],
    ids=["no-verdict", "passes"],
)  # fmt: skip
def test_the_probe_says_in_words_what_the_verifier_gave_on_head(
    repo: Repo, script: str, said: str
) -> None:
    repo.write("checks/check.py", script)
    repo.commit("a check")
    result = repo.failgate(
        "record", KEY, "--status", "observed", "--title", "t", "--trigger", "push",
        "--verify", "python3 checks/check.py", "--verify-file", "checks/check.py",
    )  # fmt: skip
    assert result.code == 0, result
    assert said.format(head=repo.head()[:12]) in result.err.splitlines(), result


def test_the_probe_says_a_verifier_that_cannot_start_holds_without_judging(repo: Repo) -> None:
    result = repo.failgate(
        "record", KEY, "--status", "observed", "--title", "t", "--trigger", "push",
        "--verify", "no-such-program-anywhere --check", "--force",
    )  # fmt: skip
    assert result.code == 0, result
    (line,) = [line for line in result.err.splitlines() if "probe" in line]
    assert line.startswith(
        "warning: probe: verifier no-such-program-anywhere --check cannot start"
    ), line
    assert line.endswith(
        f"on HEAD ({repo.head()[:12]}), which this event says has the failure: it holds the "
        "gate without judging"
    ), line


def test_a_checkout_the_probe_cannot_remove_is_a_warning_on_standard_error(
    repo: Repo, immutable_files: None
) -> None:
    # fails, after making README immutable in its checkout as a verifier run as root can
    repo.write(
        "checks/check.py",
        "import subprocess, sys; subprocess.run(['chattr', '+i', 'README']); sys.exit(1)\n",
    )
    repo.commit("a check that locks README")
    args = RECORD_PROBED
    first = repo.failgate(*args)
    assert first.code == 0 and "could not remove" not in first.err, first
    repo.write("README", "a project, changed\n")
    repo.commit("the probe's kept checkout cannot be moved to this commit")
    second = repo.failgate(*args)
    assert second.code == 0, second
    warnings = [line for line in second.err.splitlines() if "could not remove" in line]
    assert warnings and all(w.startswith("failgate: warning: could not remove ") for w in warnings)
    assert "as expected" in second.err  # the probe ran in a fresh checkout all the same


def test_the_probe_replaces_a_symlinked_folder_without_writing_through_it(
    repo: Repo, tmp_path: Path
) -> None:
    outside = tmp_path / "real"
    outside.mkdir()
    (repo.path / "checks").symlink_to(outside)  # HEAD holds checks -> a folder outside
    repo.commit("checks is a link")
    (repo.path / "checks").unlink()
    repo.write("checks/check.py", "print('fine')\n")  # the work tree's verifier, not committed
    result = repo.failgate(
        "record", KEY, "--status", "observed", "--title", "t", "--trigger", "push",
        "--verify", "python3 checks/check.py", "--verify-file", "checks/check.py",
    )  # fmt: skip
    assert result.code == 0, result
    assert "already passes on HEAD" in result.err  # the probe ran the work tree's file
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize(
    ("command", "operator"),
    [("python3 a.py | tee out", "|"), ("python3 a.py&&true", "&&"), ("python3 a.py > out", ">"),
     ("python3 a.py; true", ";"), ("python3 a.py < in", "<")],
)  # fmt: skip
def test_record_refuses_shell_operators_and_names_the_sh_c_form(
    repo: Repo, command: str, operator: str
) -> None:
    result = repo.failgate(
        "record", "ops:x", "--status", "observed", "--title", "t", "--trigger", "push",
        "--verify", command, "--no-probe",
    )  # fmt: skip
    assert result.code == 2, result
    assert f"shell operator {operator!r}" in result.err
    assert f"--verify \"sh -c '{command}'\"" in result.err
    assert not (repo.path / "ledger").exists()


def test_a_quoted_operator_is_an_argument_not_a_shell_operator(repo: Repo) -> None:
    result = repo.failgate(
        "record", "ops:x", "--status", "observed", "--title", "t", "--trigger", "push",
        "--verify", "grep -E 'a|b' README", "--no-probe",
    )  # fmt: skip
    assert result.code == 0, result


def test_record_refuses_a_program_it_cannot_find_unless_forced(repo: Repo) -> None:
    args = ["record", "ops:x", "--status", "observed", "--title", "t", "--trigger", "push",
            "--verify", "no-such-program-anywhere --check", "--no-probe"]  # fmt: skip
    refused = repo.failgate(*args)
    assert refused.code == 2, refused
    assert "'no-such-program-anywhere' is neither on the verifier's PATH" in refused.err
    assert not (repo.path / "ledger").exists()
    assert repo.failgate(*args, "--force").code == 0


def test_a_repository_script_is_a_program_record_can_find(repo: Repo) -> None:
    repo.write("checks/run.sh", "#!/bin/sh\nexit 0\n")
    result = repo.failgate(
        "record", "ops:x", "--status", "observed", "--title", "t", "--trigger", "push",
        "--verify", "checks/run.sh", "--no-probe",
    )  # fmt: skip
    assert result.code == 0, result
    missing = repo.failgate(
        "record", "ops:y", "--status", "observed", "--title", "t", "--trigger", "push",
        "--verify", "checks/missing.sh", "--no-probe",
    )  # fmt: skip
    assert missing.code == 2, missing


@pytest.mark.parametrize("committed", [True, False])
def test_record_reads_an_event_of_megabytes_only_up_to_the_limit(
    repo: Repo, committed: bool
) -> None:
    import tracemalloc

    from failgate_hooks.git.repo import GitRepo
    from failgate_hooks.ledger.config import Config
    from failgate_hooks.ledger.write import current_entity_files

    path = first_event(repo)
    huge = repo.path / FOLDER / "20261130T030000Z-0000beef.toml"
    huge.write_text((repo.path / path).read_text() + f'note = "{"x" * (4 << 20)}"\n')
    if committed:
        repo.commit("an event of four megabytes")
    with GitRepo.open(repo.path) as git_repo:
        tracemalloc.start()
        try:
            found = current_entity_files(git_repo, str(repo.path), Config(), KEY)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peak < 1 << 20, peak  # never more than the limit and a byte of it was read
    assert found.unreadable == [f"{FOLDER}/{huge.name}"]
    assert list(found.events) == [Path(path).stem]
    result = repo.failgate("record", KEY, "--status", "diagnosed")
    assert result.code == 0, result
    assert f"{FOLDER}/{huge.name} does not validate; it is not followed" in result.err
