"""Writes of git's index, through the installed hook, where pre-commit runs the gate.

At a push, pre-commit stashes the unstaged changes and writes what the index
holds into the work tree while it runs, and `--assume-unchanged` hides an
entry from its check for an unstaged configuration. So an older configuration
staged without failgate, then hidden, lets a plain `git push` through a held
gate: shown here without the hook, then refused through it. Each other way of
setting a protected index entry apart from the work tree is refused; the
everyday commands proceed, are run for real, and a plain `git push` after them
still meets the held gate (the remote's branch does not move).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from failgate_hooks.app import demo
from tests.e2e.test_agent_hook_git_writes import run_as_the_agent
from tests.e2e.test_agent_hook_restores import World, refused
from tests.worlds import remote_ref

STAGED_AND_HIDDEN = (
    "git reset -q before -- .pre-commit-config.yaml && "
    "git update-index --assume-unchanged .pre-commit-config.yaml"
)


@pytest.fixture()
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def test_without_the_hook_the_staged_old_config_lets_a_push_through(world: World) -> None:
    # the route itself, so that the refusal below is seen to matter
    run_as_the_agent(world.repo, STAGED_AND_HIDDEN)
    run_as_the_agent(world.repo, "git push -q origin main")
    assert remote_ref(world.remote, "refs/heads/main") != world.tip


def test_the_route_is_refused_and_the_push_after_it_meets_the_gate(world: World) -> None:
    reason = refused(world, STAGED_AND_HIDDEN)
    assert "it changes git's index for pre-commit's configuration" in reason
    assert ".pre-commit-config.yaml, of which `before` holds another version" in reason
    assert "git reset -q -- src/" in reason  # the way out


@pytest.mark.parametrize(
    "command",
    [
        "git update-index --assume-unchanged .pre-commit-config.yaml",
        "git update-index --cacheinfo 100644,{old},.pre-commit-config.yaml",
        "git reset before .pre-commit-config.yaml",
        "git reset -q before",
        "git read-tree before",
        "git restore --staged --source=before .pre-commit-config.yaml",
        "git rm -q --cached .pre-commit-config.yaml",
        "git add --chmod=+x .pre-commit-config.yaml",
        "git apply --cached old-config.patch",
        "git stash pop -q --index",
        "cd deploy && git reset -q before -- :/",
    ],
)
def test_each_write_of_a_protected_index_entry_is_refused(world: World, command: str) -> None:
    world.repo.git("diff", "HEAD", "before", "--output=old-config.patch")
    refused(world, command.format(old=world.old_config))


@pytest.mark.parametrize(
    "steps",
    [
        ["git add -A"],
        ["git add ."],
        ["git reset"],  # HEAD's protected files are the work tree's
        ["git add -A", "git reset -q"],  # an uncommitted event leaves the index, and stays
        ["git add -A", f"git reset -q HEAD -- {demo.BUDGET_PATH}"],
        ["git add -A", "git restore --staged deploy/"],
        ["git update-index --refresh"],
    ],
)
def test_the_everyday_index_commands_proceed_and_the_gate_still_holds(
    world: World, steps: list[str]
) -> None:
    for command in steps:  # each a tool call of its own
        world.let_through(command)
    assert world.fresh.is_file()
    world.push_is_still_refused()
