"""Inside a GitHub Actions step, no line any failgate command prints is a command from data.

The runner reads a workflow command in every line a step prints, on standard
output and standard error alike (actions/runner, ActionCommand): TryParseV2
trims the line's leading white space and takes `::name …::`, and the legacy
TryParse takes `##[name …]` anywhere in the line. So a step that runs
`failgate check --json` or `failgate export` would let a pushed event's title
or note, a verifier's output or a commit's subject mask the log, stop the
commands after it (failgate's annotations among them) or, on an old runner, set
outputs and environment.

Each test runs the real failgate in a real repository whose ledger holds such
text, with GITHUB_ACTIONS=true, and reads its output as the runner would; and
runs it again outside a step, where it prints the data as it always did.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from failgate_hooks.core import sanitize
from tests.conftest import Repo, failgate
from tests.e2e.test_ci import (
    ci_checkout,
    github,
    ours,
    pr_world,
    pull_request,
    run_ci,
    write_hostile_entity,
)
from tests.worlds import budget_repo, record_failure, with_remote

HOSTILE = "ci:hostile"
# The runner trims leading spaces and tabs before it looks for `::`.
TITLE = "\t ::add-mask::x ##[set-output name=a]b"
NOTE = (
    "::add-mask::x\n"
    "::stop-commands::tok\n"
    "  ::set-output name=a::b\n"
    "\t::warning::forged by a note\n"
    "##[set-output name=a]b\n"
    " \t::error::forged after white space"
)
CHECK = r"""import sys
print("::add-mask::from the verifier")
print("  ##[set-output name=c]d")
print("\t::stop-commands::tok2")
sys.exit(1)
"""
ARG = "##[add-mask]from-argv"
SUBJECT = "::add-mask::subject ##[set-output name=s]t"
IN_ACTIONS = {"GITHUB_ACTIONS": "true"}
# How long a verifier took differs from one run to the next; nothing else does.
DURATION = re.compile(r"\b\d+\.\d+ s\b|(?<=\"duration_s\": )\d+(?:\.\d+)?")


def steady(text: str) -> str:
    return DURATION.sub("0", text)


def runner_commands(output: str) -> list[str]:
    """Every line of `output` the runner could read as a workflow command, in either form.

    Stricter than the runner: Python's splitlines breaks at more characters than its
    reader, and strip() removes more than .NET's TrimStart; a line counts whatever its
    command's name, and whether or not its `::` or `]` closes it."""
    return [line for line in output.splitlines() if line.lstrip().startswith("::") or "##[" in line]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    """The budget gate, and a gate whose title, note, verifier and commit are hostile."""
    repo = budget_repo(tmp_path_factory.mktemp("actions") / "work")
    record_failure(repo, "push")
    write_hostile_entity(repo, key=HOSTILE, title=TITLE, note=NOTE, check=CHECK, args=(ARG,))
    repo.commit(SUBJECT)
    return repo


# Each command that prints ledger, verifier or git text; "json" when it prints one document.
COMMANDS = [
    (("check", "--trust-ledger"), "text"),
    (("check", "--trust-ledger", "--json"), "json"),
    (("gates",), "text"),
    (("gates", "--json"), "json"),
    (("export",), "text"),
    (("export", "--json"), "json"),
    (("log", HOSTILE), "text"),
    (("log", HOSTILE, "--json"), "json"),
    (("try", HOSTILE), "text"),
    (("trust",), "text"),
    (("trust", "--json"), "json"),
    (("replay", "HEAD~1..HEAD", "--entity", HOSTILE), "text"),
    (("replay", "HEAD~1..HEAD", "--entity", HOSTILE, "--json"), "json"),
]


