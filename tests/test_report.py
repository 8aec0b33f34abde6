"""One truth: `gates`, `export`, `log`, the agent's held gates and `check` agree on a gate's
state for one commit."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from failgate_hooks.app.report import decision_revisions, report
from failgate_hooks.git.repo import GitRepo
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


def test_gates_of_a_rev_reads_that_revs_configuration_as_check_does_with_no_remote(
    tmp_path: Path,
) -> None:
    """With nothing protected, `gates --rev X` once decided with the configuration of the
    work tree's HEAD, where `check --rev X` reads X's own: HEAD's mode = "warn" let gates
    say X "may proceed" where check held it."""
    repo = budget_repo(tmp_path / "work")
    record_failure(repo, "push")
    enforced = repo.head()  # no configuration: mode = "enforce"
    repo.write("pyproject.toml", '[tool.failgate]\nmode = "warn"\n')
    warned = repo.commit("only warn")
    with GitRepo.open(repo.path) as git_repo:
        at_x, at_head = report(git_repo, rev=enforced), report(git_repo)
    assert not any(r.protected for r in at_x.revisions)  # no remote: nothing is protected
    assert (at_x.config.mode, at_x.decision.exit_code) == ("enforce", 1)
    assert (at_head.config.mode, at_head.decision.exit_code) == ("warn", 0)
    for rev, code in ((enforced, 1), (warned, 0)):
        check = repo.failgate("check", "--rev", rev)
        gates = repo.failgate("gates", "--rev", rev)
        assert check.code == gates.code == code, (rev, check, gates)
    assert 'mode = "warn"' not in repo.failgate("gates", "--rev", enforced).out


def agent_view(repo: Repo) -> tuple[str | None, dict[str, bool]]:
    """The agent's held-gates document: its destination ref, and each held gate's blocks_push."""
    shown = repo.failgate("agent", "gates")
    assert shown.code == 0, shown
    document = json.loads(shown.out)
    return document["ref"], {g["entity_key"]: g["blocks_push"] for g in document["held"]}


def held_by_gates(repo: Repo, ref: str) -> dict[str, bool]:
    """What `failgate gates --ref REF` holds: each open, conflicting or invalid gate's blocking."""
    gates = json.loads(repo.failgate("gates", "--json", "--ref", ref).out)["gates"]
    held = ("open", "conflict", "invalid")
    return {g["entity_key"]: g["blocking"] for g in gates if g["state"] in held}


def test_an_agent_is_told_a_gate_is_held_until_check_cached_its_pass_for_head(
    tmp_path: Path,
) -> None:
    """The agent's view once assessed the ledger alone: a gate check had cleared was still
    listed as held, so the agent was sent to fix what was already fixed."""
    repo = budget_repo(tmp_path / "work")
    with_remote(repo, tmp_path / "remote.git")
    record_failure(repo, "push")
    fix_budget(repo)
    # the verifier would pass, but nothing has run it here: held, and blocking main
    assert agent_view(repo) == ("refs/heads/main", {KEY: True})
    assert held_by_gates(repo, "refs/heads/main") == {KEY: True}
    assert repo.failgate("check", "--ref", "refs/heads/main").code == 0
    assert agent_view(repo) == ("refs/heads/main", {})
    assert held_by_gates(repo, "refs/heads/main") == {}


def test_an_agent_is_told_a_gate_only_warns_where_the_decision_says_so(tmp_path: Path) -> None:
    repo = budget_repo(tmp_path / "work")
    with_remote(repo, tmp_path / "remote.git")
    record_failure(repo, "push")
    repo.git("switch", "-q", "-c", "topic")
    repo.git("push", "-q", "--no-verify", "-u", "origin", "topic")
    # a plain push goes to the unprotected topic (@{push}): the open gate only warns there
    assert agent_view(repo) == ("refs/heads/topic", {KEY: False})
    assert held_by_gates(repo, "refs/heads/topic") == {KEY: False}
    assert repo.failgate("check", "--ref", "refs/heads/topic").code == 0  # the verifier fails
    assert agent_view(repo) == ("refs/heads/topic", {KEY: False})


def test_a_run_that_signs_statements_holds_the_commit_s_configuration_to_the_built_in_one(
    tmp_path: Path,
) -> None:
    """With nothing protected, `check` takes the commit's configuration as it is, but
    `evidence attest` signs what it ran: a commit's `sandbox_network = true` gave the
    signed run the network, a run no hook would have made."""
    repo = budget_repo(tmp_path / "work")
    record_failure(repo, "push")
    repo.write("pyproject.toml", '[tool.failgate]\nsandbox = "bwrap"\nsandbox_network = true\n')
    repo.commit("the verifier may reach the network")
    with GitRepo.open(repo.path) as git_repo:
        looked, _, looked_config = decision_revisions(git_repo, "HEAD", None)
        signed, _, signed_config = decision_revisions(git_repo, "HEAD", None, signs=True)
    assert not any(r.protected for r in [*looked, *signed])  # no remote: nothing protected
    assert (looked_config.sandbox, looked_config.sandbox_network) == ("bwrap", True)
    assert (signed_config.sandbox, signed_config.sandbox_network) == ("bwrap", False)
