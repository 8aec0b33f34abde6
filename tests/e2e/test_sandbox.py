"""The bubblewrap sandbox, real bwrap, through the real `failgate check`, a real server hook,
record's probe and replay.

Each verifier here passes only when the sandbox holds: it exits 0 when what it
must not see is hidden, what it must not write is read-only, and so on. The same
verifier without the sandbox is the control: it is held, so the test can fail.
"""

from __future__ import annotations

import importlib.util
import json
import marshal
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from failgate_hooks.core.events import Verification
from failgate_hooks.core.gates import VerifierOutcome
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.verify.checkout import Checkouts
from failgate_hooks.verify.execute import RunAs, run_in_checkout
from failgate_hooks.verify.pins import resolve_pins, write_pins
from failgate_hooks.verify.sandbox import Sandbox
from failgate_hooks.verify.shadowing import shadowing
from tests.conftest import Repo, make_repo
from tests.e2e.test_ci import run_ci
from tests.e2e.test_pre_receive import install_pre_receive, push
from tests.processes import kill_quietly
from tests.worlds import remote_ref, verified_tree, with_remote

KEY = "ops:sandbox"
CHECK = ("check", "--trust-ledger", "--ref", "refs/heads/main", "--no-cache")


@pytest.fixture(autouse=True)
def _bwrap_is_installed() -> None:
    # Never a skip: `make test` installs bubblewrap, and a run without it must fail loudly.
    assert shutil.which("bwrap"), "bubblewrap is missing: apt-get install bubblewrap"


def gated(path: Path, verifier: str, *, python: str = sys.executable, config: str = "") -> Repo:
    """A repository whose push gate runs `verifier` (Python source) with `python`."""
    repo = make_repo(path)
    repo.write(".gitignore", ".venv/\n")
    repo.write("checks/v.py", textwrap.dedent(verifier))
    if config:
        repo.write("failgate.toml", config)
    repo.commit("the verifier")
    repo.record(
        KEY, "--status", "observed", "--title", "what the verifier may see",
        "--trigger", "push", "--verify", f"{python} checks/v.py", "--verify-file", "checks/v.py",
        "--no-probe",
    )  # fmt: skip
    repo.commit("record the gate")
    return repo


def venv(path: Path) -> Path:
    """A virtualenv at `path`; its `python`."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    return path / "bin" / "python"


def outcome(repo: Repo, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = repo.failgate(*CHECK, *args, env=env)
    assert "Traceback" not in result.err, result
    return result.code, result.out + result.err


def test_a_venv_in_the_home_folder_runs_and_the_rest_of_home_is_hidden(
    tmp_path: Path, visible: Path
) -> None:
    home = visible / "home"
    python = venv(home / ".venvs" / "project")
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text("a private key\n")
    repo = gated(
        tmp_path / "repo",
        f"""\
        import os, sys
        print("prefix", sys.prefix)
        in_venv = sys.prefix == {str(python.parent.parent)!r}
        sys.exit(0 if in_venv and not os.path.exists({str(home / ".ssh")!r}) else 1)
        """,
        python="python",  # found on PATH, as a verifier names it
    )
    env = {"HOME": str(home), "PATH": f"{python.parent}{os.pathsep}{os.environ['PATH']}"}
    code, text = outcome(repo, "--sandbox", env=env)
    assert code == 0, text
    assert "CLEARED" in text
    assert outcome(repo, env=env)[0] == 1  # unsandboxed, the key is in reach


def test_a_venv_in_the_work_tree_cannot_start_and_says_where_to_put_it(visible: Path) -> None:
    """A work tree holds what a pushed commit wrote (in CI, the commit itself): a Python
    there never decides what the sandbox shows."""
    work = visible / "repo"
    python = venv(work / ".venv")
    verifier = "import sys\nprint('it ran')\nsys.exit(0)\n"
    repo = gated(work, verifier, python=str(python))
    code, text = outcome(repo, "--sandbox")
    assert code == 1, text
    assert "it ran" not in text, text
    assert f"{python} is in a folder it hides" in text, text
    assert "in a virtualenv whose Python it runs outside the repository's work trees" in text
    assert outcome(repo)[0] == 0  # the control: unsandboxed, it runs


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP port on 127.0.0.1 that accepts connections."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(16)
        yield server.getsockname()[1]


CONNECTS = """\
import os, socket, sys
if os.path.exists({work!r}):
    sys.exit(3)  # the work tree is in sight: no sandbox
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=5).close()
except OSError as exc:
    print("no network:", exc)
    sys.exit(1)
