"""The sandbox's syscall filter, real bwrap: no process in the sandbox reaches into another.

The pushed code runs as the same uid as the processes that report a verifier's
exit status (bwrap's pid 1, and a verifier that judges a child's output). Each
verifier here fails unless the filter holds, through the real `failgate check`;
the control is the same verifier in the same sandbox with a filter that allows
everything, run through run_command, where the attack works.
"""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path

import pytest

from failgate_hooks.verify import sandbox as sandbox_module
from failgate_hooks.verify.process import run_command
from failgate_hooks.verify.sandbox import Sandbox
from failgate_hooks.verify.seccomp import syscall_filter
from tests.e2e.test_sandbox import gated, outcome

# Run by the verifier as its child, the code under test: takes pid 1's eventfd (bwrap's
# pid 1 writes the verifier's exit status + 1 there, and the bwrap outside exits with the
# first value it reads) and writes a pass into it.
FORGES_PID_1_S_STATUS = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
pidfd = libc.syscall(434, 1, 0)  # pidfd_open(1, 0): the same number on x86_64 and arm64
if pidfd < 0:
    sys.exit("pidfd_open: " + os.strerror(ctypes.get_errno()))
for fd in os.listdir("/proc/1/fd"):
    if "eventfd" in os.readlink(f"/proc/1/fd/{fd}"):
        stolen = libc.syscall(438, pidfd, int(fd), 0)  # pidfd_getfd
        if stolen < 0:
            sys.exit("pidfd_getfd: " + os.strerror(ctypes.get_errno()))
        print("writing a pass into pid 1's eventfd", flush=True)
        os.write(stolen, (1).to_bytes(8, "little"))
        sys.exit(0)
sys.exit("pid 1 holds no eventfd")
"""

# A verifier that fails, and whose child is FORGES_PID_1_S_STATUS. After a forgery it
# waits to be ended: the bwrap outside exits 0 on reading the pass (and the sandbox dies
# with it), so no exit of the verifier's own can race the forged one.
FAILS_AND_ITS_CHILD_FORGES_A_PASS = f"""\
import subprocess, sys, threading
if subprocess.run([sys.executable, "-c", {FORGES_PID_1_S_STATUS!r}]).returncode == 0:
    threading.Event().wait()
sys.exit(1)
"""

# Run by the verifier as its child: attaches to the verifier and to bwrap's pid 1, and reads
# the verifier's memory; exits 0 only when each is refused with EPERM.
TRACES_ITS_PARENT = r"""
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
PTRACE_ATTACH, PTRACE_DETACH, WALL = 16, 17, 0x40000000
said = []
for pid in (os.getppid(), 1):
    if libc.ptrace(PTRACE_ATTACH, pid, None, None) == 0:
        os.waitpid(pid, WALL)
        libc.ptrace(PTRACE_DETACH, pid, None, None)
        said.append(f"attached to {pid}")
    else:
        said.append(f"ptrace {pid}: {errno.errorcode[ctypes.get_errno()]}")
buffer = ctypes.create_string_buffer(8)
local = (ctypes.c_void_p * 2)(ctypes.cast(buffer, ctypes.c_void_p), 8)
remote = (ctypes.c_void_p * 2)(ctypes.cast(buffer, ctypes.c_void_p), 8)
if libc.process_vm_readv(os.getppid(), local, 1, remote, 1, 0) < 0:
    said.append("process_vm_readv: " + errno.errorcode[ctypes.get_errno()])
else:
    said.append("read the parent's memory")
