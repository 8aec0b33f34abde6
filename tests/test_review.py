"""What `failgate trust` shows of a verifier before it is approved: real repositories."""

from __future__ import annotations

from pathlib import Path

import pytest

from failgate_hooks.app.review import candidates
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.ledger.union import inspection_config
from tests.conftest import Repo, make_repo

RUN_SH = '#!/bin/sh\npython3 "$(dirname "$0")/check.py"\npython3 checks/check.py\n'


def gate(tmp_path: Path, command: str, *pins: str) -> Repo:
    """A repository with a check, a test runner and a wrapper, and one gate whose
    verifier is `command`, pinning `pins`."""
    repo = make_repo(tmp_path / "repo")
    repo.write("checks/check.py", "import sys\n")
    repo.write("checks/run.sh", RUN_SH)
    repo.write("run-tests", "#!/bin/sh\nexit 0\n")
    repo.commit("a check, a runner, a wrapper")
    files = [arg for pin in pins for arg in ("--verify-file", pin)]
    repo.record(
        "app:a", "--status", "observed", "--title", "a", "--trigger", "push",
        "--verify", command, *files, "--no-probe", "--force",
    )  # fmt: skip
    repo.commit("the gate")
    return repo


def unpinned(repo: Repo) -> tuple[str, ...]:
    with GitRepo.open(repo.path) as grepo:
        [found] = candidates(grepo, inspection_config(grepo))
    return found.unpinned_repo_files


@pytest.mark.parametrize(
    ("command", "named"),
    [
        ("./run-tests", "run-tests"),  # the program itself
        ("python3 ./checks/check.py", "checks/check.py"),
        ("python3 checks//check.py", "checks/check.py"),
        ("python3 checks/check.py", "checks/check.py"),
        ("sh -c 'python3 checks/check.py'", "checks/check.py"),  # a word inside a string
    ],
)
def test_trust_warns_of_an_unpinned_repository_file_however_the_command_names_it(
    tmp_path: Path, command: str, named: str
) -> None:
    assert unpinned(gate(tmp_path, command)) == (named,)


def test_trust_warns_of_an_unpinned_file_a_pinned_wrapper_names(tmp_path: Path) -> None:
    """The pinned wrapper is reviewed; the check it runs comes from the commit."""
    repo = gate(tmp_path, "sh checks/run.sh", "checks/run.sh")
    assert unpinned(repo) == ("checks/check.py",)


def test_trust_does_not_warn_of_a_pinned_file(tmp_path: Path) -> None:
    repo = gate(tmp_path, "sh -c 'python3 ./checks/check.py'", "checks/check.py")
    assert unpinned(repo) == ()
    assert unpinned(gate(tmp_path / "whole", "python3 checks/check.py", "checks")) == ()