"""


def test_the_sandbox_has_no_network(tmp_path: Path, listener: int) -> None:
    work = tmp_path / "repo"
    repo = gated(work, CONNECTS.format(work=str(work), port=listener))
    code, text = outcome(repo, "--sandbox")
    assert code == 1, text
    assert "no network" in text


def test_sandbox_network_true_gives_it_one(tmp_path: Path, listener: int) -> None:
    work = tmp_path / "repo"
    config = 'sandbox = "bwrap"\nsandbox_network = true\n'
    repo = gated(work, CONNECTS.format(work=str(work), port=listener), config=config)
    code, text = outcome(repo)
    assert code == 0, text  # sandboxed by the config, and connected


def test_failgate_ci_sandbox_runs_the_verifiers_sandboxed(tmp_path: Path) -> None:
    work = tmp_path / "repo"
    repo = gated(work, f"import os, sys\nsys.exit(1 if os.path.exists({str(work)!r}) else 0)\n")
    env = {"FAILGATE_BASE": repo.head(), "FAILGATE_REF": "refs/heads/main"}
    sandboxed = run_ci(repo.path, tmp_path, env, "--sandbox")
    assert sandboxed.code == 0, sandboxed
    assert run_ci(repo.path, tmp_path, env).code == 1  # the work tree, in sight


def test_a_write_outside_the_checkout_fails_and_other_checkouts_are_hidden(
    tmp_path: Path, visible: Path
) -> None:
    outside = visible / "outside"  # no rule hides it: read-only is all that stops the write
    outside.mkdir()
    repo = gated(
        tmp_path / "repo",
        f"""\
        import os, sys
        open("written-in-the-checkout", "w").write("fine")
        try:
            open(os.path.join({str(outside)!r}, "escaped"), "w").write("no")
        except OSError as exc:
            print("outside:", exc)
        beside = sorted(os.listdir(".."))
        print("beside the checkout:", beside)
        escaped = os.path.exists(os.path.join({str(outside)!r}, "escaped"))
        sys.exit(0 if not escaped and beside == [os.path.basename(os.getcwd())] else 1)
        """,
    )
    # The checkouts' folder outside /tmp too: only the rule that hides their folder hides
    # the others (and the index beside them).
    (visible / "tmp").mkdir()
    env = {"TMPDIR": str(visible / "tmp")}
    code, text = outcome(repo, "--sandbox", env=env)
    assert code == 0, text
    assert not (outside / "escaped").exists()
    code, text = outcome(repo, env=env)
    assert code == 1, text
    assert (outside / "escaped").exists()


LEAVES_A_GRANDCHILD = """\
import subprocess, sys
subprocess.Popen([sys.executable, "-c", "import os, time; os.setsid(); time.sleep(120)", {token!r}])
print("left a grandchild behind", flush=True)
{then}
"""


def running_with(token: str) -> list[int]:
    """The pids of processes whose command line holds `token`."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                if token.encode() in handle.read():
                    found.append(int(entry))
        except (OSError, ValueError):
            continue
    return found


