"""Each coding agent's hook contract: what its payload says, and the answer it reads. Pure.

Five agents, five shapes (from each agent's documentation):

- claude (`.claude/settings.json`): events `SessionStart` and `PreToolUse`; the
  shell tool is `Bash` with `tool_input.command`; a denial is
  `hookSpecificOutput.permissionDecision = "deny"` with its reason.
- codex (`.codex/hooks.json`): the same shapes (`apply_patch` for edits), and a
  denial must hold its reason and nothing else.
- gemini (`.gemini/settings.json`): `SessionStart` and `BeforeTool`; the shell
  tool is `run_shell_command`; a denial is `{"decision": "deny", "reason": …}`.
- cursor (`.cursor/hooks.json`): `beforeShellExecution` with the payload's
  `command`; a denial is `{"permission": "deny", "user_message", "agent_message"}`.
- copilot (`.github/hooks/*.json`): no event name (`toolName` marks a tool call);
  `toolArgs` is a JSON string; a denial is a top-level `permissionDecision`.

failgate answers only with a denial or with session context, never "allow" or
"ask": a hook that allows would skip the agent's own permission rules. When it
has nothing to say it prints nothing and exits 0, which every agent reads as
"go on".
"""

from __future__ import annotations

import codecs
import enum
import json
import re
import shlex
from collections.abc import Mapping
from typing import Any, NamedTuple

from failgate_hooks.core.agent.command_writes import WriteTarget

AGENTS = ("claude", "codex", "gemini", "cursor", "copilot")

# Claude Code takes at most 10,000 characters of session context; failgate keeps below it.
CONTEXT_LIMIT = 8_000


class Event(enum.StrEnum):
    SESSION_START = "session-start"
    TOOL_CALL = "tool-call"
    OTHER = "other"


class HookInput(NamedTuple):
    """What one hook call is about: a session starting, or a tool about to run."""

    event: Event
    tool: str = ""
    command: str | None = None  # a shell command about to run
    writes: tuple[WriteTarget, ...] = ()  # files a file-editing tool is about to write
    cwd: str | None = None


class HookOutput(NamedTuple):
    """The hook's answer: what it prints on each stream and its exit code."""

    stdout: str = ""
    stderr: str = ""
    exit_code: int = 0


SILENT = HookOutput()

# Tools that edit files, and the argument naming the file.
_FILE_TOOLS: Mapping[str, Mapping[str, str]] = {
    "claude": {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path",
               "NotebookEdit": "notebook_path"},
    "gemini": {"write_file": "file_path", "replace": "file_path"},
    "copilot": {"edit": "path", "create": "path"},
    "codex": {}, "cursor": {},
}  # fmt: skip
_PATCH_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$", re.M)
_CODEX_DENY = {"hookEventName", "permissionDecision", "permissionDecisionReason"}
_UTF16_NUL = re.compile(rb"^(?:[^\x00]\x00)+|^(?:\x00[^\x00])+")


def decode_payload(raw: bytes) -> str:
    """The payload's text: UTF-8, or UTF-16/32 when a BOM or the NUL bytes say so."""
    for bom, encoding in (
        (codecs.BOM_UTF32_LE, "utf-32-le"),
        (codecs.BOM_UTF32_BE, "utf-32-be"),
        (codecs.BOM_UTF8, "utf-8"),
        (codecs.BOM_UTF16_LE, "utf-16-le"),
        (codecs.BOM_UTF16_BE, "utf-16-be"),
    ):
        if raw.startswith(bom):
            return raw[len(bom) :].decode(encoding, "replace")
    head = _UTF16_NUL.match(raw[:64])
    if head is not None and len(head.group()) >= 4:
        return raw.decode("utf-16-le" if raw[1:2] == b"\x00" else "utf-16-be", "replace")
    return raw.decode("utf-8", "replace")