@pytest.mark.parametrize(
    ("args", "kind"), COMMANDS, ids=[" ".join(a).replace(HOSTILE, "K") for a, _ in COMMANDS]
)
def test_no_line_a_command_prints_in_a_step_is_a_workflow_command(
    hostile: Repo, args: tuple[str, ...], kind: str
) -> None:
    outside = hostile.failgate(*args)
    inside = hostile.failgate(*args, env=IN_ACTIONS)
    assert inside.code == outside.code, (inside, outside)
    assert runner_commands(inside.out) == [], inside
    assert runner_commands(inside.err) == [], inside
    # The hostile text did reach the output: outside a step, as it is.
    assert runner_commands(outside.out), outside
    # And inside one it is all still there, only written as no command.
    if kind == "json":
        assert json.loads(steady(inside.out)) == json.loads(steady(outside.out))
        expected = sanitize.json_no_workflow_commands(outside.out)
    else:
        expected = sanitize.no_workflow_commands(outside.out)
    assert steady(inside.out) == steady(expected)
    assert steady(inside.err) == steady(sanitize.no_workflow_commands(outside.err))


def test_the_json_decodes_to_the_hostile_values_themselves(hostile: Repo) -> None:
    """The choice made for JSON: `#` is written `\\u0023`, so every value is the same."""
    doc = json.loads(hostile.failgate("check", "--trust-ledger", "--json", env=IN_ACTIONS).out)
    [gate] = [g for g in doc["gates"] if g["entity_key"] == HOSTILE]
    assert gate["title"] == TITLE
    assert gate["verifier"]["command"][-1] == ARG
    assert gate["verifier"]["output_tail"].splitlines()[1] == "  ##[set-output name=c]d"
    exported = json.loads(hostile.failgate("export", "--json", env=IN_ACTIONS).out)
    notes = [e["data"].get("note") for x in exported["entities"] for e in x["lifecycle"]]
    assert NOTE in notes, notes


def test_an_error_from_data_is_written_as_no_command(tmp_path: Path) -> None:
    repo = budget_repo(tmp_path / "work")
    repo.write("failgate.toml", '"##[add-mask]key" = 1\n"::stop-commands::tok" = 2\n')
    repo.commit(SUBJECT)
    outside = repo.failgate("check")
    inside = repo.failgate("check", env=IN_ACTIONS)
    assert inside.code == outside.code == 2, inside
    assert "unknown keys ##[add-mask]key" in outside.err, outside
    assert runner_commands(outside.err), outside
    assert runner_commands(inside.output) == [], inside
    assert "unknown keys ##\\[add-mask]key" in inside.err, inside
    assert inside.err == sanitize.no_workflow_commands(outside.err)


def outside_and_inside(argv: list[str], cwd: Path) -> dict[str, subprocess.CompletedProcess[str]]:
    """`argv` run outside a step and inside one (conftest keeps GITHUB_ACTIONS out of both)."""
    runs = {}
    for name, env in (("outside", {}), ("inside", IN_ACTIONS)):
        runs[name] = subprocess.run(
            argv, cwd=cwd, capture_output=True, text=True, env={**os.environ, **env},
            check=False, timeout=300,
        )  # fmt: skip
    return runs


def test_a_crash_s_traceback_is_written_as_no_command(tmp_path: Path) -> None:
    """An unexpected exception's message may quote data: its traceback goes through too."""
    crash = (
        "from failgate_hooks.commands import cli\n"
        "def boom(*args, **kw):\n"
        "    raise RuntimeError('##[set-output name=a]b')\n"
        "cli.main = boom\n"
        "cli.run()\n"
    )
    runs = outside_and_inside([sys.executable, "-c", crash], tmp_path)
    assert runs["outside"].returncode == runs["inside"].returncode == 1
    assert "RuntimeError: ##[set-output name=a]b" in runs["outside"].stderr
    assert "RuntimeError: ##\\[set-output name=a]b" in runs["inside"].stderr
    assert runner_commands(runs["inside"].stderr) == [], runs["inside"].stderr


def test_a_push_from_a_step_prints_the_hook_s_refusal_as_no_command(tmp_path: Path) -> None:
    """A workflow step's `git push` runs the pre-push hook in the step's environment."""
    repo = budget_repo(tmp_path / "work")
    with_remote(repo, tmp_path / "remote.git")
    write_hostile_entity(repo, key=HOSTILE, title=TITLE, note=NOTE, check=CHECK, args=(ARG,))
    repo.commit(SUBJECT)
    assert repo.failgate("install").code == 0
    assert repo.failgate("trust", "--yes").code == 0
    pushes = outside_and_inside(["git", "push", "origin", "main"], repo.path)
    for push in pushes.values():
        assert push.returncode != 0, push.stderr  # the hook refused it
        assert f"OPEN {HOSTILE}" in push.stderr, push.stderr
    assert runner_commands(pushes["outside"].stderr), pushes["outside"].stderr
    assert runner_commands(pushes["inside"].stderr) == [], pushes["inside"].stderr
    inside, outside = pushes["inside"].stderr, pushes["outside"].stderr
    assert steady(inside) == steady(sanitize.no_workflow_commands(outside))


