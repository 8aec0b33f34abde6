"""Python's cyclic garbage collector, kept out of failgate's way.

A run lives a second and builds ten thousand objects per thousand events, none in
cycles: the collector would only walk them again and again (a tenth of a
10,000-event check, a fifth of building a ledger index). Reference counting frees
them all the same.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def no_cycle_collection() -> Iterator[None]:
    """Paused for a piece of work, and as it was after: for a process that goes on."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


@contextmanager
def program_run() -> Iterator[None]:
    """A program's whole run (a hook, the `failgate` command): no cycle collection, in
    the run or after it. The run's objects are frozen at the end, out of the sight of
    the collection the interpreter makes as it exits: it would walk every one of them
    once more (5 ms of a check at 0 events; 50 ms, with the sweep `gc.enable` sets off,
    of a first check at 10,000). Only for a process that exits next."""
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
