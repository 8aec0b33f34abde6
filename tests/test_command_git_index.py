"""git's commands that write the index entries of protected paths, and their neighbours.

Where pre-commit runs the gate, what the index holds for its configuration is
written into the work tree at a push, so a command that may set an index entry
of a protected path apart from the work tree's file is judged as a write of it.
A reset (and `git restore --staged`, `git read-tree REV`) is marked with the
revision it rewrites the index from, which the hook compares with the work tree
(tests/test_agent_restore.py); here those are judged as any write is.
"""

from __future__ import annotations

import pytest

from failgate_hooks.core.agent.command_rules import Risk
from failgate_hooks.core.agent.command_scan import scan_command
from failgate_hooks.core.agent.command_writes import Restore
from failgate_hooks.core.agent.protected import protected_writes
from tests.test_command_scan import PROTECTED, ROOT, risks

INDEX_WRITES = [
    # the route from the issue: an old configuration staged, then hidden from `git diff`
    ("git reset -q before -- .pre-commit-config.yaml", "pre-commit"),
    ("git update-index --assume-unchanged .pre-commit-config.yaml", "pre-commit"),
    ("git update-index --skip-worktree .pre-commit-config.yaml", "pre-commit"),
    ("git update-index --cacheinfo 100644,abc,.pre-commit-config.yaml", "pre-commit"),
    ("git update-index --cacheinfo 100644 abc .pre-commit-config.yaml", "pre-commit"),
    ("git update-index --chmod=+x .claude/settings.json", "Claude Code"),
    ("git update-index --add --remove -- .codex/hooks.json", "Codex"),
    ("git update-index --force-remove ledger/20260101t000000z-0123abcd.toml", "ledger"),
    ("git update-index --index-info < entries.txt", "ledger"),
    ("git update-index --stdin < paths.txt", "ledger"),
    ("cd src && git update-index --assume-unchanged ../.pre-commit-config.yaml", "pre-commit"),
    ("git reset before .pre-commit-config.yaml", "pre-commit"),  # a revision, then paths
    ("git reset -- ':/ledger'", "ledger"),
    ("git reset --mixed before", "ledger"),  # the whole index
    ("git reset -p", "ledger"),
    ("git reset --pathspec-from-file=paths.txt", "ledger"),
    ("git reset '*.yaml'", "ledger"),  # git's `*` crosses folders
    ("git rm --cached .pre-commit-config.yaml", "pre-commit"),
    ("git rm -r --cached ':/ledger'", "ledger"),
    ("git read-tree before", "ledger"),
    ("git read-tree --empty", "ledger"),
    ("git read-tree --prefix=ledger/ before", "ledger"),
    ("git apply --cached fix.patch", "ledger"),  # what a patch holds is unseen
    ("git apply --index fix.patch", "ledger"),
    ("git apply -3 fix.patch", "ledger"),
    ("git restore --staged .pre-commit-config.yaml", "pre-commit"),
    ("git restore -S -s before .", "ledger"),
    ("git stash apply --index", "ledger"),
    ("git stash pop -q --index stash@{1}", "ledger"),
    ("git stash apply --ind", "ledger"),  # a prefix git takes
    ("git add -p", "ledger"),  # a part of the work tree's edit, not all of it
    ("git add -N ledger/", "ledger"),
    ("git add --chmod=+x .pre-commit-config.yaml", "pre-commit"),
    ("git add -e .claude/settings.json", "Claude Code"),
    ("git add --interactive", "ledger"),
    # the index as a file, written whole
    ("cp saved-index .git/index", ".git/index"),
    ("GIT_INDEX_FILE=old git read-tree before && mv old .git/index", ".git/index"),
    ("cd src && cat ../saved > ../.git/index", ".git/index"),
]


@pytest.mark.parametrize(("command", "place"), INDEX_WRITES)
def test_a_write_of_a_protected_index_entry_is_judged(command: str, place: str) -> None:
    scan = scan_command(command, ROOT)
    found = protected_writes(scan.writes, scan.code, PROTECTED)
    assert found and {f.risk for f in found} <= {Risk.PROTECTED_INDEX, Risk.PROTECTED_WRITE}
    assert any(place in f.detail for f in found), (command, found)


@pytest.mark.parametrize(
    "command",
    [
        "git add -A",  # the work tree's own content: the index cannot differ from it
        "git add .",
        "git add -u",
        "git add .pre-commit-config.yaml",  # an edit of it is refused where it is made
        "git add -f ledger/",
        "git reset HEAD -- src/x.py",
        "git reset -q -- src/",
        "git reset --soft HEAD~1",  # the index stays
        "git reset --hard HEAD~1",  # the whole work tree with it: see docs/agents
        "git restore --staged src/",
        "git update-index --refresh",
        "git update-index -q --really-refresh",
        "git update-index src/x.py",
        "git apply fix.patch",
        "git apply --check --stat fix.patch",
        "git stash apply",
        "git stash pop",
        "git rm --cached src/old.py",
    ],
)
def test_its_neighbours_proceed(command: str) -> None:
    assert risks(command) == set(), command


def marks(command: str) -> list[tuple[str, Restore | None]]:
    """Each index write's target and what the hook would compare it from."""
    return [(w.path, w.restore) for w in scan_command(command, ROOT).writes if w.index_only]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("git reset", [("/", Restore("HEAD"))]),
        ("git reset -q --mixed", [("/", Restore("HEAD"))]),
        ("git reset -- .pre-commit-config.yaml", [(".pre-commit-config.yaml", Restore("HEAD"))]),
        ("git reset before -- ledger", [("ledger", Restore("before"))]),
        # no `--`: the first word is a revision when it names one, and a path when not
        ("git reset before", [("before", Restore("HEAD")),
                              ("/", Restore("before", source_or_path=True))]),
        ("git reset HEAD~1 ledger", [("HEAD~1", Restore("HEAD")), ("ledger", Restore("HEAD")),
                                     ("ledger", Restore("HEAD~1", source_or_path=True))]),
        ("git reset .pre-commit-config.yaml", [(".pre-commit-config.yaml", Restore("HEAD"))]),
        ("git restore --staged .", [(".", Restore("HEAD"))]),  # what leaves stays untracked
        ("git restore -S -s before ledger", [("ledger", Restore("before"))]),
        ("git read-tree -q before", [("/", Restore("before"))]),
        # forms it cannot compare: judged as any write is
        ("git reset -p -- ledger", [("ledger", None)]),
        ("git reset -N before", [("before", None), ("/", None)]),
        ("git reset $REV -- ledger", [("ledger", None)]),
        ("git reset ':/fix' -- ledger", [("ledger", None)]),
        ("git reset a b -- ledger", [("a", None), ("b", None), ("ledger", None)]),
        ("git read-tree -m before", [("/", None)]),
    ],
)  # fmt: skip
def test_a_reset_is_marked_with_each_reading_git_may_make_of_it(
    command: str, expected: list[tuple[str, Restore | None]]
) -> None:
    assert marks(command) == expected, command
