"""failgate's entries go into each agent's config beside the others, and leave alone."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from failgate_hooks.core.agent.agent_config import (
    CONFIGS,
    installed_commands,
    is_empty,
    with_ours,
    without_ours,
)
from failgate_hooks.core.agent.agents import AGENTS
from failgate_hooks.core.errors import UsageError

# Each agent's file as a team might already have it: hooks of their own, other keys.
THEIRS: dict[str, dict[str, Any]] = {
    "claude": {
        "permissions": {"allow": ["Bash(npm test:*)"]},
        "hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint.sh"}]}
            ],
            "Stop": [{"hooks": [{"type": "command", "command": "./notify.sh"}]}],
        },
    },
    "codex": {
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit"}]}]
        }
    },
    "gemini": {
        "ui": {"theme": "dark"},
        "hooks": {
            "BeforeTool": [
                {
                    "matcher": "write_file",
                    "hooks": [{"type": "command", "command": "fmt", "timeout": 5000}],
                }
            ]
        },
    },
    "cursor": {
        "version": 1,
        "hooks": {
            "beforeShellExecution": [{"command": "./guard.sh"}],
            "afterFileEdit": [{"command": "prettier"}],
        },
    },
    "copilot": {
        "version": 1,
        "hooks": {"preToolUse": [{"type": "command", "bash": "./audit.sh", "timeoutSec": 10}]},
    },
}


@pytest.mark.parametrize("agent", AGENTS)
def test_install_adds_failgate_beside_the_hooks_already_there(agent: str) -> None:
    theirs = copy.deepcopy(THEIRS[agent])
    merged = with_ours(agent, theirs, "failgate")
    assert theirs == THEIRS[agent]  # the input is not changed in place
    assert without_ours(agent, merged) == THEIRS[agent]
    events = {slot.event for slot in CONFIGS[agent].slots}
    assert set(installed_commands(agent, merged)) == events
    assert all(
        c == f"failgate agent-hook --agent {agent}"
        for c in installed_commands(agent, merged).values()
    )


@pytest.mark.parametrize("agent", AGENTS)
def test_installing_again_replaces_failgates_entries_only(agent: str) -> None:
    once = with_ours(agent, THEIRS[agent], "failgate")
    twice = with_ours(agent, once, "/opt/bin/failgate")
    assert without_ours(agent, twice) == THEIRS[agent]
    assert all(
        c.startswith("/opt/bin/failgate ") for c in installed_commands(agent, twice).values()
    )
    assert len(str(twice)) == len(str(once)) + len("/opt/bin/") * len(CONFIGS[agent].slots)


@pytest.mark.parametrize("agent", AGENTS)
def test_an_empty_file_holds_only_failgate_after_install(agent: str) -> None:
    merged = with_ours(agent, {}, "failgate")
    assert not is_empty(agent, merged)
    assert is_empty(agent, without_ours(agent, merged))


def test_claude_runs_failgate_before_shell_and_file_tools_and_at_session_start() -> None:
    merged = with_ours("claude", {}, "failgate")
    hooks = merged["hooks"]
    assert hooks["PreToolUse"] == [
        {"matcher": "Bash|Write|Edit|MultiEdit|NotebookEdit",
         "hooks": [{"type": "command", "command": "failgate agent-hook --agent claude", "timeout": 30}]}
    ]  # fmt: skip
    assert hooks["SessionStart"] == [
        {
            "hooks": [
                {"type": "command", "command": "failgate agent-hook --agent claude", "timeout": 30}
            ]
        }
    ]


def test_gemini_counts_its_timeout_in_milliseconds_and_cursor_fails_closed() -> None:
    gemini = with_ours("gemini", {}, "failgate")["hooks"]["BeforeTool"][0]["hooks"][0]
    assert gemini["timeout"] == 30_000
    cursor = with_ours("cursor", {}, "failgate")
    assert cursor["version"] == 1
    assert cursor["hooks"]["beforeShellExecution"][0]["failClosed"] is True


def test_uninstall_keeps_a_group_that_held_other_hooks_too() -> None:
    shared = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "./lint.sh"},
        {"type": "command", "command": "failgate agent-hook --agent claude"},
    ]}]}}  # fmt: skip
    assert without_ours("claude", shared) == {
        "hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint.sh"}]}
            ]
        }
    }


def test_a_command_that_only_mentions_failgate_is_not_taken_for_failgates() -> None:
    other = {
        "hooks": {
            "PreToolUse": [{"hooks": [{"type": "command", "command": "echo failgate-agent-hook"}]}]
        }
    }
    assert without_ours("claude", other) == other


@pytest.mark.parametrize(
    "document",
    [[], {"hooks": []}, {"hooks": {"PreToolUse": {}}}, {"hooks": {"PreToolUse": ["x"]}},
     {"hooks": {"PreToolUse": [{"hooks": "x"}]}}],
)  # fmt: skip
def test_a_file_in_another_shape_is_refused_and_left_alone(document: object) -> None:
    with pytest.raises(UsageError, match="nothing was changed"):
        with_ours("claude", document, "failgate")
