"""Authority that a push cannot route around: deletions, config changes, nested refs.

Each test pushes with `--no-verify` to a real bare remote with the real
pre-receive hook, as anyone can, and asserts on the remote's refs.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import Repo, git
from tests.e2e.test_pre_receive import RELAXERS, install_pre_receive, push, server
from tests.worlds import KEY, budget_repo, fix_budget, record_failure, remote_ref, with_remote


def record_release_gate(repo: Repo) -> str:
    """A gate of the release branch only, committed there: main does not have it."""
    return repo.record(
        "rel:x", "--status", "observed", "--title", "Release 1 must not ship the old schema",
        "--trigger", "push", "--no-probe",
    )  # fmt: skip


def release_branch_with_its_own_event(repo: Repo) -> str:
    repo.git("checkout", "-q", "-b", "release/1")
    record_release_gate(repo)
    tip = repo.commit("the release's own gate")
    assert push(repo, "release/1").returncode == 0
    repo.git("checkout", "-q", "main")
    return tip


def test_deleting_a_protected_branch_whose_events_main_lacks_is_pending(tmp_path: Path) -> None:
    repo, remote = server(tmp_path)
    tip = release_branch_with_its_own_event(repo)

    refused = push(repo, ":release/1")
    assert refused.returncode != 0, refused.stderr
    assert "PENDING deletion of refs/heads/release/1" in refused.stderr
    assert "ledger/rel/x/" in refused.stderr
    # No review can merge a deletion: the advice says who may delete, and how to forbid it.
    assert "have a relaxer delete the ref" in refused.stderr
    assert "receive.denyDeletes true" in refused.stderr
    assert "Merge it into the default branch" not in refused.stderr
    assert remote_ref(remote, "refs/heads/release/1") == tip

    accepted = push(repo, ":release/1", user="alice")  # a relaxer may
    assert accepted.returncode == 0, accepted.stderr
    assert remote_ref(remote, "refs/heads/release/1") is None


def test_a_deletion_pushes_no_configuration_to_compare(tmp_path: Path) -> None:
    """The deleted tip's own configuration, laxer than main's, is not a change pushed."""
    repo, _ = server(tmp_path)
    repo.git("checkout", "-q", "-b", "release/1")
    record_release_gate(repo)
    repo.write("failgate.toml", RELAXERS + 'mode = "warn"\n')
    repo.commit("the release's own gate, and only warnings there")
    assert push(repo, "release/1", user="alice").returncode == 0
    refused = push(repo, ":release/1")
    assert "PENDING deletion of refs/heads/release/1" in refused.stderr
    assert "config change" not in refused.stderr, refused.stderr


def test_deleting_then_recreating_cannot_drop_an_event(tmp_path: Path) -> None:
    repo, remote = server(tmp_path)
    tip = release_branch_with_its_own_event(repo)
    assert push(repo, ":release/1").returncode != 0
    clean = repo.head()  # main: without rel:x
    recreated = push(repo, f"{clean}:refs/heads/release/1", "--force")
    assert recreated.returncode != 0, recreated.stderr
    assert remote_ref(remote, "refs/heads/release/1") == tip


def test_deleting_a_merged_release_branch_is_routine(tmp_path: Path) -> None:
    repo, remote = server(tmp_path)
    repo.git("branch", "release/0")
    assert push(repo, "release/0").returncode == 0
    deleted = push(repo, ":release/0")
    assert deleted.returncode == 0, deleted.stderr
    assert remote_ref(remote, "refs/heads/release/0") is None


def release_branch_with_its_own_config(repo: Repo, config: str) -> str:
    """release/1 cut from main with `config` of its own, pushed by a relaxer: its tip is
    accepted here, so that configuration is the one in force there."""
    repo.git("checkout", "-q", "-b", "release/1")
    repo.write("failgate.toml", config)
    tip = repo.commit("release/1's own configuration")
    pushed = push(repo, "release/1", user="alice")
    assert pushed.returncode == 0, pushed.stderr
    repo.git("checkout", "-q", "main")
    return tip


def test_deleting_a_ref_whose_configuration_is_stricter_than_mains_is_pending(
    tmp_path: Path,
) -> None:
    """Created again, release/1 would be judged by main's configuration alone: deleting
    it is what a push that drops its rule would be, a relaxation."""
    repo, remote = server(tmp_path)
    tip = release_branch_with_its_own_config(repo, RELAXERS + "require_evidence = true\n")

    refused = push(repo, ":release/1", user="bob")
    assert refused.returncode != 0, refused.stderr
    assert "PENDING deletion of refs/heads/release/1" in refused.stderr
    assert "require_evidence true -> false" in refused.stderr
    assert "have a relaxer delete the ref" in refused.stderr
    assert "receive.denyDeletes" in refused.stderr
    assert "event file(s)" not in refused.stderr  # it holds none main lacks
    assert remote_ref(remote, "refs/heads/release/1") == tip

    accepted = push(repo, ":release/1", user="alice")
    assert accepted.returncode == 0, accepted.stderr
    assert "RELAXED deletion of refs/heads/release/1" in accepted.stderr, accepted.stderr
    assert remote_ref(remote, "refs/heads/release/1") is None


def test_deleting_a_ref_with_narrower_relaxers_is_pending(tmp_path: Path) -> None:
    repo, remote = server(tmp_path)
    release = 'relaxers = []\nidentity_env = "REMOTE_USER"\n'
    tip = release_branch_with_its_own_config(repo, release)
    refused = push(repo, ":release/1", user="bob")
    assert refused.returncode != 0, refused.stderr
    assert "relaxers adds alice" in refused.stderr
    assert remote_ref(remote, "refs/heads/release/1") == tip


def test_deleting_a_ref_whose_configuration_is_mains_is_allowed(tmp_path: Path) -> None:
    repo, remote = server(tmp_path)
    repo.git("checkout", "-q", "-b", "release/1")
    repo.write("notes.txt", "release notes\n")
    repo.commit("work on the release, with main's configuration")
    assert push(repo, "release/1", user="alice").returncode == 0
    deleted = push(repo, ":release/1", user="bob")
    assert deleted.returncode == 0, deleted.stderr
    assert "PENDING" not in deleted.stderr, deleted.stderr
    assert remote_ref(remote, "refs/heads/release/1") is None


def test_deleting_a_ref_whose_signers_file_names_fewer_signers_is_pending(
    tmp_path: Path,
) -> None:
    """While release/1 stands a statement there must satisfy its signers file and
    main's; created again, main's alone."""
    signers = "allowed_signers"
    ci = 'ci@example.org namespaces="failgate" ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIci\n'
    dev = 'dev@example.org namespaces="failgate" ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIdev\n'
    config = RELAXERS + f'evidence_signers = "{signers}"\n'
    repo = budget_repo(tmp_path / "work")
    repo.write("failgate.toml", config)
    repo.write(signers, ci + dev)
    repo.commit("CI and dev may attest")
    remote = with_remote(repo, tmp_path / "remote.git")
    install_pre_receive(remote)
    repo.git("checkout", "-q", "-b", "release/1")
    repo.write(signers, ci)
    tip = repo.commit("only CI attests for the release")
    assert push(repo, "release/1", user="alice").returncode == 0
    refused = push(repo, ":release/1", user="bob")
    assert refused.returncode != 0, refused.stderr
    assert f"evidence_signers file {signers} adds dev@example.org" in refused.stderr
    assert remote_ref(remote, "refs/heads/release/1") == tip
    assert push(repo, ":release/1", user="alice").returncode == 0


def test_deleting_an_unprotected_branch_is_allowed(tmp_path: Path) -> None:
    repo, remote = server(tmp_path)
    repo.git("checkout", "-q", "-b", "wip")
    record_release_gate(repo)
    repo.commit("work in progress")
    assert push(repo, "wip").returncode == 0
    assert push(repo, ":wip").returncode == 0
    assert remote_ref(remote, "refs/heads/wip") is None


def loosen(repo: Repo, config: str, message: str = "loosen the gate") -> str:
    repo.write("failgate.toml", RELAXERS + config)
    return repo.commit(message)


def test_switching_to_warn_mode_is_a_pending_relaxation(tmp_path: Path) -> None:
    repo, remote = server(tmp_path)
    before = remote_ref(remote, "refs/heads/main")
    loosen(repo, 'mode = "warn"\n')
    refused = push(repo, "main")
    assert refused.returncode != 0, refused.stderr
    assert "PENDING config change" in refused.stderr
    assert 'mode "enforce" -> "warn"' in refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before
    assert push(repo, "main", user="alice").returncode == 0


def test_moving_the_ledger_folder_is_a_pending_relaxation(tmp_path: Path) -> None:
    repo, remote = server(tmp_path)
    before = remote_ref(remote, "refs/heads/main")
    loosen(repo, 'ledger = "ledger2"\n')
    refused = push(repo, "main")
    assert refused.returncode != 0, refused.stderr
    assert "ledger 'ledger' -> 'ledger2'" in refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before


def test_adding_oneself_to_the_relaxers_is_a_pending_relaxation(tmp_path: Path) -> None:
    repo, remote = server(tmp_path)
    before = remote_ref(remote, "refs/heads/main")
    repo.write("failgate.toml", 'relaxers = ["alice", "bob"]\nidentity_env = "REMOTE_USER"\n')
    repo.commit("bob relaxes too")
    refused = push(repo, "main")
    assert refused.returncode != 0, refused.stderr
    assert "relaxers adds bob" in refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before


def test_an_identity_the_pusher_controls_is_refused(tmp_path: Path) -> None:
    repo, remote = server(tmp_path)
    before = remote_ref(remote, "refs/heads/main")
    repo.write("failgate.toml", 'relaxers = ["."]\nidentity_env = "GIT_DIR"\n')
    repo.commit("GIT_DIR is . inside the hook")
    refused = push(repo, "main")
    assert refused.returncode != 0, refused.stderr
    assert "identity_env = 'GIT_DIR' is a variable the pusher can set" in refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before


def test_an_edit_elsewhere_in_pyproject_is_no_relaxation(tmp_path: Path) -> None:
    repo, remote = server(tmp_path)
    repo.write("pyproject.toml", '[project]\nname = "x"\nversion = "1.0.1"\n')
    head = repo.commit("bump the version, as a dependency bot does")
    accepted = push(repo, "main")
    assert accepted.returncode == 0, accepted.stderr
    assert "PENDING" not in accepted.stderr
    assert remote_ref(remote, "refs/heads/main") == head


def test_a_server_whose_head_names_master_still_reads_main(tmp_path: Path) -> None:
    repo = budget_repo(tmp_path / "work")
    repo.write("failgate.toml", RELAXERS)
    repo.commit("who may relax gates")
    remote = with_remote(repo, tmp_path / "remote.git")
    git(remote, "symbolic-ref", "HEAD", "refs/heads/master")  # a stock `git init --bare`
    record_failure(repo, "push")
    assert push(repo, "main").returncode == 0
    install_pre_receive(remote, "--exec")
    main = remote_ref(remote, "refs/heads/main")

    # A new protected ref has no old tip: main's ledger and config must still decide,
    # not the pushed commit's own `mode = "warn"`.
    loosen(repo, 'mode = "warn"\n')
    refused = push(repo, "HEAD:refs/heads/release/9")
    assert refused.returncode != 0, refused.stderr
    assert "remote: BLOCKED" in refused.stderr
    assert remote_ref(remote, "refs/heads/release/9") is None

    deleted = push(repo, ":main")  # main holds every event: deleting it drops them all
    assert deleted.returncode != 0, deleted.stderr
    assert "PENDING deletion of refs/heads/main" in deleted.stderr
    assert remote_ref(remote, "refs/heads/main") == main


def test_a_gated_commit_to_a_nested_tag_or_release_branch_is_refused(tmp_path: Path) -> None:
    repo, remote = server(tmp_path, "--exec")
    for ref in ("refs/tags/prod/v1", "refs/heads/release/2.0/hotfix"):
        refused = push(repo, f"HEAD:{ref}")
        assert refused.returncode != 0, (ref, refused.stderr)
        assert "remote: BLOCKED" in refused.stderr
        assert remote_ref(remote, ref) is None


def hook_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("PRE_COMMIT")}


def test_an_up_to_date_push_through_the_plain_hook_succeeds_silently(tmp_path: Path) -> None:
    repo = budget_repo(tmp_path / "work")
    with_remote(repo, tmp_path / "remote.git")
    assert repo.failgate("install").code == 0
    pushed = subprocess.run(
        ["git", "push", "origin", "main"], cwd=repo.path, capture_output=True, text=True,
        check=False, env=hook_env(),
    )  # fmt: skip
    assert pushed.returncode == 0, pushed.stderr
    assert "failgate" not in pushed.stderr
    assert "Everything up-to-date" in pushed.stderr


def test_empty_stdin_without_pre_commit_is_a_push_with_nothing_to_check(repo: Repo) -> None:
    entry = "from failgate_hooks.commands.hooks import pre_push_main; pre_push_main()"
    proc = subprocess.run(
        [sys.executable, "-c", entry, "origin", "url"], cwd=repo.path, capture_output=True,
        text=True, input="", check=False, env=hook_env(),
    )  # fmt: skip
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def huge_event(repo: Repo) -> str:
    path = repo.record(
        "ops:huge", "--status", "observed", "--title", "t", "--trigger", "push", "--no-probe",
    )  # fmt: skip
    target = repo.path / path
    target.write_text(target.read_text().replace('title = "t"', f'title = "{"x" * 70_000}"'))
    repo.commit("an event of 70 KB")
    return path


def test_an_event_file_over_the_limit_is_refused_by_the_server(tmp_path: Path) -> None:
    repo, remote = server(tmp_path)
    before = remote_ref(remote, "refs/heads/main")
    path = huge_event(repo)
    refused = push(repo, "main")
    assert refused.returncode != 0, refused.stderr
    assert "more than max_event_bytes (65536)" in refused.stderr
    assert path in refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before
    fsck = repo.failgate("fsck")
    assert fsck.code == 4 and "more than max_event_bytes" in fsck.out


def test_raising_max_event_bytes_is_a_pending_relaxation(tmp_path: Path) -> None:
    repo, remote = server(tmp_path)
    before = remote_ref(remote, "refs/heads/main")
    loosen(repo, "max_event_bytes = 1048576\n")
    refused = push(repo, "main")
    assert refused.returncode != 0, refused.stderr
    assert "max_event_bytes 65536 -> 1048576" in refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before


def test_fsck_lists_a_gitlink_in_an_entity_folder_and_goes_on(tmp_path: Path) -> None:
    repo = budget_repo(tmp_path / "work")
    record_failure(repo, "push")
    folder = next((repo.path / "ledger").rglob("*.toml")).parent.relative_to(repo.path)
    oid = repo.head()
    repo.git(
        "update-index",
        "--add",
        "--cacheinfo",
        f"160000,{oid},{folder}/20261129T230500Z-0000000a.toml",
    )
    repo.git("commit", "-q", "-m", "a gitlink in the ledger")
    fsck = repo.failgate("fsck")
    assert fsck.code == 4, fsck
    assert "Traceback" not in fsck.output and "is missing" not in fsck.output
    assert "must be regular files (mode 160000)" in fsck.out


def test_creating_the_branch_head_names_cannot_replace_the_servers_default(
    tmp_path: Path,
) -> None:
    # A stock `git init --bare` names master in HEAD while the team pushes main. Once
    # master exists it is the server's default branch: its ledger and configuration
    # decide every new ref. A pusher must not choose what that branch holds.
    repo = budget_repo(tmp_path / "work")
    repo.write("failgate.toml", RELAXERS)
    before_the_failure = repo.commit("who may relax gates")  # broken, and no ledger yet
    remote = with_remote(repo, tmp_path / "remote.git")
    git(remote, "symbolic-ref", "HEAD", "refs/heads/master")
    record_failure(repo, "push")
    assert push(repo, "main").returncode == 0
    install_pre_receive(remote, "--exec")

    # master: a fixed budget on a commit whose ledger predates the failure.
    repo.git("checkout", "-q", "-b", "old", before_the_failure)
    fixed_without_ledger = fix_budget(repo)
    created = push(repo, f"{fixed_without_ledger}:refs/heads/master")
    assert created.returncode != 0, created.stderr
    assert "PENDING" in created.stderr and "git symbolic-ref HEAD refs/heads/main" in created.stderr
    assert remote_ref(remote, "refs/heads/master") is None

    # Main's gate still holds a tag of the broken commit.
    tagged = push(repo, f"{before_the_failure}:refs/tags/v1")
    assert tagged.returncode != 0, tagged.stderr
    assert remote_ref(remote, "refs/tags/v1") is None

    allowed = push(repo, f"{fixed_without_ledger}:refs/heads/master", user="alice")
    assert allowed.returncode == 0, allowed.stderr


def test_a_relaxer_revoked_on_main_cannot_relax_a_release_branch(tmp_path: Path) -> None:
    repo = budget_repo(tmp_path / "work")
    repo.write("failgate.toml", 'relaxers = ["alice", "mallory"]\nidentity_env = "REMOTE_USER"\n')
    repo.commit("alice and mallory may relax gates")
    remote = with_remote(repo, tmp_path / "remote.git")
    record_failure(repo, "push")
    assert push(repo, "main").returncode == 0
    install_pre_receive(remote)
    assert push(repo, "main:refs/heads/release/1").returncode == 0

    repo.write("failgate.toml", RELAXERS)  # mallory is no longer trusted
    repo.commit("mallory may no longer relax gates")
    assert push(repo, "main", user="alice").returncode == 0

    repo.git("checkout", "-q", "-b", "release/1", "origin/release/1")
    assert repo.failgate("expire", KEY, "--note", "no longer needed").code == 0
    repo.commit("expire the gas budget gate on the release")
    before = remote_ref(remote, "refs/heads/release/1")
    refused = push(repo, "release/1", user="mallory")
    assert refused.returncode != 0, refused.stderr
    assert remote_ref(remote, "refs/heads/release/1") == before
    accepted = push(repo, "release/1", user="alice")
    assert accepted.returncode == 0, accepted.stderr


def test_a_ref_main_now_protects_is_protected_whatever_its_own_tip_says(tmp_path: Path) -> None:
    repo = budget_repo(tmp_path / "work")
    repo.write("failgate.toml", RELAXERS + 'protected_refs = ["refs/heads/main"]\n')
    repo.commit("only main is protected")
    remote = with_remote(repo, tmp_path / "remote.git")
    record_failure(repo, "push")
    assert push(repo, "main").returncode == 0
    install_pre_receive(remote)
    assert push(repo, "main:refs/heads/staging").returncode == 0  # not protected yet

    repo.write(
        "failgate.toml", RELAXERS + 'protected_refs = ["refs/heads/main", "refs/heads/staging"]\n'
    )
    repo.commit("staging ships too")
    assert push(repo, "main", user="alice").returncode == 0

    repo.git("checkout", "-q", "-b", "staging", "origin/staging")
    assert repo.failgate("expire", KEY, "--note", "no longer needed").code == 0
    repo.commit("expire the gas budget gate on staging")
    before = remote_ref(remote, "refs/heads/staging")
    refused = push(repo, "staging")
    assert refused.returncode != 0, refused.stderr
    assert remote_ref(remote, "refs/heads/staging") == before


def test_creating_main_cannot_replace_master_as_the_servers_default(tmp_path: Path) -> None:
    # HEAD names a branch nobody pushed (trunk): master is the default, and a main,
    # once it exists, would come before it.
    repo = budget_repo(tmp_path / "work")
    repo.write("failgate.toml", RELAXERS)
    before_the_failure = repo.commit("who may relax gates")
    remote = with_remote(repo, tmp_path / "remote.git")
    record_failure(repo, "push")
    repo.git("push", "-q", "--no-verify", "origin", "main:master")
    git(remote, "symbolic-ref", "HEAD", "refs/heads/trunk")
    git(remote, "update-ref", "-d", "refs/heads/main")
    install_pre_receive(remote, "--exec")

    repo.git("checkout", "-q", "-b", "old", before_the_failure)
    fixed_without_ledger = fix_budget(repo)
    created = push(repo, f"{fixed_without_ledger}:refs/heads/main")
    assert created.returncode != 0, created.stderr
    assert remote_ref(remote, "refs/heads/main") is None
    tagged = push(repo, f"{before_the_failure}:refs/tags/v1")
    assert tagged.returncode != 0, tagged.stderr
    assert remote_ref(remote, "refs/tags/v1") is None
