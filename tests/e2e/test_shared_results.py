"""One push of several refs runs a commit's verifier once for each way it must run.

Refs of one push share their verifiers' results, so that a commit pushed to main and a
release branch runs each gate once. A release branch's configuration may ask for more
than main's (no network, a shorter default timeout): its ref must never take a result
that ran without that. A real push of two refs to a real bare repository whose
pre-receive hook runs verifiers (`--exec`, in bubblewrap). A gate recorded on main
after the release was cut has its pinned files from main for both refs: only their
configurations tell the two runs apart."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.test_pre_receive import RELAXERS, install_pre_receive, push
from tests.worlds import KEY, budget_repo, remote_ref, with_remote

# Passes with a network and fails without one: then lo is the only interface.
NEEDS_THE_NETWORK = 'test "$(grep -c : /proc/net/dev)" -gt 1\n'
CONFIG = RELAXERS + 'protected_refs = ["refs/heads/release/*"]\n'


def test_a_pass_run_with_main_s_network_does_not_clear_a_release_without_one(
    tmp_path: Path,
) -> None:
    repo = budget_repo(tmp_path / "work")
    repo.write("failgate.toml", CONFIG + "sandbox_network = true\n")
    repo.write("checks/online.sh", NEEDS_THE_NETWORK)
    repo.commit("main's verifiers may use the network")
    remote = with_remote(repo, tmp_path / "remote.git")
    install_pre_receive(remote, "--exec")
    repo.git("checkout", "-q", "-b", "release/1")
    repo.write("failgate.toml", CONFIG)
    repo.commit("release branches run their verifiers offline")
    assert push(repo, "release/1", user="alice").returncode == 0  # accepted: reviewed
    repo.git("checkout", "-q", "main")
    repo.record(KEY, "--status", "observed", "--title", "needs the network", "--trigger",
                "push", "--verify", "sh checks/online.sh", "--verify-file", "checks/online.sh",
                "--no-probe")  # fmt: skip
    repo.commit("a gate on every push, recorded after the release was cut")
    assert push(repo, "main", user="alice").returncode == 0  # its verifier passed online
    repo.git("merge", "-q", "--no-edit", "release/1")
    main, release = (
        remote_ref(remote, "refs/heads/main"),
        remote_ref(remote, "refs/heads/release/1"),
    )

    # main is decided first, with the network (main's configuration): it passes there
    both = push(repo, "HEAD:refs/heads/main", "HEAD:refs/heads/release/1")
    assert both.returncode != 0, both.stderr
    assert f"CLEARED {KEY}" in both.stderr and f"OPEN {KEY}" in both.stderr, both.stderr
    assert both.stderr.count("running verifier for") == 2, both.stderr
    assert remote_ref(remote, "refs/heads/main") == main
    assert remote_ref(remote, "refs/heads/release/1") == release
