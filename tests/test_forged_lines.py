"""Text that is data cannot print a line of its own, nor an unbounded one.

A ledger can hold newlines and carriage returns anywhere a string goes: a
title, a note, a TOML key, a verifier's argv and output. Printed as they are,
they would let the ledger write lines that read as failgate's own verdicts
(`OK: fsck clean, 0 problems`). Every output path prints such a field on one
line, or each of its lines under a prefix of failgate's, and bounds it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import Repo, make_repo

FORGED = "\nFORGED: all gates cleared\r\nFORGED: fsck clean, 0 problems\r"
HUGE = "W" * 50_000
KEY = "ops:forged"
LONGEST_LINE = 2_000  # a line of failgate's output, however long the data it holds

EVENT = f'''\
schema = 1
id = "20261129T230500Z-0000000f"
entity_key = "{KEY}"
status = "observed"
follows = []
effective_at = 2026-11-29T23:05:00Z
title = {json.dumps(f"Title{FORGED}{HUGE}")}
triggers = ["push", "deploy"]
note = {json.dumps(f"Note{FORGED}")}
recorded_by = {json.dumps(f"Mallory{FORGED}")}

[verification]
command = ["python3", "checks/forge.py", {json.dumps(f"arg{FORGED}")}]
files = ["checks/forge.py"]
'''

# A second entity whose file has an unknown key that holds the payload: fsck and
# check report it by name.
BAD_EVENT = f"""\
schema = 1
id = "20261129T230500Z-0000000e"
entity_key = "ops:bad"
status = "observed"
follows = []
effective_at = 2026-11-29T23:05:00Z
title = "bad"
triggers = ["push"]
{json.dumps(f"key{FORGED}")} = 1
"""

VERIFIER = f"""\
import sys
print({json.dumps(f"out{FORGED}{HUGE}")})
sys.exit(1)
"""


@dataclass
class World:
    repo: Repo
    tmp: Path


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    tmp = tmp_path_factory.mktemp("forged")
    repo = make_repo(tmp / "work")
    repo.write("checks/forge.py", VERIFIER)
    repo.write("ledger/ops/forged/20261129T230500Z-0000000f.toml", EVENT)
    repo.write("ledger/ops/bad/20261129T230500Z-0000000e.toml", BAD_EVENT)
    repo.commit(f"record {FORGED}")
    return World(repo, tmp)


def run(world: World, *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "failgate_hooks", *args], cwd=world.repo.path,
        capture_output=True, check=False, timeout=300,
    )  # fmt: skip
    out = (proc.stdout + proc.stderr).decode("utf-8")
    assert "Traceback" not in out, out
    return out


def assert_no_forged_line(out: str) -> None:
    lines = out.replace("\r", "\n").split("\n")
    forged = [line for line in lines if line.lstrip().startswith("FORGED")]
    assert forged == [], forged
    longest = max(len(line) for line in lines)
    assert longest <= LONGEST_LINE, longest


def test_the_payload_is_read_as_written(world: World) -> None:
    # The world is what it says: the event parses, and its title holds the payload.
    out = run(world, "log", KEY, "--json")
    assert "FORGED: all gates cleared" in out


@pytest.mark.parametrize(
    "args",
    [
        ("check", "--trust-ledger", "--ref", "refs/heads/main"),
        ("check", "--trust-ledger", "--trigger", "deploy"),
        ("gates", "--trigger", "deploy"),
        ("fsck",),
        ("log", KEY),
        ("log", "ops:bad"),
        ("trust", "--all"),
        ("try", KEY),
    ],
    ids=lambda args: " ".join(args[:2]),
)
def test_a_command_prints_no_line_the_ledger_wrote(world: World, args: tuple[str, ...]) -> None:
    assert_no_forged_line(run(world, *args))
