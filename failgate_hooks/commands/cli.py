"""The click shell: parse, call, render, exit. No decisions are made here."""

from __future__ import annotations

import importlib
from typing import Any

import click

from failgate_hooks import __version__

# The hooks' entry points live in hooks.py, which imports no click; cli names them
# too for hook scripts written by earlier versions (`from failgate_hooks.commands.cli import …`).
from failgate_hooks.commands.hooks import error_lines, pre_push_main, pre_receive_main
from failgate_hooks.commands.output import echo, neutralise_tracebacks
from failgate_hooks.commands.signals import ended_by_signals
from failgate_hooks.core.errors import FailgateError

__all__ = ["main", "pre_push_main", "pre_receive_main", "run"]


def report_error(error: FailgateError) -> None:
    """One clean message on standard error: what, where, and what to do."""
    for line in error_lines(error):
        echo(line, err=True)


# Each command's module, imported only when one of its commands is asked for: a
# `check` in a hook pays for the decision, not for the agent scanner or the
# installer. tests/test_cli_help.py holds this table to the modules' COMMANDS.
COMMAND_MODULES = {
    **dict.fromkeys(("record", "confirm", "expire"), "record"),
    **dict.fromkeys(("log", "fsck", "gates", "export", "doctor"), "inspect"),
    **dict.fromkeys(("check", "try", "ci", "replay"), "decide"),
    **dict.fromkeys(("trust", "demo", "install", "uninstall"), "setup"),
    **dict.fromkeys(("agent-hook", "agent", "mcp"), "agent"),
    **dict.fromkeys(("attest", "evidence"), "evidence"),
}


class FailgateGroup(click.Group):
    """Loads each command on first use, and turns every expected failure into its
    message and exit code, never a traceback."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *COMMAND_MODULES})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module_name = COMMAND_MODULES.get(cmd_name)
        if module_name is not None and cmd_name not in self.commands:
            module = importlib.import_module(f"failgate_hooks.commands.{module_name}")
            for command in module.COMMANDS:
                self.add_command(command)
        return self.commands.get(cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except FailgateError as error:
            report_error(error)
            ctx.exit(error.exit_code)


@click.group(cls=FailgateGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "-C",
    "directory",
    type=click.Path(file_okay=False),
    default=".",
    help="Run as if failgate was started in DIR (like git -C).",
)
@click.version_option(__version__, prog_name="failgate")
@click.pass_context
def main(ctx: click.Context, directory: str) -> None:
    """failgate: refuse the push while a recorded failure's gate is held.

    A failure is recorded as an event in the ledger; a push is refused until a
    reviewed verifier passes on the exact commit being pushed.
    """
    ctx.obj = directory


def run() -> None:
    """The `failgate` program (its console script, and `python -m failgate_hooks`)."""
    neutralise_tracebacks()
    with ended_by_signals():
        main(prog_name="failgate")
