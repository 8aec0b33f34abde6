"""The project's virtualenv stays on the verifier's PATH, also when failgate is installed in it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.conftest import Repo
from tests.venvs import activated, install_failgate, make_venv, site_packages
from tests.worlds import budget_repo, remote_ref, with_remote

KEY = "deploy:mainnet:gas-budget"
VERIFIER = "checks/needs_project_dep.py"
NEEDS_DEP = """\
import sys
try:
    import projectdep
except ModuleNotFoundError as exc:
    print(f"not the project's python ({sys.prefix}): {exc}")
    sys.exit(125)
sys.exit(0 if projectdep.BUDGET_OK else 1)
"""


def project(tmp_path: Path) -> tuple[Repo, Path, Path]:
    """A project whose verifier needs its venv; returns the repo, its remote and the venv."""
    venv = make_venv(tmp_path / "project-venv")
    (site_packages(venv) / "projectdep.py").write_text("BUDGET_OK = True\n")
    repo = budget_repo(tmp_path / "work")
    remote = with_remote(repo, tmp_path / "remote.git")
    repo.write(VERIFIER, NEEDS_DEP)
    repo.commit("a verifier that needs the project's dependencies")
    repo.record(KEY, "--status", "observed", "--title", "t", "--trigger", "push",
                "--verify", f"python {VERIFIER}", "--verify-file", VERIFIER, "--no-probe")  # fmt: skip
    repo.commit("record")
    return repo, remote, venv


def push_through_plain_hook(repo: Repo, python: Path, env: dict[str, str]) -> str:
    """`failgate install` run by `python`, then `git push`; the push's output."""
    installed = subprocess.run(
        [str(python), "-m", "failgate_hooks", "install"], cwd=repo.path, capture_output=True,
        text=True, check=False, env=env,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr
    pushed = subprocess.run(
        ["git", "push", "origin", "main"], cwd=repo.path, capture_output=True, text=True,
        check=False, env=env, timeout=300,
    )  # fmt: skip
    output = pushed.stdout + pushed.stderr
    assert pushed.returncode == 0, output
    return output


def test_failgate_installed_in_the_project_s_venv_leaves_it_on_path(tmp_path: Path) -> None:
    repo, remote, venv = project(tmp_path)
    install_failgate(venv)
    output = push_through_plain_hook(repo, venv / "bin" / "python", activated(venv))
    assert f"CLEARED {KEY}" in output
    assert remote_ref(remote, "refs/heads/main") == repo.head()


def test_failgate_s_own_venv_leaves_path_and_the_active_one_stays(tmp_path: Path) -> None:
    repo, remote, venv = project(tmp_path)
    own = make_venv(tmp_path / "failgate-venv")
    install_failgate(own)
    env = activated(venv)
    env["PATH"] = f"{own / 'bin'}{os.pathsep}{env['PATH']}"  # ahead of the project's
    output = push_through_plain_hook(repo, own / "bin" / "python", env)
    assert f"CLEARED {KEY}" in output
    assert remote_ref(remote, "refs/heads/main") == repo.head()
