"""What of the host's kernel the pushed code can reach from the sandbox, real bwrap through
the real `failgate check --sandbox`.

The sandbox's processes are in failgate's session keyring, and run as its uid: a key
there (a kerberos ticket, an ecryptfs passphrase, a token a CI job put there) is the
pushed code's to read unless the syscall filter refuses the keyring calls. Each
verifier here passes only when what it reaches for is refused.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from failgate_hooks.verify.sandbox import nested_userns_refused
from tests.conftest import Repo
from tests.e2e.test_pre_receive import install_pre_receive, push
from tests.e2e.test_sandbox import CHECK, gated, outcome
from tests.worlds import remote_ref, with_remote

SESSION_SECRET = "a kerberos ticket"

# Run failgate in a fresh session keyring of its own holding SESSION_SECRET, as a login
# session or a CI job's would: never in the keyring of whoever runs the tests.
IN_A_SESSION_WITH_A_KEY = f"""\
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
KEYCTL, ADD_KEY = {{"x86_64": (250, 248), "aarch64": (219, 217)}}[os.uname().machine]
if libc.syscall(ctypes.c_long(KEYCTL), ctypes.c_long(1), None) < 0:  # JOIN_SESSION_KEYRING
    sys.exit("cannot make a session keyring: " + os.strerror(ctypes.get_errno()))
secret = "{SESSION_SECRET}".encode()
key = libc.syscall(
    ctypes.c_long(ADD_KEY), b"user", b"failgate-test", secret, ctypes.c_long(len(secret)),
    ctypes.c_long(-3),  # KEY_SPEC_SESSION_KEYRING
)
if key < 0:
    sys.exit("cannot add a key: " + os.strerror(ctypes.get_errno()))
os.execv(sys.argv[1], sys.argv[1:])
"""

# Prints every key of the session keyring it is in: it fails where keyctl is refused.
READS_THE_SESSION_KEYRING = """\
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
KEYCTL = {"x86_64": 250, "aarch64": 219}[os.uname().machine]
READ, SESSION = 11, -3

def read(serial):
    buffer = ctypes.create_string_buffer(4096)
    size = libc.syscall(ctypes.c_long(KEYCTL), ctypes.c_long(READ), ctypes.c_long(serial),
                        buffer, ctypes.c_long(4096))
    if size < 0:
        sys.exit("keyctl: " + errno.errorcode[ctypes.get_errno()])
    return buffer.raw[:size]

listing = read(SESSION)
for at in range(0, len(listing), 4):
    print("read a key:", read(int.from_bytes(listing[at:at + 4], "little")).decode())
"""

# Refused with EPERM, each; a call the kernel lets it make is a failure.
CALLS_THE_KERNEL_SURFACE = """\
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
numbers = {
    "x86_64": {"io_uring_setup": 425, "userfaultfd": 323, "perf_event_open": 298, "bpf": 321,
               "add_key": 248, "request_key": 249},
    "aarch64": {"io_uring_setup": 425, "userfaultfd": 282, "perf_event_open": 241, "bpf": 280,
                "add_key": 217, "request_key": 218},
}[os.uname().machine]
memory = ctypes.create_string_buffer(256)
arguments = {  # each one a call the kernel would take from an unprivileged process
    "io_uring_setup": (4, memory),
    "userfaultfd": (1,),  # UFFD_USER_MODE_ONLY
    "perf_event_open": (memory, 0, -1, -1, 0),
    "bpf": (0, memory, 128),
    "add_key": (b"user", b"k", b"v", 1, -3),
    "request_key": (b"user", b"k", None, 0),
}
ctypes.memmove(memory, (1).to_bytes(4, "little") + (128).to_bytes(4, "little"), 8)
made = []
for name, number in numbers.items():
    args = [ctypes.c_long(a) if isinstance(a, int) else a for a in arguments[name]]
    if libc.syscall(ctypes.c_long(number), *args) >= 0 or ctypes.get_errno() != errno.EPERM:
        made.append(f"{name}: {errno.errorcode.get(ctypes.get_errno(), 'made')}")
print("; ".join(made) or "all refused")
sys.exit(1 if made else 0)
"""


def in_a_session_with_a_key(repo: Repo, *args: str) -> tuple[int, str]:
    """`failgate ARGS` in `repo`, its session keyring holding SESSION_SECRET."""
    command = [sys.executable, "-c", IN_A_SESSION_WITH_A_KEY, sys.executable]
    done = subprocess.run(
        [*command, "-m", "failgate_hooks", *args],
        cwd=repo.path, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout + done.stderr


def test_a_key_in_failgate_s_session_keyring_is_out_of_the_verifier_s_reach(
    tmp_path: Path,
) -> None:
    repo = gated(tmp_path / "repo", READS_THE_SESSION_KEYRING)
    code, text = in_a_session_with_a_key(repo, *CHECK, "--sandbox")
    assert SESSION_SECRET not in text, text
    assert "keyctl: EPERM" in text, text
    assert code == 1, text
    # The control: unsandboxed, the verifier reads the key, and so passes.
    code, text = in_a_session_with_a_key(repo, *CHECK)
    assert code == 0, text
    assert "CLEARED" in text, text


def test_a_server_s_session_key_is_out_of_a_pushed_verifier_s_reach(tmp_path: Path) -> None:
    """The pre-receive hook runs with the server's session keyring; the pushed code in it."""
    repo = gated(tmp_path / "work", READS_THE_SESSION_KEYRING)
    remote = with_remote(repo, tmp_path / "remote.git")
    install_pre_receive(remote, "--exec")
    hook = remote / "hooks" / "pre-receive"
    lines = hook.read_text().splitlines()
    wrapped = f"exec {sys.executable} -c '{IN_A_SESSION_WITH_A_KEY}' "
    assert "'" not in IN_A_SESSION_WITH_A_KEY
    hook.write_text("\n".join([*lines[:-1], wrapped + lines[-1].removeprefix("exec ")]) + "\n")
    repo.write("NEWS", "a change to push\n")
    repo.commit("a change the gate judges")
    before = remote_ref(remote, "refs/heads/main")
    refused = push(repo, "main")
    assert SESSION_SECRET not in refused.stderr, refused.stderr
    assert refused.returncode != 0, refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before


