"""Every command the README shows runs as shown, so the README cannot rot.

Each fenced block is tagged `<!-- readme-test: NAME -->`; each NAME has a test
here, and an untagged shell block fails the suite.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from failgate_hooks.core.validate import parse_event
from tests.conftest import Repo, git
from tests.worlds import budget_repo, remote_ref, with_remote

PROJECT = Path(__file__).resolve().parents[2]
README = (PROJECT / "README.md").read_text()
BLOCK = re.compile(
    r"(?:<!-- readme-test: (?P<name>[\w-]+) -->\n)?```(?P<lang>\w*)\n(?P<body>.*?)```", re.S
)
BLOCKS = {m["name"]: m["body"] for m in BLOCK.finditer(README) if m["name"]}


def test_every_shell_block_is_tagged_and_every_tag_is_tested() -> None:
    untagged = [
        m["body"][:40] for m in BLOCK.finditer(README) if m["lang"] == "sh" and not m["name"]
    ]
    assert untagged == []
    tested = {"quickstart", "pre-commit", "pre-commit-install", "plain-hook", "pre-receive",
              "lifecycle", "event", "self-replay"}  # fmt: skip
    assert set(BLOCKS) == tested  # self-replay: tests/e2e/test_self_replay.py runs it


def commands(block: str) -> list[tuple[str, int]]:
    """The block's commands, continuation lines joined, with `# exit N` as expected code."""
    joined = block.replace("\\\n", " ")
    out = []
    for line in joined.splitlines():
        if not line.strip() or line.startswith("#!"):
            continue
        code, _, comment = line.partition("  #")
        expected = re.search(r"exit (\d+)", comment)
        out.append((code.strip(), int(expected[1]) if expected else 0))
    return out


def shim_path(tmp_path: Path) -> dict[str, str]:
    """PATH with `failgate` meaning this checkout's failgate, as an installed one would."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "failgate"
    shim.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m failgate_hooks "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def run(line: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sh", "-c", line], cwd=cwd, env=env, capture_output=True,
                          text=True, check=False, timeout=600)  # fmt: skip


def test_quickstart_targets_exist_and_plan_to_run() -> None:
    for line, _ in commands(BLOCKS["quickstart"]):
        target = line.split()[1]
        assert re.search(rf"^{target}:", (PROJECT / "Makefile").read_text(), re.M), target
        dry = run(f"make -n {target}", PROJECT, dict(os.environ))
        assert dry.returncode == 0, dry.stderr
    # `make demo` runs `failgate demo`, which tests/e2e/test_demo.py runs for real


def test_the_pre_commit_block_names_the_hook_this_repository_offers() -> None:
    import yaml  # pre-commit's own dependency

    config = yaml.safe_load(BLOCKS["pre-commit"])
    offered = yaml.safe_load((PROJECT / ".pre-commit-hooks.yaml").read_text())
    assert config["repos"][0]["hooks"][0]["id"] == offered[0]["id"] == "failgate"
    assert offered[0]["stages"] == ["pre-push"]


def test_pre_commit_install_is_the_command_the_pre_commit_test_runs() -> None:
    ((line, _),) = commands(BLOCKS["pre-commit-install"])
    assert line == "pre-commit install --hook-type pre-push"
    source = (PROJECT / "tests/e2e/test_pre_commit.py").read_text()
    assert '"install", "--hook-type", "pre-push"' in source


def test_the_plain_hook_installs_from_a_clone_and_refuses_a_held_push(tmp_path: Path) -> None:
    clone = tmp_path / "failgate"
    clone.mkdir()
    for name in ("failgate_hooks", "pyproject.toml", "README.md"):
        source = PROJECT / name
        if source.is_dir():
            shutil.copytree(source, clone / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, clone / name)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    env.pop("VIRTUAL_ENV", None)
    project = budget_repo(tmp_path / "project")
    remote = with_remote(project, tmp_path / "remote.git")
    project.record("deploy:mainnet:gas-budget", "--status", "observed", "--title", "t",
                   "--trigger", "push", "--verify", "python3 checks/check_gas_budget.py",
                   "--verify-file", "checks/check_gas_budget.py", "--no-probe")  # fmt: skip
    project.commit("record")
    pip_line, install_line = (line for line, _ in commands(BLOCKS["plain-hook"]))
    installed = run(pip_line.replace("./failgate", str(clone)), tmp_path, env)
    assert installed.returncode == 0, installed.stderr
    hooked = run(install_line, project.path, env)
    assert hooked.returncode == 0, hooked.stderr
    before = remote_ref(remote, "refs/heads/main")
    pushed = run("git push origin main", project.path, env)
    assert pushed.returncode != 0, pushed.stderr
    assert "BLOCKED" in pushed.stderr
    assert remote_ref(remote, "refs/heads/main") == before


def test_the_pre_receive_line_refuses_a_pending_relaxation(tmp_path: Path) -> None:
    project = budget_repo(tmp_path / "project")
    remote = with_remote(project, tmp_path / "remote.git")
    project.record("deploy:mainnet:gas-budget", "--status", "observed", "--title", "t",
                   "--trigger", "push", "--no-probe")  # fmt: skip
    project.commit("record")
    project.git("push", "-q", "--no-verify", "origin", "main")
    hook = remote / "hooks" / "pre-receive"
    hook.write_text(BLOCKS["pre-receive"])
    hook.chmod(0o755)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    project.failgate("expire", "deploy:mainnet:gas-budget", "--note", "gone")
    project.commit("expire")
    pushed = run("git push --no-verify origin main", project.path, env)
    assert pushed.returncode != 0, pushed.stderr
    assert "PENDING" in pushed.stderr
    assert remote_ref(remote, "refs/heads/main") != project.head()


@pytest.fixture
def lifecycle_repo(tmp_path: Path) -> Repo:
    return budget_repo(tmp_path / "project")


def test_the_lifecycle_block_runs_as_shown(lifecycle_repo: Repo, tmp_path: Path) -> None:
    env = shim_path(tmp_path)
    for line, expected in commands(BLOCKS["lifecycle"]):
        result = run(line, lifecycle_repo.path, env)
        assert result.returncode == expected, f"{line}\n{result.stdout}\n{result.stderr}"
    assert "RESOLUTION resolved: status expired" in result.stdout
    assert git(lifecycle_repo.path, "status", "--porcelain") == ""


def test_the_event_example_is_a_valid_event() -> None:
    body = BLOCKS["event"]
    doc = tomllib.loads(body)
    path = f"ledger/deploy/mainnet/gas-budget/{doc['id']}.toml"
    event, problems = parse_event(body.encode(), path, entity_key=doc["entity_key"])
    assert problems == () and event is not None
