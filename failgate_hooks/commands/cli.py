"""The click shell: parse, call, render, exit. No decisions are made here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from failgate_hooks import __version__

# The hooks' entry points live in hookmain, which imports no click; cli names them
# too for hook scripts written by earlier versions (`from failgate_hooks.commands.cli import …`).
from failgate_hooks.commands.hooks import error_lines, pre_push_main, pre_receive_main
from failgate_hooks.commands.signals import ended_by_signals
from failgate_hooks.core.errors import FailgateError

__all__ = ["main", "pre_push_main", "pre_receive_main", "run"]

F = TypeVar("F", bound=Callable[..., Any])


def report_error(error: FailgateError) -> None:
    """One clean message on standard error: what, where, and what to do."""
    for line in error_lines(error):
        click.echo(line, err=True)


class FailgateGroup(click.Group):
    """Turns every expected failure into its message and exit code, never a traceback."""

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
    with ended_by_signals():
        main(prog_name="failgate")


def _register() -> None:
    from failgate_hooks.commands import decide, evidence, inspect, record, setup
    from failgate_hooks.commands.agent import register as register_agent_commands

    for module in (record, inspect, decide, setup, evidence):
        for command in module.COMMANDS:
            main.add_command(command)
    register_agent_commands(main)


_register()