def parse_payload(agent: str, payload: Mapping[str, Any]) -> HookInput:
    """What `agent`'s payload asks about; OTHER for anything failgate does not answer."""
    cwd = _text(payload.get("cwd")) or _first_root(payload.get("workspace_roots"))
    if agent == "copilot":
        return _copilot(payload, cwd)
    event = _text(payload.get("hook_event_name"))
    if event in ("SessionStart", "sessionStart"):
        return HookInput(Event.SESSION_START, cwd=cwd)
    if agent == "cursor":
        if event == "beforeShellExecution":
            return HookInput(Event.TOOL_CALL, "shell", _text(payload.get("command")), cwd=cwd)
        return HookInput(Event.OTHER, cwd=cwd)
    if event not in ("PreToolUse", "BeforeTool"):
        return HookInput(Event.OTHER, cwd=cwd)
    tool = _text(payload.get("tool_name")) or ""
    arguments = payload.get("tool_input")
    return _tool_call(agent, tool, arguments if isinstance(arguments, Mapping) else {}, cwd)


def _copilot(payload: Mapping[str, Any], cwd: str | None) -> HookInput:
    tool = _text(payload.get("toolName"))
    if tool is None:
        return HookInput(Event.SESSION_START if "source" in payload else Event.OTHER, cwd=cwd)
    arguments: object = payload.get("toolArgs")
    if isinstance(arguments, str):  # documented as a JSON string
        try:
            arguments = json.loads(arguments)
        except ValueError:
            arguments = {"command": arguments}  # unreadable: scanned as it stands
    return _tool_call("copilot", tool, arguments if isinstance(arguments, Mapping) else {}, cwd)


def _tool_call(agent: str, tool: str, arguments: Mapping[str, Any], cwd: str | None) -> HookInput:
    if tool.startswith("mcp__"):
        return HookInput(Event.OTHER, tool, cwd=cwd)
    path_key = _FILE_TOOLS.get(agent, {}).get(tool)
    if path_key is not None:
        path = _text(arguments.get(path_key))
        writes = (WriteTarget(path, cwd),) if path else ()
        return HookInput(Event.TOOL_CALL, tool, writes=writes, cwd=cwd)
    command = arguments.get("command")
    if agent == "codex" and tool == "apply_patch" and isinstance(command, str):
        return HookInput(Event.TOOL_CALL, tool, writes=patch_targets(command, cwd), cwd=cwd)
    if isinstance(command, list) and all(isinstance(a, str) for a in command):
        # an argv: `["bash", "-lc", SCRIPT]` runs SCRIPT; any other argv is its own command line
        command = (
            command[-1]
            if len(command) == 3 and command[1] in ("-c", "-lc")
            else shlex.join(command)
        )
    if isinstance(command, str):
        return HookInput(Event.TOOL_CALL, tool, command, cwd=cwd)
    return HookInput(Event.OTHER, tool, cwd=cwd)


def patch_targets(patch: str, cwd: str | None) -> tuple[WriteTarget, ...]:
    """The files a Codex `apply_patch` adds, updates, deletes or moves to."""
    targets = []
    for match in _PATCH_FILE.finditer(patch):
        action, path, moved = match.groups()
        targets.append(WriteTarget((path or moved).strip(), cwd, removes=action == "Delete"))
    return tuple(targets)


def deny(agent: str, reason: str, *, short: str) -> HookOutput:
    """A denial as `agent` reads one: exit 0, one JSON object, the reason for the model."""
    answer: dict[str, Any]
    if agent in ("claude", "codex"):
        answer = {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        }
    elif agent == "gemini":
        answer = {"decision": "deny", "reason": reason}
    elif agent == "cursor":
        answer = {"permission": "deny", "user_message": short, "agent_message": reason}
    elif agent == "copilot":
        answer = {"permissionDecision": "deny", "permissionDecisionReason": reason}
    else:
        raise ValueError(f"unknown agent {agent!r}")
    return HookOutput(stdout=_json(answer) + "\n")


