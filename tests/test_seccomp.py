"""The sandbox's syscall filter, as the kernel would run it: a small classic-BPF evaluator
reads the compiled bytes, so what is tested is the program bwrap is given."""

from __future__ import annotations

import errno
import os
import struct

import pytest

from failgate_hooks.verify.seccomp import (
    AUDIT_ARCH_AARCH64,
    AUDIT_ARCH_X86_64,
    SECCOMP_RET_ALLOW,
    SECCOMP_RET_ERRNO,
    SECCOMP_RET_KILL_PROCESS,
    TABLES,
    UnknownArchitecture,
    syscall_filter,
)

EPERM = SECCOMP_RET_ERRNO | errno.EPERM
AUDIT_ARCH_I386 = 0x40000003
AUDIT_ARCH_ARM = 0x40000028


def verdict(program: bytes, *, arch: int, nr: int, first: int = 0) -> int:
    """What the kernel's seccomp returns for a call `nr` under `arch`, its first argument
    `first`: the program run on struct seccomp_data, with only the instructions a filter
    may hold here."""
    data = struct.pack("<iIQ6Q", nr, arch, 0, first, *([0] * 5))
    steps = [struct.unpack("<HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]
    pc, accumulator = 0, 0
    while True:
        code, jt, jf, k = steps[pc]
        if code == 0x20:  # BPF_LD | BPF_W | BPF_ABS
            (accumulator,) = struct.unpack_from("<I", data, k)
            pc += 1
        elif code == 0x15:  # BPF_JMP | BPF_JEQ | BPF_K
            pc += 1 + (jt if accumulator == k else jf)
        elif code == 0x35:  # BPF_JMP | BPF_JGE | BPF_K
            pc += 1 + (jt if accumulator >= k else jf)
        elif code == 0x06:  # BPF_RET | BPF_K
            return k
        else:
            raise AssertionError(f"an instruction the filter never needs: {code:#x}")


X86_64 = syscall_filter("x86_64")
AARCH64 = syscall_filter("aarch64")


def test_the_program_is_whole_sock_filter_instructions_that_begin_by_loading_the_arch() -> None:
    for program in (X86_64, AARCH64):
        assert len(program) % 8 == 0
        assert struct.unpack("<HBBI", program[:8]) == (0x20, 0, 0, 4)  # seccomp_data.arch
        assert struct.unpack("<HBBI", program[-8:]) == (0x06, 0, 0, SECCOMP_RET_KILL_PROCESS)


@pytest.mark.parametrize(
    ("program", "arch", "ptrace", "process_vm_writev", "pidfd_getfd"),
    [(X86_64, AUDIT_ARCH_X86_64, 101, 311, 438), (AARCH64, AUDIT_ARCH_AARCH64, 117, 271, 438)],
    ids=["x86_64", "aarch64"],
)
def test_a_call_into_another_process_is_refused_with_eperm(
    program: bytes, arch: int, ptrace: int, process_vm_writev: int, pidfd_getfd: int
) -> None:
    for nr in (ptrace, process_vm_writev, process_vm_writev - 1, pidfd_getfd):
        assert verdict(program, arch=arch, nr=nr) == EPERM, nr


# The kernel's numbers, written out (x86_64: arch/x86/entry/syscalls/syscall_64.tbl;
# aarch64: include/uapi/asm-generic/unistd.h), so a wrong one in a table cannot pass.
REFUSED = {
    "x86_64": {
        "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312,
        "pidfd_getfd": 438, "keyctl": 250, "add_key": 248, "request_key": 249,
        "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
        "userfaultfd": 323, "perf_event_open": 298, "bpf": 321,
    },
    "aarch64": {
        "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271, "kcmp": 272,
        "pidfd_getfd": 438, "keyctl": 219, "add_key": 217, "request_key": 218,
        "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
        "userfaultfd": 282, "perf_event_open": 241, "bpf": 280,
    },
}  # fmt: skip


@pytest.mark.parametrize("name", ["x86_64", "aarch64"])
def test_each_table_refuses_the_kernel_s_numbers_of_the_same_calls(name: str) -> None:
    assert dict(TABLES[name].refused) == REFUSED[name]
    program = syscall_filter(name)
    for nr in REFUSED[name].values():
        assert verdict(program, arch=TABLES[name].arch, nr=nr) == EPERM, nr


@pytest.mark.parametrize(
    ("program", "arch", "others"),
    [
        (X86_64, AUDIT_ARCH_X86_64, (0, 1, 57, 59, 60, 231, 434, 437, 439)),  # read … exit_group
        (AARCH64, AUDIT_ARCH_AARCH64, (63, 64, 93, 94, 220, 221, 434, 437, 439)),
    ],
    ids=["x86_64", "aarch64"],
)
def test_every_other_call_is_allowed(program: bytes, arch: int, others: tuple[int, ...]) -> None:
    for nr in others:
        assert verdict(program, arch=arch, nr=nr) == SECCOMP_RET_ALLOW, nr


def test_a_call_under_another_abi_kills_the_process() -> None:
    """i386 on x86_64 (ptrace is 26 there), arm32 on arm64, and the other table's arch."""
    for program, arch in [
        (X86_64, AUDIT_ARCH_I386),
        (X86_64, AUDIT_ARCH_AARCH64),
        (AARCH64, AUDIT_ARCH_ARM),
        (AARCH64, AUDIT_ARCH_X86_64),
    ]:
        for nr in (0, 26, 101, 117):
            assert verdict(program, arch=arch, nr=nr) == SECCOMP_RET_KILL_PROCESS, (arch, nr)


def test_the_x32_abi_on_x86_64_kills_the_process() -> None:
    """x32's ptrace is 521 with the x32 bit: no number of x86_64's table names it."""
    for nr in (0x40000000 | 521, 0x40000000 | 311, 0x40000000):
        assert verdict(X86_64, arch=AUDIT_ARCH_X86_64, nr=nr) == SECCOMP_RET_KILL_PROCESS


def test_a_machine_without_a_table_has_no_filter_and_says_so() -> None:
    with pytest.raises(UnknownArchitecture) as raised:
        syscall_filter("riscv64")
    assert str(raised.value).startswith("cannot build the sandbox's syscall filter for riscv64")
    assert "aarch64, x86_64" in str(raised.value)


def test_this_machine_has_a_table() -> None:
    """The sandbox tests run here: without a table every one of them would fail to start."""
    assert syscall_filter(os.uname().machine)


@pytest.mark.parametrize(
    ("program", "arch", "keyctl", "io_uring_setup", "userfaultfd"),
    [(X86_64, AUDIT_ARCH_X86_64, 250, 425, 323), (AARCH64, AUDIT_ARCH_AARCH64, 219, 425, 282)],
    ids=["x86_64", "aarch64"],
)
def test_the_keyrings_and_io_uring_and_userfaultfd_are_refused_with_eperm(
    program: bytes, arch: int, keyctl: int, io_uring_setup: int, userfaultfd: int
) -> None:
    for nr in (keyctl, keyctl - 1, keyctl - 2, io_uring_setup, userfaultfd):
        assert verdict(program, arch=arch, nr=nr) == EPERM, nr


@pytest.mark.parametrize(
    ("program", "arch", "socket"),
    [(X86_64, AUDIT_ARCH_X86_64, 41), (AARCH64, AUDIT_ARCH_AARCH64, 198)],
    ids=["x86_64", "aarch64"],
)
def test_a_vsock_socket_is_refused_and_every_other_family_allowed(
    program: bytes, arch: int, socket: int
) -> None:
    assert verdict(program, arch=arch, nr=socket, first=40) == EPERM  # AF_VSOCK
    assert verdict(program, arch=arch, nr=socket, first=(1 << 32) | 40) == EPERM  # an int
    for family in (1, 2, 10, 16, 17):  # AF_UNIX, AF_INET, AF_INET6, AF_NETLINK, AF_PACKET
        assert verdict(program, arch=arch, nr=socket, first=family) == SECCOMP_RET_ALLOW
    assert verdict(program, arch=arch, nr=socket + 1, first=40) == SECCOMP_RET_ALLOW
