"""The commands coding agents meet: `agent-hook`, `agent install|uninstall|doctor|gates`, `mcp`."""

from __future__ import annotations

import sys
from typing import Any

import click

from failgate_hooks.commands.output import echo, echo_json
from failgate_hooks.commands.shell import open_repo
from failgate_hooks.core import exitcodes
from failgate_hooks.core.agent.agents import AGENTS
from failgate_hooks.core.sanitize import clean_line


def _directory(ctx: click.Context) -> str:
    return str(ctx.find_root().obj or ".")


def _agents_option(func: Any) -> Any:
    return click.option(
        "--agent",
        "agents",
        multiple=True,
        type=click.Choice(AGENTS),
        help="The agent (repeatable; default: all of them).",
    )(func)


@click.command("agent-hook")
@click.option(
    "--agent",
    "agent_name",
    type=click.Choice(AGENTS),
    required=True,
    help="Whose hook contract to answer in.",
)
@click.pass_context
def agent_hook(ctx: click.Context, agent_name: str) -> None:
    """Answer one call of a coding agent's hook: its JSON on stdin, its answer on stdout.

    At session start, the gates held for HEAD. Before a tool call, a refusal of
    a push that bypasses the git hook, of a push it cannot read, and of a write
    into the hooks, the ledger or the agents' hook config; anything else passes
    silently. A help and a first fence, never the gate.
    """
    import os

    from failgate_hooks.app.agent_hook import answer, read_input

    out = answer(agent_name, read_input(sys.stdin.buffer), cwd=os.path.abspath(_directory(ctx)))
    # Its answer is one JSON object (or nothing): the agent reads the same values.
    if out.stdout:
        echo_json(out.stdout.removesuffix("\n"))
    if out.stderr:
        echo(out.stderr, err=True, nl=False)
    ctx.exit(out.exit_code)


@click.group()
def agent() -> None:
    """failgate's hook in coding agents' project config, and what they read."""


@agent.command()
@_agents_option
@click.option(
    "--command",
    "command",
    default="failgate",
    show_default=True,
    help="How the agent finds failgate (an absolute path when it is not on the agent's PATH).",
)
@click.pass_context
def install(ctx: click.Context, agents: tuple[str, ...], command: str) -> None:
    """Merge failgate's hook into each agent's project config (other hooks are kept)."""
    from failgate_hooks.app import agent_install

    with open_repo(ctx) as repo:
        for line in agent_install.install(repo, agents or AGENTS, command):
            echo(line)


@agent.command()
@_agents_option
@click.pass_context
def uninstall(ctx: click.Context, agents: tuple[str, ...]) -> None:
    """Take failgate's hook out of each agent's project config, and nothing else."""
    from failgate_hooks.app import agent_install

    with open_repo(ctx) as repo:
        for line in agent_install.uninstall(repo, agents or AGENTS):
            echo(line)


@agent.command()
@_agents_option
@click.pass_context
def doctor(ctx: click.Context, agents: tuple[str, ...]) -> None:
    """Replay sample payloads through each installed hook and say what works (exit 0 or 1)."""
    from failgate_hooks.app import agent_install

    failed = False
    with open_repo(ctx) as repo:
        for name, checks in agent_install.doctor(repo, agents or AGENTS):
            echo(name)
            for check in checks:
                failed = failed or not check.ok
                echo(f"  {'ok  ' if check.ok else 'FAIL'} {clean_line(check.what)}")
    ctx.exit(exitcodes.HELD if failed else exitcodes.ALLOWED)


@agent.command()
@click.pass_context
def gates(ctx: click.Context) -> None:
    """The gates held for HEAD, as the versioned JSON document agents read (no verifier runs)."""
    from failgate_hooks.app.agent_gates import held_gates
    from failgate_hooks.render.agent import render_agent_json

    with open_repo(ctx) as repo:
        echo_json(render_agent_json(held_gates(repo)))


@click.command()
@click.pass_context
def mcp(ctx: click.Context) -> None:
    """Serve read-only failgate tools to an agent over MCP on stdio (extra: agents)."""
    from failgate_hooks.app import mcp_server

    mcp_server.serve(_directory(ctx))


COMMANDS = [agent_hook, agent, mcp]
