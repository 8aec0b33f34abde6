"""worktree: uncommitted ledger files are found, and the folder walk is skipped only when safe."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from failgate_hooks import worktree
from failgate_hooks.git.repo import GitRepo
from tests.conftest import Repo

EVENT = "ledger/ops/risk/20261130T030000Z-00000001.toml"


def age(repo: Repo, seconds: int = 60) -> None:
    """Make every file and folder under the work tree older than the racy window."""
    then = time.time() - seconds
    for path, folders, names in os.walk(repo.path):
        if ".git" in Path(path).parts:
            continue
        for item in [path, *(os.path.join(path, n) for n in names)]:
            os.utime(item, (then, then))
        folders[:] = [f for f in folders if f != ".git"]


class Found:
    """What one look found, and which git commands it started."""

    def __init__(self, repo: Repo) -> None:
        self.started: list[tuple[str, ...]] = []
        with GitRepo.open(repo.path) as grepo:
            start = grepo.start

            def counting(*args: str):  # type: ignore[no-untyped-def]
                self.started.append(args)
                return start(*args)

            grepo.start = counting  # type: ignore[method-assign]
            # in this process, to see what it starts (start_uncommitted forks it)
            self.paths = worktree.start_here(grepo, "ledger")()

    @property
    def walked(self) -> bool:
        return any(args[0] == "ls-files" for args in self.started)


@pytest.fixture
def ledger(repo: Repo) -> Repo:
    repo.write(EVENT, "schema = 1\n")
    repo.commit("an event")
    age(repo)
    return repo


def test_a_clean_ledger_is_walked_once_then_trusted_by_folder_mtimes(ledger: Repo) -> None:
    first = Found(ledger)
    assert first.paths == [] and first.walked
    second = Found(ledger)
    assert second.paths == [] and not second.walked  # folders as they were: no walk


def test_a_new_file_after_the_state_was_kept_is_found(ledger: Repo) -> None:
    Found(ledger)
    new = "ledger/ops/risk/20261130T040000Z-00000002.toml"
    ledger.write(new, "schema = 1\n")
    found = Found(ledger)
    assert found.walked and found.paths == [new]


def test_a_new_entity_folder_is_found(ledger: Repo) -> None:
    Found(ledger)
    new = "ledger/ops/other/20261130T040000Z-00000003.toml"
    ledger.write(new, "schema = 1\n")
    assert Found(ledger).paths == [new]


def test_an_edit_in_place_is_found_without_a_walk(ledger: Repo) -> None:
    Found(ledger)
    (ledger.path / EVENT).write_text("schema = 2\n")
    found = Found(ledger)
    assert found.paths == [EVENT] and not found.walked


def test_an_ignore_file_that_changed_means_a_walk(ledger: Repo) -> None:
    (ledger.path / ".gitignore").write_text("*.tmp\n")
    ledger.commit("ignore")
    age(ledger)
    Found(ledger)
    ledger.write("ledger/ops/risk/x.tmp", "")
    os.utime(ledger.path / "ledger/ops/risk", (time.time() - 60,) * 2)  # hide the new entry
    (ledger.path / ".gitignore").write_text("*.log\n")
    found = Found(ledger)
    assert found.walked and found.paths == ["ledger/ops/risk/x.tmp"]


def test_a_folder_changed_just_before_the_walk_is_not_trusted(ledger: Repo) -> None:
    os.utime(ledger.path / "ledger/ops/risk")  # now: inside the racy window
    assert Found(ledger).walked
    assert Found(ledger).walked  # nothing was kept, so it walks again


@pytest.mark.parametrize("damage", ["garbage", "wrong types", "missing folder"])
def test_a_bad_state_file_means_a_walk(ledger: Repo, damage: str) -> None:
    Found(ledger)
    state = ledger.path / ".git" / "failgate" / worktree.STATE
    if damage == "garbage":
        state.write_text("{not json")
    elif damage == "wrong types":
        state.write_text('{"version": 1, "ledger": "ledger", "stamp": 3, "folders": []}')
    else:
        text = state.read_text().replace('"ops/risk"', '"ops/gone"')
        state.write_text(text)
    assert Found(ledger).walked


# --------------------------------------------------------------------------- found in review
# An ignored file that stops being ignored appears without any folder changing: each
# ignore file git reads for the ledger must be watched.

DRAFT = "ledger/ops/risk/20261130T050000Z-00000009.toml"


def unignore(repo: Repo, ignore_file: Path) -> None:
    """Ignore DRAFT through `ignore_file`, keep a state, then stop ignoring it."""
    ignore_file.parent.mkdir(parents=True, exist_ok=True)
    ignore_file.write_text("*-00000009.toml\n")
    repo.write(DRAFT, "schema = 1\n")
    age(repo)
    first = Found(repo)
    assert first.paths == [] and first.walked
    assert not Found(repo).walked  # the state is kept and trusted
    assert not Found(repo).walked  # and stays so while nothing changes
    ignore_file.write_text("# nothing ignored now\n")


def test_a_changed_exclude_file_is_watched(ledger: Repo) -> None:
    unignore(ledger, ledger.path / ".git" / "info" / "exclude")
    assert Found(ledger).paths == [DRAFT]


def test_a_changed_gitignore_above_the_ledger_is_watched(repo: Repo) -> None:
    (repo.path / "meta").mkdir()
    repo.write("meta/ledger/ops/risk/20261130T030000Z-00000001.toml", "schema = 1\n")
    repo.commit("an event below meta/")
    with GitRepo.open(repo.path) as grepo:
        ignore = repo.path / "meta" / ".gitignore"
        ignore.write_text("*-00000009.toml\n")
        draft = "meta/ledger/ops/risk/20261130T050000Z-00000009.toml"
        repo.write(draft, "schema = 1\n")
        age(repo)
        assert worktree.start_uncommitted(grepo, "meta/ledger")() == []
        ignore.write_text("# nothing ignored now\n")
        assert worktree.start_uncommitted(grepo, "meta/ledger")() == [draft]


def test_a_changed_core_excludes_file_is_watched(ledger: Repo, tmp_path: Path) -> None:
    excludes = tmp_path / "excludes"
    ledger.git("config", "core.excludesFile", str(excludes))
    unignore(ledger, excludes)
    assert Found(ledger).paths == [DRAFT]


def test_a_linked_work_tree_watches_the_shared_exclude_file(ledger: Repo, tmp_path: Path) -> None:
    linked = tmp_path / "linked"
    ledger.git("worktree", "add", "-q", str(linked))
    other = Repo(linked)
    unignore(other, ledger.path / ".git" / "info" / "exclude")
    assert Found(other).paths == [DRAFT]


def test_a_file_taken_out_of_the_index_is_found(ledger: Repo) -> None:
    Found(ledger)
    assert not Found(ledger).walked
    ledger.git("rm", "-q", "--cached", EVENT)  # the file stays: now untracked
    assert EVENT in Found(ledger).paths


def test_the_look_runs_beside_the_decision_and_finds_the_same(ledger: Repo) -> None:
    ledger.write("ledger/ops/risk/20261130T030000Z-00000002.toml", "schema = 1\n")
    with GitRepo.open(ledger.path) as grepo:
        here = worktree.start_here(grepo, "ledger")()
        parent = os.getpid()
        ran_in: list[int] = []
        original = worktree.start_here

        def noting(*args, **options):  # type: ignore[no-untyped-def]
            ran_in.append(os.getpid())  # the child's list is its own
            return original(*args, **options)

        worktree.start_here = noting  # type: ignore[assignment]
        try:
            beside = worktree.start_uncommitted(grepo, "ledger")()
        finally:
            worktree.start_here = original  # type: ignore[assignment]
        # the parent's cat-file still answers in step
        assert grepo.resolve_commit("HEAD") == ledger.head()
    assert beside == here == ["ledger/ops/risk/20261130T030000Z-00000002.toml"]
    assert ran_in == ([] if sys.platform == "linux" else [parent])


def test_a_look_whose_child_fails_is_made_here(
    ledger: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger.write("ledger/ops/risk/20261130T030000Z-00000002.toml", "schema = 1\n")
    parent = os.getpid()
    original = worktree.start_here

    def failing_in_the_child(*args, **options):  # type: ignore[no-untyped-def]
        if os.getpid() != parent:
            os._exit(3)
        return original(*args, **options)

    monkeypatch.setattr(worktree, "start_here", failing_in_the_child)
    with GitRepo.open(ledger.path) as grepo:
        found = worktree.start_uncommitted(grepo, "ledger")()
    assert found == ["ledger/ops/risk/20261130T030000Z-00000002.toml"]


def test_a_check_that_fails_after_starting_its_look_leaves_nothing_running(
    ledger: Repo, tmp_path: Path
) -> None:
    # a slow `git status` (a large work tree, a cold disk): the look is still under way
    # when check refuses a bad --range; it must end with check, and not hold its pipes
    shim = tmp_path / "bin"
    shim.mkdir()
    real = shutil.which("git")
    (shim / "git").write_text(
        f'#!/bin/sh\nfor a in "$@"; do [ "$a" = status ] && sleep 5; done\nexec {real} "$@"\n'
    )
    (shim / "git").chmod(0o755)
    env = {**os.environ, "PATH": f"{shim}{os.pathsep}{os.environ['PATH']}"}
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "failgate_hooks", "check", "--range", "nope"],
        cwd=ledger.path, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    took = time.monotonic() - started  # until its output pipes closed: every holder gone
    assert proc.returncode == 2, proc.stderr
    assert "--range" in proc.stderr
    assert took < 4, f"failgate's output stayed open {took:.1f} s"
    # nor is the look's `git status` left behind: it was stopped with its child
    running = subprocess.run(["pgrep", "-f", str(shim)], capture_output=True, text=True)
    assert running.stdout == "", running.stdout


def test_the_looks_child_keeps_its_parents_priority(
    ledger: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A lowered priority cannot be raised again: on a machine busy with other work a
    # look at nice 19 waited seconds for a core. It waits for its parent instead.
    parent = os.getpid()

    def niceness(*args, **options):  # type: ignore[no-untyped-def]
        return lambda: [f"{os.getpid() != parent} {os.getpriority(os.PRIO_PROCESS, 0)}"]

    monkeypatch.setattr(worktree, "start_here", niceness)
    with GitRepo.open(ledger.path) as grepo, worktree.start_uncommitted(grepo, "ledger") as look:
        found = look()
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    assert found == [f"{sys.platform == 'linux'} {mine}"]
