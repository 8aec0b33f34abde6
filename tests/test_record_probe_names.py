"""record's probe and the files its command names: a script HEAD lacks is no verdict.

The probe runs the verifier in a checkout of HEAD. A script written but not
committed, or a typo in --verify, is not there, so the interpreter fails to open
it: a failure that says nothing of the gate. The probe says so instead of "as
expected", by the rule replay gives no verdict by (a commit lacking a file the
command names). Real repositories, the real CLI.
"""

from __future__ import annotations

import pytest

from tests.conftest import Repo

FAILS = "import sys\nsys.exit(1)\n"


def record(repo: Repo, key: str, command: str, *extra: str) -> str:
    """`failgate record` of an observed event verified by `command`; its standard error."""
    result = repo.failgate(
        "record", key, "--status", "observed", "--title", "t", "--trigger", "push",
        "--verify", command, *extra,
    )  # fmt: skip
    assert result.code == 0, result  # the event is written all the same
    return result.err


def probe_line(err: str) -> str:
    (line,) = [line for line in err.splitlines() if "probe" in line]
    return line


def test_a_script_written_but_not_committed_is_no_verdict_not_a_failure(repo: Repo) -> None:
    repo.write("chk.py", FAILS)
    line = probe_line(record(repo, "a:d", "python3 chk.py"))
    assert "as expected" not in line and "the gate holds" not in line, line
    assert line == (
        f"warning: probe: not probed, no verdict: the command names chk.py (in the work tree, "
        f"not committed: commit it, then record again), which HEAD ({repo.head()[:12]}) does "
        "not hold and the entity does not pin: run there, the verifier would fail for want "
        "of it, not for the failure"
    )
    repo.commit("the check")  # committed, the same command probes as expected
    assert "as expected" in probe_line(record(repo, "a:e", "python3 chk.py"))


@pytest.mark.parametrize(
    ("command", "named"),
    [("python3 checks/x.py", "checks/x.py"), ("sh check.sh", "check.sh")],
    ids=["python", "sh"],
)
def test_a_typo_in_the_command_is_no_verdict_and_said_as_one(
    repo: Repo, command: str, named: str
) -> None:
    repo.write("checks/check.py", FAILS)
    repo.write("check.py", FAILS)
    repo.commit("the checks, under other names")
    line = probe_line(record(repo, "a:d", command))
    assert line.startswith(
        f"warning: probe: not probed, no verdict: the command names {named} (not in the work "
        f"tree either: a typo in --verify?), which HEAD ({repo.head()[:12]}) does not hold"
    ), line


def test_a_pinned_script_not_yet_committed_is_probed_from_the_work_tree(repo: Repo) -> None:
    repo.write("chk.py", FAILS)
    err = record(repo, "a:d", "python3 chk.py", "--verify-file", "chk.py")
    assert "warning: pinned verifier file chk.py is not committed at HEAD" in err, err
    assert "as expected" in probe_line(err)  # the pin is laid over the checkout
