"""Verifier checkouts kept between runs, moved by git and proven equal to the commit each time.

Every tamper below is one a verifier can leave behind. After it, the next
checkout of a commit must hold exactly what git's own listing of that commit
says, compared entry by entry (kind, mode, bytes, link target) with nothing
else present: the proof is judged by an oracle that shares no code with it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from failgate_hooks.git.repo import GitRepo
from failgate_hooks.verify.checkout import Checkouts
from failgate_hooks.verify.pool import MAX_SLOTS, Pool, Slot
from failgate_hooks.verify.scrub import folder_mode
from tests.conftest import Repo, git, make_immutable, make_repo

UMASK = 0o777 & ~folder_mode()
FILE_MODE = 0o666 & ~UMASK
EXEC_MODE = 0o777 & ~UMASK

Entry = tuple[object, ...]


# --------------------------------------------------------------------------- the oracle


def expected(repo: Path, commit: str) -> dict[str, Entry]:
    """What a checkout of `commit` holds, from `ls-tree` and `cat-file` alone."""
    out = subprocess.run(
        ["git", "ls-tree", "-r", "-z", "--full-tree", commit],
        cwd=repo, capture_output=True, check=True,
    ).stdout  # fmt: skip
    want: dict[str, Entry] = {}
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, raw_path = record.partition(b"\t")
        mode, _, oid = meta.decode().split(" ")
        path = raw_path.decode("utf-8", "surrogateescape")
        parts = path.split("/")
        for depth in range(1, len(parts)):
            want["/".join(parts[:depth])] = ("dir", folder_mode())
        if mode == "160000":
            want[path] = ("dir", folder_mode())  # a submodule: an empty folder
            continue
        data = subprocess.run(
            ["git", "cat-file", "blob", oid], cwd=repo, capture_output=True, check=True
        ).stdout
        if mode == "120000":
            want[path] = ("link", data)
        else:
            want[path] = ("file", EXEC_MODE if mode == "100755" else FILE_MODE, data)
    return want


def listing(root: Path) -> dict[str, Entry]:
    """Everything under `root`, never following a link."""
    found: dict[str, Entry] = {}
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            full = os.path.join(folder, name)
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            st = os.lstat(full)
            mode = stat.S_IMODE(st.st_mode)
            if stat.S_ISLNK(st.st_mode):
                found[rel] = ("link", os.fsencode(os.readlink(full)))
            elif stat.S_ISDIR(st.st_mode):
                found[rel] = ("dir", mode)
            elif stat.S_ISREG(st.st_mode):
                found[rel] = ("file", mode, Path(full).read_bytes())
            else:
                found[rel] = ("other", stat.S_IFMT(st.st_mode))
    return found


def assert_holds(root: str | Path, repo: Path, commit: str) -> None:
    assert stat.S_IMODE(os.lstat(root).st_mode) == folder_mode()
    got, want = listing(Path(root)), expected(repo, commit)
    assert {k: v for k, v in got.items() if want.get(k) != v} == {}
    assert sorted(set(want) - set(got)) == []


# --------------------------------------------------------------------------- the world


@dataclass
class World:
    repo: Repo
    first: str  # the commit every tamper is done to
    second: str  # a later commit: some paths changed, the tampered ones mostly not
    outside: Path  # a folder outside every checkout, for links and moved folders

    @contextlib.contextmanager
    def checkouts(self) -> Iterator[Checkouts]:
        with GitRepo.open(self.repo.path) as grepo, Checkouts(grepo) as checkouts:
            yield checkouts


def add_gitlink(repo: Repo, path: str, target: str) -> None:
    """A submodule entry at `path` (no .gitmodules needed), committed as git would check it out."""
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{target},{path}")
    (repo.path / path).mkdir(parents=True, exist_ok=True)


def commit_index(repo: Repo, message: str) -> str:
    repo.git("commit", "-q", "-m", message)
    return repo.head()


def build_world(path: Path, object_format: str = "sha1") -> World:
    repo = make_repo(path / "repo", object_format)
    target = repo.head()
    repo.write("src/app.py", "print('app')\n")
    repo.write("src/lib/util.py", "UTIL = 1\n")
    repo.write("src/lib/deep/x.txt", "deep\n")
    repo.write("gone/only/leaf.txt", "dropped by the second commit\n")
    repo.write("text.txt", "one\ntwo\n")
    repo.write("run.sh", "#!/bin/sh\necho run\n")
    os.chmod(repo.path / "run.sh", 0o755)
    repo.write(".gitignore", "build/\n*.log\n")
    os.symlink("src/app.py", repo.path / "link-to-file")
    os.symlink("src/lib", repo.path / "link-to-dir")
    repo.git("add", "-A")
    add_gitlink(repo, "vendor/lib", target)
    first = commit_index(repo, "the first commit")
    repo.write("src/app.py", "print('app, second')\n")
    repo.write("src/new.py", "NEW = 2\n")
    (repo.path / "src/lib/deep/x.txt").unlink()
    shutil.rmtree(repo.path / "gone")
    repo.git("add", "-A", "src", "gone")
    add_gitlink(repo, "vendor/two", target)
    second = commit_index(repo, "the second commit")
    outside = path / "outside"
    (outside / "premade/sub/deeper").mkdir(parents=True)
    (outside / "premade/sub/deeper/file.txt").write_text("x\n")
    os.mkfifo(outside / "premade/sub/pipe")
    return World(repo, first, second, outside)


@pytest.fixture(params=["sha1", "sha256"])
def world(request: pytest.FixtureRequest, tmp_path: Path) -> World:
    return build_world(tmp_path, request.param)


def slot_git(root: Path, *args: str) -> None:
    """git on a slot's own index and private git dir, as failgate runs it."""
    slot = root.parent
    env = {
        **os.environ,
        "GIT_DIR": str(slot.parent / "git"),
        "GIT_INDEX_FILE": str(slot / "index"),
        "GIT_WORK_TREE": str(root),
    }
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


