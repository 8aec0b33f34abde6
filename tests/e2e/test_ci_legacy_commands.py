"""No line `failgate ci` writes on GitHub Actions is a workflow command from data.

The Actions runner reads a command from a line of stdout or stderr in two ways
(actions/runner, ActionCommand): `::name …::` at the start of the trimmed line,
and the legacy `##[name …]` anywhere in it. Text from the ledger and a verifier
reaches the JSON on stdout and the progress lines on stderr, outside any
stop-commands fence, so neither form may appear there.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import Repo
from tests.e2e.test_ci import pr_world, pull_request, write_hostile_entity

TITLE = "x ##[add-mask]BLOCKED ##[stop-commands]zz"
NOTE = "::error::a note ##[warning]forged"
ARG = "##[add-mask]from-argv"
CHECK = r"""import sys
print("##[error]forged the old way")
print("  ##[set-output name=decision;]pass")
print("::add-mask::from the verifier")
sys.exit(1)
"""
# failgate's own commands: an annotation titled failgate, and its stop-commands fence.
OURS = re.compile(
    r"::(?:error|warning) (?:file=[^,]*,)?title=failgate::.*"
    r"|::stop-commands::[0-9a-f]{32}|::[0-9a-f]{32}::"
)


def write_entity(repo: Repo) -> None:
    write_hostile_entity(repo, key="ci:legacy", title=TITLE, note=NOTE, check=CHECK, args=(ARG,))
    repo.commit("an entity whose text holds workflow commands")


@pytest.mark.parametrize("mode", [(), ("--json",)], ids=["text", "json"])
def test_no_line_of_ci_output_is_a_workflow_command_from_data(
    tmp_path: Path, mode: tuple[str, ...]
) -> None:
    repo = pr_world(tmp_path)
    write_entity(repo)
    result = pull_request(repo, tmp_path, *mode)
    assert result.code == 1, result
    # the verifier ran, and its progress line quoting the command was written
    assert "hostile/check.py" in result.err, result
    for line in result.output.splitlines():
        assert "##[" not in line, line
        if line.strip().startswith("::"):
            assert OURS.fullmatch(line.strip()), line
    if mode:
        doc = json.loads(result.out)
        # the JSON is the same value: only how `#` is written changed
        [gate] = [g for g in doc["gates"] if g["entity_key"] == "ci:legacy"]
        assert gate["title"] == TITLE
