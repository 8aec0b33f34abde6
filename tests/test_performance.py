"""What keeps the hook fast as the ledger grows (issue 11): constant git work, and nothing
heavy imported on the hook's path. `make bench` measures the times; these tests guard the
properties the times rest on."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench import build
from tests.conftest import Repo

CHECK = ("check", "--trigger", "push", "--ref", "refs/heads/main")


def failgate(world: build.World, *args: str, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "failgate_hooks", *args],
        cwd=world.work, capture_output=True, text=True, check=False,
        env={**os.environ, **(env or {})}, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def ready(world: build.World) -> build.World:
    """The live gate's verifier trusted and run once (its pass cached), the hook installed."""
    failgate(world, "trust", "--all", "--yes")
    failgate(world, *CHECK)
    failgate(world, "install")
    return world


@pytest.fixture(scope="module")
def worlds(tmp_path_factory: pytest.TempPathFactory) -> dict[int, build.World]:
    """The same project with a ledger of 10 events and of 300 (one live gate in each)."""
    root = tmp_path_factory.mktemp("worlds")
    return {n: ready(build.ledger_world(root / str(n), n)) for n in (10, 300)}


# ---------------------------------------------------------------------------- git processes


@pytest.fixture
def git_log(tmp_path: Path) -> Iterator[tuple[dict[str, str], Path]]:
    """An environment whose `git` is a shim that logs each call, then runs the real git."""
    real = shutil.which("git")
    assert real is not None
    shims = tmp_path / "shims"
    shims.mkdir()
    log = tmp_path / "git.log"
    shim = shims / "git"
    shim.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{real}" "$@"\n')
    shim.chmod(0o755)
    yield {"PATH": f"{shims}{os.pathsep}{os.environ['PATH']}"}, log


def subcommand(argv: list[str]) -> str:
    """`git -c k=v log …` -> `log`; `git-receive-pack /path` -> `git-receive-pack`."""
    words = list(argv)
    while words[:1] == ["-c"]:
        words = words[2:]
    words = [w for w in words if not w.startswith("-") and "/" not in w]
    return words[0] if words else "(none)"


def calls(log: Path) -> Counter[str]:
    """The git subcommands the shim logged, counted."""
    counted = Counter(subcommand(line.split()) for line in log.read_text().splitlines())
    log.unlink()
    return counted


def test_check_starts_as_many_git_processes_for_300_events_as_for_10(
    worlds: dict[int, build.World], git_log: tuple[dict[str, str], Path]
) -> None:
    env, log = git_log
    counted = {}
    for events, world in worlds.items():
        failgate(world, *CHECK, env=env)
        counted[events] = calls(log)
    assert counted[10] == counted[300]
    assert counted[10]["ls-tree"] <= 3, counted[10]  # config, ledger, the tree for `paths`


def trace2_starts(world: build.World, *push_args: str) -> Counter[str]:
    """The git processes one real `git push` starts, hook included, from git's trace2 events."""
    build.git(world.remote, "update-ref", "refs/heads/main", world.base)
    build.git(world.work, "update-ref", "refs/remotes/origin/main", world.base)
    trace = world.work.parent / "trace2.json"
    proc = subprocess.run(
        ["git", "push", "-q", "origin", "main", *push_args], cwd=world.work,
        capture_output=True, text=True, check=False,
        env={**os.environ, "GIT_TRACE2_EVENT": str(trace)}, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    counted: Counter[str] = Counter()
    for line in trace.read_text().splitlines():
        event = json.loads(line)
        if event.get("event") == "start":
            argv = event["argv"]
            counted[subcommand(argv[1:]) if argv[0] == "git" else os.path.basename(argv[0])] += 1
    trace.unlink()
    return counted


def test_a_push_through_the_hook_starts_as_many_git_processes_for_300_events_as_for_10(
    worlds: dict[int, build.World],
) -> None:
    counted = {}
    for events, world in worlds.items():
        trace2_starts(world)  # warm-up: the first push may fill caches
        counted[events] = trace2_starts(world)
    assert counted[10] == counted[300]
    hook = counted[10] - trace2_starts(worlds[10], "--no-verify")
    assert hook["cat-file"] == 1, hook  # one persistent cat-file, however many blobs


# ---------------------------------------------------------------------------- imports


HEAVY = (
    "tomli_w",  # writes TOML
    "failgate_hooks.core.credentials",  # scans for credentials
    "failgate_hooks.app.export",  # renders Markdown for agents
    "failgate_hooks.app.replay",  # Markdown receipts, progress bars
    "failgate_hooks.app.ci",  # step summaries in Markdown
    "failgate_hooks.ledger.write",  # writes events
    "click._termui_impl",  # click's progress bars
    "failgate_hooks.core.agent.agents",  # coding agents' hook formats
    "failgate_hooks.commands.record",  # the commands a check does not run
    "failgate_hooks.commands.setup",
    "failgate_hooks.commands.agent",
    "failgate_hooks.app.evidence",  # the evidence lookup: nobody attests in these worlds
    "failgate_hooks.core.evidence",
    "secrets",  # makes event ids
    # standard modules a check holding a gate need not import: a few milliseconds each
    "dataclasses",
    "socket",  # a lock's host name comes from os.uname()
)

_RUN = """\
import sys
{call}
loaded = sorted(sys.modules)  # before json is imported to write them down
import json
json.dump(loaded, open({out!r}, "w"))
"""


def modules_after(work: Path, call: str, stdin: str = "") -> set[str]:
    out = work.parent / "modules.json"
    script = _RUN.format(call=call, out=str(out))
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=work, input=stdin, capture_output=True,
        text=True, check=False, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(out.read_text()))


