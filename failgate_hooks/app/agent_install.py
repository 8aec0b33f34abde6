"""`failgate agent install` / `uninstall` / `doctor`: failgate's hook in each agent's config.

Install merges failgate's entries into the agent's project file, leaving every
other hook and key as it was; uninstall takes out only failgate's, and removes
a file nothing else is left in. Doctor replays sample payloads through the
command as installed, as the agent would run it (`sh -c` in the repository
root), and says what works.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from failgate_hooks.app.install import write_replacing
from failgate_hooks.core.agent.agent_config import (
    CONFIGS,
    installed_commands,
    is_empty,
    with_ours,
    without_ours,
)
from failgate_hooks.core.agent.agents import (
    Event,
    read_answer,
    sample_payload,
    takes_session_context,
)
from failgate_hooks.core.errors import UsageError
from failgate_hooks.git.repo import GitRepo

DEFAULT_COMMAND = "failgate"
REPLAY_TIMEOUT_S = 30

# What the agent needs besides the file, said by install and doctor alike.
NOTES = {
    "claude": "Claude Code reads .claude/settings.json when a session starts; /hooks lists it.",
    "codex": "Codex runs project hooks only once trusted: open Codex in this repository and "
    "approve them with /hooks. `codex exec` does not run project hooks at all.",
    "gemini": "Gemini CLI reads .gemini/settings.json at start; /hooks lists it.",
    "cursor": "Cursor reads .cursor/hooks.json at start; failClosed makes a hook that crashes "
    "or times out refuse the command. Cursor takes no session context from hooks.",
    "copilot": "Copilot's coding agent reads .github/hooks/*.json from the default branch: "
    "commit and merge it there. Copilot ignores session-start output.",
}


class Check(NamedTuple):
    ok: bool
    what: str


def root_of(repo: GitRepo) -> str:
    root = repo.working_dir
    if root is None:
        raise UsageError("agent hooks belong in a work tree, and this repository is bare")
    return root


def install(repo: GitRepo, agents: Sequence[str], command: str = DEFAULT_COMMAND) -> list[str]:
    """Merge failgate's hook into each agent's config; one line said per agent."""
    root = root_of(repo)
    lines = []
    for agent in agents:
        path = os.path.join(root, CONFIGS[agent].path)
        _write(path, with_ours(agent, _read(path), command))
        lines.append(f"{agent}: failgate's hook is in {CONFIGS[agent].path}. {NOTES[agent]}")
    return lines


def uninstall(repo: GitRepo, agents: Sequence[str]) -> list[str]:
    """Take failgate's entries out of each agent's config, and nothing else."""
    root = root_of(repo)
    lines = []
    for agent in agents:
        relative = CONFIGS[agent].path
        path = os.path.join(root, relative)
        if not os.path.exists(path):
            lines.append(f"{agent}: no {relative}; nothing to do")
            continue
        before = _read(path)
        after = without_ours(agent, before)
        if after == before:
            lines.append(f"{agent}: no failgate hook in {relative}; it was left as it is")
        elif is_empty(agent, after):
            os.unlink(path)
            _remove_empty_folders(os.path.dirname(path), root)
            lines.append(f"{agent}: removed {relative}, which held only failgate's hook")
        else:
            _write(path, after)
            lines.append(f"{agent}: removed failgate's hook from {relative}; the rest is kept")
    return lines


def doctor(repo: GitRepo, agents: Sequence[str]) -> Iterator[tuple[str, list[Check]]]:
    """For each agent: is the hook installed, and does the installed command answer right?"""
    root = root_of(repo)
    for agent in agents:
        yield agent, list(_checks(agent, root))


def _checks(agent: str, root: str) -> Iterator[Check]:
    config = CONFIGS[agent]
    path = os.path.join(root, config.path)
    if not os.path.exists(path):
        yield Check(False, f"{config.path} is missing: run failgate agent install --agent {agent}")
        return
    commands = installed_commands(agent, _read(path))
    if not commands:
        yield Check(False, f"{config.path} has no failgate hook: run failgate agent install")
        return
    yield Check(True, f"{config.path} runs failgate on {', '.join(commands)}")
    tool_event = config.slots[-1].event
    if tool_event not in commands:
        yield Check(False, f"no failgate hook on {tool_event}: reinstall it")
        return
    line = commands[tool_event]
    plain = _replay(agent, line, Event.TOOL_CALL, "ls -la", root)
    yield Check(plain == ("proceed", ""), f"a plain command proceeds silently ({_said(plain)})")
    bypass = _replay(agent, line, Event.TOOL_CALL, "git push --no-verify", root)
    yield Check(bypass[0] == "deny", f"git push --no-verify is refused ({_said(bypass)})")
    if takes_session_context(agent) and config.slots[0].event in commands:
        start = _replay(agent, commands[config.slots[0].event], Event.SESSION_START, "", root)
        yield Check(start[0] == "context", f"a session starts with context ({_said(start)})")
    if agent == "cursor":
        failing = '"failClosed": true' in json.dumps(_read(path))
        yield Check(failing, "failClosed is set: a crash or a timeout refuses the command")
    yield Check(True, f"note: {NOTES[agent]}")


def _replay(agent: str, line: str, event: Event, command: str, root: str) -> tuple[str, str]:
    payload = json.dumps(sample_payload(agent, event, command, root))
    try:
        done = subprocess.run(
            ["sh", "-c", line],
            input=payload,
            capture_output=True,
            text=True,
            cwd=root,
            timeout=REPLAY_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return "error", f"no answer within {REPLAY_TIMEOUT_S} s: the agent runs the tool anyway"
    except OSError as error:
        return "error", f"cannot run sh: {error}"
    return read_answer(agent, done.returncode, done.stdout, done.stderr)


def _said(answer: tuple[str, str]) -> str:
    kind, detail = answer
    detail = " ".join(detail.split())
    return kind if not detail else f"{kind}: {detail[:100]}{'…' if len(detail) > 100 else ''}"


def _remove_empty_folders(folder: str, root: str) -> None:
    """The folders install made for the file, when nothing else is in them."""
    while os.path.abspath(folder) != os.path.abspath(root):
        try:
            os.rmdir(folder)  # only ever removes an empty folder
        except OSError:
            return
        folder = os.path.dirname(folder)


def _read(path: str) -> object:
    if not os.path.exists(path):
        return {}
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        return json.loads(text) if text.strip() else {}
    except (OSError, ValueError) as error:
        raise UsageError(
            f"{path} cannot be read as JSON ({error}): nothing was changed",
            hint="fix the file (JSON with comments is not read), then run it again",
        ) from None


def _write(path: str, document: object) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    write_replacing(path, json.dumps(document, indent=2) + "\n")
