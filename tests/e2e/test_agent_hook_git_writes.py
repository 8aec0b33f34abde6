"""git's own commands that rewrite the files a push stands on, through the installed hook.

`git checkout REV -- PATH` and `git restore --source=REV PATH` of pre-commit's
configuration or the ledger, `git clean` and `git stash -u` of uncommitted
events, and the pushes of jj and Sapling, which run no git hook. What the hook
lets through is then run for real, and what matters is checked: the remote's
ref, the event file on disk.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Repo
from tests.e2e.test_agent_hook import PRE_COMMIT_FAILGATE, shell
from tests.worlds import KEY, budget_repo, record_failure, remote_ref, with_remote


def run_as_the_agent(repo: Repo, command: str) -> None:
    """What the agent would now run, as its shell tool runs it."""
    subprocess.run(["sh", "-c", command], cwd=repo.path, capture_output=True, check=False,
                   timeout=300)  # fmt: skip


@pytest.mark.parametrize(
    "command",
    [
        "git checkout before -- .pre-commit-config.yaml && git push origin main",
        "git restore -s before -SW .pre-commit-config.yaml && git push origin main",
        "git restore --source=before .pre-commit-config.yaml && git add -A && git push origin main",
    ],
)
def test_an_older_pre_commit_configuration_cannot_be_restored_on_the_way_to_a_push(
    tmp_path: Path, command: str
) -> None:
    repo = budget_repo(tmp_path / "work")
    repo.write(".pre-commit-config.yaml", "repos: []\n")
    repo.commit("pre-commit, before failgate")
    repo.git("tag", "before")
    remote = with_remote(repo, tmp_path / "remote.git")
    entry = Path(sys.executable).parent / "failgate-pre-push"
    repo.write(".pre-commit-config.yaml", PRE_COMMIT_FAILGATE.format(entry=entry))
    record_failure(repo, "push")
    subprocess.run([sys.executable, "-m", "pre_commit", "install", "-t", "pre-push"],
                   cwd=repo.path, check=True, capture_output=True)  # fmt: skip
    before = remote_ref(remote, "refs/heads/main")
    plain = subprocess.run(["git", "push", "origin", "main"], cwd=repo.path, check=False,
                           capture_output=True, timeout=300)  # fmt: skip
    assert plain.returncode != 0 and remote_ref(remote, "refs/heads/main") == before
    answer = shell(repo, "claude", command)
    verdict = answer.verdict("claude")
    if verdict.action == "run":
        run_as_the_agent(repo, command.replace("git push", "git push -q", 1))
    assert remote_ref(remote, "refs/heads/main") == before, answer
    assert "pre-commit" in verdict.reason and KEY in verdict.reason


def observed(repo: Repo, key: str) -> Path:
    return repo.path / repo.record(
        key, "--status", "observed", "--title", "testnet too", "--trigger", "push",
        "--note", "another budget",
    )  # fmt: skip


@pytest.fixture()
def events(tmp_path: Path) -> tuple[Repo, list[Path]]:
    """Two committed events, one commit apart, and a newer one recorded but not committed."""
    repo = budget_repo(tmp_path / "work")
    first = repo.path / record_failure(repo, "push")
    second = observed(repo, "deploy:testnet:gas-budget")
    repo.commit("record the testnet budget")
    fresh = observed(repo, "deploy:devnet:gas-budget")
    return repo, [first, second, fresh]


@pytest.mark.parametrize(
    "command",
    [
        "git clean -fdx ledger",
        "git clean -fdx",
        "git clean -fd ':!src'",
        "git stash -u -- ledger",
        "git stash -u",
        "git stash push --all",
        "git restore -s HEAD~1 ledger/",
        "git checkout --no-overlay HEAD~1 -- ledger",
        "git restore -s HEAD~1 ':/ledger'",
        "git restore -s HEAD~1 .",
    ],
)
def test_a_git_command_taking_events_away_is_refused(
    events: tuple[Repo, list[Path]], command: str
) -> None:
    repo, files = events
    answer = shell(repo, "claude", command)
    verdict = answer.verdict("claude")
    if verdict.action == "run":
        run_as_the_agent(repo, command)
    assert all(f.is_file() for f in files), answer
    assert "the ledger (ledger/)" in verdict.reason


@pytest.mark.parametrize(
    ("command", "place"),
    [
        ("git checkout HEAD~1 -- .claude/settings.json", "Claude Code"),
        ("git restore -s HEAD~1 .claude/settings.json", "Claude Code"),
        ("jj git push -b main", "jj git push, which runs no git hook"),
        ("sl push --to main", "sl push, which runs no git hook"),
    ],
)
def test_an_agents_config_rewritten_or_a_hookless_push_is_refused(
    events: tuple[Repo, list[Path]], command: str, place: str
) -> None:
    repo, _ = events
    repo.write(".claude/settings.json", "{}\n")
    repo.commit("Claude Code's settings, before its hooks")
    repo.write(".claude/settings.json", '{"hooks": {}}\n')
    repo.commit("Claude Code's settings, with its hooks")
    answer = shell(repo, "claude", command)
    verdict = answer.verdict("claude")
    assert verdict.action == "block", answer
    assert place in verdict.reason and KEY in verdict.reason


@pytest.mark.parametrize(
    "command",
    [
        "git checkout main",
        "git switch main",
        "git checkout -b feature",
        "git restore src/app.py",
        "git restore --staged ledger/",
        "git checkout HEAD -- src/app.py",
        "git restore .",  # from the index, which holds every event as the work tree does
        "git checkout -- .",
        "git checkout HEAD~1 -- ledger",  # overlays the older events, which are the same
        "git stash",
        "git stash -- src/app.py",
        "git clean -n",
        "git clean -fd build",
        "jj log",
        "sl log",
    ],
)
def test_their_neighbours_proceed_with_no_output(
    events: tuple[Repo, list[Path]], command: str
) -> None:
    repo, files = events
    answer = shell(repo, "claude", command)
    assert (answer.code, answer.out, answer.err) == (0, "", ""), answer
    run_as_the_agent(repo, command)
    assert all(f.is_file() for f in files), command  # none of them takes an event away
