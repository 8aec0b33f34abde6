"""Which `git restore` and `git checkout` of paths the agent hook may check before they run.

The scan marks a restore of paths with its source (the index, or a revision);
the hook then compares what that source holds for each protected path with the
work tree (`tests/test_agent_restore.py`, `tests/e2e/test_agent_hook_restores.py`).
That comparison reads the index, HEAD and the refs as they are before the line
runs, so it is void for a restore that anything earlier in its line could
change, and for one the line does not run once, in order. Beside those rules:
the pure comparison, the protected paths a restore reaches, and git's blob ids.
"""

from __future__ import annotations

import pytest

from failgate_hooks.core.agent.command_rules import Risk
from failgate_hooks.core.agent.command_scan import scan_command
from failgate_hooks.core.agent.command_writes import Restore, WriteTarget
from failgate_hooks.core.agent.protected import (
    Protected,
    entry_pathspecs,
    in_scope,
    protected_entry,
    protected_writes,
    restore_scope,
)
from failgate_hooks.core.agent.restore_check import (
    Entry,
    OnDisk,
    attribute_file_converts,
    restore_change,
)
from failgate_hooks.core.agent.shell_lexer import commands
from failgate_hooks.core.attributes import Attribute, converting
from failgate_hooks.core.ids import blob_id
from tests.test_command_scan import PROTECTED, ROOT


def restores(command: str, cwd: str = ROOT) -> list[Restore]:
    return [w.restore for w in scan_command(command, cwd).writes if w.restore is not None]


@pytest.mark.parametrize(
    ("command", "source", "removes"),
    [
        ("git restore .", None, False),
        ("git checkout -- .", None, False),
        ("git checkout .", None, False),  # a lone word: a path, or a branch (no path)
        ("git restore src/", None, False),
        ("git restore -- .", None, False),
        ("git checkout HEAD -- .", "HEAD", False),  # overlay: it removes nothing
        ("git checkout --no-overlay HEAD~1 -- ledger", "HEAD~1", True),
        ("git restore --source=HEAD~3 .", "HEAD~3", True),
        ("git restore -s HEAD~3 .", "HEAD~3", True),
        ("git restore -sHEAD~3 -SW .", "HEAD~3", True),
        ("git restore -SW .", "HEAD", True),  # --staged with no source: from HEAD
        ("git restore --overlay -s main .", "main", False),
        ("git restore -s origin/main@{1} .", "origin/main@{1}", True),
        ("git checkout -f -q -- .", None, False),
        ("git restore :/", None, False),
        ("git checkout -- '*.yaml'", None, False),
    ],
)
def test_a_plain_restore_of_paths_is_marked_with_its_source(
    command: str, source: str | None, removes: bool
) -> None:
    (restore,) = restores(command)
    assert restore == Restore(source, removes_tracked=removes), command


@pytest.mark.parametrize(
    "command",
    [
        "git status && git restore .",
        "git diff --stat; git checkout -- .",
        "git log -1 && git restore .",
        "cd src && git restore .",
        "cd src && pwd && ls && echo discarding && git restore .",
        "git restore . && git status",
        "git restore . 2>&1",
        "git restore . 2>/dev/null",
        "git restore . || true",
        "git restore .\ngit status",
    ],
)
def test_a_restore_after_only_commands_that_change_nothing_may_be_checked(command: str) -> None:
    assert [r.void for r in restores(command)] == [None], command


