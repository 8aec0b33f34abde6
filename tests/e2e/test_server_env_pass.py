"""On a server, env_pass hands the hook's own variables only to a reviewed verifier.

A real bare remote, a real pre-receive hook with `--exec` (so verifiers run in the
real bubblewrap sandbox), and a credential in the hook's environment, as a git
server or its wrapper sets one. Whoever can push to any branch can push an event,
and so a verifier and its env_pass: a new verifier that reads the environment is a
relaxation (only a relaxer's push lands it), and only one a protected revision
holds gets the variables.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tests.conftest import Repo, make_repo
from tests.e2e.test_pre_receive import RELAXERS, push
from tests.worlds import remote_ref, with_remote

SECRET = "s3cr3t-from-the-server-env"
WITHHELD = (
    "env_pass DEPLOY_TOKEN not passed: on a server only a verification a protected branch "
    "holds gets them, and this one came with the push"
)


@pytest.fixture(autouse=True)
def _bwrap_is_installed() -> None:
    # Never a skip: `make test` installs bubblewrap, and a run without it must fail loudly.
    assert shutil.which("bwrap"), "bubblewrap is missing: apt-get install bubblewrap"


def event(repo: Repo, key: str, id_: str, script: str) -> None:
    """A gate on push whose verifier is `sh -c script`, with env_pass DEPLOY_TOKEN."""
    folder = "/".join(key.split(":"))
    repo.write(
        f"ledger/{folder}/{id_}.toml",
        f"""schema = 1
id = "{id_}"
entity_key = "{key}"
status = "observed"
effective_at = 2026-12-04T02:00:00Z
follows = []
title = "{key}"
triggers = ["push"]

[verification]
command = ["sh", "-c", {script!r}]
env_pass = ["DEPLOY_TOKEN"]
""",
    )


def server_with_token(tmp_path: Path, config: str = "") -> tuple[Repo, Path]:
    """A remote whose main holds a reviewed gate that passes only with the server's
    DEPLOY_TOKEN; its hook runs `--exec` with DEPLOY_TOKEN in its environment."""
    repo = make_repo(tmp_path / "work")
    repo.write("failgate.toml", RELAXERS + config)
    # Its command names a prefix of the secret only, as the gate's report quotes it.
    check = 'case "$DEPLOY_TOKEN" in s3cr3t-from-*) exit 0;; esac; exit 1'
    event(repo, "ops:deploy", "20261204T010000Z-00c0ffee", check)
    repo.commit("a reviewed gate that needs the deploy token")
    remote = with_remote(repo, tmp_path / "remote.git")
    hook = remote / "hooks" / "pre-receive"
    call = "from failgate_hooks.commands.cli import pre_receive_main; pre_receive_main()"
    hook.write_text(f"#!/bin/sh\nDEPLOY_TOKEN={SECRET} exec {sys.executable} -c '{call}' --exec\n")
    hook.chmod(0o755)
    return repo, remote


def test_a_pushed_verifier_never_reads_the_server_s_variables(tmp_path: Path) -> None:
    repo, remote = server_with_token(tmp_path)
    event(repo, "evil:leak", "20261204T020000Z-0badc0de", "echo token=$DEPLOY_TOKEN; exit 1")
    wip = repo.commit("a new gate, pushed by a relaxer: it lands, its event not yet reviewed")
    pushed = push(repo, "HEAD:refs/heads/wip", user="alice")
    assert pushed.returncode == 0, pushed.stderr
    assert remote_ref(remote, "refs/heads/wip") == wip
    assert SECRET not in pushed.stderr, pushed.stderr
    lines = [" ".join(line.split()) for line in pushed.stderr.splitlines()]
    assert "remote: | token=" in lines, pushed.stderr  # it ran, and read nothing
    # Under the gate, with its verifier's exit: which names, and why.
    assert "remote: verifier sh -c 'echo token=$DEPLOY_TOKEN; exit 1' exited 1" in " ".join(lines)
    assert [line for line in lines if WITHHELD in line], pushed.stderr
    assert "RELAXED" in pushed.stderr and "reads env_pass DEPLOY_TOKEN" in pushed.stderr
    assert "remote: CLEARED ops:deploy — ops:deploy" in lines, pushed.stderr  # reviewed: it had it


def test_a_reviewed_gate_s_env_pass_still_reaches_its_verifier(tmp_path: Path) -> None:
    repo, remote = server_with_token(tmp_path)
    repo.write("notes.txt", "more work\n")
    head = repo.commit("more work")
    accepted = push(repo, "main")
    assert accepted.returncode == 0, accepted.stderr
    assert remote_ref(remote, "refs/heads/main") == head
    assert "DEPLOY_TOKEN not passed" not in accepted.stderr


def test_a_pass_without_the_variables_never_stands_for_the_reviewed_run(tmp_path: Path) -> None:
    """The same content, first unreviewed (no token: it passes), then reviewed (the
    token: it fails). The first pass is cached as a run without env_pass."""
    repo, remote = server_with_token(tmp_path)
    event(repo, "ops:tokenless", "20261204T030000Z-0ddba11a", 'test -z "$DEPLOY_TOKEN"')
    first = repo.commit("a gate that passes only without the token")
    accepted = push(repo, "main", user="alice")  # not yet reviewed: it runs without the token
    assert accepted.returncode == 0, accepted.stderr
    assert remote_ref(remote, "refs/heads/main") == first
    repo.git("commit", "-q", "--allow-empty", "-m", "the same content, now reviewed")
    refused = push(repo, "main")
    assert refused.returncode != 0, refused.stderr
    assert "remote: BLOCKED" in refused.stderr
    assert remote_ref(remote, "refs/heads/main") == first


@pytest.mark.parametrize("block_on", ["protected", "all"])
def test_a_new_verifier_that_reads_the_environment_waits_for_a_relaxer(
    tmp_path: Path, block_on: str
) -> None:
    """Pushed by anyone else it is PENDING and never runs. Where failgate enforces (main;
    with block_on "all" every ref) the push is refused, so no tip that holds it is
    accepted; elsewhere it only warns, and a tip there is never a protected revision: no
    later push finds it reviewed."""
    repo, remote = server_with_token(tmp_path, f'block_on = "{block_on}"\n')
    before = remote_ref(remote, "refs/heads/main")
    event(repo, "evil:leak", "20261204T020000Z-0badc0de", 'echo "token=$DEPLOY_TOKEN"; exit 1')
    repo.commit("a new gate that reads the deploy token")
    for attempt in ("HEAD:refs/heads/wip", "HEAD:refs/heads/wip", "main"):
        pushed = push(repo, attempt)
        assert SECRET not in pushed.stderr and "token=" not in pushed.stderr, pushed.stderr
        assert "PENDING" in pushed.stderr and "reads env_pass DEPLOY_TOKEN" in pushed.stderr
        enforced = attempt == "main" or block_on == "all"
        assert (pushed.returncode != 0) == enforced, pushed.stderr
        repo.git("commit", "-q", "--allow-empty", "-m", "again")
    assert remote_ref(remote, "refs/heads/main") == before