def test_the_hook_imports_nothing_that_writes_renders_markdown_or_scans(
    worlds: dict[int, build.World],
) -> None:
    world = worlds[300]
    call = (
        # what `failgate install`'s script and the console script import
        "from failgate_hooks.commands.hooks import pre_push_main\n"
        "try:\n"
        f"    pre_push_main(['origin', {str(world.remote)!r}])\n"
        "except SystemExit as exit:\n"
        "    assert not exit.code, exit.code\n"
    )
    stdin = f"refs/heads/main {world.tip} refs/heads/main {world.base}\n"
    loaded = modules_after(world.work, call, stdin)
    assert "failgate_hooks.app.evaluate" in loaded  # the hook did decide
    assert not loaded & set(HEAVY)
    # a hook prints plain text: click is a fifth of the floor's import time
    assert "click" not in loaded


def test_check_imports_nothing_that_writes_renders_markdown_or_scans(
    worlds: dict[int, build.World],
) -> None:
    world = worlds[300]
    call = (
        "from failgate_hooks.commands.cli import main\n"
        "try:\n"
        f"    main({list(CHECK)!r}, prog_name='failgate')\n"
        "except SystemExit as exit:\n"
        "    assert not exit.code, exit.code\n"
    )
    loaded = modules_after(world.work, call)
    assert "failgate_hooks.app.evaluate" in loaded
    assert not loaded & set(HEAVY)


# What a `check` that holds nothing loads: the decision, never the verifier machinery
# (checkouts, processes, the sandbox, trust, the pass cache: issue 17's fixed cost).
# The CLI's main runs in the process whose modules are listed, as the console script runs it.
_CHECK_IN_PROCESS = (
    "from failgate_hooks.commands.cli import main\n"
    f"code = main({list(CHECK)!r}, prog_name='failgate', standalone_mode=False)\n"
    "assert code == 0, code\n"
)


# A pushed commit's copy of any gate's pinned files is compared, whatever the gate's state
# (app/evaluate.py:_pin_changes): those modules load whenever the ledger pins a file.
PINNED_FILE_RULE = {
    "failgate_hooks.verify",
    "failgate_hooks.verify.pins",
    "failgate_hooks.verify.scrub",  # pins.py's writer empties folders with it
    "failgate_hooks.verify.shadowing",
    # which names the verifier's Python has installed, read from its files
    "failgate_hooks.verify.installed",
    "failgate_hooks.verify.programs",
    # package metadata on sys.path as the reviewed revision held it
    "failgate_hooks.verify.metadata",
    # the pytest configuration the reviewed revision gave a pytest verifier
    "failgate_hooks.verify.pytestconfig",
}


def verifier_modules(loaded: set[str]) -> set[str]:
    return {name for name in loaded if name.split(".")[:2] == ["failgate_hooks", "verify"]}


def test_check_of_an_empty_ledger_loads_no_verifier_code_nor_json_nor_pickle(
    tmp_path: Path,
) -> None:
    world = build.ledger_world(tmp_path / "world", 0)  # protected upstream, no event
    assert "OK: no gate applies" in failgate(world, *CHECK)
    loaded = modules_after(world.work, _CHECK_IN_PROCESS)
    assert "failgate_hooks.app.evaluate" in loaded  # it did decide
    assert verifier_modules(loaded) == set()
    # `--json` alone prints JSON, and only a ledger with events has a parse cache to read
    assert not loaded & {"json", "pickle"}
    # the decision's values and state are NamedTuples and plain classes: dataclasses
    # costs about 2% of the floor at import
    assert "dataclasses" not in loaded


def test_check_where_every_gate_is_retired_or_elsewhere_loads_no_verifier_code(
    repo: Repo,
) -> None:
    repo.write("checks/ok.py", "raise SystemExit(0)\n")
    repo.commit("a verifier")
    verifier = ("--verify", "python3 checks/ok.py", "--verify-file", "checks/ok.py")
    # a gate with a verifier whose risk is gone, and one held only for deploys
    repo.record("app:db:gone", "--status", "observed", "--title", "Gone", "--trigger",
                "push", *verifier, "--no-probe")  # fmt: skip
    expired = repo.failgate("expire", "app:db:gone", "--note", "the code was removed")
    assert expired.code == 0, expired
    repo.record("app:db:deploy", "--status", "observed", "--title", "Deploys only",
                "--trigger", "deploy", *verifier, "--no-probe")  # fmt: skip
    repo.commit("the ledger")
    checked = repo.failgate(*CHECK)
    assert checked.code == 0 and "0 open" in checked.out, checked
    loaded = modules_after(repo.path, _CHECK_IN_PROCESS)
    assert "failgate_hooks.app.evaluate" in loaded
    assert verifier_modules(loaded) <= PINNED_FILE_RULE