# Each route from the issue, and its neighbours: something the line runs before the
# restore, or around it, could change the index, HEAD, the refs or the stash, so a
# check of the state before the line proves nothing.
VOID = [
    ("git reset HEAD~3 -- .pre-commit-config.yaml && git restore .", "`git reset`"),
    ("git reset HEAD~3 -- .pre-commit-config.yaml; git checkout -- .", "`git reset`"),
    ("git update-index --cacheinfo 100644,abc,.pre-commit-config.yaml && git checkout -- .",
     "`git update-index`"),
    ("git read-tree HEAD~3 && git restore .", "`git read-tree`"),
    ("git stash && git restore .", "`git stash`"),
    ("git stash pop --index && git restore .", "`git stash`"),
    ("git add -A && git restore .", "`git add`"),
    ("git commit -qm wip && git restore -s HEAD .", "`git commit`"),
    ("git checkout old-branch && git checkout -- .", "`git checkout`"),
    ("git switch old && git restore .", "`git switch`"),
    ("git merge topic && git restore .", "`git merge`"),
    ("git cherry-pick abc && git restore .", "`git cherry-pick`"),
    ("git am < fix.patch && git restore .", "`git am`"),
    ("git apply --cached fix.patch && git restore .", "`git apply`"),
    ("git branch -f main HEAD~3 && git restore -s main .", "`git branch`"),
    ("git -C ../other reset HEAD~3 -- x && git restore .", "`git -C`"),
    ("git restore . && git restore .", "`git restore`"),  # the second
    ("git restore . && git reset HEAD~3 -- .pre-commit-config.yaml", "`git restore`"),
    ("git add -p && git reset", "`git add`"),
    ("python3 fix_index.py && git restore .", "`python3 fix_index.py`"),
    ("cp /tmp/index .git/index && git restore .", "`cp /tmp/index`"),
    ("echo '* filter=x' > .gitattributes; git restore .", "`echo"),
    ("git diff > .git/index; git restore .", "`git diff`"),
    ("git diff --output=.git/index; git restore .", "`git diff`"),
    ("export GIT_INDEX_FILE=/tmp/index; git restore .", "`export"),
    # how the restore itself runs
    ("git -C src restore ..", "git's own options"),
    ("git -c color.ui=never restore .", "git's own options"),
    ("git --git-dir=../other/.git restore .", "git's own options"),
    ("GIT_INDEX_FILE=/tmp/index git restore .", "a variable is set for it"),
    ("sudo git restore .", "it runs through sudo"),
    ("env git restore .", "it runs through env"),
    ("git bisect run git restore .", "it runs through git bisect"),
    ("git restore . > .git/index", "its output is written into a file"),
    ("bash -c 'git restore .'", "a command line of its own"),
    ("sh -c 'git reset HEAD~3 -- .pre-commit-config.yaml && git restore .'",
     "a command line of its own"),
    # when and how often the line runs it
    ("git reset HEAD~3 -- .pre-commit-config.yaml & git restore .", "background"),
    ("git restore . &", "background"),
    ("git reset HEAD~3 -- x | git restore .", "pipeline"),
    ("git restore . | cat", "pipeline"),
    ("(git restore .)", "subshell"),
    ("(cd ledger); git restore .", "subshell"),
    ("f() { git restore .; }; git reset HEAD~3 -- x; f", "subshell"),
    ("for i in 1 2; do git restore .; git reset HEAD~3 -- x; done", "loop"),
    ("while true; do git restore .; done", "loop"),
    ("if true; then git restore .; fi", "loop"),
    ("{ git restore .; }", "loop"),
    ("echo $(git reset HEAD~3 -- x); git restore .", "substitution"),
    ("true <(git reset HEAD~3 -- x); git restore .", "substitution"),
    ("trap 'git reset HEAD~3 -- x' DEBUG; git restore .", "`git reset`"),
    ("echo 'git reset HEAD~3 -- x' | sh; git restore .", "pipeline"),
    ("sh < stage.sh; git restore .", "`sh`"),
    ("x=$(cat <<'E'\nE\n); git restore .", "substitution"),
]  # fmt: skip


@pytest.mark.parametrize(("command", "why"), VOID)
def test_a_restore_the_line_could_change_first_is_not_checked(command: str, why: str) -> None:
    voids = [r.void for r in restores(command)]
    assert voids and voids[-1] is not None and why in voids[-1], (command, voids)


@pytest.mark.parametrize(("command", "_"), VOID)
def test_such_a_restore_is_judged_as_any_write_is(command: str, _: str) -> None:
    scan = scan_command(command, ROOT)
    found = protected_writes(scan.writes, scan.code, PROTECTED, scan.unread)
    judged = {Risk.PROTECTED_WRITE, Risk.PROTECTED_INDEX, Risk.PROTECTED_UNREADABLE}
    assert found and {f.risk for f in found} <= judged


@pytest.mark.parametrize(
    "command",
    [
        "git restore --ours .",
        "git restore --theirs -- .",
        "git restore --merge .",
        "git checkout --conflict=diff3 -- .",
        "git restore -p .",
        "git checkout -p -- .",
        "git restore --recurse-submodules .",
        "git restore --pathspec-from-file=paths.txt",
        "git restore --sou HEAD .",  # a prefix git takes: only the whole name is read
        "git restore -s HEAD -s HEAD~3 .",
        "git restore -s HEAD:src .",  # a tree path, read from the folder git runs in
        "git restore -s HEAD~3..HEAD .",
        "git restore -s :/fix .",
        "git restore -s $REV .",
        "git restore $FILE",
        "git restore *",  # the shell's glob
        "git checkout HEAD~1 .",  # a revision, or a second path?
        "git checkout a b -- .",
        "git checkout -b topic -- .",
        "git checkout - -- .",
        "git checkout-index -a -f",
        "git read-tree -u --reset HEAD~3",
        "git stash -u",
        "git clean -fdx",
    ],
)
def test_other_forms_are_not_restores_the_hook_checks(command: str) -> None:
    assert restores(command) == [], command


