"""Replay gives no verdict where a file the verifier's command names is missing.

`sh check.sh`, with check.sh added by the repair and not pinned, fails at the
parent only because sh cannot open the file: that is not the gate holding.
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Repo, make_repo

CHECK = "grep -q fixed app.txt\n"


def _history(tmp_path: Path, *pin: str) -> tuple[Repo, str, str, str]:
    """(repo, parent, repair, record's stderr): check.sh arrives with the repair."""
    repo = make_repo(tmp_path / "repo")
    repo.write("app.txt", "broken\n")
    parent = repo.commit("the failure")
    repo.write("app.txt", "fixed\n")
    repo.write("check.sh", CHECK)
    repair = repo.commit("the repair, and its check")
    recorded = repo.failgate(
        "record", "app:broken", "--status", "observed", "--title", "app is broken",
        "--trigger", "push", "--verify", "sh check.sh", "--no-probe", *pin,
    )  # fmt: skip
    assert recorded.code == 0, recorded
    repo.commit("record it")
    return repo, parent, repair, recorded.err


def test_a_step_without_the_script_the_command_names_is_no_verdict(tmp_path: Path) -> None:
    repo, parent, repair, recorded = _history(tmp_path)
    assert "the command names check.sh, which it does not pin" in recorded
    assert "--verify-file check.sh" in recorded
    result = repo.failgate("replay", f"{parent}..{repair}", "--entity", "app:broken")
    assert result.code == 1, result
    assert "REPLAY OK" not in result.out
    lines = result.out.splitlines()
    assert lines[1].startswith(f"{parent[:12]}  NO VERDICT  exit - "), result.out
    assert lines[2].startswith(f"{repair[:12]}  CLEARED  exit 0 "), result.out
    assert (
        f"REPLAY FAILED: no verdict at the parent {parent[:12]} (the command names check.sh, "
        "which this commit lacks and the entity does not pin: not run"
    ) in result.out


def test_a_pinned_script_still_holds_at_the_parent(tmp_path: Path) -> None:
    repo, parent, repair, recorded = _history(tmp_path, "--verify-file", "check.sh")
    # the pinned wrapper's words are read too: app.txt is named, and the parent has it
    assert "names check.sh" not in recorded
    assert "the command names app.txt, which it does not pin" in recorded
    result = repo.failgate("replay", f"{parent}..{repair}", "--entity", "app:broken")
    assert result.code == 0, result
    assert f"{parent[:12]}  HELD  exit 1 " in result.out
    assert "REPLAY OK" in result.out