# --------------------------------------------------------------------------- tampers


def edit_keeping_size_and_mtime(root: Path, outside: Path) -> None:
    """An edit in the same second, its mtime set back: only ctime tells."""
    target = root / "src/app.py"
    before = target.stat()
    target.write_text("print('APP')\n")
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))


def chmod_file(root: Path, outside: Path) -> None:
    (root / "src/app.py").chmod(0o600)
    (root / "run.sh").chmod(FILE_MODE)
    (root / "text.txt").chmod(EXEC_MODE)


def file_swapped_for_a_symlink(root: Path, outside: Path) -> None:
    (outside / "fake.py").write_text("print('fake')\n")
    (root / "src/app.py").unlink()
    os.symlink(outside / "fake.py", root / "src/app.py")


def symlink_retargeted(root: Path, outside: Path) -> None:
    (root / "link-to-file").unlink()
    os.symlink("README", root / "link-to-file")


def symlink_turned_into_a_folder(root: Path, outside: Path) -> None:
    (root / "link-to-dir").unlink()
    (root / "link-to-dir").mkdir()
    (root / "link-to-dir/util.py").write_text("UTIL = 2\n")


def hard_link_written_through(root: Path, outside: Path) -> None:
    target = root / "src/app.py"
    before = target.stat()
    os.link(target, outside / "hard")
    (outside / "hard").write_text("print('HRD')\n")
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))


def file_replaced_by_a_hard_link(root: Path, outside: Path) -> None:
    target = root / "src/app.py"
    before = target.stat()
    (outside / "evil.py").write_text("print('bad')\n")
    target.unlink()
    os.link(outside / "evil.py", target)
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))


def deletions(root: Path, outside: Path) -> None:
    (root / "README").unlink()
    shutil.rmtree(root / "src/lib")
    (root / "link-to-file").unlink()


def file_turned_into_a_folder(root: Path, outside: Path) -> None:
    (root / "src/app.py").unlink()
    (root / "src/app.py").mkdir()
    (root / "src/app.py/inner.py").write_text("x\n")


def folder_turned_into_a_file(root: Path, outside: Path) -> None:
    shutil.rmtree(root / "src/lib")
    (root / "src/lib").write_text("not a folder\n")


