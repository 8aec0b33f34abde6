"""The GitHub Action at the repository's root, run as the Actions runner runs it.

The runner executes each `run:` step of a composite action with bash, with
GITHUB_ACTION_PATH pointing at the action's checkout and RUNNER_TEMP at a
folder of its own, and reads the step's outputs from GITHUB_OUTPUT. This test
does the same with the shipped action.yml: a real install from this checkout
into a fresh virtualenv, then `failgate ci` on a pull request.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from tests.e2e.test_ci import ci_checkout, pr_world

PROJECT = Path(__file__).resolve().parents[2]
SHIPPED = ("failgate_hooks", "pyproject.toml", "README.md", "action.yml")
ACTION = yaml.safe_load((PROJECT / "action.yml").read_text())


def step_env(step: dict[str, object], inputs: dict[str, str]) -> dict[str, str]:
    """A step's `env:`, with `${{ inputs.NAME }}` filled in as the runner fills it."""
    env = {}
    for name, value in dict(step.get("env") or {}).items():  # type: ignore[call-overload]
        match = re.fullmatch(r"\$\{\{ inputs\.([a-z-]+) \}\}", str(value))
        assert match, f"{name}: only inputs are passed to the action's steps, got {value!r}"
        env[name] = inputs[match.group(1)]
    return env


def test_no_input_is_interpolated_into_a_script() -> None:
    # An input in `run:` would be a script injection: inputs go through `env:` only.
    for step in ACTION["runs"]["steps"]:
        assert "${{" not in step.get("run", ""), step


def test_the_action_installs_failgate_and_holds_a_gated_pull_request(tmp_path: Path) -> None:
    action_path = tmp_path / "action"
    for name in SHIPPED:
        source = PROJECT / name
        if source.is_dir():
            shutil.copytree(
                source, action_path / name, ignore=shutil.ignore_patterns("__pycache__")
            )
        else:
            shutil.copy2(source, action_path / name)
    repo = pr_world(tmp_path)
    repo.write("src/module7.txt", "a seventh module\n")
    repo.commit("add a module")
    workspace = ci_checkout(repo, tmp_path)
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir()
    outputs = tmp_path / "outputs"
    event = tmp_path / "event.json"
    base_sha = repo.git("rev-parse", "refs/remotes/origin/main")
    event.write_text(json.dumps({"pull_request": {"base": {"ref": "main", "sha": base_sha}}}))
    inputs = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    inputs["python"] = sys.executable  # the runner's python3, 3.11 or newer
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "FAILGATE_"))},
        "GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event), "GITHUB_BASE_REF": "main", "GITHUB_SHA": repo.head(),
        "GITHUB_ACTION_PATH": str(action_path), "RUNNER_TEMP": str(runner_temp),
        "GITHUB_OUTPUT": str(outputs),
    }  # fmt: skip
    codes = []
    for step in ACTION["runs"]["steps"]:
        assert step["shell"] == "bash"
        proc = subprocess.run(
            ["bash", "-e", "-c", step["run"]], cwd=workspace, capture_output=True, text=True,
            check=False, env={**env, **step_env(step, inputs)}, timeout=600,
        )  # fmt: skip
        codes.append(proc.returncode)
        if proc.returncode != 0:
            break
    assert codes == [0, 1], proc.stdout + proc.stderr
    assert "BLOCKED: 1 gate(s) still open" in proc.stdout
    written = dict(line.split("=", 1) for line in outputs.read_text().splitlines())
    assert written["decision"] == "held" and written["open"] == "1"
    for name, spec in ACTION["outputs"].items():
        assert spec["value"] == f"${{{{ steps.ci.outputs.{name} }}}}"
