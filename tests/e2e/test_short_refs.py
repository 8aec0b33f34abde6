"""A short ref name (`main` for refs/heads/main) never turns a gate off in silence.

A push names its destination in full, so a short name in a gate's refs scope once
matched no push and the gate never applied; on the command line, `check --ref main`
judged `main` an unprotected ref. Each test runs the real command or a real `git
push` through the installed hook to a real bare remote."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import Repo
from tests.e2e.test_pre_push import push
from tests.e2e.test_pre_receive import install_pre_receive
from tests.e2e.test_pre_receive import push as push_past_the_client
from tests.worlds import KEY, budget_repo, record_failure, remote_ref, with_remote

FULL_HINT = "write refs/heads/main for branches, or refs/tags/main for tags"


def _shorten_refs(repo: Repo, path: str) -> None:
    """What a hand, or an old failgate, wrote: the event's refs scope as a short name."""
    event = repo.path / path
    text = event.read_text()
    assert '"refs/heads/main"' in text, text
    event.write_text(text.replace('"refs/heads/main"', '"main"'))


def _hooked(tmp_path: Path) -> tuple[Repo, Path]:
    repo = budget_repo(tmp_path / "work")
    remote = with_remote(repo, tmp_path / "remote.git")
    installed = repo.failgate("install")
    assert installed.code == 0, installed
    return repo, remote


def test_an_event_scoped_to_a_short_ref_blocks_the_push_and_says_what_to_write(
    tmp_path: Path,
) -> None:
    repo, remote = _hooked(tmp_path)
    path = record_failure(repo, "push", "--ref", "refs/heads/main")
    _shorten_refs(repo, path)
    # into the commit that adds it: an edit in a later commit would be refused as one
    repo.git("commit", "-q", "--amend", "-a", "--no-edit")
    before = remote_ref(remote, "refs/heads/main")
    refused = push(repo, "main")
    assert refused.code != 0, refused
    assert f"INVALID {KEY}" in refused.output, refused
    assert f"{path}: applies_to.refs[0]: expected a full ref name" in refused.output, refused
    assert FULL_HINT in refused.output, refused
    assert remote_ref(remote, "refs/heads/main") == before


def test_a_later_event_scoped_to_a_short_ref_is_not_dropped_for_the_valid_ones(
    tmp_path: Path,
) -> None:
    """The gate held release branches; a later event, meant to move it to main, wrote
    `main`. Judged on its valid event alone, the push to main went through."""
    repo, remote = _hooked(tmp_path)
    record_failure(repo, "push", "--ref", "refs/heads/release/*")
    assert push(repo, "main").code == 0  # out of its scope: main is no release branch
    later = repo.record(KEY, "--status", "diagnosed", "--ref", "refs/heads/main")
    _shorten_refs(repo, later)
    repo.commit("the gate moved to main, written short")
    before = remote_ref(remote, "refs/heads/main")
    refused = push(repo, "main")
    assert refused.code != 0, refused
    assert f"{later}: applies_to.refs[0]" in refused.output, refused
    assert "where it applies is unknown" in refused.output, refused
    assert remote_ref(remote, "refs/heads/main") == before


def test_a_short_protected_ref_in_the_configuration_refuses_the_push_on_the_server(
    tmp_path: Path,
) -> None:
    """protected_refs = ["main"] protected nothing; it is a configuration error now,
    which the server fails closed on, naming the file, the key and the full form."""
    repo = budget_repo(tmp_path / "work")
    remote = with_remote(repo, tmp_path / "remote.git")
    install_pre_receive(remote)
    repo.write("failgate.toml", 'protected_refs = ["main"]\n')
    repo.commit("protect main, written short")
    before = remote_ref(remote, "refs/heads/main")
    refused = push_past_the_client(repo, "main")
    assert refused.returncode != 0, refused.stderr
    assert "failgate.toml" in refused.stderr, refused.stderr
    assert "protected_refs[0]: expected a full ref name" in refused.stderr, refused.stderr
    assert FULL_HINT in refused.stderr, refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before


@pytest.mark.parametrize(
    ("args", "hint"),
    [
        (("check", "--ref", "main"), FULL_HINT),
        (("gates", "--ref", "main"), FULL_HINT),
        (("attest", "--ref", "main"), FULL_HINT),
        (("record", KEY, "--status", "observed", "--title", "t", "--trigger", "push",
          "--ref", "release/*", "--no-probe"), "write refs/heads/release/* for branches"),
    ],
    ids=["check", "gates", "attest", "record"],
)  # fmt: skip
def test_the_command_line_refuses_a_short_ref_as_a_usage_error(
    repo: Repo, args: tuple[str, ...], hint: str
) -> None:
    refused = repo.failgate(*args)
    assert refused.code == 2, refused
    assert re.search(
        r"--ref: expected a full ref name starting with refs/, got '[^']+'", refused.err
    )
    assert hint in refused.err, refused
    assert "Traceback" not in refused.output
    assert not (repo.path / "ledger").exists()  # record wrote nothing


def test_ci_refuses_a_short_failgate_ref(repo: Repo) -> None:
    env = {"GITHUB_ACTIONS": "", "FAILGATE_BASE": "HEAD", "FAILGATE_REF": "main"}
    refused = repo.failgate("ci", env=env)
    assert refused.code == 2, refused
    assert "FAILGATE_REF: expected a full ref name starting with refs/, got 'main'" in refused.err
    assert FULL_HINT in refused.err, refused