def folder_replaced_by_a_symlink_to_itself_moved(root: Path, outside: Path) -> None:
    """The same inodes behind a link: git's lstat through it finds nothing changed."""
    shutil.move(root / "src/lib", outside / "lib")
    os.symlink(outside / "lib", root / "src/lib")


def crlf_rewritten(root: Path, outside: Path) -> None:
    (root / "text.txt").write_bytes(b"one\r\ntwo\r\n")


def untracked_and_ignored(root: Path, outside: Path) -> None:
    (root / "fix.txt").write_text("a fix that is not in the commit\n")
    (root / "newdir/deeper").mkdir(parents=True)
    (root / "newdir/deeper/inner.txt").write_text("x\n")
    (root / "emptydir").mkdir()
    (root / "build").mkdir()
    (root / "build/out.txt").write_text("built\n")
    (root / "src/debug.log").write_text("log\n")


def untracked_below_the_root(root: Path, outside: Path) -> None:
    """The root untouched: only the folders changed are cleaned, and what they leave empty."""
    (root / "src/lib/junk.txt").write_text("x\n")
    (root / "src/lib/newdir/deeper").mkdir(parents=True)
    (root / "src/lib/newdir/deeper/inner.txt").write_text("x\n")
    (root / "src/debug.log").write_text("ignored\n")
    (root / "src/lib/deep/junk.txt").write_text("in a folder the next commit drops\n")
    (root / "gone/only/junk.txt").write_text("in a folder chain the next commit drops\n")


def folder_moved_in_from_outside(root: Path, outside: Path) -> None:
    """Made before the checkout was, its subfolders keep their older times: new all the same."""
    shutil.move(outside / "premade", root / "src/lib/moved")


def folder_swapped_for_an_older_one(root: Path, outside: Path) -> None:
    """A folder the checkout holds, replaced by one made before it: same path, older times."""
    shutil.move(root / "src/lib", outside / "lib")
    shutil.move(outside / "premade", root / "src/lib")


def nested_repository(root: Path, outside: Path) -> None:
    nested = root / "src/lib/nested"
    nested.mkdir()
    git(nested, "init", "-q")
    (nested / "file.txt").write_text("x\n")
    git(nested, "add", "file.txt")
    git(nested, "commit", "-q", "-m", "nested")


def git_init_at_the_root(root: Path, outside: Path) -> None:
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "a verifier's own repository")
    (root / "src/app.py").write_text("print('committed over')\n")


def git_file_pointing_elsewhere(root: Path, outside: Path) -> None:
    (root / "src/.git").write_text(f"gitdir: {outside}\n")
    (root / ".GIT").mkdir()


def fifo(root: Path, outside: Path) -> None:
    os.mkfifo(root / "src/pipe")
    os.unlink(root / "text.txt")
    os.mkfifo(root / "text.txt")  # a FIFO where a tracked file was: git must never open it


def unix_socket(root: Path, outside: Path) -> None:
    here = os.getcwd()
    os.chdir(root / "src")  # a socket's path is limited to about 100 bytes: bind a short one
    try:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.bind("sock")
    finally:
        os.chdir(here)


def file_inside_a_submodule_folder(root: Path, outside: Path) -> None:
    (root / "vendor/lib/injected.py").write_text("x\n")
    (root / "vendor/lib/sub").mkdir()
    (root / "vendor/lib/sub/deeper.py").write_text("x\n")


def folders_set_to_555_and_000(root: Path, outside: Path) -> None:
    (root / "src/lib/deep").chmod(0o000)
    (root / "src/lib").chmod(0o555)
    (root / "src").chmod(0o555)


def skip_worktree_set_then_edited(root: Path, outside: Path) -> None:
    slot_git(root, "update-index", "--skip-worktree", "src/app.py")
    (root / "src/app.py").write_text("print('hidden edit')\n")


def index_lock_left_by_a_killed_run(root: Path, outside: Path) -> None:
    (root.parent / "index.lock").write_text("")
    (root / "src/app.py").write_text("print('and an edit')\n")


def checkout_folder_replaced_by_a_symlink(root: Path, outside: Path) -> None:
    shutil.move(root, outside / "moved")
    os.symlink(outside / "moved", root)