def test_the_lexer_says_how_each_command_ends_and_which_run_in_a_substitution() -> None:
    found = commands("a; b && c | d & e\n(f) $(g)")
    assert [(c.words[0].text, c.end, c.piped, c.nested) for c in found] == [
        ("a", ";", False, False),
        ("b", "&&", False, False),
        ("c", "|", False, False),
        ("d", "&", True, False),
        ("e", "\n", False, False),
        ("f", ")", False, False),
        ("g", ")", False, True),  # before the command it is a part of
        ("\x00", "", False, False),
    ]


HOOKED = Protected(
    root=ROOT, ledger="ledger", hooks_dirs=(f"{ROOT}/.git/hooks", f"{ROOT}/.githooks")
)


@pytest.mark.parametrize(
    ("path", "what"),
    [
        (".pre-commit-config.yaml", "pre-commit"),
        ("sub/.pre-commit-config.yaml", "pre-commit"),
        (".Claude/Settings.json", "Claude Code"),
        (".claude/settings.local.json", "Claude Code"),
        (".codex/config.toml", "Codex"),
        (".github/hooks/pre-push.json", "Copilot"),
        (".gitconfig", "git configuration file"),
        (".config/git/config", "git's global configuration"),  # a home folder's repository
        ("ledger/20260101t000000z-0123abcd.toml", "ledger"),
        ("ledger/notes.md", "ledger"),
        (".githooks/pre-push", "hooks"),
        # a file where a protected folder is: git removes the folder to write it
        (".claude", "Claude Code"),
        ("tools/.github", "Copilot"),
        ("ledger", "ledger"),
        ("src/app.py", None),
        ("ledgers/x", None),
        (".claude/commands/x.md", None),
        ("src/20260101t000000z-0123abcd.toml", None),  # failgate reads the ledger alone
    ],
)
def test_the_protected_paths_a_tree_or_the_index_can_hold(path: str, what: str | None) -> None:
    found = protected_entry(path, HOOKED)
    assert (found is None) if what is None else (found is not None and what in found), found


def test_the_pathspecs_select_each_of_them_and_never_a_path_in_git() -> None:
    specs = entry_pathspecs(HOOKED)
    assert ":(top,literal,icase)ledger" in specs
    assert ":(top,literal,icase).githooks" in specs
    assert ":(top,glob,icase)**/.pre-commit-config.yaml" in specs
    assert ":(top,glob,icase)**/.github/hooks/**" in specs
    assert ":(top,glob,icase)**/.claude" in specs  # the folder, which a file may replace
    assert not any(".git/" in s or s.endswith(".git") for s in specs)


@pytest.mark.parametrize(
    ("path", "cwd", "scope"),
    [
        (".", ROOT, ""),
        ("..", f"{ROOT}/src", ""),
        ("/", ROOT, ""),  # `:/`, or a list of paths in a file
        (".", "/work", ""),  # a folder above the root holds all of it
        ("ledger", ROOT, "ledger"),
        (".", f"{ROOT}/Ledger", "ledger"),
        ("src/", ROOT, "src"),
        (".", "/elsewhere", None),
        (".", None, None),
        (".", f"{ROOT}/\x00", None),
        ("\x00", ROOT, None),
    ],
)
def test_the_folder_a_restore_reaches(path: str, cwd: str | None, scope: str | None) -> None:
    target = WriteTarget(path, cwd, removes=True, git_pathspec=True)
    assert restore_scope(target, PROTECTED) == scope


def test_a_path_is_in_a_scope_below_it_and_only_there() -> None:
    assert in_scope("ledger/a.toml", "") and in_scope("Ledger/a.toml", "ledger")
    assert in_scope("ledger", "ledger") and not in_scope("ledgers/a", "ledger")


def test_blob_ids_are_gits_in_both_formats() -> None:
    assert blob_id(b"", "sha1") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
    assert blob_id(b"hello\n", "sha1") == "ce013625030ba8dba906f756967f9e9ca394464a"
    assert (
        blob_id(b"", "sha256") == "473a0f4c3be8a93681a267e3b1e9a7dcda1185436fe141f7749120a303721813"
    )


