"""SIGTERM and SIGHUP end failgate the way Ctrl-C does: by unwinding, never mid-step.

By default either signal kills the process where it stands, and a running
verifier, its checkout and failgate's temporary folders outlive it. Raised as
an exception instead, the signal runs every `finally` on the way out: the
verifier is ended, the folders removed. Then failgate dies by the same signal,
so whoever sent it (git, systemd, a CI runner) sees what it asked for.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived. A BaseException, as KeyboardInterrupt is: nothing that
    catches Exception may swallow it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise(signum: int, frame: object) -> None:
    # One ending: a second signal must not cut the clean-up short.
    for sig in (*ENDING_SIGNALS, signal.SIGINT):
        signal.signal(sig, signal.SIG_IGN)
    raise Terminated(signum)


@contextmanager
def ended_by_signals() -> Iterator[None]:
    """Within: SIGTERM and SIGHUP unwind as Terminated (unless they were ignored, as under
    nohup); at the end, die by the signal that arrived."""
    for sig in ENDING_SIGNALS:
        if signal.getsignal(sig) is not signal.SIG_IGN:
            signal.signal(sig, _raise)
    try:
        yield
    except Terminated as stop:
        die_by(stop.signum)


def die_by(signum: int) -> NoReturn:
    """End this process by `signum`, as if it had never been caught."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe, a closed file
            stream.flush()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    sys.exit(128 + signum)  # not reached: the signal is fatal once its default is back
