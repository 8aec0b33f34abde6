"""git's own commands that rewrite or remove files, judged by the pathspecs git reads.

`checkout` and `restore` from a revision, `clean`, `stash` with untracked files,
and the pathspec magic and wildcards that reach further than their text says;
beside them, the neighbours an agent runs all day, which proceed. And the pushes
of jj and Sapling, which run none of git's hooks.
"""

from __future__ import annotations

import pytest

from failgate_hooks.core.agent.command_rules import Risk
from failgate_hooks.core.agent.command_scan import scan_command
from failgate_hooks.core.agent.protected import protected_writes
from tests.test_command_scan import PROTECTED, ROOT, risks

REWRITES = [
    # an older pre-commit configuration, without failgate: pre-commit runs the work tree's
    ("git checkout HEAD~3 -- .pre-commit-config.yaml", "pre-commit"),
    ("git checkout HEAD~3 .pre-commit-config.yaml", "pre-commit"),  # a revision, then paths
    ("git checkout .pre-commit-config.yaml", "pre-commit"),  # from the index
    ("git restore --source=HEAD~3 .pre-commit-config.yaml", "pre-commit"),
    ("git restore -s HEAD~3 .pre-commit-config.yaml", "pre-commit"),
    ("git restore -sHEAD~3 -SW .pre-commit-config.yaml", "pre-commit"),
    ("git restore --sou HEAD~3 -- .pre-commit-config.yaml", "pre-commit"),  # a prefix git takes
    ("cd src && git checkout HEAD~1 -- ../.pre-commit-config.yaml", "pre-commit"),
    ("git checkout HEAD~3 -- .claude/settings.json", "Claude Code"),
    ("git restore -s HEAD~3 .claude/settings.json", "Claude Code"),
    # newer events deleted, or uncommitted ones taken away
    ("git restore -s HEAD~3 ledger/", "ledger"),
    ("git checkout HEAD~3 -- ledger", "ledger"),
    ("git clean -fdx ledger", "ledger"),
    ("git clean -fdx", "ledger"),  # no pathspec: the whole folder
    ("git clean -f -e keep.txt", "ledger"),
    ("git -C src clean -fd ..", "ledger"),
    ("git stash -u -- ledger", "ledger"),
    ("git stash push --include-untracked", "ledger"),
    ("git stash push --include-u", "ledger"),
    ("git stash -a", "ledger"),
    ("git stash save -u 'work in progress'", "ledger"),
    ("git stash -- .pre-commit-config.yaml", "pre-commit"),
    # pathspec magic, wildcards and a list in a file
    ("git restore -s HEAD~3 ':/ledger'", "ledger"),
    ("git restore -s HEAD~3 ':(top)ledger'", "ledger"),
    ("git clean -fdx ':!build'", "ledger"),  # everything but build
    ("git clean -fdx ':(exclude)build'", "ledger"),
    ("git checkout HEAD~3 -- '*.yaml'", "ledger"),  # git's `*` matches .pre-commit-config.yaml
    ("git checkout HEAD~3 -- 'led*'", "ledger"),
    ("git restore --pathspec-from-file=paths.txt", "ledger"),
    ("git checkout HEAD~3 --pathspec-from-file paths.txt", "ledger"),
    # `--work-tree` moves where git writes: a committed `pre-push` lands in the hooks
    ("git --work-tree=.git/hooks checkout HEAD -- pre-push", "hooks"),
    ("git --work-tree .git/hooks restore -s HEAD pre-push", "hooks"),
    ("git --work-tree=.git reset --hard", "hooks"),
    ("git --work-tree=.git/hooks checkout-index -a", "hooks"),
    # from the index, which `git update-index --cacheinfo` or `git reset REV -- PATH` set
    ("git checkout-index -f .pre-commit-config.yaml", "pre-commit"),
    ("git checkout-index -f -- .claude/settings.json", "Claude Code"),
    ("git checkout-index -a -f", "ledger"),
    ("git checkout-index --prefix=.git/hooks/ -f pre-push", "hooks"),
    ("git read-tree -u --reset HEAD~3", "ledger"),
    ("git read-tree -mu HEAD~3", "ledger"),
    ("git -c core.worktree=.git/hooks checkout HEAD -- pre-push", "hooks"),
    ("GIT_WORK_TREE=.git/hooks git checkout HEAD -- pre-push", "hooks"),
    ("env GIT_WORK_TREE=.git/hooks git checkout HEAD -- pre-push", "hooks"),
    ("export GIT_WORK_TREE=.git/hooks; git checkout HEAD -- pre-push", "hooks"),
]


@pytest.mark.parametrize(("command", "place"), REWRITES)
def test_a_git_command_rewriting_a_protected_path_is_refused(command: str, place: str) -> None:
    scan = scan_command(command, ROOT)
    found = protected_writes(scan.writes, scan.code, PROTECTED)
    assert {f.risk for f in found} == {Risk.PROTECTED_WRITE}, command
    assert any(place in f.detail for f in found), (command, found)


@pytest.mark.parametrize(
    "command",
    [
        "git checkout main",  # switches branches: no pathspec
        "git checkout -b feature origin/main",
        "git checkout -B ledger-fix",
        "git switch main",
        "git restore src/app.py",
        "git restore -s HEAD~1 -- src/app.py",
        "git restore --staged src/",  # the index alone, and nothing protected
        "git checkout HEAD~1 -- src/app.py",
        "git clean -n",
        "git clean -ndx",
        "git clean --dry-run -d",
        "git clean -fd build",
        "git -C build clean -fdx",
        "git stash",  # tracked changes: an uncommitted event file is untracked
        "git stash push -m 'ledger notes' src/app.py",
        "git stash -- src/app.py",
        "git stash pop",
        "git stash list",
        "git reset --hard HEAD~1",
        "git rm src/old.py",
        "git restore ':(literal)src/*.py'",
        "git checkout HEAD -- 'src/*.py'",
        "git --work-tree=/tmp/export checkout HEAD -- .",  # an export elsewhere
        "git --work-tree=build status",
        "git checkout-index -f src/app.py",
        "git checkout-index --prefix=/tmp/export/ -a",
    ],
)
def test_its_neighbours_proceed(command: str) -> None:
    assert risks(command) == set(), command


@pytest.mark.parametrize(
    "command",
    [
        "jj git push -b main",
        "jj -R . git push --all",
        "sl push --to main",
        "cd repo && sl push --to main",
        "nice -n5 jj git push",
    ],
)
def test_jj_and_sapling_push_without_the_hooks_and_are_refused(command: str) -> None:
    (finding,) = scan_command(command, ROOT).findings
    assert finding.risk is Risk.PUSH_BYPASS
    assert "runs no git hook" in finding.detail


@pytest.mark.parametrize("command", ["jj log", "jj git fetch", "sl log", "sl pull"])
def test_jj_and_sapling_otherwise_proceed(command: str) -> None:
    assert risks(command) == set(), command
