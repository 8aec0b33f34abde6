"""A pinned script started through a wrapper, against a module the commit adds beside it.

Python puts a script's own folder first on sys.path however it is named: `cd checks
&& python3 check.py`, `"$d/check.py"`, a pinned shell script that runs `"$(dirname "$0")/check.py"`,
`$PWD/checks/check.py`. Each world has the gate on main, on a real bare remote with a
real `failgate-pre-receive --exec`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from failgate_hooks.app import demo
from tests.conftest import Repo
from tests.e2e.test_pre_receive import RELAXERS, install_pre_receive, push
from tests.worlds import KEY, budget_repo, remote_ref, with_remote

HELD = "budget 50M < required 120M"
LENIENT_JSON = 'def load(handle):\n    return {"modules": 1, "gas_budget": 10**9}\n'
RUN_SH = '#!/bin/sh\nexec python3 "$(dirname "$0")/check_gas_budget.py"\n'

# (the verifier's command, the files pinned besides the check, what they hold)
WRAPPERS = {
    "a shell variable": ("sh -c 'd=checks; python3 \"$d/check_gas_budget.py\"'", {}),
    "a pinned shell script": ("sh checks/run.sh", {"checks/run.sh": RUN_SH}),
    "the working folder's path": (
        "sh -c 'python3 \"$PWD/checks/check_gas_budget.py\"'",
        {},
    ),
}


def wrapped_server(tmp_path: Path, command: str, more: dict[str, str]) -> tuple[Repo, Path]:
    """The budget world whose gate runs the pinned check through `command`, with `more`
    files pinned beside it; the hook installed on the remote."""
    repo = budget_repo(tmp_path / "work")
    for path, text in more.items():
        repo.write(path, text)
    repo.write("failgate.toml", RELAXERS)
    repo.commit("who may relax gates; the wrapper")
    remote = with_remote(repo, tmp_path / "remote.git")
    pins = [arg for path in [demo.CHECK_PATH, *more] for arg in ("--verify-file", path)]
    repo.record(
        KEY, "--status", "observed", "--title", demo.TITLE, "--trigger", "push",
        "--verify", command, *pins, "--no-probe",
    )  # fmt: skip
    repo.commit("record the gas budget failure")
    assert push(repo, "main").returncode == 0  # no server hook yet
    install_pre_receive(remote, "--exec")
    return repo, remote


@pytest.mark.parametrize("how", sorted(WRAPPERS))
def test_a_module_beside_a_pinned_script_a_wrapper_starts_is_refused_on_the_server(
    tmp_path: Path, how: str
) -> None:
    """However the command names the pinned check, a checks/json.py the commit adds is
    what its `import json` loads: the push is refused, and the change is a relaxation."""
    command, more = WRAPPERS[how]
    repo, remote = wrapped_server(tmp_path, command, more)
    repo.write("notes.txt", "more work on the broken budget\n")
    repo.commit("more work")
    control = push(repo, "main")
    assert control.returncode != 0 and HELD in control.stderr, control.stderr  # it runs
    before = remote_ref(remote, "refs/heads/main")
    repo.write("checks/json.py", LENIENT_JSON)
    broken = repo.commit("a json beside the check")
    refused = push(repo, "main")
    assert remote_ref(remote, "refs/heads/main") == before != broken, refused.stderr
    assert refused.returncode != 0
    assert "checks/json.py is not pinned, and " in refused.stderr
    [pending] = [line for line in refused.stderr.splitlines() if "PENDING" in line]
    assert "checks/json.py is not pinned" in pending
