"""`git restore .` and `git checkout -- .`, through the installed hook, in a real repository.

An agent discards its own edits with them, and they proceed while every
protected path they reach (pre-commit's configuration, the ledger, an agent's
hook configuration) would keep what the work tree holds. They are refused when
git holds another version there: an older configuration staged by `git reset
REV -- .pre-commit-config.yaml` (which writes the index alone) or by `git
update-index --cacheinfo`, a stash that brings one back, an older revision,
replaced objects (each set up here without the hook, which refuses them: see
tests/e2e/test_agent_hook_index.py); and whenever something before them in the
same line could change the index. What the hook lets through is run for real, then a plain
`git push` through pre-commit: the remote's branch must not move while the gate
is held.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from failgate_hooks.app import demo
from tests.e2e.test_agent_hook import PRE_COMMIT_FAILGATE, Answer, shell
from tests.e2e.test_agent_hook_git_writes import observed, run_as_the_agent
from tests.worlds import KEY, budget_repo, record_failure, remote_ref, with_remote

EDITED = "the agent's own edit, to be discarded\n"


class World:
    """A held gate enforced through pre-commit, an agent's edit, an uncommitted event."""

    def __init__(self, tmp_path: Path, object_format: str = "sha1") -> None:
        repo = budget_repo(tmp_path / "work", object_format)
        repo.write(".pre-commit-config.yaml", "repos: []\n")
        repo.commit("pre-commit, before failgate")
        repo.git("tag", "before")
        self.remote = with_remote(repo, tmp_path / "remote.git")
        entry = Path(sys.executable).parent / "failgate-pre-push"
        self.config = PRE_COMMIT_FAILGATE.format(entry=entry)
        repo.write(".pre-commit-config.yaml", self.config)
        record_failure(repo, "push")
        subprocess.run([sys.executable, "-m", "pre_commit", "install", "-t", "pre-push"],
                       cwd=repo.path, check=True, capture_output=True)  # fmt: skip
        self.budget = (repo.path / demo.BUDGET_PATH).read_text()
        repo.write(demo.BUDGET_PATH, EDITED)
        self.fresh = repo.path / observed(repo, "deploy:devnet:gas-budget")
        self.repo = repo
        self.tip = remote_ref(self.remote, "refs/heads/main")
        self.old_config = repo.git("rev-parse", "before:.pre-commit-config.yaml")

    def ask(self, command: str) -> Answer:
        return shell(self.repo, "claude", command)

    def let_through(self, command: str) -> None:
        """A command the hook lets pass, run as the agent runs it."""
        answer = self.ask(command)
        assert (answer.code, answer.out, answer.err) == (0, "", ""), (command, answer)
        run_as_the_agent(self.repo, command)

    def set_up(self, command: str) -> None:
        """A state the hook refuses to make: the user's, or an older failgate's."""
        assert self.ask(command).verdict("claude").action == "block", command
        run_as_the_agent(self.repo, command)

    def config_now(self) -> str:
        return (self.repo.path / ".pre-commit-config.yaml").read_text()

    def push_is_still_refused(self) -> None:
        """A plain push, which the hook lets through: pre-commit runs the work tree's
        configuration, which must still run failgate."""
        self.let_through("git push -q origin main")
        assert remote_ref(self.remote, "refs/heads/main") == self.tip
        assert self.config_now() == self.config


@pytest.fixture()
def world(tmp_path: Path) -> World:
    return World(tmp_path)


@pytest.mark.parametrize(
    "command",
    [
        "git restore .",
        "git checkout -- .",
        "git checkout .",
        "git restore deploy/",
        "git checkout HEAD -- .",
        "git restore --source=HEAD .",
        "git restore -SW .",
        "git status && git restore .",
        "git diff --stat; git checkout -- .",
        "cd deploy && git checkout -- .",
        "git restore . && git status --short",
        "git restore . 2>&1",
    ],
)
def test_a_restore_that_changes_no_protected_file_proceeds(world: World, command: str) -> None:
    world.let_through(command)
    assert (world.repo.path / demo.BUDGET_PATH).read_text() == world.budget, command
    assert world.config_now() == world.config
    assert world.fresh.is_file()  # untracked: a restore leaves it be


def test_it_proceeds_in_a_sha256_repository_and_is_refused_there_too(tmp_path: Path) -> None:
    world = World(tmp_path, "sha256")
    world.let_through("git restore .")
    assert (world.repo.path / demo.BUDGET_PATH).read_text() == world.budget
    world.set_up(STAGED_OLD_CONFIG)
    assert world.ask("git restore .").verdict("claude").action == "block"


def refused(world: World, command: str, *, then_push: bool = True) -> str:
    """The hook's refusal of `command`; run anyway if it was let through, so that the
    push after it shows what it did."""
    answer = world.ask(command)
    verdict = answer.verdict("claude")
    if verdict.action == "run":
        run_as_the_agent(world.repo, command)
    if then_push:
        world.push_is_still_refused()
    assert world.config_now() == world.config
    assert verdict.action == "block", (command, answer)
    assert KEY in verdict.reason
    return verdict.reason


STAGED_OLD_CONFIG = "git reset -q before -- .pre-commit-config.yaml"


