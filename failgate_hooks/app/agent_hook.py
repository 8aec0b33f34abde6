"""`failgate agent-hook`: answer one call of a coding agent's hook.

At session start: the gates held for HEAD, as data. Before a tool call: the
command is scanned first, in memory; only a command that writes somewhere is
checked against this repository's hooks, ledger and agent configuration, and
only a refusal reads the gates, to name them. Everything else leaves silently.

An agent lets the tool run when its hook crashes, so the hook never crashes:
an internal error refuses the call when its input mentions a push, and is
silent otherwise.
"""

from __future__ import annotations

import json
import os
import posixpath
from typing import BinaryIO

from failgate_hooks.app.agent_restore import restore_findings
from failgate_hooks.core.agent.agent_gates import AgentGates
from failgate_hooks.core.agent.agents import (
    CONTEXT_LIMIT,
    SILENT,
    Event,
    HookInput,
    HookOutput,
    decode_payload,
    deny,
    parse_payload,
    session_context,
    takes_session_context,
)
from failgate_hooks.core.agent.command_rules import CommandScan, Finding, mentions_push
from failgate_hooks.core.agent.command_scan import scan_command
from failgate_hooks.core.agent.protected import Protected, protected_writes
from failgate_hooks.core.errors import FailgateError
from failgate_hooks.render.agent import refusal, session_text, short_refusal

# The names of the hook failgate's gate runs as (its own, the one it chains, pre-commit's).
_HOOK_NAMES = frozenset({"pre-push", "pre-push.before-failgate", "pre-push.legacy"})
# An agent's payload is a few kilobytes; a command of megabytes is still read whole.
MAX_INPUT = 16 * 1024 * 1024


def read_input(stream: BinaryIO) -> bytes:
    """The hook's standard input, up to one byte past the limit (so `answer` can tell)."""
    return stream.read(MAX_INPUT + 1)


def answer(agent: str, raw: bytes, *, cwd: str) -> HookOutput:
    """The hook's answer to one call. Never raises: see the module's note."""
    try:
        return _answer(agent, raw, cwd)
    except Exception as error:  # a crashing hook lets the tool run
        if not mentions_push(decode_payload(raw[:MAX_INPUT])):
            return SILENT
        reason = (
            f"failgate could not check this command ({type(error).__name__}: {error}), and "
            "it refuses a push it could not read. Run `failgate agent doctor`, or ask the user "
            "to push from a terminal, where the git hook decides."
        )
        return deny(agent, reason, short="failgate could not check a push and refused it")


def _answer(agent: str, raw: bytes, cwd: str) -> HookOutput:
    if len(raw) > MAX_INPUT:
        raise ValueError(f"the hook's input is larger than {MAX_INPUT} bytes")
    text = decode_payload(raw)
    payload = json.loads(text) if text.strip() else {}
    if not isinstance(payload, dict):
        raise ValueError("the hook's input is not a JSON object")
    call = parse_payload(agent, payload)
    where = call.cwd if call.cwd and os.path.isdir(call.cwd) else cwd
    if call.event is Event.SESSION_START and takes_session_context(agent):
        view, _ = held_or_why(where)
        return SILENT if view is None else session_context(agent, session_text(view, CONTEXT_LIMIT))
    if call.event is Event.TOOL_CALL:
        return _tool_call(agent, call, where)
    return SILENT


def _tool_call(agent: str, call: HookInput, where: str) -> HookOutput:
    findings = judge(call, where)
    if not findings:
        return SILENT
    view, error = held_or_why(where)
    return deny(agent, refusal(findings, view, error), short=short_refusal(findings))


def judge(call: HookInput, where: str) -> list[Finding]:
    """What the tool call would do around the gate: nothing, for nearly every call."""
    scan = scan_command(call.command, call.cwd or where) if call.command else CommandScan()
    findings = list(scan.findings)
    # A file tool's target is judged by name alone (event files, hooks, agent
    # configuration): it runs on every edit, and asks git nothing; unless it is named
    # like the hook itself, which core.hooksPath may have moved out of `.git/hooks`.
    hook_named = any(_HOOK_NAMES & {posixpath.basename(w.path).lower()} for w in call.writes)
    from_git = bool(scan.writes or scan.code or scan.unread)
    by_name = Protected(config_files=_config_files())
    protection = _protection(where) if hook_named or from_git else by_name  # git, once
    findings += protected_writes(call.writes, (), protection if hook_named else by_name)
    if from_git:
        # a restore of paths is judged by what it would change, read from git (agent_restore)
        restores = [w for w in scan.writes if w.restore is not None]
        others = [w for w in scan.writes if w.restore is None]
        findings += protected_writes(others, scan.code, protection, scan.unread)
        findings += restore_findings(restores, protection)
    return findings


def _config_files() -> tuple[str, ...]:
    """git's global configuration file where XDG_CONFIG_HOME puts it (git reads
    `$XDG_CONFIG_HOME/git/config`, a folder it names by an absolute path)."""
    folder = os.environ.get("XDG_CONFIG_HOME", "")
    return (posixpath.join(folder, "git", "config"),) if folder.startswith("/") else ()


def _protection(where: str) -> Protected:
    """This repository's hooks folders and ledger; outside a repository, names alone."""
    from failgate_hooks.app.install import hooks_dir
    from failgate_hooks.git.repo import GitRepo
    from failgate_hooks.ledger.union import inspection_config

    configs = _config_files()
    try:
        repo = GitRepo.open(where)
    except FailgateError:
        return Protected(config_files=configs)
    with repo:
        hooks = [os.path.join(repo.common_dir, "hooks")]
        ledger = Protected().ledger
        try:
            hooks.append(hooks_dir(repo))
            ledger = inspection_config(repo).ledger
        except FailgateError:
            pass  # a configuration that does not parse still has the default ledger guarded
        return Protected(
            root=repo.working_dir, ledger=ledger, hooks_dirs=tuple(hooks), config_files=configs
        )


def held_or_why(where: str) -> tuple[AgentGates | None, str | None]:
    """The held gates, or why they could not be read (a refusal still refuses)."""
    from failgate_hooks.app.agent_gates import held_gates
    from failgate_hooks.git.repo import GitRepo

    try:
        with GitRepo.open(where) as repo:
            return held_gates(repo), None
    except FailgateError as error:
        return None, error.message
    except Exception as error:  # the refusal stands without the gates
        return None, f"{type(error).__name__}: {error}"
