"""The worlds tests are set in: the case file's budget repository, a bare remote."""

from __future__ import annotations

from pathlib import Path

from failgate_hooks.app import demo
from tests.conftest import Repo, git, make_repo

KEY = demo.ENTITY


def budget_repo(path: Path, object_format: str = "sha1") -> Repo:
    """Six modules on a budget for two and a half, with the verifier committed."""
    repo = make_repo(path, object_format)
    repo.write(demo.CHECK_PATH, demo.CHECK_SCRIPT)
    repo.write(demo.BUDGET_PATH, demo.budget_json(demo.BROKEN_BUDGET))
    repo.commit("six modules on a budget for two and a half")
    return repo


def record_failure(repo: Repo, trigger: str = "deploy", *extra: str) -> str:
    """The observed event with its verifier, committed; returns the event's path."""
    path = repo.record(
        KEY, "--status", "observed", "--title", demo.TITLE, "--trigger", trigger,
        "--verify", f"python3 {demo.CHECK_PATH}", "--verify-file", demo.CHECK_PATH,
        "--note", "six modules, budget sized for two and a half", "--no-probe", *extra,
    )  # fmt: skip
    repo.commit("record the gas budget failure")
    return path


def fix_budget(repo: Repo) -> str:
    repo.write(demo.BUDGET_PATH, demo.budget_json(demo.FIXED_BUDGET))
    return repo.commit("size the budget for six modules")


def with_remote(repo: Repo, path: Path) -> Path:
    """A bare remote `origin` holding the repository's main as it is now."""
    object_format = repo.git("rev-parse", "--show-object-format")
    git(path.parent, "init", "-q", "--bare", "-b", "main", f"--object-format={object_format}",
        str(path))  # fmt: skip
    repo.git("remote", "add", "origin", str(path))
    repo.git("push", "-q", "--no-verify", "origin", "main")
    return path


def remote_ref(remote: Path, ref: str) -> str | None:
    """Where the remote's ref points, or None when it does not exist."""
    out = git(remote, "for-each-ref", "--format=%(objectname)", ref)
    return out or None


def verified_tree(path: Path, commit: str, ledger_dir: str = "ledger") -> str:
    """The tree a verifier checkout of `commit` holds: the commit's without its ledger."""
    from failgate_hooks.git.repo import GitRepo
    from failgate_hooks.verify.keys import verified_tree as tree_of

    with GitRepo.open(path) as grepo:
        return tree_of(grepo, commit, ledger_dir).tree
