"""commands/output.py: the one place the command layer writes, and what it writes in a step."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from failgate_hooks.commands.output import Output
from failgate_hooks.core import sanitize

PACKAGE = Path(__file__).resolve().parents[1] / "failgate_hooks"
HOSTILE = "::add-mask::x\n  ::stop-commands::t\n\t##[set-output name=a]b\nplain"


def test_outside_a_step_text_and_json_are_written_as_they_are(
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = Output(in_actions=False)
    out.text(HOSTILE)
    out.json(json.dumps({"t": HOSTILE}))
    out.text(HOSTILE, err=True, nl=False)
    written = capsys.readouterr()
    assert written.out == HOSTILE + "\n" + json.dumps({"t": HOSTILE}) + "\n"
    assert written.err == HOSTILE


def test_in_a_step_no_line_is_a_workflow_command(capsys: pytest.CaptureFixture[str]) -> None:
    out = Output(in_actions=True)
    out.text(HOSTILE)
    out.json(json.dumps({"t": HOSTILE, "##[k]": ["::x::y"]}, indent=2))
    written = capsys.readouterr().out
    for line in written.splitlines():
        assert not line.lstrip().startswith("::") and "##[" not in line, line
    text, document = written.split("plain\n")
    assert text.splitlines() == [
        ":\\:add-mask::x",
        "  :\\:stop-commands::t",
        "\t##\\[set-output name=a]b",
    ]
    assert json.loads(document) == {"t": HOSTILE, "##[k]": ["::x::y"]}


def test_failgate_s_own_command_is_written_as_it_is_and_only_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    Output(in_actions=True).own_command("::error title=failgate::OPEN x%0A| ##\\[y]")
    assert capsys.readouterr().out == "::error title=failgate::OPEN x%0A| ##\\[y]\n"
    for line in ("::error::a\n::add-mask::b", "::error::a\r::add-mask::b", "::e::a\u2028b", "x"):
        with pytest.raises(ValueError, match="not one workflow command line"):
            Output(in_actions=True).own_command(line)


@pytest.mark.parametrize(
    ("environ", "expected"),
    [({"GITHUB_ACTIONS": "true"}, True), ({"GITHUB_ACTIONS": "false"}, False), ({}, False),
     ({"CI": "true"}, False)],
)  # fmt: skip
def test_only_github_actions_true_is_a_step(environ: dict[str, str], expected: bool) -> None:
    assert sanitize.in_github_actions(environ) is expected


# --------------------------------------------------------------------------- one place

# Who may write to a standard stream, and why: the command layer's one place; the progress
# lines the app layer writes while verifiers run (runner.progress_line: always as no
# command); and the load watcher, which runs inside a verifier's own Python.
WRITERS = {"commands/output.py", "app/runner.py", "verify/load_watcher.py"}


def _writes(tree: ast.AST) -> list[str]:
    """Each call in `tree` that writes to a standard stream: print(), click.echo/secho,
    sys.stdout/sys.stderr.write."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id == "print":
            found.append("print")
        elif isinstance(func, ast.Attribute):
            owner = ast.unparse(func.value)
            if owner == "click" and func.attr in ("echo", "secho"):
                found.append(f"click.{func.attr}")
            elif owner in ("sys.stdout", "sys.stderr") and func.attr in ("write", "writelines"):
                found.append(f"{owner}.{func.attr}")
    return found


def test_only_the_one_place_writes_to_standard_output_and_error() -> None:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = str(path.relative_to(PACKAGE))
        writes = _writes(ast.parse(path.read_text()))
        if writes and name not in WRITERS:
            found[name] = writes
    assert found == {}


def test_only_failgate_ci_writes_a_workflow_command_around_the_neutraliser() -> None:
    callers = {
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute) and node.attr == "own_command"
    }
    assert callers == {"app/ci.py"}


def test_the_checker_sees_each_kind_of_write() -> None:
    source = (
        "print(1)\nclick.echo(2)\nclick.secho(3)\nsys.stdout.write('4')\nsys.stderr.write('5')\n"
    )
    assert _writes(ast.parse(source)) == [
        "print", "click.echo", "click.secho", "sys.stdout.write", "sys.stderr.write"
    ]  # fmt: skip