def test_io_uring_userfaultfd_perf_events_bpf_and_the_keyrings_are_refused(
    tmp_path: Path,
) -> None:
    repo = gated(tmp_path / "repo", CALLS_THE_KERNEL_SURFACE)
    code, text = in_a_session_with_a_key(repo, *CHECK, "--sandbox")
    assert code == 0, text
    assert "CLEARED" in text, text


# Makes a user namespace of its own, where it would hold every capability; exits 0 only
# when that is refused.
MAKES_A_USER_NAMESPACE = """\
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.unshare(0x10000000) == 0:  # CLONE_NEWUSER
    sys.exit("made a user namespace: " + open("/proc/self/status").read().split("CapEff:")[1])
print("unshare:", os.strerror(ctypes.get_errno()))
"""


def test_the_pushed_code_cannot_make_a_user_namespace(tmp_path: Path) -> None:
    assert nested_userns_refused(shutil.which("bwrap") or "bwrap"), "bwrap before 0.8 here"
    repo = gated(tmp_path / "repo", MAKES_A_USER_NAMESPACE)
    code, text = outcome(repo, "--sandbox")
    assert code == 0, text
    assert "CLEARED" in text, text


def a_bwrap(folder: Path, help_text: str, *, setuid: bool = False) -> str:
    """A `bwrap` whose --help says `help_text`, as bwrap prints it."""
    folder.mkdir()
    program = folder / "bwrap"
    program.write_text(f"#!/bin/sh\ncat <<'END'\n{help_text}\nEND\n")
    program.chmod(0o4755 if setuid else 0o755)
    return str(program)


def test_a_bwrap_before_0_8_or_a_setuid_one_is_run_without_disable_userns(
    tmp_path: Path,
) -> None:
    """Either would refuse --disable-userns, and with it every sandbox, where 0.6 is what
    Ubuntu 22.04 ships."""
    older = a_bwrap(tmp_path / "0.6", "usage: bwrap [OPTIONS...] [--] COMMAND\n  --unshare-all")
    setuid = a_bwrap(tmp_path / "setuid", "  --disable-userns   Disable ...", setuid=True)
    current = a_bwrap(tmp_path / "0.8", "  --disable-userns   Disable ...")
    assert nested_userns_refused(older) == ()
    assert nested_userns_refused(setuid) == ()
    assert nested_userns_refused(current) == ("--unshare-user", "--disable-userns")


# A vsock socket, the way to a virtual machine's host that no network namespace closes;
# exits 0 only when it is refused, and the sockets a test suite makes are not.
MAKES_A_VSOCK_SOCKET = """\
import socket, sys
with socket.socket(socket.AF_UNIX) as unix, socket.socket(socket.AF_INET) as inet:
    pass
try:
    socket.socket(40, socket.SOCK_STREAM).close()  # AF_VSOCK
except PermissionError:
    sys.exit(0)
except OSError as exc:
    sys.exit(f"refused by the kernel, not the filter: {exc}")
sys.exit("made a vsock socket")
"""


@pytest.mark.parametrize("network", ["", "sandbox_network = true\n"], ids=["none", "shared"])
def test_the_pushed_code_cannot_make_a_vsock_socket(tmp_path: Path, network: str) -> None:
    """With or without the host's network: vsock is in neither namespace."""
    config = f'sandbox = "bwrap"\n{network}'
    repo = gated(tmp_path / "repo", MAKES_A_VSOCK_SOCKET, config=config)
    code, text = outcome(repo)
    assert code == 0, text
    assert "CLEARED" in text, text


# What a verifier ordinarily runs, under everything the filter and bwrap now refuse: make,
# which runs sh and python, Python's threads and a process pool, and a pytest run.
RUNS_MAKE_THREADS_AND_PYTEST = """\
import subprocess, sys
open("Makefile", "w").write("check:\\n\\t@echo make ran\\n\\t@" + sys.executable + " -c pass\\n")
open("test_it.py", "w").write(
    "import concurrent.futures as f\\n"
    "def test_it():\\n"
    "    with f.ThreadPoolExecutor(4) as threads, f.ProcessPoolExecutor(2) as processes:\\n"
    "        assert sum(threads.map(abs, [-1, 2])) == sum(processes.map(abs, [-1, 2])) == 3\\n"
)
subprocess.run(["make", "-s", "check"], check=True)
subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_it.py"],
               check=True)
"""


def test_a_verifier_that_runs_make_threads_and_pytest_runs_as_before(tmp_path: Path) -> None:
    repo = gated(tmp_path / "repo", RUNS_MAKE_THREADS_AND_PYTEST)
    code, text = outcome(repo, "--sandbox")
    assert code == 0, text
    assert "CLEARED" in text, text
