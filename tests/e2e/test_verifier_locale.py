"""The locale a verifier sees is failgate's choice, never the pusher's.

sshd passes LANG and LC_* from the client (AcceptEnv), and a push to a path runs
the server's hook in the pusher's whole environment. A verifier whose verdict
depends on the locale (`grep -i` folds É to é only in a UTF-8 one) would let the
pusher pick it, and its pass is cached for everyone: each verifier runs in
C.UTF-8, and on a server no variable a pusher sets reaches it even when env_pass
names it.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.conftest import Repo, make_repo
from tests.e2e.test_pre_receive import install_pre_receive
from tests.worlds import remote_ref, trusted_shell_gate, with_remote

# The retired name must not come back, in any case.
CHECK = """\
#!/bin/sh
echo "LANG=${LANG-unset} LC_ALL=${LC_ALL-unset} LC_CTYPE=${LC_CTYPE-unset}"
if grep -qi 'CAFÉ' data/name.txt; then echo "retired name"; exit 1; fi
exit 0
"""
PUSHERS_LOCALE = {"LC_ALL": "C", "LANG": "C", "LC_CTYPE": "C"}


def retired_name(tmp_path: Path, *settings: str) -> tuple[Repo, Path, str]:
    """A remote whose main has the gate; locally a commit bringing the name back.
    `settings`: lines added to the event's [verification]."""
    repo = make_repo(tmp_path / "work")
    repo.write("checks/check.sh", CHECK)
    repo.commit("the check")
    remote = with_remote(repo, tmp_path / "remote.git")
    trusted_shell_gate(repo, "retired name", *settings)
    repo.write("data/name.txt", "café\n")
    return repo, remote, repo.commit("the old name is back")


def push(repo: Repo, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "push", *args, "origin", "main"], cwd=repo.path, capture_output=True,
        text=True, check=False, env={**os.environ, **env}, timeout=300,
    )  # fmt: skip


def server_passes(remote: Path) -> list[str]:
    folder = remote / "failgate" / "cache"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def on_server(tmp_path: Path, *settings: str) -> tuple[Repo, Path]:
    repo, remote, _ = retired_name(tmp_path, *settings)
    repo.git("push", "-q", "--no-verify", "origin", "HEAD~1:main")  # the gate, not the name
    install_pre_receive(remote, "--exec")
    return repo, remote


def test_the_pusher_s_locale_never_clears_a_server_gate(tmp_path: Path) -> None:
    repo, remote = on_server(tmp_path)
    before = remote_ref(remote, "refs/heads/main")
    refused = push(repo, "--no-verify", env=PUSHERS_LOCALE)
    assert refused.returncode != 0, refused.stderr
    assert "remote: BLOCKED" in refused.stderr and "retired name" in refused.stderr
    assert "LANG=C.UTF-8 LC_ALL=unset LC_CTYPE=unset" in refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before
    assert server_passes(remote) == []


def test_env_pass_on_a_server_never_passes_what_the_pusher_sets(tmp_path: Path) -> None:
    repo, remote = on_server(tmp_path, 'env_pass = ["LC_ALL", "LANG"]')
    before = remote_ref(remote, "refs/heads/main")
    refused = push(repo, "--no-verify", env=PUSHERS_LOCALE)
    assert refused.returncode != 0, refused.stderr
    assert "LANG=C.UTF-8 LC_ALL=unset" in refused.stderr, refused.stderr
    assert "env_pass LC_ALL, LANG not passed: on a server the pusher sets it" in refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before
    assert server_passes(remote) == []


def test_the_client_hook_runs_the_verifier_in_the_fixed_locale(tmp_path: Path) -> None:
    repo, remote, _ = retired_name(tmp_path)
    assert repo.failgate("install").code == 0
    before = remote_ref(remote, "refs/heads/main")
    refused = push(repo, env=PUSHERS_LOCALE)
    assert refused.returncode != 0, refused.stderr
    assert "BLOCKED" in refused.stderr and "retired name" in refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before
    assert not (repo.path / ".git" / "failgate" / "cache").exists()


def test_env_pass_hands_a_local_verifier_the_locale_it_names(tmp_path: Path) -> None:
    # The control: where the environment is the user's own, env_pass names what passes.
    repo, _, _ = retired_name(tmp_path, 'env_pass = ["LC_ALL"]')
    checked = repo.failgate("check", "--ref", "refs/heads/main", "--no-cache", env={"LC_ALL": "C"})
    assert checked.code == 0, checked


def test_the_fixed_locale_is_there_in_the_sandbox(tmp_path: Path) -> None:
    # bwrap binds the host's /usr: glibc's C.UTF-8 folds É to é there too.
    repo, _, _ = retired_name(tmp_path)
    checked = repo.failgate(
        "check", "--sandbox", "--ref", "refs/heads/main", "--no-cache", env=PUSHERS_LOCALE
    )
    assert checked.code == 1, checked
    assert "LANG=C.UTF-8 LC_ALL=unset" in checked.out and "retired name" in checked.out, checked
