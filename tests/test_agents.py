"""Each agent's payload is read right, and its answer is one the agent acts on."""

from __future__ import annotations

import codecs
import json

import pytest

from failgate_hooks.core.agent.agents import (
    AGENTS,
    CONTEXT_LIMIT,
    Event,
    decode_payload,
    deny,
    parse_payload,
    read_answer,
    sample_payload,
    session_context,
)
from tests.agent_hosts import (
    SESSION_FIXTURE,
    SHELL_FIXTURE,
    host_verdict,
    never_allows_or_asks,
    payload,
)

CWD = "/work/repo"


@pytest.mark.parametrize("agent", AGENTS)
def test_each_agents_shell_payload_gives_its_command(agent: str) -> None:
    call = parse_payload(agent, payload(SHELL_FIXTURE[agent], cwd=CWD, command='git push "x"'))
    assert call.event is Event.TOOL_CALL
    assert call.command == 'git push "x"'
    assert call.cwd == CWD


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini", "copilot"])
def test_each_agents_session_payload_is_a_session_start(agent: str) -> None:
    call = parse_payload(agent, payload(SESSION_FIXTURE[agent], cwd=CWD))
    assert call.event is Event.SESSION_START


@pytest.mark.parametrize(
    ("agent", "fixture"),
    [
        ("claude", "claude-pre-tool-use-write"),
        ("codex", "codex-pre-tool-use-apply-patch"),
        ("copilot", "copilot-pre-tool-use-edit"),
    ],
)
def test_a_file_tool_gives_the_file_it_writes(agent: str, fixture: str) -> None:
    call = parse_payload(agent, payload(fixture, cwd=CWD, path=".git/hooks/pre-push"))
    assert call.command is None
    assert [w.path for w in call.writes] == [".git/hooks/pre-push"]


def test_a_codex_patch_names_every_file_it_touches() -> None:
    patch = (
        "*** Begin Patch\n*** Update File: src/a.py\n@@\n-x\n+y\n*** Delete File: ledger/x.toml\n"
        "*** Update File: old.py\n*** Move to: .git/hooks/pre-push\n*** End Patch\n"
    )
    call = parse_payload(
        "codex",
        {"hook_event_name": "PreToolUse", "tool_name": "apply_patch", "cwd": CWD,
         "tool_input": {"command": patch}},
    )  # fmt: skip
    assert [(w.path, w.removes) for w in call.writes] == [
        ("src/a.py", False), ("ledger/x.toml", True), ("old.py", False),
        (".git/hooks/pre-push", False),
    ]  # fmt: skip


def test_an_argv_command_is_read_as_the_script_it_runs() -> None:
    call = parse_payload(
        "codex",
        {"hook_event_name": "PreToolUse", "tool_name": "Bash",
         "tool_input": {"command": ["bash", "-lc", "git push --no-verify"]}},
    )  # fmt: skip
    assert call.command == "git push --no-verify"


def test_copilot_tool_args_that_are_not_json_are_still_scanned() -> None:
    call = parse_payload("copilot", {"toolName": "bash", "toolArgs": "git push --no-verify"})
    assert call.command == "git push --no-verify"


@pytest.mark.parametrize(
    "event",
    [{"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "x"}},
     {"hook_event_name": "PreToolUse", "tool_name": "mcp__db__query", "tool_input": {}},
     {"hook_event_name": "Stop"}],
)  # fmt: skip
def test_events_failgate_does_not_answer_are_other(event: dict[str, object]) -> None:
    assert parse_payload("claude", event).event is Event.OTHER


@pytest.mark.parametrize("agent", AGENTS)
def test_a_denial_is_one_each_agent_acts_on(agent: str) -> None:
    out = deny(agent, "refused: the reason", short="refused")
    assert out.exit_code == 0
    verdict = host_verdict(agent, "tool", out.exit_code, out.stdout, out.stderr)
    assert verdict.action == "block"
    assert "refused" in verdict.reason
    assert never_allows_or_asks(out.stdout)


@pytest.mark.parametrize("agent", AGENTS)
def test_session_context_goes_where_the_agent_takes_it(agent: str) -> None:
    out = session_context(agent, "gate x is held\n" * 2000)
    verdict = host_verdict(agent, "session", out.exit_code, out.stdout, out.stderr)
    if agent in ("cursor", "copilot"):
        assert out.stdout == "" and verdict.action == "run"
    else:
        assert verdict.action == "context"
        assert len(verdict.reason) == CONTEXT_LIMIT


@pytest.mark.parametrize("agent", AGENTS)
def test_doctor_reads_an_answer_as_the_agent_does(agent: str) -> None:
    out = deny(agent, "because", short="because")
    assert read_answer(agent, out.exit_code, out.stdout, out.stderr) == ("deny", "because")
    assert read_answer(agent, 0, "", "") == ("proceed", "")
    assert read_answer(agent, 1, "", "boom")[0] == "error"


def test_doctor_knows_codex_refuses_a_denial_with_extra_keys() -> None:
    answer = json.loads(deny("codex", "because", short="because").stdout)
    answer["systemMessage"] = "also"
    assert read_answer("codex", 0, json.dumps(answer), "")[0] == "error"
    assert host_verdict("codex", "tool", 0, json.dumps(answer), "").action == "run"


@pytest.mark.parametrize("agent", AGENTS)
def test_a_sample_payload_reads_back_as_what_it_asks(agent: str) -> None:
    call = parse_payload(agent, sample_payload(agent, Event.TOOL_CALL, "ls", CWD))
    assert (call.event, call.command, call.cwd) == (Event.TOOL_CALL, "ls", CWD)


TEXT = '{"tool_input": {"command": "git push — é"}}'


@pytest.mark.parametrize(
    "raw",
    [
        TEXT.encode(),
        codecs.BOM_UTF8 + TEXT.encode(),
        codecs.BOM_UTF16_LE + TEXT.encode("utf-16-le"),
        codecs.BOM_UTF16_BE + TEXT.encode("utf-16-be"),
        TEXT.encode("utf-16-le"),  # no BOM: the NUL bytes tell
        TEXT.encode("utf-16-be"),
        codecs.BOM_UTF32_LE + TEXT.encode("utf-32-le"),
    ],
    ids=["utf-8", "utf-8-bom", "utf-16-le-bom", "utf-16-be-bom", "utf-16-le", "utf-16-be",
         "utf-32-le-bom"],
)  # fmt: skip
def test_the_payload_is_decoded_whatever_its_encoding(raw: bytes) -> None:
    assert decode_payload(raw) == TEXT
