"""Bytes a pusher chose are bounded before the server holds them: configuration, the
signers file, evidence. Each test pushes to a real bare remote through the real
pre-receive hook and asserts on the remote's refs."""

from __future__ import annotations

from pathlib import Path

from failgate_hooks.app.evidence_store import append_lines
from failgate_hooks.core.evidence import MAX_FILE_BYTES
from failgate_hooks.git.evidence import EVIDENCE_REF
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.ledger.config import MAX_CONFIG_BYTES
from tests.e2e.test_evidence import SIGNERS, attest, push, world
from tests.e2e.test_pre_receive import server
from tests.worlds import fix_budget, remote_ref


def test_a_configuration_file_too_large_to_read_is_refused(tmp_path: Path) -> None:
    repo, remote = server(tmp_path)
    before = remote_ref(remote, "refs/heads/main")
    config = repo.path / "failgate.toml"
    config.write_text(config.read_text() + "#" + "x" * MAX_CONFIG_BYTES + "\n")
    repo.commit("a configuration of a megabyte")
    refused = push(repo, "main")
    assert refused.returncode != 0, refused.stderr
    assert f"failgate.toml is larger than {MAX_CONFIG_BYTES} bytes" in refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before


def test_a_signers_file_too_large_to_read_is_a_pending_change_of_who_attests(
    tmp_path: Path,
) -> None:
    w = world(tmp_path)
    fix_budget(w.repo)
    attest(w, "--key", str(w.key))
    assert push(w.repo, EVIDENCE_REF, "main").returncode == 0
    signers = w.repo.path / SIGNERS
    signers.write_text(signers.read_text() + "#" + "x" * MAX_CONFIG_BYTES + "\n")
    w.repo.commit("a signers file of a megabyte")
    before = remote_ref(w.remote, "refs/heads/main")
    refused = push(w.repo, "main")
    assert refused.returncode != 0, refused.stderr
    assert f"{SIGNERS} is larger than {MAX_CONFIG_BYTES} bytes" in refused.stderr
    assert "PENDING" in refused.stderr
    assert remote_ref(w.remote, "refs/heads/main") == before


def test_an_evidence_file_too_large_to_read_is_refused(tmp_path: Path) -> None:
    w = world(tmp_path)
    fix_budget(w.repo)
    attest(w, "--key", str(w.key))
    tip = w.repo.git("rev-parse", EVIDENCE_REF)
    (path,) = w.repo.git("ls-tree", "-r", "--name-only", tip).splitlines()
    padding = [f"{n:08d}" + "#" * 992 for n in range(MAX_FILE_BYTES // 1000 + 1)]
    with GitRepo.open(w.repo.path) as opened:
        append_lines(opened, {path: padding})
    refused = push(w.repo, EVIDENCE_REF)
    assert refused.returncode != 0, refused.stderr
    assert f"larger than {MAX_FILE_BYTES} bytes" in refused.stderr
    assert remote_ref(w.remote, EVIDENCE_REF) is None
