"""`failgate demo`: a deploy that burned, replayed with real pushes.

The story: a six-module package whose gas budget was sized for two and a half
modules. The verifier requires 20M gas per module.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable

from failgate_hooks.core.sanitize import clean
from failgate_hooks.git.repo import run_git

ENTITY = "deploy:mainnet:gas-budget"
TITLE = "Gas budget must scale with module count"
MODULES = 6
BROKEN_BUDGET = 50_000_000  # two and a half modules' worth
FIXED_BUDGET = 130_000_000
CHECK_PATH = "checks/check_gas_budget.py"
BUDGET_PATH = "deploy/budget.json"

CHECK_SCRIPT = '''\
"""Verifier for deploy:mainnet:gas-budget: the budget must cover 20M gas per module."""
import json
import sys

PER_MODULE = 20_000_000

try:
    with open("deploy/budget.json") as handle:
        config = json.load(handle)
    modules, budget = int(config["modules"]), int(config["gas_budget"])
except (OSError, ValueError, KeyError) as exc:
    print(f"cannot read deploy/budget.json: {exc}")
    sys.exit(125)  # no verdict: the check could not judge
required = modules * PER_MODULE
if budget < required:
    print(f"budget {budget // 1_000_000}M < required {required // 1_000_000}M "
          f"({modules} modules x 20M)")
    sys.exit(1)
print(f"budget {budget // 1_000_000}M covers {modules} modules")
'''


def budget_json(budget: int) -> str:
    """The deploy configuration the verifier reads."""
    return json.dumps({"modules": MODULES, "gas_budget": budget}, indent=2) + "\n"


# ---------------------------------------------------------------------------- the story


class Story:
    """Runs each step for real in a throwaway folder, and tells it as it goes."""

    def __init__(self, root: str, echo: Callable[[str], None]) -> None:
        self.root = root
        self.work = os.path.join(root, "project")
        self.remote = os.path.join(root, "remote.git")
        self.echo = echo
        self.env = {
            # the demo never reads the person's own git config (hooks, signing, templates)
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "Ada Demo",
            "GIT_AUTHOR_EMAIL": "ada@example.org",
            "GIT_COMMITTER_NAME": "Ada Demo",
            "GIT_COMMITTER_EMAIL": "ada@example.org",
            "GIT_TERMINAL_PROMPT": "0",
        }

    def chapter(self, number: int, title: str) -> None:
        self.echo(f"\n== {number}. {title} ==")

    def say(self, text: str) -> None:
        self.echo(text)

    def git(self, *args: str, show: bool = True, cwd: str | None = None) -> tuple[int, str]:
        code, out = run_git(cwd or self.work, *args, env=self.env)
        if show:
            self._show(["git", *args], out)
        return code, out

    def failgate(self, *args: str) -> tuple[int, str]:
        # failgate itself, not git: a fresh interpreter, as a person would run it
        env = {**os.environ, **self.env}
        proc = subprocess.run(
            [sys.executable, "-m", "failgate_hooks", *args],
            cwd=self.work,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        out = (proc.stdout + proc.stderr).rstrip("\n")
        self._show(["failgate", *args], out)
        return proc.returncode, out

    def write(self, path: str, text: str) -> None:
        full = os.path.join(self.work, *path.split("/"))
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as handle:
            handle.write(text)

    def remote_main(self) -> str:
        _, out = self.git(
            "rev-parse", "--verify", "-q", "refs/heads/main", show=False, cwd=self.remote
        )
        return out.strip()

    def _show(self, argv: list[str], out: str) -> None:
        self.echo(f"$ {shlex.join(argv)}")
        for line in clean(out).splitlines():
            self.echo(f"  {line}")


def run_demo(echo: Callable[[str], None]) -> int:
    """The whole story in a temporary folder, removed afterwards; 0 when it went as told."""
    with tempfile.TemporaryDirectory(prefix="failgate-demo-") as root:
        return _run_story(Story(root, echo))


def _run_story(story: Story) -> int:
    """Each chapter in order; 1 as soon as one does not go as told."""
    story.chapter(1, "A six-module project, its gas budget sized for two and a half")
    os.makedirs(story.work)
    story.git("init", "-q", "--bare", "-b", "main", story.remote, cwd=story.root)
    story.git("init", "-q", "-b", "main", story.work, cwd=story.root)
    story.write(BUDGET_PATH, budget_json(BROKEN_BUDGET))
    story.write(CHECK_PATH, CHECK_SCRIPT)
    story.git("add", "-A", show=False)
    story.git("commit", "-q", "-m", "Deploy config: six modules, 50M gas")
    story.git("remote", "add", "origin", story.remote, show=False)
    story.git("push", "-q", "origin", "main")

    story.chapter(2, "The deploy burned. Record the failure as an event, with its verifier")
    code, _ = story.failgate(
        "record", ENTITY, "--status", "observed", "--title", TITLE, "--trigger", "push",
        "--verify", f"python3 {CHECK_PATH}", "--verify-file", CHECK_PATH,
        "--note", "six modules, budget sized for two and a half", "--no-probe",
    )  # fmt: skip
    if code != 0:
        return _failed(story, "record did not write the event")
    story.git("add", "-A", show=False)
    story.git("commit", "-q", "-m", "Record the gas budget failure")
    _, parent = story.git("rev-parse", "HEAD", show=False)

    story.chapter(3, "Install the gate as the repository's pre-push hook")
    story.failgate("install")

    story.chapter(4, "Push: refused while the gate is held")
    before = story.remote_main()
    code, out = story.git("push", "origin", "main")
    if code == 0 or "BLOCKED" not in out or story.remote_main() != before:
        return _failed(story, "the push was not refused")
    story.say("The remote's main did not move: the verifier failed on the exact commit pushed.")

    story.chapter(5, "Fix the budget for six modules, and commit the fix")
    story.write(BUDGET_PATH, budget_json(FIXED_BUDGET))
    story.git("commit", "-q", "-am", "Size the gas budget for six modules")
    _, repair = story.git("rev-parse", "HEAD", show=False)

    story.chapter(6, "Push again: the verifier passes on this commit, the push goes through")
    code, out = story.git("push", "origin", "main")
    if code != 0 or "OK" not in out or story.remote_main() != repair.strip():
        return _failed(story, "the fixed push was not allowed")

    story.chapter(7, "Replay: proven on history, held at the parent, cleared at the repair")
    code, out = story.failgate(
        "replay", f"{parent.strip()}..{repair.strip()}", "--entity", ENTITY, "--trigger", "push"
    )
    if code != 0:
        return _failed(story, "the replay did not hold at the parent and clear at the repair")
    story.say(
        "\nThe lesson is no longer a note: it is a gate that ran, and will run on every push."
    )
    return 0


def _failed(story: Story, why: str) -> int:
    story.say(f"\nDEMO FAILED: {why}.")
    return 1