def gone(token: str, timeout_s: float = 10) -> bool:
    deadline = time.monotonic() + timeout_s
    while running_with(token):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_nothing_outlives_a_sandboxed_run(tmp_path: Path) -> None:
    token = f"grandchild-{os.getpid()}-{time.monotonic_ns()}"
    repo = gated(tmp_path / "repo", LEAVES_A_GRANDCHILD.format(token=token, then=""))
    try:
        code, text = outcome(repo, "--sandbox")
        assert code == 0, text
        assert gone(token, timeout_s=3)
    finally:
        kill_quietly(*running_with(token))


def test_after_a_sigkill_of_check_the_pid_namespace_ends_the_run(tmp_path: Path) -> None:
    token = f"grandchild-{os.getpid()}-{time.monotonic_ns()}"
    verifier = LEAVES_A_GRANDCHILD.format(token=token, then="import time; time.sleep(120)")
    repo = gated(tmp_path / "repo", verifier)
    check = subprocess.Popen(
        [sys.executable, "-m", "failgate_hooks", *CHECK, "--sandbox"], cwd=repo.path,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not running_with(token):
            assert time.monotonic() < deadline, "the verifier never started"
            time.sleep(0.02)
        check.kill()
        check.wait(timeout=30)
        assert gone(token)
    finally:
        check.kill()
        kill_quietly(*running_with(token))


def test_an_unsandboxed_cached_pass_does_not_stand_for_a_sandboxed_run(
    tmp_path: Path, visible: Path
) -> None:
    home = visible / "home"
    home.mkdir()
    (home / "fix.txt").write_text("a fix that never got committed\n")
    repo = gated(
        tmp_path / "repo",
        f"import os, sys\nsys.exit(0 if os.path.exists({str(home / 'fix.txt')!r}) else 1)\n",
    )
    env = {"HOME": str(home)}
    cached = ("check", "--trust-ledger", "--ref", "refs/heads/main")
    assert repo.failgate(*cached, env=env).code == 0  # passes, and is cached
    assert repo.failgate(*cached, env=env).code == 0
    sandboxed = repo.failgate(*cached, "--sandbox", env=env)
    assert sandboxed.code == 1, sandboxed


def path_without_bwrap(tmp_path: Path) -> str:
    """A PATH holding git and nothing else: no bwrap."""
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    git = shutil.which("git")
    assert git is not None
    (folder / "git").symlink_to(git)
    return str(folder)


def test_a_requested_sandbox_that_is_missing_never_runs_unsandboxed(tmp_path: Path) -> None:
    repo = gated(tmp_path / "repo", "import sys\nprint('it ran')\nsys.exit(0)\n")
    result = repo.failgate(*CHECK, "--sandbox", env={"PATH": path_without_bwrap(tmp_path)})
    assert result.code == 1, result
    assert "a sandbox was asked for (failgate check --sandbox), but bwrap is not on PATH" in (
        result.out
    )
    assert "apt-get install bubblewrap" in result.out
    assert "it ran" not in result.out
    assert "Traceback" not in result.err


def test_a_bwrap_that_cannot_make_a_sandbox_says_how_to_allow_it(tmp_path: Path) -> None:
    folder = tmp_path / "bin"
    folder.mkdir()
    fake = folder / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    fake.chmod(0o755)
    repo = gated(tmp_path / "repo", "import sys\nprint('it ran')\nsys.exit(0)\n")
    env = {"PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}
    result = repo.failgate(*CHECK, "--sandbox", env=env)
    assert result.code == 1, result
    assert "setting up uid map: Permission denied" in result.out
    assert "kernel.apparmor_restrict_unprivileged_userns=0" in result.out
    assert "it ran" not in result.out


def server_with_gate(tmp_path: Path, verifier: str, *hook_args: str) -> tuple[Repo, Path]:
    """A bare remote whose main has the gate; the pre-receive hook installed with `hook_args`."""
    repo = gated(tmp_path / "work", verifier)
    remote = with_remote(repo, tmp_path / "remote.git")
    install_pre_receive(remote, *hook_args)
    return repo, remote


def test_the_server_hook_with_exec_sandboxes_by_default(tmp_path: Path) -> None:
    remote_path = tmp_path / "remote.git"
    verifier = f"import os, sys\nsys.exit(0 if not os.path.exists({str(remote_path)!r}) else 1)\n"
    repo, remote = server_with_gate(tmp_path, verifier, "--exec")
    repo.write("notes.txt", "more work\n")
    head = repo.commit("more work")
    accepted = push(repo, "main")
    assert accepted.returncode == 0, accepted.stderr
    assert remote_ref(remote, "refs/heads/main") == head
    install_pre_receive(remote, "--exec", "--no-sandbox")  # the control: the server is in reach
    repo.write("notes.txt", "and more\n")
    repo.commit("and more")
    refused = push(repo, "main")
    assert refused.returncode != 0, refused.stderr
    assert remote_ref(remote, "refs/heads/main") == head


def test_the_server_hook_refuses_to_run_unsandboxed_unless_told(tmp_path: Path) -> None:
    repo, remote = server_with_gate(tmp_path, "import sys\nsys.exit(0)\n", "--exec")
    repo.write("notes.txt", "more work\n")
    head = repo.commit("more work")
    env_path = f"{path_without_bwrap(tmp_path)}"
    refused = subprocess.run(
        ["git", "push", "--no-verify", "origin", "main"], cwd=repo.path, capture_output=True,
        text=True, env={**os.environ, "PATH": env_path}, timeout=300,
    )  # fmt: skip
    assert refused.returncode != 0, refused.stderr
    assert "bwrap is not on PATH" in refused.stderr
    assert "--no-sandbox" in refused.stderr
    install_pre_receive(remote, "--exec", "--no-sandbox")
    accepted = subprocess.run(
        ["git", "push", "--no-verify", "origin", "main"], cwd=repo.path, capture_output=True,
        text=True, env={**os.environ, "PATH": env_path}, timeout=300,
    )  # fmt: skip
    assert accepted.returncode == 0, accepted.stderr
    assert remote_ref(remote, "refs/heads/main") == head


def test_a_pushed_config_that_drops_the_sandbox_is_a_pending_relaxation(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "work")
    repo.write("failgate.toml", 'sandbox = "bwrap"\n')
    repo.commit("verifiers run sandboxed")
    remote = with_remote(repo, tmp_path / "remote.git")
    install_pre_receive(remote)
    before = remote_ref(remote, "refs/heads/main")
    repo.write("failgate.toml", 'sandbox = "none"\nsandbox_network = true\n')
    repo.commit("no sandbox")
    refused = push(repo, "main")
    assert refused.returncode != 0, refused.stderr
    assert "PENDING config change" in refused.stderr
    assert 'sandbox "bwrap" -> "none"' in refused.stderr
    assert "sandbox_network false -> true" in refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before


def test_a_sigterm_to_a_sandboxed_check_ends_the_run_and_removes_its_folders(
    tmp_path: Path,
) -> None:
    token = f"grandchild-{os.getpid()}-{time.monotonic_ns()}"
    verifier = LEAVES_A_GRANDCHILD.format(token=token, then="import time; time.sleep(120)")
    repo = gated(tmp_path / "repo", verifier)
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    check = subprocess.Popen(
        [sys.executable, "-m", "failgate_hooks", *CHECK, "--sandbox"], cwd=repo.path,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "TMPDIR": str(tmpdir)},
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not running_with(token):
            assert time.monotonic() < deadline, "the verifier never started"
            time.sleep(0.02)
        check.send_signal(signal.SIGTERM)
        assert check.wait(timeout=30) == -signal.SIGTERM
        assert gone(token)
        assert list(tmpdir.glob("failgate-*")) == []
    finally:
        check.kill()
        kill_quietly(*running_with(token))


def test_a_python_in_the_pushed_commit_never_decides_what_the_sandbox_shows(
    tmp_path: Path, visible: Path
) -> None:
    """Asked for its prefixes, a pushed `python` would name the home folder's secrets."""
    home = visible / "home"
    (home / ".ssh").mkdir(parents=True)
    repo = make_repo(tmp_path / "repo")
    fake = repo.write(
        "tools/python3",
        "#!/bin/sh\n"
        f'if [ "$1" = -I ]; then for _ in 1 2 3; do echo {home / ".ssh"}; done; exit 0; fi\n'
        f"test -e {home / '.ssh'}\n",
    )
    fake.chmod(0o755)
    repo.commit("a python that is not one")
    repo.record(
        KEY, "--status", "observed", "--title", "a pushed interpreter", "--trigger", "push",
        "--verify", "tools/python3 checks/v.py", "--no-probe",
    )  # fmt: skip
    repo.commit("record the gate")
    code, text = outcome(repo, "--sandbox", env={"HOME": str(home)})
    assert code == 1, text  # the home folder stayed hidden: `test -e` failed
    assert outcome(repo, env={"HOME": str(home)})[0] == 0


def test_committed_bytecode_of_the_pinned_verifier_never_runs_in_the_sandbox(
    tmp_path: Path,
) -> None:
    """`python3 -m checks.v` imports the pinned checks/v.py through the import system,
    which takes an unchecked-hash `__pycache__/v.*.pyc` beside it without reading the
    source. Shadowing refuses such a commit before anything runs; this is the run's own
    defence behind it (replay, a kept checkout, a rule that misses a name): the sandbox's
    private bytecode cache, so the pinned source is what runs."""
    repo = make_repo(tmp_path / "repo")
    repo.write("checks/v.py", "import sys\nprint('the pinned source')\nsys.exit(1)\n")
    reviewed = repo.commit("the verifier")
    planted = compile("print('planted bytecode')\n", "checks/v.py", "exec")
    pyc = repo.path / "checks" / "__pycache__" / f"v.{sys.implementation.cache_tag}.pyc"
    pyc.parent.mkdir()
    unchecked = 0b01  # hash-based, never checked against the source
    pyc.write_bytes(
        importlib.util.MAGIC_NUMBER + unchecked.to_bytes(4, "little")
        + importlib.util.source_hash(b"not the source\n") + marshal.dumps(planted)
    )  # fmt: skip
    repo.git("add", "-f", str(pyc))
    pushed = repo.commit("bytecode beside the pinned verifier")
    check = Verification(command=(sys.executable, "-m", "checks.v"), files=("checks/v.py",))
    sandbox = Sandbox(network=False, hidden=[str(repo.path)], asked_by="the test")
    with GitRepo.open(repo.path) as grepo, Checkouts(grepo) as checkouts:
        pins = resolve_pins(grepo, reviewed, check.files)
        assert shadowing(grepo, pushed, pins, check.command, reviewed) is not None
        result = run_in_checkout(
            checkouts, check, RunAs(pushed, KEY), lambda root: write_pins(grepo, root, pins),
            ledger_dir="ledger", timeout_s=60, watched=(), sandbox=sandbox,
        )  # fmt: skip
    assert result.output_tail == "the pinned source", result
    assert result.outcome is VerifierOutcome.FAILED, result


SEES_THE_POOL = """\
import os, sys
here = os.getcwd()
slot = os.path.dirname(here)
pool = os.path.dirname(slot)
seen = (sorted(os.listdir(pool)), sorted(os.listdir(slot)))
print("checkout:", here, "seen:", seen)
kept = here.startswith({pools!r})
sys.exit(0 if kept and seen == ([os.path.basename(slot)], ["tree"]) else 1)
"""


def test_a_sandboxed_run_moves_a_kept_checkout_and_sees_nothing_else_of_the_pool(
    tmp_path: Path, visible: Path
) -> None:
    # The cache outside /tmp and the home folder: only the rule that hides the pools hides it.
    pools = visible / "cache" / "failgate" / "checkouts"
    env = {"XDG_CACHE_HOME": str(visible / "cache")}
    repo = gated(tmp_path / "repo", SEES_THE_POOL.format(pools=f"{pools}{os.sep}"))
    code, text = outcome(repo, "--sandbox", env=env)
    assert code == 0, text
    repo.write("README", "a new commit\n")
    repo.commit("a new commit")
    code, text = outcome(repo, "--sandbox", env=env)
    assert code == 0, text
    (slot,) = [p for p in pools.glob("*/*") if p.name.isdigit()]
    held = json.loads((slot / "state.json").read_text())["tree"]
    assert held == verified_tree(repo.path, repo.head())  # moved
    code, text = outcome(repo, env=env)
    assert code == 1, text  # unsandboxed, the pool's git dir, index and lock are in sight
    assert "'git'" in text and "'index'" in text


def test_the_sandbox_has_its_own_proc_where_no_process_outside_it_shows(tmp_path: Path) -> None:
    # This test's own process, outside the sandbox: in its own pid namespace's /proc,
    # that number names nothing the verifier could read.
    outside = f"/proc/{os.getpid()}"
    repo = gated(
        tmp_path / "repo", f"import os, sys\nsys.exit(1 if os.path.exists({outside!r}) else 0)\n"
    )
    code, text = outcome(repo, "--sandbox")
    assert code == 0, text
    assert outcome(repo)[0] == 1  # the control: unsandboxed, the host's /proc shows it


# Opens the kernel's settings for writing, and writes nothing: exit 0 only when every one
# is refused as read-only (or, not root, by the file's mode).
OPENS_KERNEL_SETTINGS = """\
import errno, os, sys
allowed = (errno.EROFS,) if os.geteuid() == 0 else (errno.EROFS, errno.EACCES)
for path in ("/proc/sys/kernel/core_pattern", "/proc/sys/vm/drop_caches"):
    try:
        os.close(os.open(path, os.O_WRONLY))
    except OSError as exc:
        if exc.errno in allowed:
            continue
    print("writable:", path)
    sys.exit(1)
"""


def test_the_kernel_s_settings_are_read_only_to_a_verifier_run_as_root(tmp_path: Path) -> None:
    """uid 0 in a fresh /proc may write core_pattern without any capability: the kernel
    would then run a checkout's file as the host's root at the next crash."""
    repo = gated(tmp_path / "repo", OPENS_KERNEL_SETTINGS)
    code, text = outcome(repo, "--sandbox")
    assert code == 0, text
    if os.geteuid() == 0:  # the control: unsandboxed, root may write them
        assert outcome(repo)[0] == 1


# Runs in the sandbox. Where it is given the user's work tree (workdir = "inplace"), it
# leaves a git dir there whose config names a command, and points the work tree's .git
# file (a linked worktree's) at it: the next git the user runs there runs that command.
POINTS_GIT_ELSEWHERE = """\
import os
os.makedirs("fake/objects", exist_ok=True)
os.makedirs("fake/refs", exist_ok=True)
open("fake/HEAD", "w").write("ref: refs/heads/main\\n")
open("fake/config", "w").write(
    "[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = touch {marker}; false\\n"
)
if os.path.isfile(".git"):
    open(".git", "w").write("gitdir: fake\\n")
"""


def test_an_inplace_verifier_in_the_sandbox_never_writes_into_the_work_tree(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "ran-outside-the-sandbox"
    repo = make_repo(tmp_path / "repo")
    repo.write("checks/v.py", POINTS_GIT_ELSEWHERE.format(marker=marker))
    repo.commit("the verifier")
    event = repo.record(
        KEY, "--status", "observed", "--title", "what the verifier may write",
        "--trigger", "push", "--verify", f"{sys.executable} checks/v.py",
        "--verify-file", "checks/v.py", "--no-probe",
    )  # fmt: skip
    with open(repo.path / event, "a") as handle:
        handle.write('workdir = "inplace"\n')
    repo.commit("record the gate, run in place")
    work = tmp_path / "linked"
    repo.git("worktree", "add", "-q", "--detach", str(work), "HEAD")
    dot_git = (work / ".git").read_text()
    linked = Repo(work)
    code, text = outcome(linked, "--sandbox")
    linked.git("status", check=False)  # the user's next git in that work tree
    assert not marker.exists(), text  # ran outside the sandbox
    assert (work / ".git").read_text() == dot_git, text
    assert not (work / "fake").exists(), text
    assert code == 0, text  # in a clean checkout, the same verifier passes


def test_a_temporary_checkout_in_a_tmpdir_outside_tmp_sees_no_other_run(
    tmp_path: Path, visible: Path
) -> None:
    # A cache folder inside the work tree is never used: each run's checkout is a
    # temporary one, in TMPDIR, beside those of every other run there.
    other = visible / "tmp" / "failgate-another-run" / "0" / "tree"
    other.mkdir(parents=True)
    (other / "budget.txt").write_text("another commit's\n")
    verifier = f"""\
    import os, sys
    sys.exit(1 if os.path.exists({str(other / "budget.txt")!r}) else 0)
    """
    repo = gated(tmp_path / "repo", verifier)
    repo.write(".gitignore", ".venv/\n.cache/\n")
    repo.commit("ignore the cache")
    env = {"TMPDIR": str(visible / "tmp"), "XDG_CACHE_HOME": str(repo.path / ".cache")}
    code, text = outcome(repo, "--sandbox", env=env)
    assert code == 0, text
    assert outcome(repo, env=env)[0] == 1  # unsandboxed, the other run's checkout is in sight


# record's probe and each step of replay run a verifier too: `sandbox = "bwrap"` holds there.
# The verifier says whether the repository's git dir, which only the sandbox hides, is in sight.
SEES_THE_GIT_DIR = """\
import os, sys
seen = os.path.exists({git_dir!r})
print("the repository's git dir is", "in sight" if seen else "hidden")
sys.exit(3 if seen else 0 if os.path.exists("fixed.txt") else 1)
"""
SANDBOXED = 'sandbox = "bwrap"\n'


def probed(work: Path, config: str, *, env: dict[str, str] | None = None) -> str:
    """`record` of an observed failure whose verifier is SEES_THE_GIT_DIR: what it printed."""
    repo = make_repo(work)
    repo.write(".gitignore", ".venv/\n")
    repo.write("checks/v.py", SEES_THE_GIT_DIR.format(git_dir=str(work / ".git")))
    if config:
        repo.write("failgate.toml", config)
    repo.commit("the verifier")
    result = repo.failgate(
        "record", KEY, "--status", "observed", "--title", "what the probe may see",
        "--trigger", "push", "--verify", f"{sys.executable} checks/v.py",
        "--verify-file", "checks/v.py", env=env,
    )  # fmt: skip
    assert result.code == 0, result
    assert "Traceback" not in result.err
    return result.err


def test_records_probe_runs_in_the_sandbox_the_config_asks_for(visible: Path) -> None:
    said = probed(visible / "sandboxed", SANDBOXED)
    assert "probe: the verifier fails on HEAD" in said, said
    assert "its last line: the repository's git dir is hidden" in said, said
    # The control: without the sandbox the same probe sees the git dir.
    said = probed(visible / "unsandboxed", "")
    assert "its last line: the repository's git dir is in sight" in said, said


def test_records_probe_never_runs_unsandboxed_when_bwrap_is_missing(
    tmp_path: Path, visible: Path
) -> None:
    work = visible / "repo"
    said = probed(work, SANDBOXED, env={"PATH": path_without_bwrap(tmp_path)})
    # What a gate says of it, word for word: the probe is only a warning, but it never ran.
    assert 'cannot start: a sandbox was asked for (sandbox = "bwrap" in HEAD ' in said, said
    assert said.startswith("warning: probe: verifier "), said
    assert "but bwrap is not on PATH" in said and "apt-get install bubblewrap" in said, said
    assert "git dir is" not in said, said  # it never ran


def replayable(work: Path, config: str) -> tuple[Repo, str]:
    """A failure, its repair, then the verifier and its event: the interval PARENT..REPAIR."""
    repo = make_repo(work)
    repo.write(".gitignore", ".venv/\n")
    if config:
        repo.write("failgate.toml", config)
    parent = repo.commit("the failure")
    repo.write("fixed.txt", "the repair\n")
    repair = repo.commit("the repair")
    repo.write("checks/v.py", SEES_THE_GIT_DIR.format(git_dir=str(work / ".git")))
    repo.commit("the verifier")
    repo.record(
        KEY, "--status", "observed", "--title", "what a replay may see",
        "--trigger", "push", "--verify", f"{sys.executable} checks/v.py",
        "--verify-file", "checks/v.py", "--no-probe",
    )  # fmt: skip
    repo.commit("record the gate")
    return repo, f"{parent}..{repair}"


def replayed(
    repo: Repo, interval: str, *args: str, env: dict[str, str] | None = None
) -> tuple[int, Any]:
    result = repo.failgate("replay", interval, "--entity", KEY, "--json", *args, env=env)
    assert "Traceback" not in result.err, result
    return result.code, json.loads(result.out)


def test_replay_runs_every_step_in_the_sandbox_the_config_asks_for(visible: Path) -> None:
    repo, interval = replayable(visible / "sandboxed", SANDBOXED)
    code, report = replayed(repo, interval)
    assert code == 0, report  # held at the parent, cleared at the repair: nothing saw .git
    assert [step["exit_code"] for step in report["steps"]] == [1, 0], report
    assert report["sandbox"] == "bwrap"  # and the report says what its proof ran in
    # The control: without the sandbox, every step sees the repository's git dir.
    repo, interval = replayable(visible / "unsandboxed", "")
    code, report = replayed(repo, interval)
    assert code == 1, report
    assert [step["exit_code"] for step in report["steps"]] == [3, 3], report
    assert report["sandbox"] == "none"


def test_replay_sandbox_runs_every_step_sandboxed(visible: Path) -> None:
    repo, interval = replayable(visible / "repo", "")
    code, report = replayed(repo, interval, "--sandbox")
    assert code == 0, report
    assert [step["exit_code"] for step in report["steps"]] == [1, 0], report


def test_replay_takes_the_sandbox_from_the_ledger_revs_config(visible: Path) -> None:
    repo, interval = replayable(visible / "repo", SANDBOXED)
    reviewed = repo.head()
    repo.git("rm", "-q", "failgate.toml")
    repo.commit("drop the sandbox")  # HEAD's config is not the one --ledger-rev names
    code, report = replayed(repo, interval, "--ledger-rev", reviewed)
    assert code == 0, report
    assert [step["exit_code"] for step in report["steps"]] == [1, 0], report
    code, report = replayed(repo, interval)  # HEAD's, which no longer asks for it
    assert [step["exit_code"] for step in report["steps"]] == [3, 3], report


@pytest.mark.parametrize(
    ("config", "flag", "asked_by"),
    [
        (SANDBOXED, (), 'sandbox = "bwrap" in HEAD '),
        ("", ("--sandbox",), "failgate replay --sandbox"),
    ],
)
def test_replay_never_runs_unsandboxed_when_bwrap_is_missing(
    tmp_path: Path, visible: Path, config: str, flag: tuple[str, ...], asked_by: str
) -> None:
    repo, interval = replayable(visible / "repo", config)
    code, report = replayed(repo, interval, *flag, env={"PATH": path_without_bwrap(tmp_path)})
    assert code == 1, report
    assert "but bwrap is not on PATH: install bubblewrap" in report["reason"], report
    for step in report["steps"]:
        assert step["state"] == "no_verdict", report
        assert f"a sandbox was asked for ({asked_by}" in step["detail"], report
        assert "but bwrap is not on PATH" in step["detail"], report
        assert step["exit_code"] is None, report  # it never ran
