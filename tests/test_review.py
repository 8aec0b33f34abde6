"""What `failgate trust` shows of a verifier before it is approved: real repositories."""

from __future__ import annotations

from pathlib import Path

import pytest

from failgate_hooks.app.review import UnpinnedPath, candidates
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
    return tuple(found.path for found in unpinned_paths(repo))


def unpinned_paths(repo: Repo) -> tuple[UnpinnedPath, ...]:
    with GitRepo.open(repo.path) as grepo:
        [found] = candidates(grepo, inspection_config(grepo))
    return found.unpinned


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


@pytest.mark.parametrize(
    ("command", "named"),
    [
        ("python3 checks/later.py", "checks/later.py"),
        ("python3 ./checks/later.py", "checks/later.py"),
        ("python3 ch\u0435cks/check.py", "ch\u0435cks/check.py"),  # a Cyrillic е
        ("python3 later.py", "later.py"),  # a script by its name alone
        ("sh -c 'python3 checks/later.py'", "checks/later.py"),
        ("python3 -m pytest checks/test_later.py::test_a", "checks/test_later.py"),
        ("./run-later", "run-later"),
    ],
)
def test_trust_warns_of_an_unpinned_path_head_does_not_hold(
    tmp_path: Path, command: str, named: str
) -> None:
    """A later commit may add it: the fingerprint would not change, so trust would hold."""
    repo = gate(tmp_path, command, "checks/check.py")
    assert unpinned_paths(repo) == (UnpinnedPath(named, None),)


def test_trust_says_what_head_holds_at_an_unpinned_path(tmp_path: Path) -> None:
    repo = gate(tmp_path, "python3 -m pytest checks run-tests")
    assert unpinned_paths(repo) == (
        UnpinnedPath("checks", "folder"),
        UnpinnedPath("run-tests", "file"),
    )


@pytest.mark.parametrize(
    "command",
    [
        "sh -c 'cd checks && python3 check.py'",  # a folder worked in, a pinned script
        "python3 -m pytest -q -k 'not slow'",
        'sh -c \'python3 "$(dirname "$0")/x.py" 2>/dev/null; echo a=b/c https://x/y\'',
        "python3 /usr/lib/x.py ../outside.py",
    ],
)
def test_trust_does_not_warn_of_words_that_are_no_unpinned_path(
    tmp_path: Path, command: str
) -> None:
    assert unpinned(gate(tmp_path, command, "checks/check.py")) == ()


def test_a_path_in_a_folder_pinned_whole_is_pinned(tmp_path: Path) -> None:
    """The commit's other files there are removed before the run."""
    assert unpinned(gate(tmp_path, "python3 checks/later.py", "checks")) == ()
