"""Each agent, as far as its hooks go: the payload it sends, and what it does with the answer.

An independent reading of each agent's documented rules, kept apart from
failgate's own code so that a wrong answer format fails here. `host_verdict`
says what the agent would do after the hook answered:

- "block": the tool call is refused, and `reason` is what the model is told;
- "run": the tool runs (a silent hook, an "allow", or a hook the agent ignores);
- "context": session context was taken (`reason` holds it).

Anything an agent would reject as malformed counts as "run": that is how each
of them treats a hook it cannot read (Cursor with failClosed, and Copilot,
aside).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "data" / "agents"
AGENTS = ("claude", "codex", "gemini", "cursor", "copilot")
SHELL_FIXTURE = {
    "claude": "claude-pre-tool-use-bash",
    "codex": "codex-pre-tool-use-bash",
    "gemini": "gemini-before-tool-shell",
    "cursor": "cursor-before-shell-execution",
    "copilot": "copilot-pre-tool-use-bash",
}
SESSION_FIXTURE = {
    "claude": "claude-session-start",
    "codex": "codex-session-start",
    "gemini": "gemini-session-start",
    "copilot": "copilot-session-start",
}
CLAUDE_CONTEXT_LIMIT = 10_000


@dataclass(frozen=True)
class Verdict:
    action: str  # block | run | context
    reason: str = ""


def payload(name: str, *, cwd: str, command: str = "", path: str = "") -> dict[str, Any]:
    """A fixture with its placeholders filled, JSON strings inside it included."""
    raw = json.loads((FIXTURES / f"{name}.json").read_text())
    return _fill(raw, {"<CWD>": cwd, "<COMMAND>": command, "<PATH>": path})


def _fill(value: Any, values: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {k: _fill(v, values) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, values) for v in value]
    if isinstance(value, str):
        if value.startswith("{"):  # Copilot's toolArgs: JSON inside a string
            return json.dumps(_fill(json.loads(value), values))
        for key, text in values.items():
            value = value.replace(key, text)
    return value


def host_verdict(agent: str, event: str, code: int, stdout: str, stderr: str) -> Verdict:
    """What `agent` does after its `event` hook ("tool" or "session") answered so."""
    if event == "session":
        return _session(agent, code, stdout)
    return {"claude": _claude, "codex": _codex, "gemini": _gemini, "cursor": _cursor,
            "copilot": _copilot}[agent](code, stdout, stderr)  # fmt: skip


def _json(stdout: str) -> dict[str, Any] | None:
    try:
        value = json.loads(stdout)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _claude(code: int, stdout: str, stderr: str) -> Verdict:
    # exit 2 blocks with stderr; another non-zero exit is a non-blocking error
    if code == 2:
        return Verdict("block", stderr)
    if code != 0 or not stdout.strip():
        return Verdict("run")
    answer = _json(stdout)
    specific = (answer or {}).get("hookSpecificOutput") or {}
    if specific.get("hookEventName") != "PreToolUse":
        return Verdict("run")
    if specific.get("permissionDecision") == "deny":
        return Verdict("block", specific.get("permissionDecisionReason", ""))
    return Verdict("run")


def _codex(code: int, stdout: str, stderr: str) -> Verdict:
    # Claude's shapes, but a denial needs a non-empty reason and no other keys
    if code == 2:
        return Verdict("block", stderr) if stderr.strip() else Verdict("run")
    if code != 0 or not stdout.strip():
        return Verdict("run")
    answer = _json(stdout)
    if answer is None or set(answer) != {"hookSpecificOutput"}:
        return Verdict("run")
    specific = answer["hookSpecificOutput"]
    expected = {"hookEventName", "permissionDecision", "permissionDecisionReason"}
    if (
        set(specific) == expected
        and specific["hookEventName"] == "PreToolUse"
        and specific["permissionDecision"] == "deny"
        and specific["permissionDecisionReason"].strip()
    ):
        return Verdict("block", specific["permissionDecisionReason"])
    return Verdict("run")


def _gemini(code: int, stdout: str, stderr: str) -> Verdict:
    # exit 2 blocks with stderr; exit 0 output must be JSON; other exits only warn
    if code == 2:
        return Verdict("block", stderr)
    if code != 0 or not stdout.strip():
        return Verdict("run")
    answer = _json(stdout)
    if answer is not None and answer.get("decision") in ("deny", "block") and answer.get("reason"):
        return Verdict("block", answer["reason"])
    return Verdict("run")


def _cursor(code: int, stdout: str, stderr: str, *, fail_closed: bool = True) -> Verdict:
    if code != 0:
        return Verdict("block" if fail_closed else "run", stderr)
    answer = _json(stdout) if stdout.strip() else {}
    if answer is None:
        return Verdict("block" if fail_closed else "run")
    if answer.get("permission") == "deny":
        return Verdict("block", answer.get("agent_message", ""))
    return Verdict("run")


def _copilot(code: int, stdout: str, stderr: str) -> Verdict:
    # only "deny" is processed; a failing hook refuses the tool
    if code != 0:
        return Verdict("block", stderr)
    answer = _json(stdout) if stdout.strip() else {}
    if answer is not None and answer.get("permissionDecision") == "deny":
        return Verdict("block", answer.get("permissionDecisionReason", ""))
    return Verdict("run")


def _session(agent: str, code: int, stdout: str) -> Verdict:
    if code != 0 or not stdout.strip() or agent in ("cursor", "copilot"):
        return Verdict("run")  # Copilot ignores session-start output
    answer = _json(stdout)
    if answer is None:
        # Claude and Codex take plain stdout as context; Gemini wants JSON
        return Verdict("run") if agent == "gemini" else Verdict("context", stdout)
    context = (answer.get("hookSpecificOutput") or {}).get("additionalContext", "")
    if agent == "claude" and len(context) > CLAUDE_CONTEXT_LIMIT:
        context = context[:CLAUDE_CONTEXT_LIMIT]  # Claude Code cuts it here
    return Verdict("context", context) if context else Verdict("run")


def never_allows_or_asks(stdout: str) -> bool:
    """failgate answers with a denial or nothing: never "allow" nor "ask"."""
    answer = _json(stdout) if stdout.strip() else {}
    if answer is None:
        return False
    specific = answer.get("hookSpecificOutput") or {}
    decisions = {
        answer.get("decision"),
        answer.get("permission"),
        answer.get("permissionDecision"),
        specific.get("permissionDecision"),
    }
    return not decisions & {"allow", "ask", "approve"}
