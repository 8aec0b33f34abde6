"""A 400-digit `timeout_s` is an invalid event, never a traceback: check, client hook, server."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
from pathlib import Path

import pytest

from failgate_hooks.app import demo
from failgate_hooks.core.events import (
    Event,
    Status,
    Verification,
    entity_folder,
    event_to_toml,
    new_event_id,
)
from tests.conftest import Repo
from tests.e2e.test_pre_receive import install_pre_receive
from tests.worlds import KEY, budget_repo, record_failure, remote_ref, with_remote

HUGE = 10**400  # tomllib reads it; as seconds it overflows every clock


def restate_with_timeout(repo: Repo, timeout_s: int) -> str:
    """A pushed commit that restates the verifier with `timeout_s`; returns the commit."""
    folder = repo.path / "ledger" / entity_folder(KEY)
    event = Event(
        id=new_event_id(),
        entity_key=KEY,
        effective_at=dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.UTC),
        follows=tuple(sorted(p.stem for p in folder.glob("*.toml"))),
        status=Status.DIAGNOSED,
        note="give the verifier more time",
        verification=Verification(
            command=("python3", demo.CHECK_PATH), files=(demo.CHECK_PATH,), timeout_s=timeout_s
        ),
    )
    (folder / f"{event.id}.toml").write_bytes(event_to_toml(event))
    return repo.commit("a longer timeout")


def assert_refused_as_invalid(output: str) -> None:
    assert "Traceback" not in output, output
    assert "OverflowError" not in output, output
    assert "timeout_s" in output and "86400" in output, output


def test_check_reports_the_timeout_as_an_invalid_event(tmp_path: Path) -> None:
    repo = budget_repo(tmp_path / "repo")
    record_failure(repo, "push")
    restate_with_timeout(repo, HUGE)
    result = repo.failgate("check", "--trust-ledger")
    assert result.code != 0, result
    assert_refused_as_invalid(result.output)
    assert "INVALID" in result.out


@pytest.mark.parametrize(("timeout_s", "invalid"), [(86_400, False), (86_401, True)])
def test_a_day_is_the_longest_timeout(tmp_path: Path, timeout_s: int, invalid: bool) -> None:
    repo = budget_repo(tmp_path / "repo")
    record_failure(repo, "push")
    restate_with_timeout(repo, timeout_s)
    result = repo.failgate("check", "--trust-ledger")
    assert result.code != 0, result
    assert ("INVALID" in result.out) is invalid, result
    assert ("budget 50M < required 120M" in result.out) is not invalid, result


def test_the_client_hook_refuses_the_push_without_a_traceback(tmp_path: Path) -> None:
    repo = budget_repo(tmp_path / "work")
    remote = with_remote(repo, tmp_path / "remote.git")
    record_failure(repo, "push")
    assert repo.failgate("install").code == 0
    restate_with_timeout(repo, HUGE)
    pushed = subprocess.run(
        ["git", "push", "origin", "main"], cwd=repo.path, capture_output=True, text=True,
        check=False, env={**os.environ, "FAILGATE_TRUST_LEDGER": "1"}, timeout=300,
    )  # fmt: skip
    assert pushed.returncode != 0, pushed.stderr
    assert_refused_as_invalid(pushed.stdout + pushed.stderr)
    assert remote_ref(remote, "refs/heads/main") != repo.head()


def test_the_server_hook_with_exec_refuses_the_push_without_a_traceback(tmp_path: Path) -> None:
    repo = budget_repo(tmp_path / "work")
    remote = with_remote(repo, tmp_path / "remote.git")
    record_failure(repo, "push")
    install_pre_receive(remote, "--exec")
    restate_with_timeout(repo, HUGE)
    pushed = subprocess.run(
        ["git", "push", "--no-verify", "origin", "main"], cwd=repo.path, capture_output=True,
        text=True, check=False, timeout=300,
    )  # fmt: skip
    assert pushed.returncode != 0, pushed.stderr
    assert_refused_as_invalid(pushed.stderr)
    assert "remote: " in pushed.stderr
    assert remote_ref(remote, "refs/heads/main") != repo.head()
