"""The agent hook's judgement of `git reset` and its kin in real repositories.

A command that rewrites index entries from a revision (`git reset [REV] [--
PATHS]`, `git restore --staged`, `git read-tree REV`) proceeds when, for every
protected path it reaches, the revision holds what the work tree does: the
index it leaves holds the work tree's files. It is refused, naming the path,
when the revision holds another version. An entry it takes out of the index
stays in the work tree, untracked, and is no change. The installed hook is run
on such a world, with pre-commit and a real push, in
tests/e2e/test_agent_hook_index.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from failgate_hooks.core.agent.command_rules import Risk
from tests.conftest import Repo
from tests.test_agent_restore import CONFIG, before_and_after_failgate, judged


@pytest.fixture()
def work(tmp_path: Path) -> Repo:
    repo = before_and_after_failgate(tmp_path / "work")
    repo.git("add", "src/app.py")
    return repo


def index_refusal(repo: Repo, command: str) -> str:
    (finding,) = judged(repo, command)
    assert finding.risk is Risk.PROTECTED_INDEX, finding
    return finding.detail


@pytest.mark.parametrize(
    "command",
    [
        "git reset",  # unstage everything: HEAD holds what the work tree does
        "git reset -q HEAD",
        "git reset HEAD -- .",
        "git reset .pre-commit-config.yaml",  # a path, not a revision
        "git reset -- ledger/",
        "git restore --staged .",
        "git restore -S .pre-commit-config.yaml",
        "git read-tree HEAD",
        "git reset HEAD~1",  # the last commit changed no protected file
    ],
)
def test_an_index_rewrite_that_leaves_it_as_the_work_tree_proceeds(
    work: Repo, command: str
) -> None:
    work.write("src/app.py", "print('v3')\n")
    work.commit("an edit of code alone")
    assert judged(work, command) == [], command


@pytest.mark.parametrize(
    "command",
    [
        "git reset -q before -- .pre-commit-config.yaml",
        "git reset before .pre-commit-config.yaml",
        "git reset before",
        "git reset --mixed before",
        "git restore --staged -s before .",
        "git read-tree before",
        "git reset HEAD~1",  # the last commit is the one that added failgate
    ],
)
def test_an_index_rewrite_from_an_older_configuration_is_refused(work: Repo, command: str) -> None:
    detail = index_refusal(work, command)
    assert detail.startswith("pre-commit's configuration: .pre-commit-config.yaml, of which")
    assert "holds another version than the work tree" in detail


def test_an_edit_of_a_protected_file_makes_the_plain_reset_refused(work: Repo) -> None:
    # the index would hold HEAD's configuration, the work tree another
    work.write(CONFIG, "repos: [something else]\n")
    assert CONFIG in index_refusal(work, "git reset")
    assert judged(work, "git reset -- src/") == []


def test_a_new_event_unstaged_stays_in_the_work_tree_and_proceeds(work: Repo) -> None:
    fresh = "ledger/20260202t000000z-89abcdef.toml"
    work.write(fresh, "status = 'observed'\n")
    work.git("add", fresh)
    assert judged(work, "git reset") == []
    assert judged(work, "git restore --staged ledger/") == []


def test_a_word_that_names_no_revision_is_read_as_a_path(work: Repo) -> None:
    # `src/app.py` could be a branch: it is not here, so git resets the path from HEAD
    assert judged(work, "git reset src/app.py") == []
    work.git("branch", "src/app.py", "before")
    assert CONFIG in index_refusal(work, "git reset src/app.py")
