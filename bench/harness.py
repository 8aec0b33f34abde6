"""What every timed part of the bench shares: a case, and the bench that runs it.

bench/bench.py assembles the run and bench/evidence.py adds its cases to it;
both take these from here, so neither imports the other.
"""

from __future__ import annotations

import shlex
import statistics
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

SLOW_S = 30.0  # a case slower than this runs once (see Bench.rounds)


def _nothing() -> None:
    pass


@dataclass
class Case:
    """One timed command, and what to do before each run of it (untimed)."""

    key: str
    argv: Sequence[str]
    cwd: Path
    before: Callable[[], None] = _nothing


@dataclass
class Bench:
    """The temporary folder, the environment every command runs in, and notes for the report."""

    root: Path
    env: dict[str, str]
    notes: list[str] = field(default_factory=list)

    def run(self, argv: Sequence[str], cwd: Path, *, ok: Sequence[int] = (0,), **env: str) -> str:
        """Run a command and return its standard output; stop the bench when it fails."""
        proc = subprocess.run(
            list(argv), cwd=cwd, env={**self.env, **env}, capture_output=True, check=False
        )
        if proc.returncode not in ok:
            output = (proc.stdout + proc.stderr).decode("utf-8", "replace")
            raise SystemExit(f"bench: {shlex.join(argv)} exited {proc.returncode}:\n{output}")
        return proc.stdout.decode("utf-8", "replace")

    def rounds(self, cases: Sequence[Case], runs: int) -> dict[str, float]:
        """Median seconds of each case over `runs` rounds, after one warm-up round.

        A case whose warm-up takes longer than SLOW_S runs no more: its warm-up is
        its one figure, and the notes say so. The bench stays within minutes even
        where a change has made something pathologically slow."""
        times: dict[str, list[float]] = {case.key: [] for case in cases}
        slow: dict[str, float] = {}
        for number in range(runs + 1):
            started = time.perf_counter()
            for case in cases:
                if case.key in slow:
                    continue
                case.before()
                start = time.perf_counter()
                self.run(case.argv, case.cwd)
                took = time.perf_counter() - start
                if number:
                    times[case.key].append(took)
                elif took > SLOW_S:
                    slow[case.key] = took
            label = f"round {number}/{runs}" if number else "warm-up round"
            print(f"  {label}: {time.perf_counter() - started:.1f} s", flush=True)
        for key, took in slow.items():
            times[key] = [took]
            self.notes.append(f"{key}: one run only, its warm-up took {took:.0f} s")
        return {key: statistics.median(values) for key, values in times.items()}
