"""forked.Child: work on the other core that can only save time, never change an answer."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

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
