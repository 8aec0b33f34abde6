"""`failgate doctor` on real repositories: each line OK, or what to do."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from failgate_hooks.app import doctor
from tests.conftest import Repo
from tests.worlds import KEY, budget_repo, record_failure, with_remote


def lines(repo: Repo) -> tuple[int, dict[str, str]]:
    result = repo.failgate("doctor")
    assert "Traceback" not in result.output, result
    found = {}
    for line in result.out.splitlines():
        label, _, rest = line.partition(" ")
        topic, _, text = rest.strip().partition(": ")
        found[topic] = f"{label} {text}"
    return result.code, found


def test_a_fresh_repository_is_told_to_install_the_hook(repo: Repo) -> None:
    code, found = lines(repo)
    assert code == 1
    assert found["hook"].startswith("TODO") and "failgate install" in found["hook"]
    assert found["config"].startswith("OK") and "ledger ledger/" in found["config"]


def test_a_set_up_repository_is_all_ok(tmp_path: Path) -> None:
    repo = budget_repo(tmp_path / "work")
    record_failure(repo, "push")  # record trusts the verifier it writes
    with_remote(repo, tmp_path / "remote.git")
    assert repo.failgate("install").code == 0
    code, found = lines(repo)
    assert code == 0, found
    assert found["hook"].startswith("OK") and "failgate's pre-push hook" in found["hook"]
    assert found["trust"].startswith("OK")
    doc = json.loads(repo.failgate("doctor", "--json").out)
    assert {f["topic"] for f in doc["findings"]} >= {"hook", "config", "trust", "sandbox"}


def test_an_untrusted_verifier_and_a_foreign_hook_say_what_to_do(tmp_path: Path) -> None:
    repo = budget_repo(tmp_path / "work")
    record_failure(repo, "push")
    (repo.path / ".git/failgate/trust.json").unlink()  # as on a teammate's machine
    hook = repo.path / ".git/hooks/pre-push"
    hook.write_text("#!/bin/sh\nexit 0\n")
    hook.chmod(0o755)
    code, found = lines(repo)
    assert code == 1
    assert found["trust"].startswith("TODO") and "failgate trust" in found["trust"]
    assert found["hook"].startswith("TODO") and "failgate install --chain" in found["hook"]


def test_a_broken_config_is_named(repo: Repo) -> None:
    repo.write("failgate.toml", "mode = \n")
    repo.commit("a broken config")
    code, found = lines(repo)
    assert code == 1
    assert found["config"].startswith("TODO") and "failgate.toml" in found["config"]


def _installed(tmp_path: Path) -> tuple[Repo, Path]:
    repo = budget_repo(tmp_path / "work")
    record_failure(repo, "push")
    with_remote(repo, tmp_path / "remote.git")
    assert repo.failgate("install").code == 0
    return repo, repo.path / ".git/hooks/pre-push"


def test_a_hook_git_would_skip_is_not_ok(tmp_path: Path) -> None:
    # git ignores a hook that is not executable: the push goes out unchecked
    repo, hook = _installed(tmp_path)
    hook.chmod(0o644)
    code, found = lines(repo)
    assert code == 1, found
    assert found["hook"].startswith("TODO") and "failgate install" in found["hook"]


def test_a_hook_edited_after_its_marker_is_not_ok(tmp_path: Path) -> None:
    # an `exit 0` after failgate's marker keeps the marker and passes every push
    repo, hook = _installed(tmp_path)
    text = hook.read_text().splitlines(keepends=True)
    hook.write_text("".join([*text[:3], "exit 0\n", *text[3:]]))
    code, found = lines(repo)
    assert code == 1, found
    assert found["hook"].startswith("TODO") and "failgate install" in found["hook"]


def _server(tmp_path: Path, hook: str | None) -> Repo:
    """A bare remote holding a recorded failure, with `hook` as its pre-receive."""
    repo = budget_repo(tmp_path / "work")
    record_failure(repo, "push")
    remote = Repo(with_remote(repo, tmp_path / "remote.git"))
    if hook is not None:
        remote.write("hooks/pre-receive", hook).chmod(0o755)
    return remote


def test_a_bare_server_with_its_pre_receive_hook_is_all_ok(tmp_path: Path) -> None:
    remote = _server(tmp_path, "#!/bin/sh\nexec failgate-pre-receive --exec\n")
    result = remote.failgate("doctor")
    code, found = lines(remote)
    assert code == 0, found
    assert found["hook"].startswith("OK") and "pre-receive hook" in found["hook"], found
    assert found["trust"].startswith("OK") and "trusts the ledger" in found["trust"], found
    assert "pre-push" not in result.out and "failgate install" not in result.out, result


def test_a_bare_server_without_failgate_s_hook_is_told_to_write_it(tmp_path: Path) -> None:
    code, found = lines(_server(tmp_path, None))
    assert code == 1, found
    assert found["hook"].startswith("TODO no pre-receive hook"), found
    assert "exec failgate-pre-receive" in found["hook"], found
    assert "failgate install" not in found["hook"], found

    code, found = lines(_server(tmp_path / "other", "#!/bin/sh\n# failgate-pre-receive\nexit 0\n"))
    assert code == 1, found
    assert found["hook"].startswith("TODO") and "does not run failgate-pre-receive" in found["hook"]


def test_a_bare_server_s_hook_git_would_skip_is_not_ok(tmp_path: Path) -> None:
    remote = _server(tmp_path, "#!/bin/sh\nexec failgate-pre-receive\n")
    (remote.path / "hooks/pre-receive").chmod(0o644)
    code, found = lines(remote)
    assert code == 1, found
    assert found["hook"].startswith("TODO") and "not executable" in found["hook"], found


def test_a_retired_gate_s_verifier_is_no_trust_todo_once_the_retirement_is_reviewed(
    tmp_path: Path,
) -> None:
    """A retired gate's verifier never runs: asking to trust it sends the user to approve
    a command for nothing. Retired only here, not yet on the default branch, the gate
    still holds where authority is `protected`, so trust is still asked for."""
    repo, _ = _installed(tmp_path)
    assert repo.failgate("expire", KEY, "--note", "we stopped deploying modules").code == 0
    repo.commit("retire the gas budget gate")
    (repo.path / ".git/failgate/trust.json").unlink()  # as on a teammate's machine
    code, found = lines(repo)
    assert code == 1, found
    assert found["trust"].startswith("TODO") and KEY in found["trust"], found

    repo.git("push", "-q", "--no-verify", "origin", "main")
    code, found = lines(repo)
    assert code == 0, found
    assert found["trust"].startswith("OK"), found
    listed = repo.failgate("trust")
    assert listed.code == 0, listed
    assert KEY not in listed.out and "nothing to approve" in listed.out, listed


def test_a_machine_without_a_syscall_filter_is_told_it_has_no_sandbox(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    riscv = os.uname_result((*os.uname()[:4], "riscv64"))
    monkeypatch.setattr(doctor.os, "uname", lambda: riscv)
    finding = doctor._sandbox()
    assert finding.text.startswith(
        "verifiers cannot run sandboxed here: failgate cannot build the sandbox's syscall "
        "filter for riscv64"
    ), finding
