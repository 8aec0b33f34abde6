"""`failgate demo`: the case file's deploy that burned, replayed with real pushes.

The story (background/000): a six-module package whose gas budget was sized
for two and a half modules. The verifier requires 20M gas per module.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable

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


def budget_json(budget: int, modules: int = MODULES) -> str:
    """The deploy configuration the verifier reads."""
    return json.dumps({"modules": modules, "gas_budget": budget}, indent=2) + "\n"


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
        from failgate_hooks.git.repo import run_git

        code, out = run_git(cwd or self.work, *args, env=self.env)
        if show:
            self._show(["git", *args], out)
        return code, out

    def failgate(self, *args: str, show: bool = True) -> tuple[int, str]:
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
        if show:
            self._show(["failgate", *args], out)
        return proc.returncode, out

    def write(self, path: str, text: str) -> None:
        full = os.path.join(self.work, *path.split("/"))
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as handle:
            handle.write(text)

    def remote_main(self) -> str:
        _, out = self.git("rev-parse", "--verify", "-q", "refs/heads/main", show=False,
                          cwd=self.remote)  # fmt: skip
        return out.strip()

    def _show(self, argv: list[str], out: str) -> None:
        import shlex

        from failgate_hooks.core.sanitize import clean

        self.echo(f"$ {shlex.join(argv)}")
        for line in clean(out).splitlines():
            self.echo(f"  {line}")


def run_demo(echo: Callable[[str], None]) -> int:
    """The whole story in a temporary folder, removed afterwards; 0 when it went as told."""
    with tempfile.TemporaryDirectory(prefix="failgate-demo-") as root:
        return _tell(Story(root, echo))


def _tell(s: Story) -> int:
    s.chapter(1, "A six-module project, its gas budget sized for two and a half")
    os.makedirs(s.work)
    s.git("init", "-q", "--bare", "-b", "main", s.remote, cwd=s.root)
    s.git("init", "-q", "-b", "main", s.work, cwd=s.root)
    s.write(BUDGET_PATH, budget_json(BROKEN_BUDGET))
    s.write(CHECK_PATH, CHECK_SCRIPT)
    s.git("add", "-A", show=False)
    s.git("commit", "-q", "-m", "Deploy config: six modules, 50M gas")
    s.git("remote", "add", "origin", s.remote, show=False)
    s.git("push", "-q", "origin", "main")

    s.chapter(2, "The deploy burned. Record the failure as an event, with its verifier")
    code, _ = s.failgate(
        "record", ENTITY, "--status", "observed", "--title", TITLE, "--trigger", "push",
        "--verify", f"python3 {CHECK_PATH}", "--verify-file", CHECK_PATH,
        "--note", "six modules, budget sized for two and a half", "--no-probe",
    )  # fmt: skip
    if code != 0:
        return _failed(s, "record did not write the event")
    s.git("add", "-A", show=False)
    s.git("commit", "-q", "-m", "Record the gas budget failure")
    _, parent = s.git("rev-parse", "HEAD", show=False)

    s.chapter(3, "Install the gate as the repository's pre-push hook")
    s.failgate("install")

    s.chapter(4, "Push: refused while the gate is held")
    before = s.remote_main()
    code, out = s.git("push", "origin", "main")
    if code == 0 or "BLOCKED" not in out or s.remote_main() != before:
        return _failed(s, "the push was not refused")
    s.say("The remote's main did not move: the verifier failed on the exact commit pushed.")

    s.chapter(5, "Fix the budget for six modules, and commit the fix")
    s.write(BUDGET_PATH, budget_json(FIXED_BUDGET))
    s.git("commit", "-q", "-am", "Size the gas budget for six modules")
    _, repair = s.git("rev-parse", "HEAD", show=False)

    s.chapter(6, "Push again: the verifier passes on this commit, the push goes through")
    code, out = s.git("push", "origin", "main")
    if code != 0 or "OK" not in out or s.remote_main() != repair.strip():
        return _failed(s, "the fixed push was not allowed")

    s.chapter(7, "Replay: proven on history, held at the parent, cleared at the repair")
    code, out = s.failgate(
        "replay", f"{parent.strip()}..{repair.strip()}", "--entity", ENTITY, "--trigger", "push"
    )
    if code != 0:
        return _failed(s, "the replay did not hold at the parent and clear at the repair")
    s.say("\nThe lesson is no longer a note: it is a gate that ran, and will run on every push.")
    return 0


def _failed(s: Story, why: str) -> int:
    s.say(f"\nDEMO FAILED: {why}.")
    return 1
