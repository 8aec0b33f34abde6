"""The agent hook's judgement of `git restore .` in real repositories, state by state.

A restore proceeds when every protected path it reaches would keep what the work
tree holds, and is refused, naming the path, when git holds something else there,
or when failgate cannot tell: a mode, a link, a submodule, a conflict, grafts, a
converting attribute, another repository, git failing. The installed hook is run
on the same states in tests/e2e/test_agent_hook_restores.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from failgate_hooks.app import agent_hook
from failgate_hooks.app.agent_hook import judge
from failgate_hooks.core.agent.agents import Event, HookInput
from failgate_hooks.core.agent.command_rules import Finding, Risk
from failgate_hooks.core.agent.command_writes import WriteTarget
from failgate_hooks.core.agent.protected import Protected
from failgate_hooks.git import restore_facts
from tests.conftest import Repo, make_repo

CONFIG = ".pre-commit-config.yaml"


def judged(repo: Repo, command: str, cwd: Path | None = None) -> list[Finding]:
    where = str(cwd or repo.path)
    return judge(HookInput(Event.TOOL_CALL, "shell", command, cwd=where), where)


def refusal(repo: Repo, command: str, cwd: Path | None = None) -> str:
    (finding,) = judged(repo, command, cwd)
    assert finding.risk is Risk.PROTECTED_RESTORE
    return finding.detail


EVENT = "ledger/20260101t000000z-0123abcd.toml"


def before_and_after_failgate(path: Path, object_format: str = "sha1") -> Repo:
    """pre-commit's configuration and an event committed twice (tag `before` lacks
    failgate in the configuration), and an edit in src/."""
    repo = make_repo(path, object_format)
    repo.write(CONFIG, "repos: []\n")
    repo.write(EVENT, "status = 'observed'\n")
    repo.write("src/app.py", "print('v1')\n")
    repo.commit("before failgate")
    repo.git("tag", "before")
    repo.write(CONFIG, "repos: [failgate]\n")
    repo.commit("failgate")
    repo.write("src/app.py", "print('the agent was here')\n")
    return repo


@pytest.fixture(params=["sha1", "sha256"])
def work(request: pytest.FixtureRequest, tmp_path: Path) -> Repo:
    return before_and_after_failgate(tmp_path / "work", request.param)


@pytest.mark.parametrize(
    "command",
    ["git restore .", "git checkout -- .", "git checkout HEAD -- .", "git restore -s HEAD -SW ."],
)
def test_a_clean_work_tree_lets_it_through(work: Repo, command: str) -> None:
    assert judged(work, command) == []


def test_an_untracked_protected_file_is_no_concern(work: Repo) -> None:
    work.write(".claude/settings.local.json", "{}\n")
    assert judged(work, "git restore .") == []


def test_an_older_revision_is_refused_naming_the_path(work: Repo) -> None:
    detail = refusal(work, "git restore -s before .")
    assert detail.startswith("pre-commit's configuration: .pre-commit-config.yaml, of which")
    assert "`before` holds another version than the work tree" in detail


def test_an_old_config_in_the_index_is_refused_and_one_from_head_is_not(work: Repo) -> None:
    work.git("reset", "-q", "before", "--", CONFIG)
    assert "the index holds another version" in refusal(work, "git restore .")
    assert judged(work, "git checkout HEAD -- .") == []  # HEAD's is the work tree's


def test_a_mode_is_part_of_what_is_compared(work: Repo) -> None:
    os.chmod(work.path / CONFIG, 0o755)
    assert CONFIG in refusal(work, "git restore .")


def test_a_link_is_not_the_file_it_points_to(work: Repo) -> None:
    (work.path / CONFIG).rename(work.path / "copy.yaml")
    (work.path / CONFIG).symlink_to("copy.yaml")
    assert CONFIG in refusal(work, "git restore .")


def test_a_deleted_protected_file_would_be_written_back(work: Repo) -> None:
    (work.path / CONFIG).unlink()
    assert CONFIG in refusal(work, "git restore .")


def test_an_agents_configuration_in_a_subfolder_counts(work: Repo) -> None:
    work.write("tools/.claude/settings.json", "{}\n")
    work.commit("tools' own Claude settings")
    work.write("tools/.claude/settings.json", '{"hooks": {}}\n')
    assert refusal(work, "git restore .").startswith("Claude Code's hook configuration: tools/")


def test_a_file_where_the_agents_folder_is_would_take_it_away(work: Repo) -> None:
    work.write(".claude", "not a folder yet\n")
    work.commit("a file named .claude")
    work.git("tag", "file")
    work.git("rm", "-q", ".claude")
    work.write(".claude/settings.json", '{"hooks": {}}\n')
    work.commit("Claude Code's hooks")
    detail = refusal(work, "git checkout file -- .")
    assert detail.startswith("Claude Code's hook configuration: .claude, of which `file` holds")


def test_a_hooks_folder_in_the_work_tree_counts(work: Repo) -> None:
    work.write(".githooks/pre-push", "#!/bin/sh\nexit 1\n")
    work.commit("hooks in the tree")
    work.git("config", "core.hooksPath", ".githooks")
    work.write(".githooks/pre-push", "#!/bin/sh\nexit 0\n")
    assert refusal(work, "git checkout -- .").startswith("the git hooks folder: .githooks/")
    assert judged(work, "git restore src/") == []


def test_a_conflict_on_a_protected_path_is_refused(work: Repo) -> None:
    work.git("checkout", "-q", "-b", "other", "before")
    work.write(CONFIG, "repos: [other]\n")
    work.commit("another configuration")
    work.git("checkout", "-q", "main")
    work.git("merge", "-q", "other", check=False)
    assert "unmerged" in refusal(work, "git restore .")


def test_a_submodule_in_the_ledger_is_refused(work: Repo) -> None:
    head = work.head()
    work.git("update-index", "--add", "--cacheinfo", f"160000,{head},ledger/sub")
    assert "submodule" in refusal(work, "git checkout -- .")


def test_grafts_refuse_a_revision_but_not_the_index(work: Repo) -> None:
    grafts = Path(work.git("rev-parse", "--git-common-dir"))
    grafts = (grafts if grafts.is_absolute() else work.path / grafts) / "info" / "grafts"
    grafts.parent.mkdir(exist_ok=True)
    grafts.write_text(f"{work.head()}\n")
    assert "grafts" in refusal(work, "git checkout HEAD -- .")
    assert judged(work, "git restore .") == []


def test_an_unknown_revision_is_refused(work: Repo) -> None:
    assert "names no tree here" in refusal(work, "git restore -s no-such-branch .")


def test_a_revisions_attribute_file_that_may_convert_is_refused(work: Repo) -> None:
    work.write(".gitattributes", "*.yaml filter=lfs\n")
    work.commit("attributes")
    (work.path / ".gitattributes").unlink()  # the work tree's no longer says so
    assert ".gitattributes in that revision" in refusal(work, "git checkout HEAD -- .")


def test_a_folder_that_is_another_repository_is_refused(work: Repo) -> None:
    make_repo(work.path / "ledger" / "inner")
    detail = refusal(work, "cd ledger/inner && git restore ..", cwd=work.path)
    assert "another repository's work tree" in detail


def test_a_failure_inside_the_comparison_refuses(
    work: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: object) -> None:
        raise RuntimeError("git broke")

    monkeypatch.setattr(restore_facts, "index_entries", broken)
    assert "could not compare (RuntimeError: git broke)" in refusal(work, "git restore .")


def test_a_restore_from_a_subfolder_compares_what_it_reaches(work: Repo) -> None:
    work.git("reset", "-q", "before", "--", CONFIG)
    assert judged(work, "cd src && git restore .") == []  # src holds nothing protected
    assert CONFIG in refusal(work, "cd src && git restore ..")
    assert judged(work, "cd ledger && git restore .") == []


def written_anew(repo: Repo, *paths: str) -> None:
    """Each path deleted and checked out again, under the conversions now in force."""
    for path in paths:
        (repo.path / path).unlink()
    repo.git("checkout", "--", *paths)
    assert repo.git("status", "--porcelain", "--", *paths) == ""


def test_line_endings_git_converted_on_checkout_are_no_change(work: Repo) -> None:
    work.git("config", "core.autocrlf", "true")
    written_anew(work, CONFIG, EVENT)
    assert (work.path / CONFIG).read_bytes() == b"repos: [failgate]\r\n"
    for command in ("git restore .", "git checkout -- .", "git checkout HEAD -- ."):
        assert judged(work, command) == [], command


def test_line_endings_the_attributes_convert_are_no_change(work: Repo) -> None:
    work.write(".gitattributes", "* text eol=crlf\n")
    work.commit("CRLF in the work tree")
    written_anew(work, CONFIG, EVENT)
    assert (work.path / EVENT).read_bytes() == b"status = 'observed'\r\n"
    assert judged(work, "git restore .") == []
    assert judged(work, "git restore -s HEAD -SW .") == []


def test_a_blob_that_holds_crlf_is_no_change_where_git_leaves_it_as_it_is(work: Repo) -> None:
    # git add leaves a file whose blob already holds CRLF as it is (core.autocrlf's
    # "safer" rule), which git hash-object, reading no index, does not know
    work.write(CONFIG, "repos: [failgate]\r\n")
    work.commit("CRLF in the blob")
    work.git("config", "core.autocrlf", "true")
    written_anew(work, CONFIG)
    assert judged(work, "git restore .") == []


def test_a_link_compares_its_target_never_converted(work: Repo) -> None:
    work.write("shared/settings.json", "{}\n")
    (work.path / ".claude").mkdir()
    (work.path / ".claude" / "settings.json").symlink_to("../shared/settings.json")
    work.commit("Claude Code's settings, shared")
    work.git("config", "core.autocrlf", "true")
    written_anew(work, "shared/settings.json")
    assert judged(work, "git restore .") == []
    (work.path / ".claude" / "settings.json").unlink()
    (work.path / ".claude" / "settings.json").symlink_to("../shared/other.json")
    assert ".claude/settings.json" in refusal(work, "git restore .")


def test_a_change_of_content_under_converted_line_endings_is_refused(work: Repo) -> None:
    work.git("config", "core.autocrlf", "true")
    written_anew(work, CONFIG)
    work.write(CONFIG, "repos: []\r\n")
    assert "the index holds another version" in refusal(work, "git restore .")
    work.git("reset", "-q", "before", "--", CONFIG)  # the index holds it: HEAD does not
    assert "`HEAD` holds another version" in refusal(work, "git checkout HEAD -- .")


def test_a_filter_driver_is_refused_before_git_could_run_it(work: Repo) -> None:
    work.write(".gitattributes", f"{CONFIG} filter=x\n")
    work.commit("a filter on pre-commit's configuration")
    marker = work.path.parent / "the-filter-ran"
    for side in ("clean", "smudge"):
        work.git("config", f"filter.x.{side}", f"touch '{marker}'; cat")
    detail = refusal(work, "git restore .")
    assert f"{CONFIG} has the attribute filter=x" in detail
    assert not marker.exists()
    work.git("hash-object", CONFIG)  # the driver does run where git hashes the file
    assert marker.exists()


def test_a_filter_only_the_index_turns_off_is_one_git_would_run_hashing(
    work: Repo, tmp_path: Path
) -> None:
    # hash-object reads no index: the index's `!filter` that check-attr reads where the
    # work tree has no .gitattributes turns nothing off there
    global_attributes = tmp_path / "attributes"
    global_attributes.write_text(f"{CONFIG} filter=x\n")
    work.write(".gitattributes", f"{CONFIG} !filter\n")
    work.commit("no filter on pre-commit's configuration")
    (work.path / ".gitattributes").unlink()
    marker = tmp_path / "the-filter-ran"
    work.git("config", "core.attributesFile", str(global_attributes))
    work.git("config", "filter.x.clean", f"touch '{marker}'; cat")
    assert work.git("check-attr", "filter", "--", CONFIG).endswith("filter: unspecified")
    assert f"{CONFIG} has the attribute filter=x" in refusal(work, "git restore .")
    assert not marker.exists()
    work.git("hash-object", CONFIG)  # the driver does run where git hashes the file
    assert marker.exists()


@pytest.mark.parametrize(
    ("writes", "command", "asked"),
    [
        (("notes.md",), None, 0),  # a file edit asks git nothing
        ((".githooks/pre-push",), None, 1),  # named like the hook: where are the hooks?
        ((".githooks/pre-push",), "git restore .", 1),  # and a restore: still once
        ((), "git restore . && echo > ledger/x", 1),
    ],
)
def test_the_repository_is_asked_what_is_protected_at_most_once(
    work: Repo,
    monkeypatch: pytest.MonkeyPatch,
    writes: tuple[str, ...],
    command: str | None,
    asked: int,
) -> None:
    calls: list[str] = []
    protection = agent_hook._protection

    def counted(where: str) -> Protected:
        calls.append(where)
        return protection(where)

    monkeypatch.setattr(agent_hook, "_protection", counted)
    targets = tuple(WriteTarget(str(work.path / path), str(work.path)) for path in writes)
    call = HookInput(Event.TOOL_CALL, "edit", command, writes=targets, cwd=str(work.path))
    agent_hook.judge(call, str(work.path))
    assert len(calls) == asked


def test_git_literal_pathspecs_in_the_hooks_environment_hides_no_protected_path(
    work: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Read literally, `:(top,glob,icase)**/…` names a file nothing matches.
    monkeypatch.setenv("GIT_LITERAL_PATHSPECS", "1")
    assert "`before` holds another version" in refusal(work, "git restore -s before .")
