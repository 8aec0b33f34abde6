"""`answer` never crashes: an internal error refuses a push and stays silent otherwise."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from failgate_hooks.app import agent_hook
from failgate_hooks.core.agent.agents import SILENT
from tests.agent_hosts import SHELL_FIXTURE, host_verdict, payload


def call(tmp_path: Path, command: str, agent: str = "claude") -> bytes:
    return json.dumps(payload(SHELL_FIXTURE[agent], cwd=str(tmp_path), command=command)).encode()


@pytest.mark.parametrize("agent", list(SHELL_FIXTURE))
def test_an_internal_error_refuses_a_push_and_is_silent_otherwise(
    tmp_path: Path, agent: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: object) -> None:
        raise RuntimeError("the scanner broke")

    monkeypatch.setattr(agent_hook, "scan_command", broken)
    refused = agent_hook.answer(
        agent, call(tmp_path, "git push origin main", agent), cwd=str(tmp_path)
    )
    verdict = host_verdict(agent, "tool", refused.exit_code, refused.stdout, refused.stderr)
    assert verdict.action == "block"
    assert "RuntimeError: the scanner broke" in verdict.reason
    quiet = agent_hook.answer(agent, call(tmp_path, "make test", agent), cwd=str(tmp_path))
    assert quiet == SILENT


def test_an_input_over_the_limit_refuses_a_push(tmp_path: Path) -> None:
    huge = b'{"tool_input": {"command": "git push ' + b"a" * agent_hook.MAX_INPUT + b'"}}'
    out = agent_hook.answer("claude", huge, cwd=str(tmp_path))
    assert host_verdict("claude", "tool", out.exit_code, out.stdout, out.stderr).action == "block"
    assert (
        agent_hook.answer("claude", b"x" * (agent_hook.MAX_INPUT + 1), cwd=str(tmp_path)) == SILENT
    )


@pytest.mark.parametrize(
    "command",
    [
        "echo " + "a" * 1_000_000,
        "git push" + ";" * 1_000_000,
        "cat > f <<'E'\n" + "x\n" * 500_000 + "E",
    ],
    ids=["one-word", "operators", "heredoc"],
)
def test_a_megabyte_command_is_answered_in_well_under_a_second(
    tmp_path: Path, command: str
) -> None:
    raw = call(tmp_path, command)
    # this process's CPU time: other tests loading the machine do not count against it
    started = time.process_time()
    agent_hook.answer("claude", raw, cwd=str(tmp_path))
    assert time.process_time() - started < 1.0


def test_a_protected_name_in_a_command_it_cannot_read_is_refused(tmp_path: Path) -> None:
    # nothing in it writes and no inline code is read: only the unread part names the hooks
    command = "echo 'rm -rf .git/hooks' | bash"
    refused = agent_hook.answer("claude", call(tmp_path, command), cwd=str(tmp_path))
    verdict = host_verdict("claude", "tool", refused.exit_code, refused.stdout, refused.stderr)
    assert verdict.action == "block"
    assert ".git/hooks" in verdict.reason and "cannot read" in verdict.reason
