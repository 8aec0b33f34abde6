"""Every command and every option explains itself (`--help` is the reference)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from failgate_hooks.commands.cli import COMMAND_MODULES, main

COMMANDS = main.list_commands(click.Context(main))


def test_the_group_lists_every_designed_command() -> None:
    designed = {
        "record", "confirm", "expire", "gates", "check", "try", "log", "fsck", "trust",
        "install", "uninstall", "demo", "replay", "export", "ci",
    }  # fmt: skip
    assert designed <= set(COMMANDS), designed - set(COMMANDS)


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_and_option_has_help(name: str) -> None:
    command = main.get_command(click.Context(main), name)
    assert command is not None
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


def test_each_command_is_loaded_from_the_module_that_defines_it() -> None:
    """The lazy table names every command of every command module, and nothing else."""
    defined = {
        command.name: module
        for module in sorted(set(COMMAND_MODULES.values()))
        for command in importlib.import_module(f"failgate_hooks.commands.{module}").COMMANDS
    }
    assert defined == COMMAND_MODULES


@pytest.mark.parametrize(
    ("script", "usage"),
    [
        (
            "failgate-pre-receive",
            "usage: failgate-pre-receive [--exec] [--sandbox | --no-sandbox] "
            "[--evidence-signers FILE] | --accept-current-tips",
        ),
        ("failgate-pre-push", "usage: failgate-pre-push REMOTE URL"),
    ],
)
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_the_hooks_explain_themselves_and_refuse_nothing(
    script: str, usage: str, flag: str, tmp_path: Path
) -> None:
    """`failgate-pre-receive --help` once said "unknown --help" and "push refused"."""
    exe = Path(sys.executable).parent / script
    proc = subprocess.run(
        [str(exe), flag], cwd=tmp_path, capture_output=True, text=True, check=False,
        stdin=subprocess.DEVNULL, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == usage
    assert proc.stderr == ""


REPORTING = ("check", "ci", "doctor", "export", "fsck", "gates", "log", "replay", "trust", "try")


@pytest.mark.parametrize("name", REPORTING)
def test_every_reporting_command_takes_json_as_the_readme_says(name: str) -> None:
    command = main.get_command(click.Context(main), name)
    assert command is not None
    options = {opt for p in command.params for opt in getattr(p, "opts", ())}
    assert "--json" in options, f"failgate {name} has no --json"


def test_try_and_trust_speak_json(tmp_path: Path) -> None:
    from tests.worlds import KEY, budget_repo, record_failure

    repo = budget_repo(tmp_path / "work")
    record_failure(repo, "push")
    tried = repo.failgate("try", KEY, "--json")
    assert tried.code == 1, tried
    doc = json.loads(tried.out)
    assert doc["passed"] is False and doc["verifier"]["outcome"] == "failed"
    listed = json.loads(repo.failgate("trust", "--json", "--all").out)
    assert [v["entity_key"] for v in listed["verifiers"]] == [KEY]
    assert listed["verifiers"][0]["trusted"] is True


def test_try_says_once_that_it_never_clears_a_gate(tmp_path: Path) -> None:
    from tests.worlds import KEY, budget_repo, record_failure

    repo = budget_repo(tmp_path / "work")
    record_failure(repo, "push")
    tried = repo.failgate("try", KEY)
    assert tried.code == 1, tried
    assert tried.out.startswith(f"FAIL {KEY}: verifier "), tried
    assert tried.out.count("ran on the work tree as it is: this never clears a gate") == 1, tried


def test_verbose_says_what_it_adds_to_the_text_of_each_command_that_takes_it() -> None:
    """--verbose once said "every relaxation", hiding that it also lists the skipped
    evidence in check, and that --json is the same with it or without."""
    takes = {}
    for name in COMMANDS:
        command = main.get_command(click.Context(main), name)
        assert command is not None
        for param in command.params:
            if isinstance(param, click.Option) and "--verbose" in param.opts:
                takes[name] = param.help or ""
    # both read signed evidence (app/report.py answers gates as check is answered)
    assert takes.keys() == {"check", "gates"}
    for said in takes.values():
        assert said.startswith("In the text (--json always has it all): "), said
        assert "each accepted relaxation when no protected revision was read" in said
        assert "signed statement of evidence looked at did not count" in said