# --------------------------------------------------------------------------- failgate ci


@pytest.mark.parametrize("mode", [(), ("--json",)], ids=["text", "json"])
def test_ci_still_gives_its_own_annotations_and_no_command_from_data(
    tmp_path: Path, mode: tuple[str, ...]
) -> None:
    repo = pr_world(tmp_path)
    write_hostile_entity(repo, key=HOSTILE, title=TITLE, note=NOTE, check=CHECK, args=(ARG,))
    repo.commit(SUBJECT)
    result = pull_request(repo, tmp_path, *mode)
    assert result.code == 1, result
    # Where they always were: on stdout, or on stderr beside --json's document.
    commands_stream, data_stream = (result.err, result.out) if mode else (result.out, result.err)
    annotations = [line for line in runner_commands(commands_stream) if "title=failgate" in line]
    assert [line.split("::", 2)[2].split("%0A")[0] for line in annotations] == [
        f"OPEN {HOSTILE} —   ::add-mask::x ##\\[set-output name=a]b",
        "OPEN deploy:mainnet:gas-budget — Gas budget must scale with module count",
    ]
    assert all(ours(c) for c in result.commands), result.commands
    assert runner_commands(data_stream) == [], result
    if mode:
        doc = json.loads(result.out)
        [gate] = [g for g in doc["gates"] if g["entity_key"] == HOSTILE]
        assert gate["title"] == TITLE
    else:
        # The text is fenced: the stop-commands marker and its end are failgate's own.
        fence = [line for line in runner_commands(result.out) if "title=failgate" not in line]
        assert len(fence) == 2 and fence[0].startswith("::stop-commands::"), fence


def test_ci_s_error_is_annotated_and_its_message_written_as_no_command(tmp_path: Path) -> None:
    """ci annotates a failure to decide, then the shell prints it: as no command."""
    repo = pr_world(tmp_path)
    base = "##[add-mask]base"  # from the event; no git ref could be named so
    env = github(tmp_path, "pull_request", {}, GITHUB_BASE_REF=base, GITHUB_SHA=repo.head())
    result = run_ci(ci_checkout(repo, tmp_path), tmp_path, env)
    assert result.code == 4, result
    [error] = result.annotations("error")
    assert error.startswith("the base origin/##\\[add-mask]base is not in this clone"), error
    assert all(ours(c) for c in result.commands), result.commands
    assert runner_commands(result.err) == [], result
    assert "failgate: the base origin/##\\[add-mask]base is not in this clone" in result.err
    assert result.summary is not None and "could not decide" in result.summary


def test_outside_a_step_ci_prints_the_same_text_as_it_is(tmp_path: Path) -> None:
    repo = pr_world(tmp_path)
    write_hostile_entity(repo, key=HOSTILE, title=TITLE, note=NOTE, check=CHECK, args=(ARG,))
    repo.commit(SUBJECT)
    repo.git("push", "-q", "--no-verify", "origin", "HEAD:refs/heads/feature")
    env = {"FAILGATE_BASE": "origin/main", "FAILGATE_REF": "refs/heads/main"}
    result = failgate(repo.path, "ci", env=env)
    assert result.code == 1, result
    assert f"OPEN {HOSTILE} —   ::add-mask::x ##[set-output name=a]b" in result.out
    assert "     |   ##[set-output name=c]d" in result.out.splitlines()
    assert not result.out.startswith("::stop-commands::")
    doc = json.loads(failgate(repo.path, "ci", "--json", env=env).out)
    assert any(g["title"] == TITLE for g in doc["gates"])
    assert '"##[add-mask]from-argv"' in failgate(repo.path, "ci", "--json", env=env).out