def session_context(agent: str, text: str) -> HookOutput:
    """Context for the start of a session, where the agent takes some; else silence."""
    text = text[:CONTEXT_LIMIT]
    if agent in ("claude", "codex"):
        answer = {
            "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}
        }
    elif agent == "gemini":
        answer = {"hookSpecificOutput": {"additionalContext": text}}
    else:
        return SILENT  # Cursor's and Copilot's session hooks take no context
    return HookOutput(stdout=_json(answer) + "\n")


def takes_session_context(agent: str) -> bool:
    return agent in ("claude", "codex", "gemini")


def _json(value: object) -> str:
    # ASCII only: no byte an agent's decoder could take for something else
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"))


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _first_root(roots: object) -> str | None:
    if isinstance(roots, list) and roots and isinstance(roots[0], str):
        return roots[0]
    return None


def sample_payload(agent: str, event: Event, command: str, cwd: str) -> dict[str, Any]:
    """A payload as `agent` sends it (from its documentation), for `agent doctor` to replay."""
    if agent == "copilot":
        if event is Event.SESSION_START:
            return {"timestamp": 1704614400000, "cwd": cwd, "source": "new", "initialPrompt": ""}
        arguments = json.dumps({"command": command, "description": "failgate agent doctor"})
        return {"timestamp": 1704614600000, "cwd": cwd, "toolName": "bash", "toolArgs": arguments}
    if agent == "cursor":
        return {
            "hook_event_name": "beforeShellExecution", "conversation_id": "failgate-doctor",
            "generation_id": "failgate-doctor", "workspace_roots": [cwd],
            "command": command, "cwd": cwd,
        }  # fmt: skip
    common: dict[str, Any] = {"session_id": "failgate-doctor", "transcript_path": "", "cwd": cwd}
    if event is Event.SESSION_START:
        return {**common, "hook_event_name": "SessionStart", "source": "startup"}
    if agent == "gemini":
        return {**common, "hook_event_name": "BeforeTool", "tool_name": "run_shell_command",
                "tool_input": {"command": command}}  # fmt: skip
    return {**common, "hook_event_name": "PreToolUse", "permission_mode": "default",
            "tool_name": "Bash", "tool_input": {"command": command},
            "tool_use_id": "failgate-doctor"}  # fmt: skip


def read_answer(agent: str, exit_code: int, stdout: str, stderr: str) -> tuple[str, str]:
    """What `agent` makes of a hook's answer: ("deny"|"proceed"|"context"|"error", detail)."""
    if exit_code == 2 and agent in ("claude", "codex", "gemini"):
        return "deny", stderr.strip()
    if exit_code != 0:
        return "error", f"exit {exit_code}: the agent runs the tool anyway ({stderr.strip()[:200]})"
    if not stdout.strip():
        return "proceed", ""
    try:
        answer = json.loads(stdout)
    except ValueError:
        return "error", "the hook printed text that is not JSON"
    if not isinstance(answer, dict):
        return "error", "the hook printed JSON that is not an object"
    if agent in ("claude", "codex", "gemini"):
        specific = answer.get("hookSpecificOutput")
        specific = specific if isinstance(specific, dict) else {}
        if specific.get("additionalContext"):
            return "context", str(specific["additionalContext"])
        if agent == "gemini":
            decision, reason = answer.get("decision"), answer.get("reason")
        else:
            decision, reason = (
                specific.get("permissionDecision"),
                specific.get("permissionDecisionReason"),
            )
        if decision in ("deny", "block"):
            if not reason:
                return "error", "a denial without a reason"
            if agent == "codex" and (
                set(answer) != {"hookSpecificOutput"} or set(specific) != _CODEX_DENY
            ):
                return "error", "Codex takes a denial with exactly its three keys, nothing more"
            return "deny", str(reason)
        return "proceed", ""
    if agent == "cursor":
        if answer.get("permission") == "deny":
            return "deny", str(answer.get("agent_message") or answer.get("user_message") or "")
        return "proceed", ""
    if answer.get("permissionDecision") == "deny":
        return "deny", str(answer.get("permissionDecisionReason") or "")
    return "proceed", ""