def checkout_folder_removed(root: Path, outside: Path) -> None:
    shutil.rmtree(root)


TAMPERS: list[Callable[[Path, Path], None]] = [
    edit_keeping_size_and_mtime,
    chmod_file,
    file_swapped_for_a_symlink,
    symlink_retargeted,
    symlink_turned_into_a_folder,
    hard_link_written_through,
    file_replaced_by_a_hard_link,
    deletions,
    file_turned_into_a_folder,
    folder_turned_into_a_file,
    folder_replaced_by_a_symlink_to_itself_moved,
    crlf_rewritten,
    untracked_and_ignored,
    untracked_below_the_root,
    folder_moved_in_from_outside,
    folder_swapped_for_an_older_one,
    nested_repository,
    git_init_at_the_root,
    git_file_pointing_elsewhere,
    fifo,
    unix_socket,
    file_inside_a_submodule_folder,
    folders_set_to_555_and_000,
    skip_worktree_set_then_edited,
    index_lock_left_by_a_killed_run,
    checkout_folder_replaced_by_a_symlink,
    checkout_folder_removed,
]


@pytest.fixture
def no_discard(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Checkouts the proof gave up on and threw away: a tamper must never need that."""
    discarded: list[str] = []
    keep = Pool.discard

    def record(self: Pool, slot: Slot, report: Callable[[str], None]) -> None:
        discarded.append(slot.path)
        keep(self, slot, report)

    monkeypatch.setattr(Pool, "discard", record)
    return discarded


@pytest.mark.parametrize("tamper", TAMPERS, ids=lambda t: t.__name__)
@pytest.mark.parametrize("then", ["same commit", "next commit"])
# Within the second git wrote the files, git re-reads their content ("racily
# clean"); a second later it trusts their stat data: two different checks.
@pytest.mark.parametrize("when", ["within the second", "a second later"])
def test_a_tampered_checkout_is_proven_back_to_the_commit(
    tmp_path: Path,
    no_discard: list[str],
    tamper: Callable[[Path, Path], None],
    then: str,
    when: str,
) -> None:
    world = build_world(tmp_path)
    target = world.first if then == "same commit" else world.second
    with world.checkouts() as checkouts:
        with checkouts.checkout(world.first, "ledger") as root:
            assert_holds(root, world.repo.path, world.first)
            time.sleep(1.1 if when == "a second later" else 0.01)
            tamper(Path(root), world.outside)
        with checkouts.checkout(target, "ledger") as again:
            assert again == root  # moved, not written elsewhere
            assert_holds(again, world.repo.path, target)
    assert no_discard == []


@pytest.mark.parametrize("tamper", [edit_keeping_size_and_mtime, git_init_at_the_root, fifo])
def test_a_tampered_sha256_checkout_is_proven_back_to_the_commit(
    tmp_path: Path, no_discard: list[str], tamper: Callable[[Path, Path], None]
) -> None:
    world = build_world(tmp_path, "sha256")
    assert len(world.first) == 64
    with world.checkouts() as checkouts:
        with checkouts.checkout(world.first, "ledger") as root:
            tamper(Path(root), world.outside)
        with checkouts.checkout(world.second, "ledger") as again:
            assert_holds(again, world.repo.path, world.second)
    assert no_discard == []


def test_a_clock_set_back_makes_the_next_run_look_at_everything(tmp_path: Path) -> None:
    """File times older than the last run's record: nothing can be taken as unchanged."""
    world = build_world(tmp_path)
    with world.checkouts() as checkouts:
        with checkouts.checkout(world.first, "ledger") as root:
            (Path(root) / "src/lib/junk.txt").write_text("x\n")
            time.sleep(0.2)  # the record is written after the change, as a clock set back makes it
            state = Path(root).parent / "state.json"
            recorded = json.loads(state.read_text())
            state.write_text(json.dumps({**recorded, "settled": time.time() + 3600.0}))
        with checkouts.checkout(world.first, "ledger") as again:
            assert_holds(again, world.repo.path, world.first)


@pytest.mark.parametrize("tamper", [folder_moved_in_from_outside, folder_swapped_for_an_older_one])
def test_a_folder_moved_in_is_looked_into_however_old_its_subfolders(
    tmp_path: Path, tamper: Callable[[Path, Path], None]
) -> None:
    world = build_world(tmp_path)
    time.sleep(1.1)  # the subfolders of the folder moved in are older than the checkout
    with world.checkouts() as checkouts:
        with checkouts.checkout(world.first, "ledger") as root:
            tamper(Path(root), world.outside)
        with checkouts.checkout(world.first, "ledger") as again:
            assert_holds(again, world.repo.path, world.first)


def test_the_walk_never_follows_a_link_out_of_the_checkout(world: World) -> None:
    victim = world.outside / "lib"
    with world.checkouts() as checkouts:
        with checkouts.checkout(world.first, "ledger") as root:
            folder_replaced_by_a_symlink_to_itself_moved(Path(root), world.outside)
            os.symlink(world.repo.path, Path(root) / "escape")
            os.symlink("..", Path(root) / "node_modules")
        with checkouts.checkout(world.first, "ledger"):
            pass
    assert sorted(p.name for p in victim.rglob("*")) == ["deep", "util.py", "x.txt"]
    assert (world.repo.path / ".git").is_dir()
    assert world.repo.git("status", "--porcelain") == ""


# --------------------------------------------------------------------------- moving


def writes(root: str) -> dict[str, tuple[int, int]]:
    """Each regular file's inode and ctime: a file git writes again gets a new pair."""
    found = {}
    for folder, _, files in os.walk(root):
        for name in files:
            st = os.lstat(os.path.join(folder, name))
            if stat.S_ISREG(st.st_mode):
                found[os.path.relpath(os.path.join(folder, name), root)] = (
                    st.st_ino,
                    st.st_ctime_ns,
                )
    return found


def test_moving_rewrites_only_what_the_commit_changed(world: World) -> None:
    with world.checkouts() as checkouts:
        with checkouts.checkout(world.first, "ledger") as root:
            time.sleep(1.1)  # past the racy second: every entry's stat data is trusted
            before = writes(root)
        with checkouts.checkout(world.second, "ledger") as root:
            after = writes(root)
    rewritten = sorted(p for p in before.keys() & after.keys() if before[p] != after[p])
    assert rewritten == ["src/app.py"]
    assert sorted(after.keys() - before.keys()) == ["src/new.py"]


def test_a_slot_whose_commit_lost_its_objects_still_moves(tmp_path: Path) -> None:
    """As after a rejected push: the quarantine that held the commit is gone."""
    world = build_world(tmp_path)
    repo = world.repo
    repo.write("src/app.py", "print('rejected')\n")
    add_gitlink(repo, "vendor/rejected", world.first)
    rejected = repo.commit("a commit that will vanish")
    with world.checkouts() as checkouts, checkouts.checkout(rejected, "ledger") as root:
        (Path(root) / "vendor/rejected/left.txt").write_text("x\n")
    repo.git("reset", "-q", "--hard", world.second)
    repo.git("reflog", "expire", "--expire=now", "--all")
    repo.git("gc", "-q", "--prune=now")
    assert repo.git("cat-file", "-t", rejected, check=False) == ""
    with world.checkouts() as checkouts, checkouts.checkout(world.second, "ledger") as again:
        assert again == root
        assert_holds(again, repo.path, world.second)


def test_a_checkout_moves_between_a_submodule_and_a_folder(tmp_path: Path) -> None:
    world = build_world(tmp_path)
    repo = world.repo
    repo.git("rm", "-q", "--cached", "vendor/lib")
    repo.write("vendor/lib/real.py", "REAL = 1\n")
    as_folder = repo.commit("the submodule becomes a folder")
    with world.checkouts() as checkouts:
        for commit in (world.first, as_folder, world.first, world.second):
            with checkouts.checkout(commit, "ledger") as root:
                assert_holds(root, repo.path, commit)
                (Path(root) / "vendor/lib/junk.txt").write_text("x\n")


# --------------------------------------------------------------------------- the pool


def test_concurrent_runs_take_separate_checkouts_and_the_pool_is_bounded(world: World) -> None:
    cache = os.environ["XDG_CACHE_HOME"]
    with GitRepo.open(world.repo.path) as grepo:
        with contextlib.ExitStack() as runs:
            roots = [
                runs.enter_context(
                    runs.enter_context(Checkouts(grepo)).checkout(world.first, "ledger")
                )
                for _ in range(MAX_SLOTS + 1)
            ]
            assert len(set(roots)) == len(roots)
            assert all(Path(r).is_relative_to(cache) for r in roots[:MAX_SLOTS])
            extra = roots[MAX_SLOTS]
            assert not Path(extra).is_relative_to(cache)  # beyond the bound: a temporary one
            for root in roots:
                assert_holds(root, world.repo.path, world.first)
        assert not os.path.exists(extra)
        with Checkouts(grepo) as again, again.checkout(world.first, "ledger") as root:
            assert root in roots[:MAX_SLOTS]


HOLD_A_CHECKOUT = """\
import sys, time
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.verify.checkout import Checkouts
with GitRepo.open(sys.argv[1]) as repo, Checkouts(repo) as checkouts:
    with checkouts.checkout(sys.argv[2], "ledger") as root:
        print(root, flush=True)
        time.sleep(600)
"""


def test_a_checkout_another_process_holds_is_never_taken_and_a_killed_run_frees_it(
    world: World, no_discard: list[str]
) -> None:
    argv = [sys.executable, "-c", HOLD_A_CHECKOUT, str(world.repo.path), world.first]
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        held = child.stdout.readline().strip()
        assert held, "the other process got no checkout"
        with world.checkouts() as checkouts, checkouts.checkout(world.first, "ledger") as root:
            assert root != held
            assert_holds(root, world.repo.path, world.first)
        # Killed mid-run, as a git killed mid-move leaves it: a stale index.lock, an edit.
        (Path(held).parent / "index.lock").write_text("")
        (Path(held) / "src/app.py").write_text("print('killed mid-run')\n")
        child.kill()
        child.wait()
        with (
            world.checkouts() as one,
            world.checkouts() as two,
            one.checkout(world.second, "ledger") as a,
            two.checkout(world.second, "ledger") as b,
        ):
            assert {a, b} == {held, root}  # both free again, neither written elsewhere
            assert_holds(a, world.repo.path, world.second)
            assert_holds(b, world.repo.path, world.second)
        assert no_discard == []  # proven back, not thrown away
    finally:
        child.kill()
        child.wait()


def test_idle_checkouts_are_pruned_and_deleting_the_pool_is_safe(world: World) -> None:
    with GitRepo.open(world.repo.path) as grepo:
        with (
            Checkouts(grepo) as one,
            Checkouts(grepo) as two,
            one.checkout(world.first, "ledger") as kept,
            two.checkout(world.second, "ledger") as idle,
        ):
            pass
        month_ago = time.time() - 30 * 86_400
        os.utime(Path(idle).parent / "state.json", (month_ago, month_ago))
        with Checkouts(grepo) as again, again.checkout(world.first, "ledger") as root:
            assert root == kept
        assert not os.path.exists(idle)
        shutil.rmtree(Path(kept).parents[1])  # the whole pool, as a person may at any time
        with Checkouts(grepo) as again, again.checkout(world.second, "ledger") as root:
            assert_holds(root, world.repo.path, world.second)


# --------------------------------------------------------------------------- git obeys failgate


EVIL_FILTER = "sh -c 'echo ran >> {marker}; tr a-z A-Z'"


def test_git_in_the_pool_obeys_failgate_not_the_users_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo")
    repo.write(
        ".gitattributes",
        "*.txt text eol=crlf ident\n"
        "*.bin filter=lfs diff=lfs merge=lfs -text\n"
        "*.enc filter=evil\n"
        "utf16.dat working-tree-encoding=UTF-16LE\n",
    )
    repo.write("lines.txt", "a\nb\n$Id$\n")
    repo.write(
        "asset.bin",
        "version https://git-lfs.github.com/spec/v1\noid sha256:" + "0" * 64 + "\nsize 3\n",
    )
    repo.write("secret.enc", "ciphertext\n")
    (repo.path / "utf16.dat").write_bytes("hello\n".encode("utf-16-le"))  # UTF-8 in the blob
    commit = repo.commit("attributes that would convert, filter and smudge")

    marker = tmp_path / "a-filter-or-hook-ran"
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for name in ("post-checkout", "post-index-change", "reference-transaction"):
        (hooks / name).write_text(f"#!/bin/sh\necho {name} >> {marker}\n")
        (hooks / name).chmod(0o755)
    user_config = tmp_path / "gitconfig"
    user_config.write_text(
        f'[filter "evil"]\n\tsmudge = {EVIL_FILTER.format(marker=marker)}\n\trequired = true\n'
        f'[filter "lfs"]\n\tsmudge = {EVIL_FILTER.format(marker=marker)}\n'
        f"\tprocess = {EVIL_FILTER.format(marker=marker)}\n\trequired = true\n"
        f"[core]\n\tautocrlf = true\n\teol = crlf\n\thooksPath = {hooks}\n"
        f"\tattributesFile = {tmp_path / 'attributes'}\n\tsparseCheckout = true\n"
        "\tfileMode = false\n\tsymlinks = false\n\ttrustctime = false\n"
        "[submodule]\n\trecurse = true\n"
    )
    (tmp_path / "attributes").write_text("* filter=evil\n")
    xdg = tmp_path / "xdg"
    (xdg / "git").mkdir(parents=True)
    (xdg / "git" / "attributes").write_text("* filter=evil\n")
    (xdg / "git" / "config").write_text(user_config.read_text())
    (repo.path / ".git" / "info" / "attributes").write_text("* filter=evil\n")
    shutil.copy(user_config, repo.path / ".git" / "config.user")
    repo.git("config", "include.path", "config.user")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(user_config))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    # What `git -c … push` passes to a hook, in both of git's forms.
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'core.autocrlf'='true'")
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "filter.evil.smudge")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", EVIL_FILTER.format(marker=marker))

    with GitRepo.open(repo.path) as grepo, Checkouts(grepo) as checkouts:
        for _ in range(2):  # written fresh, then moved
            with checkouts.checkout(commit, "ledger") as root:
                assert_holds(root, repo.path, commit)
                (Path(root) / "secret.enc").write_text("CIPHERTEXT\n")
    assert not marker.exists()


