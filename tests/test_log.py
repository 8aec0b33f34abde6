"""`failgate log`: an entity's lifecycle as resolution sees it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Repo

KEY = "deploy:mainnet:gas-budget"


def test_log_shows_order_superseded_heads_and_state(repo: Repo) -> None:
    first = Path(
        repo.record(KEY, "--status", "observed", "--title", "Gas budet", "--trigger", "push")
    ).stem
    fixed = Path(
        repo.record(KEY, "--status", "observed", "--title", "Gas budget", "--supersedes", first)
    ).stem
    repo.commit("record and fix a typo")
    later = Path(repo.record(KEY, "--status", "diagnosed", "--note", "per deploy")).stem
    repo.commit("diagnose")
    result = repo.failgate("log", KEY)
    assert result.code == 0, result
    lines = result.out.splitlines()
    assert lines[0] == f"LOG {KEY} — Gas budget"
    order = [line.split()[1] if line.startswith("*") else line.split()[0] for line in lines[1:4]]
    assert order == [first, fixed, later]
    assert f"superseded by {fixed}" in lines[1]
    assert lines[3].startswith(f"* {later}") and "head" in lines[3]
    assert "| per deploy" in result.out
    assert "RESOLUTION resolved: status diagnosed; triggers push" in result.out
    doc = json.loads(repo.failgate("log", KEY, "--json").out)
    assert [e["id"] for e in doc["events"]] == [first, fixed, later]
    assert doc["heads"] == [later]
    assert doc["events"][0]["superseded"] is True


def test_log_of_an_unknown_entity_is_a_usage_error(repo: Repo) -> None:
    result = repo.failgate("log", "no:such")
    assert result.code == 2, result
    assert "no entity 'no:such'" in result.err
