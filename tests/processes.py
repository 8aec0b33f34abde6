"""A gate whose verifier leaves processes behind, and ways to ask whether they still run."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from pathlib import Path

from tests.conftest import Repo, make_repo

KEY = "ops:lifetime"
PY = sys.executable

# Writes what it is to REPORTS (pids, cwd), starts a grandchild that leaves the session with
# setsid(), then exits with MODE, or sleeps when MODE is "wait".
VERIFIER = """\
import os, subprocess, sys, time

reports, mode = sys.argv[1], sys.argv[2]


def report(name, text):
    path = os.path.join(reports, name)
    with open(path + ".part", "w") as handle:
        handle.write(text)
    os.replace(path + ".part", path)


subprocess.Popen([sys.executable, "-c", "import os, sys, time\\n"
    "os.setsid()\\n"
    "path = sys.argv[1]\\n"
    "open(path + '.part', 'w').write(str(os.getpid()))\\n"
    "os.replace(path + '.part', path)\\n"
    "time.sleep(120)\\n", os.path.join(reports, "grandchild")])
while not os.path.exists(os.path.join(reports, "grandchild")):
    time.sleep(0.01)
report("verifier", f"{os.getpid()} {os.getppid()} {os.getcwd()}")
if mode == "wait":
    time.sleep(120)
sys.exit(int(mode))
"""


def gated_repo(path: Path, reports: Path, mode: str, python: str = PY) -> Repo:
    """A repository whose one push gate runs VERIFIER with `mode`, recorded and committed."""
    reports.mkdir(parents=True, exist_ok=True)
    repo = make_repo(path)
    repo.write("checks/verifier.py", VERIFIER)
    repo.commit("a verifier that leaves a grandchild behind")
    repo.record(
        KEY, "--status", "observed", "--title", "processes outlive the run",
        "--trigger", "push", "--verify", f"{python} checks/verifier.py {reports} {mode}",
        "--verify-file", "checks/verifier.py", "--no-probe",
    )  # fmt: skip
    repo.commit("record the gate")
    return repo


def wait_for(path: Path, timeout_s: float = 30) -> str:
    """The text of a report file, once it exists."""
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)
    return path.read_text()


def dead(pid: int) -> bool:
    """Gone, or a zombie: PID 1 in a container may never reap an orphan."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def eventually_dead(pid: int, timeout_s: float = 10) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if dead(pid):
            return True
        time.sleep(0.05)
    return False


def kill_quietly(*pids: int) -> None:
    """Leave no test process behind, whatever the assertions said."""
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