def test_submodule_recurse_leaves_the_users_submodule_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    library = make_repo(tmp_path / "library")
    repo = make_repo(tmp_path / "repo")
    repo.git(
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        str(library.path),
        "vendor/library",
    )
    commit = repo.commit("a real submodule")
    repo.git("config", "submodule.recurse", "true")
    user_config = tmp_path / "gitconfig"
    user_config.write_text("[submodule]\n\trecurse = true\n[protocol]\n\tallow = always\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(user_config))
    modules = repo.path / ".git" / "modules" / "vendor" / "library"
    before = {p: p.read_bytes() for p in modules.rglob("*") if p.is_file()}
    with GitRepo.open(repo.path) as grepo, Checkouts(grepo) as checkouts:
        with checkouts.checkout(commit, "ledger") as root:
            assert os.listdir(Path(root) / "vendor/library") == []
            (Path(root) / "vendor/library/README").write_text("written into the submodule\n")
        with checkouts.checkout(commit, "ledger") as root:
            assert_holds(root, repo.path, commit)
    assert {p: p.read_bytes() for p in modules.rglob("*") if p.is_file()} == before
    assert (repo.path / "vendor/library/README").read_text() == "a project\n"
    assert repo.git("status", "--porcelain") == ""


# --------------------------------------------------------------------------- what cannot be removed


def test_a_checkout_that_cannot_be_removed_is_reported_left_and_replaced(
    world: World, immutable_files: None
) -> None:
    with GitRepo.open(world.repo.path) as grepo, Checkouts(grepo) as co:
        with co.checkout(world.first, "ledger") as root:
            (Path(root) / "src/app.py").write_text("print('locked')\n")
            make_immutable(Path(root) / "src/app.py")
        with co.checkout(world.second, "ledger") as again:
            assert_holds(again, world.repo.path, world.second)
    (report,) = co.warnings
    left = list(Path(root).parents[1].glob("broken/*/tree/src/app.py"))
    assert len(left) == 1 and left[0].read_text() == "print('locked')\n"
    assert report.startswith(f"could not remove {left[0].parents[2]} (")
    assert "chattr -R -i" in report


def test_a_temporary_checkout_that_cannot_be_removed_is_reported_and_left(
    world: World, tmp_path: Path, immutable_files: None
) -> None:
    parent = tmp_path / "temporary"
    parent.mkdir()
    with (
        GitRepo.open(world.repo.path) as grepo,
        Checkouts(grepo, parent_dir=str(parent)) as checkouts,
    ):
        root = Path(checkouts.fresh(world.first, "ledger"))
        make_immutable(root / "README")
    (report,) = checkouts.warnings
    assert (root / "README").exists()
    assert report.startswith(f"could not remove {root.parents[1]} (")


def test_a_pool_that_cannot_be_kept_is_reported_and_temporary_checkouts_used(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("a file where the cache folder would be\n")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    with (
        GitRepo.open(world.repo.path) as grepo,
        Checkouts(grepo) as co,
        co.checkout(world.first, "ledger") as root,
    ):
        assert_holds(root, world.repo.path, world.first)
        assert not root.startswith(str(blocker))
    (report,) = co.warnings
    assert report.startswith(f"verifier checkouts cannot be kept in {blocker}")
    assert report.endswith("each run writes a fresh one")


# --------------------------------------------------------------------------- the ledger


def test_a_checkout_holds_the_commit_without_its_ledger_folder(world: World) -> None:
    """The content key leaves the ledger out, so the verifier is not given it: a commit
    that changes only the ledger is the same checkout, and nothing is written again."""
    repo = world.repo
    repo.git("switch", "-q", "--detach", world.second)
    repo.write("a/b/ledger/k/20260101T000000Z-00000000.toml", "schema = 1\n")
    repo.write("a/b/ledger/.budget.json", "{}\n")
    repo.write("a/b/kept.txt", "beside the ledger\n")
    with_ledger = repo.commit("a ledger, nested")
    repo.write("a/b/ledger/k/20260102T000000Z-00000001.toml", "schema = 1\n")
    another_event = repo.commit("another event")
    with world.checkouts() as checkouts:
        with checkouts.checkout(with_ledger, "a/b/ledger") as root:
            want = {
                path: entry
                for path, entry in expected(repo.path, with_ledger).items()
                if path != "a/b/ledger" and not path.startswith("a/b/ledger/")
            }
            assert listing(Path(root)) == want
            kept = os.lstat(Path(root) / "a/b/kept.txt")
        with checkouts.checkout(another_event, "a/b/ledger") as again:
            assert again == root
            assert not (Path(again) / "a/b/ledger").exists()
            assert os.lstat(Path(again) / "a/b/kept.txt").st_ino == kept.st_ino
        with checkouts.checkout(another_event, "ledger") as elsewhere:  # another name
            assert (Path(elsewhere) / "a/b/ledger/.budget.json").read_text() == "{}\n"


def test_a_ledger_under_a_folder_of_a_raw_mode_is_left_out_too(tmp_path: Path) -> None:
    """Git reads a tree entry of mode 40755 as the folder it is, and checks out what lies
    under it; verified_tree takes it for a file "where a folder of the path would be"
    and removes nothing, so the verifier is given a/ledger, which the docs, and the
    key's reason for leaving it out, say it never is."""
    from tests.worlds import with_raw_mode

    repo = make_repo(tmp_path / "repo")
    repo.write("a/ledger/k/20260101T000000Z-00000000.toml", "schema = 1\n")
    repo.write("a/kept.txt", "beside the ledger\n")
    repo.commit("a nested ledger")
    commit = with_raw_mode(repo, "a", "40755")
    with (
        GitRepo.open(repo.path) as grepo,
        Checkouts(grepo, parent_dir=str(tmp_path)) as checkouts,
        checkouts.checkout(commit, "a/ledger") as root,
    ):
        assert (Path(root) / "a/kept.txt").is_file()
        assert not (Path(root) / "a/ledger").exists()