print("; ".join(said))
sys.exit(0 if all(line.endswith("EPERM") for line in said) else 1)
"""

JUDGES_A_CHILD_THAT_TRACES_IT = f"""\
import subprocess, sys
child = subprocess.run([sys.executable, "-c", {TRACES_ITS_PARENT!r}])
sys.exit(child.returncode)
"""

# Run by the verifier as its child, with the address of the verifier's verdict: opens
# bwrap's pid 1's memory, and each of the verifier's threads', for writing, and writes
# a pass over the verdict through one of them. (It is given the address only to be short:
# it could read it in the verifier's memory, which stays readable.)
REWRITES_THE_VERIFIER_S_MEMORY = r"""
import os, sys
parent = os.getppid()
paths = ["/proc/1/mem", "/proc/1/task/1/mem", f"/proc/self/../{parent}/mem"]
paths += [f"/proc/{parent}/task/{task}/mem" for task in os.listdir(f"/proc/{parent}/task")]
opened = []
for path in paths:
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError as exc:
        print(exc)
        continue
    opened.append(path)
    if path.startswith("/proc/self/"):
        os.pwrite(fd, b"PASS", int(sys.argv[1]))
    os.close(fd)
if opened:
    print("opened for writing:", ", ".join(opened))
"""

# A verifier that fails unless its verdict says PASS, with a second thread (a second task,
# a second memory file) and a child that is REWRITES_THE_VERIFIER_S_MEMORY.
FAILS_UNLESS_ITS_CHILD_REWRITES_ITS_VERDICT = f"""\
import ctypes, subprocess, sys, threading
verdict = ctypes.create_string_buffer(b"FAIL")
threading.Thread(target=threading.Event().wait, daemon=True).start()
address = str(ctypes.addressof(verdict))
subprocess.run([sys.executable, "-c", {REWRITES_THE_VERIFIER_S_MEMORY!r}, address])
print("verdict:", verdict.value.decode(), flush=True)
sys.exit(0 if verdict.value == b"PASS" else 1)
"""

ALLOWS_EVERYTHING = struct.pack("<HBBI", 0x06, 0, 0, 0x7FFF0000)  # BPF_RET SECCOMP_RET_ALLOW
# An opcode classic BPF does not have: the kernel refuses the program with EINVAL, as it
# refuses every program where it has no seccomp filtering, and bwrap says the same for both.
NO_SUCH_INSTRUCTION = struct.pack("<HBBI", 0xFFFF, 0, 0, 0)
MACHINE = os.uname().machine


def test_a_failed_verifier_whose_child_forges_pid_1_s_status_stays_held(tmp_path: Path) -> None:
    repo = gated(tmp_path / "repo", FAILS_AND_ITS_CHILD_FORGES_A_PASS)
    code, text = outcome(repo, "--sandbox")
    assert code == 1, text
    assert "pidfd_getfd: Operation not permitted" in text, text
    assert "CLEARED" not in text


def test_a_verifier_s_child_cannot_trace_it_or_pid_1(tmp_path: Path) -> None:
    repo = gated(tmp_path / "repo", JUDGES_A_CHILD_THAT_TRACES_IT)
    code, text = outcome(repo, "--sandbox")
    assert code == 0, text
    assert "CLEARED" in text


def test_no_memory_file_in_the_sandbox_opens_for_writing(tmp_path: Path) -> None:
    repo = gated(tmp_path / "repo", FAILS_UNLESS_ITS_CHILD_REWRITES_ITS_VERDICT)
    code, text = outcome(repo, "--sandbox")
    assert code == 1, text
    assert "verdict: FAIL" in text, text
    assert "Read-only file system: '/proc/1/mem'" in text, text
    assert "Read-only file system: '/proc/self/../" in text, text
    assert "opened for writing" not in text, text


def in_the_sandbox(
    tmp_path: Path, verifier: str, monkeypatch: pytest.MonkeyPatch, filter_program: bytes
) -> tuple[int | None, str]:
    """`verifier` run by run_command in a sandbox whose filter is `filter_program`."""
    monkeypatch.setattr(sandbox_module, "syscall_filter", lambda machine: filter_program)
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "v.py").write_text(verifier)
    run = run_command(
        [sys.executable, "v.py"],
        cwd=str(checkout),
        env={"PATH": os.environ["PATH"]},
        timeout_s=60,
        sandbox=Sandbox(network=False, hidden=[], asked_by="the test"),
    )
    assert run.start_error is None, run
    return run.exit_code, run.output_tail


def test_the_control_without_the_filter_the_forged_pass_is_the_sandbox_s_exit_status(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, said = in_the_sandbox(
        tmp_path, FAILS_AND_ITS_CHILD_FORGES_A_PASS, monkeypatch, ALLOWS_EVERYTHING
    )
    assert code == 0, said
    assert "writing a pass into pid 1's eventfd" in said, said


def test_the_control_without_the_filter_the_child_attaches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, said = in_the_sandbox(
        tmp_path, JUDGES_A_CHILD_THAT_TRACES_IT, monkeypatch, ALLOWS_EVERYTHING
    )
    assert code == 1, said
    assert "attached to 1" in said, said


def test_the_control_with_proc_writable_the_child_rewrites_the_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox_module, "_PROC_WRITES_REFUSED", ())
    code, said = in_the_sandbox(
        tmp_path,
        FAILS_UNLESS_ITS_CHILD_REWRITES_ITS_VERDICT,
        monkeypatch,
        syscall_filter(MACHINE),
    )
    assert code == 0, said
    assert "verdict: PASS" in said, said
    assert "opened for writing: /proc/1/mem, /proc/1/task/1/mem, /proc/self/../" in said, said


# What a verifier ordinarily runs, each in a child of its own: sh, git, pytest.
RUNS_SH_GIT_AND_PYTEST = """\
import os, subprocess, sys
open("test_it.py", "w").write("def test_it():\\n    assert 1 + 1 == 2\\n")
steps = [
    ["sh", "-c", "echo sh ran"],
    ["git", "init", "-q", "/tmp/scratch"],
    ["git", "-C", "/tmp/scratch", "-c", "user.name=v", "-c", "user.email=v@example.com",
     "commit", "-q", "--allow-empty", "-m", "a commit"],
    [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_it.py"],
]
for step in steps:
    subprocess.run(step, check=True)
print("all ran")
"""


def test_a_verifier_that_runs_sh_git_and_pytest_runs_as_before(tmp_path: Path) -> None:
    repo = gated(tmp_path / "repo", RUNS_SH_GIT_AND_PYTEST)
    code, text = outcome(repo, "--sandbox")
    assert code == 0, text
    assert "CLEARED" in text


def test_a_machine_without_a_syscall_table_never_runs_a_verifier(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    machine = os.uname()
    riscv = os.uname_result((*machine[:4], "riscv64"))
    monkeypatch.setattr(sandbox_module.os, "uname", lambda: riscv)
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "v.py").write_text("open('it ran', 'w').close()\n")
    run = run_command(
        [sys.executable, "v.py"],
        cwd=str(checkout),
        env={"PATH": os.environ["PATH"]},
        timeout_s=60,
        sandbox=Sandbox(network=False, hidden=[], asked_by="failgate check --sandbox"),
    )
    assert run.exit_code is None, run
    assert run.start_error is not None
    assert run.start_error.startswith(
        "a sandbox was asked for (failgate check --sandbox), but failgate cannot build the "
        "sandbox's syscall filter for riscv64: "
    ), run.start_error
    assert not (checkout / "it ran").exists()


def test_a_filter_bwrap_cannot_load_is_what_the_run_says_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox_module, "syscall_filter", lambda machine: NO_SUCH_INSTRUCTION)
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "v.py").write_text("open('it ran', 'w').close()\n")
    run = run_command(
        [sys.executable, "v.py"],
        cwd=str(checkout),
        env={"PATH": os.environ["PATH"]},
        timeout_s=60,
        sandbox=Sandbox(network=False, hidden=[], asked_by="failgate check --sandbox"),
    )
    assert run.exit_code is None, run
    assert run.start_error is not None
    assert run.start_error.startswith("a sandbox was asked for (failgate check --sandbox), but ")
    assert "cannot load the syscall filter (bwrap: Unable to set up system call filtering" in (
        run.start_error
    ), run.start_error
    assert "CONFIG_SECCOMP_FILTER" in run.start_error
    assert "user namespaces" not in run.start_error
    assert not (checkout / "it ran").exists()
