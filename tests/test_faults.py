"""Faults: each ends in a clear message, never a traceback,
and fails closed wherever a decision is at stake. And two `check`s at once."""

from __future__ import annotations

import datetime as dt
import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from failgate_hooks.core.errors import LedgerError
from failgate_hooks.core.events import Event, Status, Verification, entity_folder
from failgate_hooks.core.gates import VerifierOutcome
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.ledger.config import MAX_EVENT_BYTES
from failgate_hooks.ledger.union import Revision, read_union
from failgate_hooks.ledger.worktree import write_event_file
from failgate_hooks.verify import passcache
from failgate_hooks.verify.checkout import Checkouts
from failgate_hooks.verify.run import run_gate_verifier
from tests.conftest import Repo, git, make_repo
from tests.worlds import KEY, budget_repo, fix_budget, record_failure, with_remote

PYTHON = sys.executable


def no_traceback(result: object) -> None:
    assert "Traceback" not in str(result), result


def record_verifier(
    repo: Repo, key: str, script: str, body: str, *argv: str, timeout: int = 60
) -> str:
    """An entity whose verifier is `python3 <script> <argv>`, committed and trusted."""
    repo.write(script, body)
    repo.commit(f"the verifier {script}")
    path = repo.record(
        key, "--status", "observed", "--title", f"risk {key}", "--trigger", "push",
        "--verify", " ".join(["python3", script, *argv]), "--verify-file", script,
        "--timeout", str(timeout), "--no-probe",
    )  # fmt: skip
    repo.commit(f"record {key}")
    return path


# --------------------------------------------------------------------------- timeouts


