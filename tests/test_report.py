"""One truth: `gates`, `export`, `log` and `check` agree on a gate's state for one commit."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.conftest import Repo
from tests.worlds import KEY, budget_repo, fix_budget, record_failure, with_remote


def states(repo: Repo) -> dict[str, tuple[str, int]]:
    """Each reporting command's state of KEY at HEAD (push, unknown ref), and its exit code."""
    gates = repo.failgate("gates", "--json")
    export = repo.failgate("export", "--json")
    log = repo.failgate("log", KEY, "--json")
    (gate,) = json.loads(gates.out)["gates"]
    (entity,) = json.loads(export.out)["entities"]
    return {
        "gates": (gate["state"], gates.code),
        "export": (entity["state"], export.code),
        "log": (json.loads(log.out)["gate"]["state"], log.code),
    }


def gate_verifier(repo: Repo) -> dict[str, object]:
    (gate,) = json.loads(repo.failgate("gates", "--json").out)["gates"]
    return gate["verifier"]  # type: ignore[no-any-return]


def test_a_verifier_not_run_is_said_so_and_held_with_exit_1_never_blocked_with_exit_0(
    tmp_path: Path,
) -> None:
    repo = budget_repo(tmp_path / "work")
    record_failure(repo, "push")
    assert states(repo) == {"gates": ("open", 1), "export": ("open", 0), "log": ("open", 0)}
    assert gate_verifier(repo)["outcome"] == "not_run"
    text = repo.failgate("gates")
    assert "not run: no pass of it is cached here; failgate check runs it" in text.out
    assert "BLOCKED: 1 gate(s) still open (1 whose verifier was not run here)" in text.out
    assert text.code == 1


def test_a_pass_check_cached_clears_the_gate_in_gates_export_and_log(tmp_path: Path) -> None:
    repo = budget_repo(tmp_path / "work")
    record_failure(repo, "push")
    fix_budget(repo)
    assert states(repo)["gates"] == ("open", 1)  # nothing has run the verifier yet
    check = repo.failgate("check", "--json")
    assert check.code == 0, check
    (checked,) = json.loads(check.out)["gates"]
    assert checked["state"] == "cleared"
    assert states(repo) == {
        "gates": ("cleared", 0),
        "export": ("cleared", 0),
        "log": ("cleared", 0),
    }
    assert gate_verifier(repo)["cached"] is True
    assert "CLEARED" in repo.failgate("log", KEY).out


def test_a_failing_verifier_is_never_cached_so_gates_keeps_saying_not_run(tmp_path: Path) -> None:
    repo = budget_repo(tmp_path / "work")
    record_failure(repo, "push")
    assert repo.failgate("check").code == 1
    assert gate_verifier(repo)["outcome"] == "not_run"
    assert states(repo)["export"] == ("open", 0)


def test_an_untrusted_verifier_reads_as_not_trusted_in_every_report(tmp_path: Path) -> None:
    repo = budget_repo(tmp_path / "work")
    record_failure(repo, "push")
    fix_budget(repo)
    assert repo.failgate("check").code == 0
    (repo.path / repo.git("rev-parse", "--git-common-dir") / "failgate" / "trust.json").unlink()
    # the pass is cached, but check would not use it for a verifier it does not trust
    assert repo.failgate("check").code == 1
    assert states(repo)["gates"] == ("open", 1)
    assert gate_verifier(repo)["outcome"] == "untrusted"


def test_check_reads_the_configuration_in_force_as_the_hook_does_not_the_commits_own(
    tmp_path: Path,
) -> None:
    """`check --ref refs/heads/main` once read the commit's own mode = "warn" and allowed
    what the hook, reading the remote main's configuration, refused."""
    repo = budget_repo(tmp_path / "work")
    with_remote(repo, tmp_path / "remote.git")
    record_failure(repo, "push")
    repo.write("failgate.toml", 'mode = "warn"\n')
    repo.commit("only warn")
    check = repo.failgate("check", "--ref", "refs/heads/main")
    assert check.code == 1, check
    assert "RELAXED config change at" in check.out and "mode" in check.out, check
    assert repo.failgate("install").code == 0
    pushed = subprocess.run(
        ["git", "push", "origin", "main"], cwd=repo.path, capture_output=True, text=True,
        check=False, timeout=300,
    )  # fmt: skip
    assert pushed.returncode == check.code, pushed.stderr
    gates = repo.failgate("gates", "--ref", "refs/heads/main")
    assert gates.code == 1, gates
