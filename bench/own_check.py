"""`failgate check` on failgate's own repository, as ratios to the import floor (issue 5).

Run from the repository root: `.venv/bin/python bench/own_check.py`. Two cases:
no verifier to run (`--trigger deploy`: failgate's own gate is push-only), and
one cached pass (`--ref refs/heads/main`: the dogfood gate, cached by the warm-up).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

RUNS = 9


def median_s(argv: list[str]) -> float:
    """Median wall time of `argv` as a fresh process, after one warm-up run."""
    subprocess.run(argv, capture_output=True, check=False)
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run(argv, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    """Print the three medians and the two ratios, measured in one run."""
    py = sys.executable
    check = [py, "-m", "failgate_hooks", "check"]
    floor = median_s([py, "-c", "import click, git"])
    no_verifier = median_s([*check, "--trigger", "deploy"])
    cached = median_s([*check, "--ref", "refs/heads/main", "--trust-ledger"])
    print(f'floor (python -c "import click, git"): {floor * 1000:.0f} ms')
    print(f"check, no verifier to run: {no_verifier * 1000:.0f} ms = {no_verifier / floor:.2f}x")
    print(f"check, one cached pass:    {cached * 1000:.0f} ms = {cached / floor:.2f}x")


if __name__ == "__main__":
    main()