OLD, NEW = blob_id(b"old\n", "sha1"), blob_id(b"new\n", "sha1")
CFG = ".pre-commit-config.yaml"
EVENT = "ledger/20260101t000000z-0123abcd.toml"


def same(oid: str = NEW, executable: bool = False) -> OnDisk:
    return OnDisk("file", executable=executable, oid=oid)


@pytest.mark.parametrize(
    ("restore", "source", "index", "disk", "change"),
    [
        # from the index
        (Restore(None), None, [Entry(CFG, "100644", NEW)], {CFG: same()}, None),
        (Restore(None), None, [], {}, None),  # nothing protected is tracked
        (Restore(None), None, [Entry(CFG, "100644", OLD)], {CFG: same()}, "the index holds"),
        (Restore(None), None, [Entry(CFG, "100644", NEW)], {CFG: OnDisk("absent")},
         "the index holds"),
        (Restore(None), None, [Entry(CFG, "100755", NEW)], {CFG: same()}, "the index holds"),
        (Restore(None), None, [Entry(CFG, "100644", NEW)], {CFG: same(executable=True)},
         "the index holds"),
        (Restore(None), None, [Entry(CFG, "120000", NEW)], {CFG: same()}, "the index holds"),
        (Restore(None), None, [Entry(CFG, "120000", NEW)], {CFG: OnDisk("link", oid=NEW)}, None),
        (Restore(None), None, [Entry(CFG, "100644", NEW)], {CFG: OnDisk("link", oid=NEW)},
         "the index holds"),
        (Restore(None), None, [Entry(CFG, "100644", NEW)], {CFG: OnDisk("other")},
         "the index holds"),
        # a line ending converted: the file holds the blob `git add` would make of it
        (Restore(None), None, [Entry(CFG, "100644", NEW)], {CFG: same(OLD)._replace(added=NEW)},
         None),
        (Restore(None), None, [Entry(CFG, "100644", NEW)], {CFG: same(OLD)._replace(added=OLD)},
         "the index holds"),
        (Restore(None), None, [Entry(CFG, "120000", NEW)],
         {CFG: OnDisk("link", oid=OLD, added=NEW)}, "the index holds"),  # a link: its target
        (Restore(None), None, [Entry("ledger", "160000", NEW)], {"ledger": OnDisk("other")},
         "submodule"),
        (Restore(None), None, [Entry(CFG, "100644", OLD, 2), Entry(CFG, "100644", NEW, 3)],
         {CFG: same()}, "unmerged"),
        # from a revision
        (Restore("HEAD"), [Entry(CFG, "100644", NEW)], [Entry(CFG, "100644", OLD)],
         {CFG: same()}, None),  # the index gets the work tree's version back
        (Restore("v1"), [Entry(CFG, "100644", OLD)], [Entry(CFG, "100644", NEW)],
         {CFG: same()}, "`v1` holds"),
        (Restore("v1"), [], [], {}, None),  # absent on both sides
        (Restore("v1", removes_tracked=True), [], [Entry(EVENT, "100644", NEW)],
         {EVENT: same()}, "it would be removed"),
        (Restore("v1", removes_tracked=True), [], [Entry(EVENT, "100644", NEW)],
         {EVENT: OnDisk("absent")}, None),  # already gone
        (Restore("v1"), [], [Entry(EVENT, "100644", NEW)], {EVENT: same()}, None),  # overlay
    ],
)  # fmt: skip
def test_what_a_restore_would_change(
    restore: Restore,
    source: list[Entry] | None,
    index: list[Entry],
    disk: dict[str, OnDisk],
    change: str | None,
) -> None:
    found = restore_change(restore, source, index, disk)
    if change is None:
        assert found is None
    else:
        assert found is not None and change in found.how, found


def test_the_attributes_that_make_git_write_other_bytes_refuse() -> None:
    assert converting([Attribute(CFG, "filter", "lfs")]) == f"{CFG} has the attribute filter=lfs"
    assert converting([Attribute(CFG, "ident", "set")]) is not None
    assert converting([Attribute(CFG, "working-tree-encoding", "UTF-16")]) is not None
    unset = [Attribute(CFG, "filter", "unspecified"), Attribute(CFG, "ident", "unset")]
    assert converting(unset) is None
    # a line ending converted is the same file: text and eol never refuse
    assert converting([Attribute(CFG, "text", "set"), Attribute(CFG, "eol", "crlf")]) is None
    assert attribute_file_converts(b"*.yaml Filter=x\n")
    assert attribute_file_converts(b"[attr]mine working-tree-encoding=UTF-16\n")
    assert not attribute_file_converts(b"* text=auto eol=lf\n*.png binary\n")