@pytest.mark.parametrize(
    ("earlier", "command"),
    [
        (STAGED_OLD_CONFIG, "git restore ."),
        (STAGED_OLD_CONFIG, "git checkout -- ."),
        (STAGED_OLD_CONFIG, "git checkout -- .pre-commit-config.yaml"),
        (STAGED_OLD_CONFIG, "cd deploy && git restore :/"),
        ("git update-index --cacheinfo 100644,{old},.pre-commit-config.yaml", "git restore ."),
        # a stash that brings the older configuration back into the index
        (f"{STAGED_OLD_CONFIG} && git stash -q && git stash pop -q --index", "git restore ."),
        ("git read-tree before", "git checkout -- ."),
    ],
)
def test_a_restore_after_an_earlier_command_staged_an_old_config_is_refused(
    world: World, earlier: str, command: str
) -> None:
    world.set_up(earlier.format(old=world.old_config))
    reason = refused(world, command)
    assert ".pre-commit-config.yaml, of which the index holds another version" in reason
    assert "git restore src/" in reason  # the way out


def test_an_index_entry_marked_unchanged_is_compared_all_the_same(world: World) -> None:
    # git diff sees no change through --assume-unchanged; git restore writes it anyway
    world.set_up(
        f"git update-index --cacheinfo 100644,{world.old_config},.pre-commit-config.yaml && "
        "git update-index --assume-unchanged .pre-commit-config.yaml"
    )
    # no push here: pre-commit's own stash of unstaged files would write that entry
    reason = refused(world, "git restore .", then_push=False)
    assert ".pre-commit-config.yaml, of which the index holds another version" in reason
    assert "git restore src/" in reason  # the way out


@pytest.mark.parametrize(
    "command",
    [
        f"{STAGED_OLD_CONFIG} && git restore .",
        f"{STAGED_OLD_CONFIG}; git checkout -- .",
        "git update-index --cacheinfo 100644,{old},.pre-commit-config.yaml && git checkout -- .",
        "git read-tree before && git restore .",
        f"{STAGED_OLD_CONFIG} & sleep 1; git restore .",
        f"git status && {STAGED_OLD_CONFIG} && git restore .",
        f"sh -c '{STAGED_OLD_CONFIG}' && git restore .",
        f"echo $({STAGED_OLD_CONFIG}) && git restore .",
        f"bash -c '{STAGED_OLD_CONFIG} && git restore .'",
        f"for step in stage restore; do {STAGED_OLD_CONFIG} && git restore .; done",
    ],
)
def test_a_restore_after_an_index_write_in_the_same_line_is_refused(
    world: World, command: str
) -> None:
    reason = refused(world, command.format(old=world.old_config))
    assert "failgate cannot check what it would write there" in reason


@pytest.mark.parametrize(
    "command",
    [
        "git checkout before -- .",
        "git restore --source=before .",
        "git restore -s before -SW .",
        "git checkout before -- .pre-commit-config.yaml",
    ],
)
def test_a_restore_from_an_older_revision_is_refused(world: World, command: str) -> None:
    reason = refused(world, command)
    assert ".pre-commit-config.yaml, of which `before` holds another version" in reason


def test_a_stash_holding_an_old_config_cannot_be_popped_and_restored_in_one_line(
    world: World,
) -> None:
    world.set_up(f"{STAGED_OLD_CONFIG} && git stash -q")
    assert world.config_now() == world.config
    refused(world, "git stash pop -q --index && git restore .")


def test_replaced_objects_refuse_the_restore(world: World) -> None:
    # git, run as the agent runs it, would read `before` wherever HEAD is named
    world.repo.git("replace", world.repo.head(), "before")
    reason = refused(world, "git checkout HEAD -- .")
    assert "refs/replace/" in reason


def test_a_converting_attribute_refuses_the_restore(world: World) -> None:
    world.repo.write(".gitattributes", ".pre-commit-config.yaml filter=anything\n")
    reason = refused(world, "git restore .")
    assert "filter=anything" in reason


def test_a_ledger_behind_a_link_refuses_the_restore(world: World) -> None:
    ledger = world.repo.path / "ledger"
    ledger.rename(world.repo.path / "elsewhere")
    ledger.symlink_to("elsewhere")
    reason = refused(world, "git restore .")
    assert "the ledger (ledger/)" in reason


def test_a_staged_event_may_stay_but_not_be_removed(world: World) -> None:
    world.repo.git("add", str(world.fresh))
    reason = refused(world, "git restore --source=HEAD .")
    assert "it would be removed" in reason and world.fresh.name in reason
    world.let_through("git restore .")  # the index holds it as the work tree does
    assert world.fresh.is_file()


def test_line_endings_converted_on_checkout_let_the_restore_through(world: World) -> None:
    # core.autocrlf writes CRLF: the same configuration, as git add would store it
    world.repo.git("config", "core.autocrlf", "true")
    (world.repo.path / ".pre-commit-config.yaml").unlink()
    world.repo.git("checkout", "--", ".pre-commit-config.yaml")
    assert b"\r\n" in (world.repo.path / ".pre-commit-config.yaml").read_bytes()
    world.let_through("git restore .")
    assert world.fresh.is_file()
    world.push_is_still_refused()
