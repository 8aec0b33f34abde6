"""The sandbox's system-call filter: a classic-BPF seccomp program for bwrap's `--seccomp`.

Inside the sandbox the pushed code runs as the same uid as the processes that
report a verifier's exit status (bwrap's pid 1, the verifier itself when it
runs the code under test in a child). Where the kernel lets a uid trace its
own processes (Yama's ptrace_scope 0, the default on Debian and RHEL), that
code could attach to one of them and make a failed verifier exit 0. The
filter refuses, with EPERM, every call that reaches into another process:
ptrace, process_vm_readv and process_vm_writev, pidfd_getfd (another
process's open files) and kcmp. It refuses too the calls that read the
kernel's keyrings (keyctl, add_key, request_key: the session keyring failgate
runs in is the sandbox's), and io_uring, userfaultfd, perf_event_open and bpf:
kernel surface no test runner needs, which Docker's default profile refuses
as well. And a socket of the vsock family: no network namespace isolates it,
and on a virtual machine it reaches the host's services. Everything else is
allowed.

A filter is only as good as its syscall numbers, which differ by
architecture: there is a table for each one failgate knows, a call made
under any other ABI (x86_64's i386 and x32, arm64's arm32) kills the
process, and a machine without a table gets no filter at all, and so no
sandbox (UnknownArchitecture).
"""

from __future__ import annotations

import errno
import struct
from typing import NamedTuple

# linux/audit.h
AUDIT_ARCH_X86_64 = 0xC000003E
AUDIT_ARCH_AARCH64 = 0xC00000B7
# linux/seccomp.h
SECCOMP_RET_KILL_PROCESS = 0x80000000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_ALLOW = 0x7FFF0000
# linux/filter.h: struct sock_filter {u16 code; u8 jt; u8 jf; u32 k}
INSTRUCTION = struct.Struct("<HBBI")
LOAD_WORD = 0x20  # BPF_LD | BPF_W | BPF_ABS
JUMP_IF_EQUAL = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
JUMP_IF_AT_LEAST = 0x35  # BPF_JMP | BPF_JGE | BPF_K
RETURN = 0x06  # BPF_RET | BPF_K
# struct seccomp_data {int nr; u32 arch; u64 instruction_pointer; u64 args[6]}
NR_OFFSET = 0
ARCH_OFFSET = 4
FIRST_ARGUMENT_OFFSET = 16  # its low 32 bits, on both little-endian machines; an int for socket
# linux/socket.h: a network namespace does not isolate vsock, the way to a VM's host.
AF_VSOCK = 40
# x86_64's x32 ABI: the same arch, with this bit in nr (x32's ptrace is 521 | this bit).
X32_SYSCALL_BIT = 0x40000000


class Table(NamedTuple):
    """One architecture's identity in seccomp_data and its numbers for the refused calls."""

    arch: int
    refused: dict[str, int]
    socket: int
    x32_bit: bool = False


TABLES = {
    "x86_64": Table(
        AUDIT_ARCH_X86_64,
        {
            "ptrace": 101,
            "process_vm_readv": 310,
            "process_vm_writev": 311,
            "kcmp": 312,
            "pidfd_getfd": 438,
            # The session keyring failgate runs in is the sandbox's too: its keys (kerberos,
            # ecryptfs, a CI's tokens) are read with these, as Docker's default profile refuses.
            "keyctl": 250,
            "add_key": 248,
            "request_key": 249,
            # Kernel surface no test runner needs, each refused by Docker's default profile:
            "io_uring_setup": 425,  # io_uring: a long run of privilege escalations
            "io_uring_enter": 426,
            "io_uring_register": 427,
            "userfaultfd": 323,  # stalls a kernel copy at will, the usual lever for a race
            "perf_event_open": 298,  # counters on other processes of the uid; a CVE stream
            "bpf": 321,  # where kernel.unprivileged_bpf_disabled is 0: programs in the kernel
        },
        socket=41,
        x32_bit=True,
    ),
    "aarch64": Table(
        AUDIT_ARCH_AARCH64,
        {
            "ptrace": 117,
            "process_vm_readv": 270,
            "process_vm_writev": 271,
            "kcmp": 272,
            "pidfd_getfd": 438,
            # The same calls as x86_64's, for the same reasons.
            "keyctl": 219,
            "add_key": 217,
            "request_key": 218,
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
            "userfaultfd": 282,
            "perf_event_open": 241,
            "bpf": 280,
        },
        socket=198,
    ),
}


class UnknownArchitecture(Exception):
    """failgate has no syscall table for this machine, so it cannot build the filter."""

    def __init__(self, machine: str) -> None:
        known = ", ".join(sorted(TABLES))
        super().__init__(
            f"cannot build the sandbox's syscall filter for {machine}: failgate knows the "
            f"system-call numbers of {known} only, and never runs a verifier unfiltered"
        )
        self.machine = machine


def syscall_filter(machine: str) -> bytes:
    """The compiled program for `machine` (os.uname().machine), as bwrap's --seccomp reads it."""
    table = TABLES.get(machine)
    if table is None:
        raise UnknownArchitecture(machine)
    return b"".join(INSTRUCTION.pack(*step) for step in program(table))


def program(table: Table) -> list[tuple[int, int, int, int]]:
    """The program's instructions (code, jt, jf, k): check the ABI, refuse, refuse a vsock
    socket, allow the rest."""
    numbers = list(table.refused.values())
    # The ABI's checks (3, x32's 1), one per number, the vsock check's 3: then the returns.
    allow = 3 + int(table.x32_bit) + len(numbers) + 3
    refuse, kill = allow + 1, allow + 2
    steps = [(LOAD_WORD, 0, 0, ARCH_OFFSET)]
    steps.append((JUMP_IF_EQUAL, 0, _jump(len(steps), kill), table.arch))
    steps.append((LOAD_WORD, 0, 0, NR_OFFSET))
    if table.x32_bit:
        steps.append((JUMP_IF_AT_LEAST, _jump(len(steps), kill), 0, X32_SYSCALL_BIT))
    for number in numbers:
        steps.append((JUMP_IF_EQUAL, _jump(len(steps), refuse), 0, number))
    steps.append((JUMP_IF_EQUAL, 0, _jump(len(steps), allow), table.socket))
    steps.append((LOAD_WORD, 0, 0, FIRST_ARGUMENT_OFFSET))
    steps.append((JUMP_IF_EQUAL, _jump(len(steps), refuse), 0, AF_VSOCK))
    steps.append((RETURN, 0, 0, SECCOMP_RET_ALLOW))
    steps.append((RETURN, 0, 0, SECCOMP_RET_ERRNO | errno.EPERM))
    steps.append((RETURN, 0, 0, SECCOMP_RET_KILL_PROCESS))
    return steps


def _jump(at: int, to: int) -> int:
    """A jump's offset, from the instruction at `at` to the one at `to`."""
    skipped = to - at - 1
    if not 0 <= skipped <= 0xFF:
        raise ValueError(f"a jump of {skipped} instructions does not fit in classic BPF")
    return skipped
