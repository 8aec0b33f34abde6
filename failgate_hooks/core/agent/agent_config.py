"""failgate's hook entries in each agent's project configuration: add, find, remove. Pure.

A configuration is the parsed JSON document of the agent's file. failgate's own
entries are the ones whose command runs `agent-hook --agent NAME`; installing
again replaces them, uninstalling removes them and nothing else, and every other
hook, key and order is left as it was.

Claude Code (`.claude/settings.json`), Codex (`.codex/hooks.json`) and Gemini CLI
(`.gemini/settings.json`) group entries under a matcher, per event: session start,
and the tool call (the shell and the file tools). Cursor (`.cursor/hooks.json`)
and Copilot (`.github/hooks/failgate.json`) list entries per event, under
`"version": 1`; Cursor's carries `failClosed`. Gemini counts timeouts in
milliseconds, the others in seconds.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from failgate_hooks.core.errors import UsageError

TIMEOUT_S = 30


class HookSlot(NamedTuple):
    """Where one of failgate's entries goes: an event, and for grouped formats a matcher."""

    event: str
    matcher: str | None = None


class AgentConfig(NamedTuple):
    agent: str
    path: str  # relative to the repository root
    slots: tuple[HookSlot, ...]
    grouped: bool  # entries sit in `{"matcher", "hooks": [...]}` groups
    versioned: bool = False  # the document carries "version": 1


CONFIGS: Mapping[str, AgentConfig] = {
    "claude": AgentConfig(
        "claude",
        ".claude/settings.json",
        (
            HookSlot("SessionStart"),
            HookSlot("PreToolUse", "Bash|Write|Edit|MultiEdit|NotebookEdit"),
        ),
        grouped=True,
    ),
    "codex": AgentConfig(
        "codex",
        ".codex/hooks.json",
        (HookSlot("SessionStart"), HookSlot("PreToolUse", "Bash|apply_patch")),
        grouped=True,
    ),
    "gemini": AgentConfig(
        "gemini",
        ".gemini/settings.json",
        (HookSlot("SessionStart"), HookSlot("BeforeTool", "run_shell_command|write_file|replace")),
        grouped=True,
    ),
    "cursor": AgentConfig(
        "cursor", ".cursor/hooks.json", (HookSlot("beforeShellExecution"),), False, True
    ),
    "copilot": AgentConfig(
        "copilot", ".github/hooks/failgate.json", (HookSlot("preToolUse"),), False, True
    ),
}

# failgate's command, however the agent finds failgate (`--command`): its subcommand.
_OURS = re.compile(r"(?:^|\s)agent-hook --agent (?:claude|codex|gemini|cursor|copilot)\b")


def hook_command(command: str, agent: str) -> str:
    """The command line an agent runs: `command` is how it finds failgate."""
    return f"{command} agent-hook --agent {agent}"


def is_ours(entry: object) -> bool:
    """Whether a hook entry is one failgate installed."""
    if not isinstance(entry, Mapping):
        return False
    return any(
        isinstance(entry.get(k), str) and _OURS.search(entry[k]) for k in ("command", "bash")
    )


def entry_for(agent: str, command_line: str) -> dict[str, Any]:
    """failgate's hook entry in `agent`'s format."""
    if agent == "copilot":
        return {"type": "command", "bash": command_line, "timeoutSec": TIMEOUT_S,
                "comment": "failgate: refuses a push that bypasses the git hook"}  # fmt: skip
    if agent == "cursor":
        return {"command": command_line, "timeout": TIMEOUT_S, "failClosed": True}
    entry: dict[str, Any] = {"type": "command", "command": command_line}
    entry["timeout"] = TIMEOUT_S * 1000 if agent == "gemini" else TIMEOUT_S
    if agent == "gemini":
        entry["name"] = "failgate"
    return entry


def with_ours(agent: str, document: object, command: str) -> dict[str, Any]:
    """`document` with failgate's entries (old ones replaced), everything else kept."""
    config = CONFIGS[agent]
    out = without_ours(agent, document)
    if config.versioned:
        out.setdefault("version", 1)
    hooks = out.setdefault("hooks", {})
    entry = entry_for(agent, hook_command(command, agent))
    for slot in config.slots:
        entries = hooks.setdefault(slot.event, [])
        if config.grouped:
            group: dict[str, Any] = {} if slot.matcher is None else {"matcher": slot.matcher}
            group["hooks"] = [dict(entry)]
            entries.append(group)
        else:
            entries.append(dict(entry))
    return out


def without_ours(agent: str, document: object) -> dict[str, Any]:
    """`document` without failgate's entries; groups and events they leave empty go too."""
    config = CONFIGS[agent]
    out = _checked(config, document)
    hooks = out.get("hooks")
    if not hooks:
        return out
    for event, entries in list(hooks.items()):
        if config.grouped:
            kept = []
            for group in entries:
                inner = [e for e in group.get("hooks", []) if not is_ours(e)]
                if inner or not group.get("hooks"):  # a group of others' hooks, or an empty one
                    kept.append({**group, "hooks": inner} if "hooks" in group else group)
        else:
            kept = [e for e in entries if not is_ours(e)]
        if kept or not entries:
            hooks[event] = kept
        else:
            del hooks[event]  # only failgate's entries were there
    if not hooks:
        del out["hooks"]
    return out


def installed_commands(agent: str, document: object) -> dict[str, str]:
    """failgate's command line for each event it is installed on."""
    config = CONFIGS[agent]
    found: dict[str, str] = {}
    hooks = _checked(config, document).get("hooks", {})
    for event, entries in hooks.items():
        candidates = (
            [e for g in entries for e in g.get("hooks", [])] if config.grouped else list(entries)
        )
        for entry in candidates:
            if is_ours(entry):
                found[event] = entry.get("command") or entry.get("bash")
    return found


def is_empty(agent: str, document: Mapping[str, Any]) -> bool:
    """Whether nothing but what failgate would write is left (the file can go)."""
    rest = {k: v for k, v in document.items() if k not in ("version", "hooks")}
    return not rest and not document.get("hooks")


def _checked(config: AgentConfig, document: object) -> dict[str, Any]:
    """A deep copy of `document`, refused when it is not in the agent's shape."""
    where = config.path
    if not isinstance(document, dict):
        raise UsageError(f"{where} does not hold a JSON object: nothing was changed")
    out = copy.deepcopy(document)
    hooks = out.get("hooks")
    if hooks is None:
        return out
    if not isinstance(hooks, dict):
        raise UsageError(f'{where}: "hooks" is not an object: nothing was changed')
    for event, entries in hooks.items():
        if not isinstance(entries, list):
            raise UsageError(f'{where}: hooks "{event}" is not a list: nothing was changed')
        for item in entries:
            if not isinstance(item, dict) or (
                config.grouped and not isinstance(item.get("hooks", []), list)
            ):
                raise UsageError(
                    f'{where}: an entry of hooks "{event}" is not in the shape {config.agent} '
                    "documents: nothing was changed"
                )
    return out
