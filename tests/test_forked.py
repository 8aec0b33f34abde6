"""forked.Child: work on the other core that can only save time, never change an answer."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from failgate_hooks.forked import Child


def test_the_work_runs_in_another_process_and_its_result_comes_back() -> None:
    with Child(lambda: (os.getpid(), {"rows": [1, 2, 3]})) as child:
        result = child.result()
    if sys.platform != "linux":
        assert result is None  # no fork there: the caller does the work itself
        return
    pid, found = result
    assert pid != os.getpid()
    assert found == {"rows": [1, 2, 3]}


def fails() -> None:
    os.write(2, b"a warning the terminal must not show\n")
    raise RuntimeError("a child that fails")


def test_a_child_that_fails_gives_no_result_and_says_nothing(capfd: object) -> None:
    with Child(fails) as child:
        assert child.result() is None
    out, err = capfd.readouterr()  # type: ignore[attr-defined]
    assert (out, err) == ("", "")  # the parent redoes the work and reports what fails


def test_no_fork_while_another_thread_runs() -> None:
    # a lock the other thread held would stay held in the child forever
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        with Child(os.getpid) as child:
            assert child.result() is None
    finally:
        stop.set()
        other.join()


def test_leaving_the_block_first_ends_the_child() -> None:
    read_end, write_end = os.pipe()

    def wait_forever() -> None:
        os.read(read_end, 1)  # nothing is ever written

    with Child(wait_forever) as child:
        pid = child._pid
        assert pid
    # reaped: waiting on it again fails
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass
    else:
        raise AssertionError("the child was not reaped")
    finally:
        os.close(read_end)
        os.close(write_end)


def test_leaving_the_block_first_ends_what_the_child_started() -> None:
    # a look's `git status` must not outlive a check that failed first
    marker = f"failgate-test-{os.getpid()}"
    ready_read, ready_write = os.pipe()

    def start_and_wait() -> None:
        subprocess.Popen(["sh", "-c", f"sleep 30 # {marker}"])
        os.write(ready_write, b"x")
        time.sleep(30)

    with Child(start_and_wait) as child:
        assert child.started
        os.read(ready_read, 1)  # the grandchild runs
    os.close(ready_read)
    os.close(ready_write)
    for _ in range(50):  # SIGKILL is delivered at once; its reaping may take a moment
        left = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
        if not left.stdout:
            break
        time.sleep(0.05)
    assert left.stdout == "", left.stdout


# --------------------------------------------------------------------------- streaming


def test_a_streamed_item_arrives_while_the_child_still_works() -> None:
    if sys.platform != "linux":
        return  # no child there: nothing arrives, the caller reads it all itself
    read_end, write_end = os.pipe()

    def one_then_wait():  # type: ignore[no-untyped-def]
        yield {"part": 0}
        os.read(read_end, 1)  # nothing is ever written: the child works on
        yield {"part": 1}

    with Child(one_then_wait, stream=True) as child:
        got: list[object] = []
        deadline = time.monotonic() + 10
        while not got and time.monotonic() < deadline:
            got = child.arrived()  # never waits for the child
            time.sleep(0.01)
        assert got == [{"part": 0}]
        assert child.arrived() == []  # nothing new, and no wait for it
    os.close(read_end)
    os.close(write_end)


def test_a_child_that_fails_midway_gives_what_it_finished() -> None:
    def two_then_fail():  # type: ignore[no-untyped-def]
        yield 1
        yield 2
        raise RuntimeError("a child that fails")

    with Child(two_then_fail, stream=True) as child:
        got = child.arrived() + child.rest()
    assert got == ([1, 2] if sys.platform == "linux" else [])


def test_a_stream_larger_than_the_pipe_all_arrives_in_order() -> None:
    chunk = b"x" * 100_000

    def many():  # type: ignore[no-untyped-def]
        for i in range(40):  # 4 MB: more than any pipe holds
            yield i, chunk

    with Child(many, stream=True) as child:
        got = child.rest()
    if sys.platform == "linux":
        assert [i for i, _ in got] == list(range(40))
        assert all(data == chunk for _, data in got)


def test_a_frame_cut_short_is_held_back_and_a_torn_one_never_taken() -> None:
    if sys.platform != "linux":
        return
    big = b"y" * 4_000_000  # written in pieces: the pipe holds a quarter of it
    read_end, write_end = os.pipe()

    def big_then_wait():  # type: ignore[no-untyped-def]
        yield "whole"
        os.read(read_end, 1)  # the parent says when
        yield big
        os.read(read_end, 1)  # never comes
        yield "never sent"

    with Child(big_then_wait, stream=True) as child:
        deadline = time.monotonic() + 10
        got: list[object] = []
        while not got and time.monotonic() < deadline:
            got = child.arrived()
        assert got == ["whole"]
        os.write(write_end, b"x")
        time.sleep(0.2)  # the child writes the big frame until the pipe is full
        os.kill(child._pid, signal.SIGSTOP)  # and stops there: what is read is cut short
        assert child.arrived() == []  # held back: not an item, not an error
        os.kill(child._pid, signal.SIGCONT)
        parts: list[object] = []
        while not parts and time.monotonic() < deadline:
            parts = child.arrived()
        assert parts == [big]  # the piece held back was kept
    # the same big frame, but the child is killed while it writes
    with Child(big_then_wait, stream=True) as child:
        while child.arrived() != ["whole"] and time.monotonic() < deadline:
            pass
        os.write(write_end, b"x")
        time.sleep(0.2)
        os.kill(child._pid, signal.SIGKILL)
        assert child.rest() == []  # the frame was cut short: not taken, and no error
    os.close(read_end)
    os.close(write_end)


# --------------------------------------------------------------------------- both cores


def test_a_child_waits_while_its_parent_has_both_cores() -> None:
    from failgate_hooks.forked import both_cores, wait_for_a_core

    def when_free() -> float:
        wait_for_a_core()
        return time.monotonic()

    with both_cores():  # the work has begun when the child asks
        child = Child(when_free)
        time.sleep(0.3)
        released = time.monotonic()
    with child:
        began = child.result()
    if sys.platform == "linux":
        assert began is not None and began >= released


def test_both_cores_is_released_when_the_work_fails() -> None:
    from failgate_hooks.forked import _BOTH_CORES, both_cores

    try:
        with both_cores():
            assert _BOTH_CORES[0] == 1
            raise ValueError("the build failed")
    except ValueError:
        pass
    assert _BOTH_CORES[0] == 0


def test_a_child_whose_parent_was_killed_midway_waits_no_longer(tmp_path: Path) -> None:
    # killed while its work had both cores, the parent never clears the byte
    done = tmp_path / "done"
    script = f"""
import os, time
from failgate_hooks import forked

def work():
    forked.wait_for_a_core()
    open({str(done)!r}, "w").write("done")

with forked.both_cores():
    child = forked.Child(work)
    time.sleep(0.2)
    os.kill(os.getpid(), 9)
"""
    subprocess.run([sys.executable, "-c", script], check=False, timeout=60)
    if sys.platform != "linux":
        return  # no child there
    deadline = time.monotonic() + 10
    while not done.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert done.exists(), "the orphaned child is still waiting"


def test_nothing_after_a_garbled_frame_is_taken() -> None:
    import pickle

    def frame(data: bytes) -> bytes:
        return len(data).to_bytes(8, "big") + data

    child = Child(lambda: iter(()), stream=True)
    with child:
        child._buffer += frame(pickle.dumps("first")) + frame(b"not a pickle")
        assert child._frames() == ["first"]
        child._buffer += frame(pickle.dumps("after"))
        assert child._frames() == []