def _group_members(pgid: int) -> list[tuple[int, str]]:
    """(pid, state) of every process in group `pgid`, read from /proc."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                stat = handle.read()
        except OSError:
            continue
        # the command may hold spaces and parentheses: fields start after the last ")"
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[2]) == pgid:
            members.append((int(entry), fields[0]))
    return members


LINGERER = """\
import os, signal, subprocess, sys, time
# a grandchild that ignores SIGTERM and would outlive its parent
child = subprocess.Popen([sys.executable, "-c",
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(300)"])
with open(sys.argv[1], "w") as handle:
    handle.write(f"{os.getpgid(0)} {child.pid}")
if sys.argv[2] == "hang":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    time.sleep(300)
sys.exit(1)
"""


@pytest.mark.parametrize("how", ["hang", "exit"])
def test_a_verifier_leaves_no_process_behind(tmp_path: Path, how: str) -> None:
    """A timed-out verifier, and one that exits leaving a grandchild: the group is gone."""
    repo = make_repo(tmp_path / "repo")
    pidfile = tmp_path / "pids"
    record_verifier(repo, "ops:slow", "checks/slow.py", LINGERER, str(pidfile), how, timeout=2)
    started = time.monotonic()
    result = repo.failgate("check", "--ref", "refs/heads/main")
    took = time.monotonic() - started
    no_traceback(result)
    assert result.code == 1, result
    if how == "hang":
        assert "timeout" in result.out and "process group was killed" in result.out
    assert took < 30
    pgid, child = (int(x) for x in pidfile.read_text().split())
    # A killed orphan may linger as a zombie until PID 1 reaps it: it runs nothing.
    assert [state for _, state in _group_members(pgid) if state != "Z"] == []
    assert all(pid != child or state == "Z" for pid, state in _group_members(pgid))


# --------------------------------------------------------------------------- interrupted writes

TMP_NAME = ".20261129T230500Z-0badf00d.4242.tmp"


def test_a_leftover_temp_file_of_a_killed_record_is_ignored_by_every_reader(repo: Repo) -> None:
    first = repo.record(KEY, "--status", "observed", "--title", "t", "--trigger", "push")
    repo.commit("first")
    folder = (repo.path / first).parent
    # what a record killed between its write and its link leaves: a dot-file, half written
    (folder / TMP_NAME).write_text('schema = 1\nid = "20261129T230500Z-0badf00d"\nentity_key = "')
    second = repo.record(KEY, "--status", "diagnosed")
    assert "0badf00d" not in (repo.path / second).read_text()  # never followed
    repo.git("add", "-A")
    repo.commit("someone committed everything, the dot-file too")
    fsck = repo.failgate("fsck")
    assert fsck.code == 0, fsck
    assert "2 event(s), 1 entity(ies)" in fsck.out
    check = repo.failgate("check", "--ref", "refs/heads/topic")
    assert check.code == 0 and "INVALID" not in check.out, check
    with GitRepo.open(repo.path) as git_repo:
        ledger = read_union(git_repo, [Revision("HEAD", repo.head())], "ledger", MAX_EVENT_BYTES)
    assert not any(TMP_NAME in path for path in ledger.files)


def test_check_does_not_count_a_leftover_temp_file_as_an_uncommitted_event(repo: Repo) -> None:
    """Needs the fix in checking.py (its warnings skip dot-files)."""
    repo.record(KEY, "--status", "observed", "--title", "t", "--trigger", "push")
    repo.commit("first")
    folder = repo.path / "ledger/deploy/mainnet/gas-budget"
    (folder / TMP_NAME).write_text("half an event")
    check = repo.failgate("check", "--ref", "refs/heads/topic")
    assert "not committed" not in check.err, check


def test_check_says_which_ledger_file_it_did_not_read_because_it_is_not_committed(
    repo: Repo,
) -> None:
    # The look at the work tree runs while check decides; its answer must still arrive.
    repo.record(KEY, "--status", "observed", "--title", "t", "--trigger", "push")
    repo.commit("first")
    path = repo.record(KEY, "--status", "expired")
    check = repo.failgate("check", "--ref", "refs/heads/topic")
    assert "1 ledger file(s) in the work tree are not committed" in check.err, check
    assert path in check.err
    assert check.code == 0  # a warning: the committed gate is open on a topic branch


KILLED_RECORD = """\
import os, sys, time
ready = sys.argv[1]
def link_then_hang(*args, **kw):
    open(ready, "w").close()
    time.sleep(300)  # SIGKILLed here: after the bytes were written, before the link
os.link = link_then_hang
from failgate_hooks.commands.cli import main
main(["record", "deploy:mainnet:gas-budget", "--status", "observed", "--title", "t",
      "--trigger", "push", "--note", "killed mid-write"])
"""


def test_a_record_killed_mid_write_leaves_nothing_git_add_commits_and_the_next_one_lands(
    repo: Repo,
) -> None:
    """kill -9 between the temporary's write and its link: the temporary is in
    .git/failgate/writing/, so `git add ledger/` stages nothing of it."""
    ready = repo.path.parent / "ready"
    proc = subprocess.Popen([PYTHON, "-c", KILLED_RECORD, str(ready)], cwd=repo.path)
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert proc.poll() is None and time.monotonic() < deadline, "record never wrote"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    folder = repo.path / "ledger/deploy/mainnet/gas-budget"
    assert list(folder.iterdir()) == []
    left = list((repo.path / ".git/failgate/writing").iterdir())
    assert len(left) == 1 and "killed mid-write" in left[0].read_text(), left
    repo.git("add", "ledger/")
    assert repo.git("status", "--porcelain", "--untracked-files=all") == ""
    path = repo.record(KEY, "--status", "observed", "--title", "t", "--trigger", "push")
    assert "killed mid-write" not in (repo.path / path).read_text()
    repo.git("add", "ledger/")
    assert repo.git("diff", "--cached", "--name-only") == path
    repo.commit("the event alone")
    assert repo.failgate("fsck").code == 0


def test_where_no_link_reaches_the_work_tree_the_temporary_is_a_dot_file_there(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A git directory on another file system or mount (EXDEV): the event is written
    through a dot-file in its own folder, as before, and no temporary is left."""
    elsewhere = tmp_path / "git-dir-on-another-mount"
    real_link = os.link
    linked_from = []

    def link(source: str, target: str) -> None:
        linked_from.append(Path(source).parent)
        if Path(source).parent == elsewhere:
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        real_link(source, target)

    monkeypatch.setattr(os, "link", link)
    event = Event(
        id="20261129T230500Z-00000002", entity_key=KEY, status=Status.OBSERVED,
        effective_at=dt.datetime(2026, 11, 29, tzinfo=dt.UTC),
        title="t", triggers=("push",),
    )  # fmt: skip
    final = Path(write_event_file(str(repo.path), "ledger", event, str(elsewhere)))
    assert linked_from == [elsewhere, final.parent]
    assert 'id = "20261129T230500Z-00000002"' in final.read_text()
    assert sorted(p.name for p in final.parent.iterdir()) == [final.name]
    assert list(elsewhere.iterdir()) == []


def test_an_event_file_is_never_overwritten(repo: Repo) -> None:
    event = Event(
        id="20261129T230500Z-00000001", entity_key=KEY, status=Status.OBSERVED,
        effective_at=dt.datetime(2026, 11, 29, tzinfo=dt.UTC),
        title="t", triggers=("push",),
    )  # fmt: skip
    final = Path(write_event_file(str(repo.path), "ledger", event))
    final.write_bytes(b"the bytes already there")
    with pytest.raises(LedgerError, match="never overwritten"):
        write_event_file(str(repo.path), "ledger", event)
    assert final.read_bytes() == b"the bytes already there"
    assert sorted(p.name for p in final.parent.iterdir()) == [final.name]  # no temp left


# --------------------------------------------------------------------------- the pass cache

PASSES = "import sys\nprint('fine')\nsys.exit(0)\n"


def test_a_cache_folder_that_cannot_be_made_degrades_to_running_the_verifier(
    repo: Repo,
) -> None:
    """Root ignores permissions, so a file stands where the cache folder should be."""
    record_verifier(repo, "ops:ok", "checks/ok.py", PASSES)
    common = Path(repo.git("rev-parse", "--git-common-dir"))
    common = common if common.is_absolute() else repo.path / common
    (common / "failgate" / "cache").write_text("not a folder")
    for _ in range(2):
        result = repo.failgate("check", "--ref", "refs/heads/main", "--json")
        no_traceback(result)
        assert result.code == 0, result
        (gate,) = json.loads(result.out)["gates"]
        assert gate["state"] == "cleared" and gate["verifier"]["cached"] is False
        assert "pass cache could not be used" in gate["verifier"]["detail"]
        assert "running verifier for ops:ok" in result.err  # it ran, both times


def test_a_full_disk_under_the_cache_degrades_to_running_the_verifier(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(path: str, data: bytes, *, durable: bool) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(passcache, "write_atomically", full)
    repo.write("checks/ok.py", PASSES)
    commit = repo.commit("a passing verifier")
    check = Verification(command=("python3", "checks/ok.py"), files=("checks/ok.py",))
    with GitRepo.open(repo.path) as git_repo, Checkouts(git_repo) as checkouts:
        result = run_gate_verifier(
            git_repo, entity_key="ops:ok", verification=check, commit=commit,
            pinned_from=None, ledger_dir="ledger", environment=None,
            checkouts=lambda: checkouts, trust_ledger=True,
        )  # fmt: skip
    assert result.outcome is VerifierOutcome.PASSED
    assert "No space left on device" in result.detail and "could not be used" in result.detail


# --------------------------------------------------------------------------- git itself


def _path_without_git(tmp_path: Path) -> str:
    """A PATH with python3 on it and no git."""
    bin_dir = tmp_path / "bin-without-git"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(PYTHON)
    return str(bin_dir)


def test_git_missing_from_path_is_a_clear_integrity_error_for_check_and_the_hook(
    tmp_path: Path,
) -> None:
    """Needs the fix in gitio.py (`GitRepo.open` says git is missing in one line)."""
    repo = budget_repo(tmp_path / "work")
    record_failure(repo, "push")
    env = {"PATH": _path_without_git(tmp_path)}
    check = repo.failgate("check", "--ref", "refs/heads/main", env=env)
    no_traceback(check)
    assert check.code == 4, check
    stdin = f"refs/heads/main {repo.head()} refs/heads/main {'0' * 40}\n"
    call = "from failgate_hooks.commands.cli import pre_push_main; pre_push_main(['origin', 'x'])"
    hook = subprocess.run(
        [PYTHON, "-c", call], cwd=repo.path, input=stdin, capture_output=True, text=True,
        env={**os.environ, **env}, check=False, timeout=120,
    )  # fmt: skip
    assert hook.returncode == 4, hook.stderr
    assert "push refused" in hook.stderr and "Traceback" not in hook.stderr
    for output in (check.err, hook.stderr):
        assert "git is not installed or not on PATH" in output, output
        assert len(output.splitlines()) <= 4, output


def test_an_interrupted_hook_refuses_the_push_with_the_shells_interrupt_code() -> None:
    call = (
        "from failgate_hooks.commands import hooks\n"
        "def interrupted():\n"
        "    raise KeyboardInterrupt\n"
        "hooks._hook_exit('failgate-pre-push', interrupted)\n"
    )
    hook = subprocess.run(
        [PYTHON, "-c", call], capture_output=True, text=True, check=False, timeout=120
    )
    assert hook.returncode == 130, hook.stderr
    assert hook.stderr == "failgate-pre-push: interrupted: push refused.\n"


def _loose_object(repo: Repo, oid: str) -> Path:
    return repo.path / ".git" / "objects" / oid[:2] / oid[2:]


def test_a_corrupt_event_object_is_an_integrity_error_naming_the_file(repo: Repo) -> None:
    """Needs the fix in ledger.py (`_add_entry` names the path when a blob cannot be read)."""
    path = repo.record(KEY, "--status", "observed", "--title", "t", "--trigger", "push")
    repo.commit("the event")
    oid = repo.git("rev-parse", f"HEAD:{path}")
    _loose_object(repo, oid).unlink()
    for args in (("fsck",), ("check", "--ref", "refs/heads/main")):
        result = repo.failgate(*args)
        no_traceback(result)
        assert result.code == 4, result
        assert path in result.err, result


def test_a_corrupt_object_is_an_integrity_error_for_check_and_fsck(repo: Repo) -> None:
    """Whatever the message names, a missing object never lets `check` pass."""
    path = repo.record(KEY, "--status", "observed", "--title", "t", "--trigger", "push")
    repo.commit("the event")
    _loose_object(repo, repo.git("rev-parse", f"HEAD:{path}")).unlink()
    for args in (("fsck",), ("check", "--ref", "refs/heads/topic")):
        result = repo.failgate(*args)
        no_traceback(result)
        assert result.code == 4, result
        assert "missing from the object database" in result.err


def _shallow_clone(tmp_path: Path, origin: Repo) -> Repo:
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{origin.path}", str(clone))
    return Repo(clone)


def test_a_shallow_clone_asks_for_full_history_for_a_range(tmp_path: Path) -> None:
    origin = budget_repo(tmp_path / "origin")
    record_failure(origin, "push")
    first = origin.git("rev-list", "--max-parents=0", "HEAD")
    clone = _shallow_clone(tmp_path, origin)
    for args in (("fsck", "--range", "HEAD~1..HEAD"), ("check", "--range", f"{first}..HEAD")):
        result = clone.failgate(*args)
        no_traceback(result)
        assert result.code == 4, result
        assert "fetch" in result.err and "history" in result.err, result


def test_a_shallow_clone_asks_for_full_history_for_a_since_decision(tmp_path: Path) -> None:
    """`since` names a commit beyond the shallow boundary: the answer needs history.

    Needs the fix in evaluate.py (`GitFacts.since_relation` in a shallow repository)."""
    origin = budget_repo(tmp_path / "origin")
    root = origin.git("rev-list", "--max-parents=0", "HEAD")
    record_failure(origin, "push", "--since", root)
    clone = _shallow_clone(tmp_path, origin)
    result = clone.failgate("check", "--ref", "refs/heads/main", "--trust-ledger")
    no_traceback(result)
    assert result.code == 4, result
    assert "shallow" in result.err and "fetch" in result.err, result


def test_check_works_on_a_detached_head(tmp_path: Path) -> None:
    repo = budget_repo(tmp_path / "work")
    record_failure(repo, "push")
    repo.git("checkout", "-q", "--detach")
    held = repo.failgate("check", "--ref", "refs/heads/main", "--trust-ledger")
    assert held.code == 1 and "OPEN deploy:mainnet:gas-budget" in held.out, held
    fix_budget(repo)
    assert repo.git("symbolic-ref", "-q", "HEAD", check=False) == ""
    cleared = repo.failgate("check", "--ref", "refs/heads/main", "--trust-ledger")
    assert cleared.code == 0 and "CLEARED" in cleared.out, cleared


def test_install_writes_into_core_hooks_path_and_git_runs_it(tmp_path: Path) -> None:
    repo = budget_repo(tmp_path / "work")
    remote = with_remote(repo, tmp_path / "remote.git")
    record_failure(repo, "push")
    repo.git("config", "core.hooksPath", ".githooks")
    installed = repo.failgate("install")
    assert installed.code == 0, installed
    hook = repo.path / ".githooks" / "pre-push"
    assert hook.is_file() and str(hook) in installed.out
    assert not (repo.path / ".git" / "hooks" / "pre-push").exists()
    before = git(remote, "rev-parse", "main")
    refused = subprocess.run(
        ["git", "push", "origin", "main"], cwd=repo.path, capture_output=True, text=True,
        check=False, timeout=120,
    )  # fmt: skip
    assert refused.returncode != 0 and "BLOCKED" in refused.stderr, refused.stderr
    assert git(remote, "rev-parse", "main") == before
    assert "removed" in repo.failgate("uninstall").out
    assert not hook.exists()


# --------------------------------------------------------------------------- concurrency

WATCHER = """\
import os, sys, time
common = sys.argv[1]
# The test says when the concurrent `trust --yes` is done: its own brief lock on the
# trust store is not one of the check's, and seeing it made this test fail now and then.
deadline = time.monotonic() + 60
while not os.path.exists(sys.argv[3]) and time.monotonic() < deadline:
    time.sleep(0.02)
# While this verifier runs, no failgate lock may be held: a run can take minutes.
locks = [name for base, _, names in os.walk(os.path.join(common, "failgate"))
         for name in names if name.endswith(".lock")]
with open(sys.argv[2], "a") as handle:
    handle.write(f"{os.getpid()} {time.time()} locks={locks}\\n")
time.sleep(2.5)
sys.exit(0)
"""


def test_two_checks_at_once_share_cache_and_trust_store_without_corruption(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo")
    common = str(repo.path / ".git")
    log = tmp_path / "runs"
    go = tmp_path / "trust-is-done"
    record_verifier(repo, "ops:watch", "checks/watch.py", WATCHER, common, str(log), str(go))
    # a second verifier, still untrusted, approved while the checks run
    repo.write("checks/other.py", PASSES)
    repo.commit("another verifier")
    other = repo.record(
        "ops:other", "--status", "observed", "--title", "t", "--trigger", "deploy",
        "--verify", "python3 checks/other.py", "--verify-file", "checks/other.py", "--no-probe",
    )  # fmt: skip
    repo.commit("record ops:other", other)
    store = Path(common) / "failgate" / "trust.json"
    before = json.loads(store.read_text())
    store.write_text(json.dumps({**before, "verifiers": before["verifiers"][:1]}))

    def start(*args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [PYTHON, "-m", "failgate_hooks", *args], cwd=repo.path, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True,
        )  # fmt: skip

    procs = [start("check", "--ref", "refs/heads/main", "--no-cache") for _ in range(2)]
    time.sleep(0.5)
    procs.append(start("trust", "--yes"))
    trusted = procs[-1].communicate(timeout=120)
    go.touch()
    outputs = [proc.communicate(timeout=120) for proc in procs[:-1]] + [trusted]
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, (out, err)
        assert "Traceback" not in out + err
    runs = log.read_text().splitlines()
    assert len(runs) == 2 and all(line.endswith("locks=[]") for line in runs), runs
    # two 2.5 s verifiers in parallel, not one after the other behind a lock: the second
    # began while the first was still running (judged by the runs, not by a clock limit
    # that a busy machine broke)
    first, second = sorted(float(line.split()[1]) for line in runs)
    assert second - first < 2.5, runs

    approved = json.loads(store.read_text())
    assert len(approved["verifiers"]) == 2  # the approval made during the checks landed
    cache = Path(common) / "failgate" / "cache"
    entries = list(cache.iterdir())
    assert len(entries) == 1 and json.loads(entries[0].read_text())["commit"] == repo.head()
    leftovers = [
        p.name for p in (Path(common) / "failgate").rglob("*") if p.suffix in (".tmp", ".lock")
    ]
    assert leftovers == []
    # and the cache now answers for both, concurrently, without running the verifier
    again = [start("check", "--ref", "refs/heads/main", "--json") for _ in range(2)]
    for proc in again:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, (out, err)
        (gate,) = [g for g in json.loads(out)["gates"] if g["entity_key"] == "ops:watch"]
        assert gate["state"] == "cleared" and gate["verifier"]["cached"] is True
    assert len(log.read_text().splitlines()) == 2


def test_check_tells_an_edited_committed_event_from_a_new_one(repo: Repo) -> None:
    # committing an edit would be refused as an append-only violation: no "commit them"
    first = repo.record(KEY, "--status", "observed", "--title", "t", "--trigger", "push")
    repo.commit("first")
    with open(repo.path / first, "a") as handle:
        handle.write("# edited in place\n")
    check = repo.failgate("check", "--ref", "refs/heads/topic")
    assert "1 committed ledger file(s) are changed or deleted in the work tree" in check.err
    assert "append-only" in check.err and first in check.err
    assert "commit them for them to count" not in check.err, check
    new = repo.record(KEY, "--status", "expired")
    check = repo.failgate("check", "--ref", "refs/heads/topic")
    assert (
        "1 ledger file(s) in the work tree are not committed, so they were not read and not "
        f"applied (e.g. {new})" in check.err
    )
    assert "1 committed ledger file(s) are changed" in check.err, check


def test_a_temporary_this_write_did_not_make_is_left_alone(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A temporary of the same name is another writer's (another PID namespace sharing
    the git directory): the write fails without removing it, and the ledger is untouched."""
    writing = tmp_path / "writing"
    writing.mkdir()
    monkeypatch.setattr(os, "urandom", lambda n: b"\x00" * n)
    monkeypatch.setattr(os, "getpid", lambda: 7)
    event = Event(
        id="20261129T230500Z-00000003", entity_key=KEY, status=Status.OBSERVED,
        effective_at=dt.datetime(2026, 11, 29, tzinfo=dt.UTC),
        title="t", triggers=("push",),
    )  # fmt: skip
    theirs = writing / f"{event.id}.7.00000000.tmp"
    theirs.write_bytes(b"another writer's bytes")
    with pytest.raises(FileExistsError):
        write_event_file(str(repo.path), "ledger", event, str(writing))
    assert theirs.read_bytes() == b"another writer's bytes"
    assert not (repo.path / "ledger" / entity_folder(KEY) / f"{event.id}.toml").exists()


def test_an_event_linked_into_place_has_landed_whatever_the_unlink_says(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failed unlink of the temporary once raised after the link: the caller took the
    write for failed and would write the event again under another id."""
    event = Event(
        id="20261129T230500Z-00000004", entity_key=KEY, status=Status.OBSERVED,
        effective_at=dt.datetime(2026, 11, 29, tzinfo=dt.UTC),
        title="t", triggers=("push",),
    )  # fmt: skip

    def refuses(path: object) -> None:
        raise PermissionError(13, "refused", str(path))

    monkeypatch.setattr(os, "unlink", refuses)
    final = Path(write_event_file(str(repo.path), "ledger", event, str(tmp_path / "w")))
    assert 'id = "20261129T230500Z-00000004"' in final.read_text()
