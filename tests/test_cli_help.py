"""Every command and every option explains itself (`--help` is the reference)."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from failgate_hooks.commands.cli import main

COMMANDS = sorted(main.commands)


def test_the_group_lists_every_designed_command() -> None:
    designed = {
        "record", "confirm", "expire", "gates", "check", "try", "log", "fsck", "trust",
        "install", "uninstall", "demo", "replay", "export", "ci",
    }  # fmt: skip
    assert designed <= set(COMMANDS), designed - set(COMMANDS)


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_and_option_has_help(name: str) -> None:
    command = main.commands[name]
    assert command.help and command.help.strip(), f"{name} has no help"
    for param in command.params:
        if isinstance(param, click.Option):
            assert param.help and param.help.strip(), f"{name} {param.opts} has no help"
    result = CliRunner().invoke(main, [name, "--help"])
    assert result.exit_code == 0, result.output
    assert name in result.output


def test_the_group_help_runs() -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    assert "-C" in result.output
