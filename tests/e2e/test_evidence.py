"""Signed evidence end to end: real ssh-keygen keys, a real bare remote and a real pre-receive hook.

The server runs no verifier (no --exec): with `evidence_signers` in its protected
configuration, an open gate on main is held unless a signed statement covers it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from pathlib import Path

import pytest

from failgate_hooks.app.evidence_store import append_lines
from failgate_hooks.core.evidence import (
    encode_line,
    evidence_path,
    parse_payload,
    payload,
    split_line,
)
from failgate_hooks.git.evidence import EVIDENCE_REF
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.verify.signing import sign
from tests.conftest import Repo, git
from tests.e2e.test_ci import ci_checkout, github, run_ci
from tests.e2e.test_pre_receive import install_pre_receive, push
from tests.test_signing import make_key
from tests.worlds import KEY, budget_repo, fix_budget, record_failure, remote_ref, with_remote

SIGNERS = ".failgate/signers"


@dataclasses.dataclass
class World:
    repo: Repo
    remote: Path
    key: Path
    keys: Path


def world(tmp_path: Path, *, extra_signers: str = "") -> World:
    """main holds the signers file, the config and the open gate; the server hook installed."""
    keys = tmp_path / "keys"
    keys.mkdir()
    key, public = make_key(keys, "ci")
    repo = budget_repo(tmp_path / "work")
    repo.write(SIGNERS, f'ci@example.org namespaces="failgate" {public}\n{extra_signers}')
    repo.write("failgate.toml", f'evidence_signers = "{SIGNERS}"\n')
    repo.commit("CI may attest")
    remote = with_remote(repo, tmp_path / "remote.git")
    record_failure(repo, "push")
    assert push(repo, "main").returncode == 0  # no server hook yet
    install_pre_receive(remote)
    return World(repo, remote, key, keys)


def attest(w: World, *args: str, env: dict[str, str] | None = None) -> None:
    done = w.repo.failgate(
        "attest", "--sandbox", "--ref", "refs/heads/main", "--ledger-rev", "origin/main",
        "--run-url", "https://ci.example/run/7", *args, env=env,
    )  # fmt: skip
    assert done.code == 0, done
    assert "attested" in done.err, done


def the_line(w: World) -> str:
    head = w.repo.git("rev-parse", EVIDENCE_REF)
    files = w.repo.git("ls-tree", "-r", "--name-only", head).splitlines()
    assert len(files) == 1
    lines = w.repo.git("show", f"{head}:{files[0]}").splitlines()
    assert len(lines) == 1
    return lines[0]


def replace_evidence(w: World, path: str, line: str) -> None:
    """The local evidence ref starts again with only `line` in it."""
    w.repo.git("update-ref", "-d", EVIDENCE_REF)
    with GitRepo.open(w.repo.path) as opened:
        append_lines(opened, {path: [line]})


def test_a_gated_commit_with_no_evidence_is_refused(tmp_path: Path) -> None:
    w = world(tmp_path)
    fix_budget(w.repo)  # fixed, but nothing on the server runs the verifier to know it
    before = remote_ref(w.remote, "refs/heads/main")
    refused = push(w.repo, "main")
    assert refused.returncode != 0, refused.stderr
    assert "no signed evidence covers it" in refused.stderr
    assert remote_ref(w.remote, "refs/heads/main") == before


def test_valid_evidence_pushed_with_the_commit_is_accepted(tmp_path: Path) -> None:
    w = world(tmp_path)
    head = fix_budget(w.repo)
    attest(w, "--key", str(w.key))
    accepted = push(w.repo, EVIDENCE_REF, "main")  # one push: read inside the quarantine
    assert accepted.returncode == 0, accepted.stderr
    assert "cleared by evidence" in accepted.stderr
    assert "signer: ci@example.org SHA256:" in accepted.stderr
    assert "run: https://ci.example/run/7" in accepted.stderr
    assert remote_ref(w.remote, "refs/heads/main") == head


def test_a_ledger_only_commit_on_attested_content_is_accepted(tmp_path: Path) -> None:
    w = world(tmp_path)
    fix_budget(w.repo)
    attest(w, "--key", str(w.key))
    assert push(w.repo, EVIDENCE_REF).returncode == 0
    w.repo.record("other-risk", "--status", "observed", "--title", "t", "--trigger", "deploy")
    head = w.repo.commit("a ledger-only commit: same content")
    accepted = push(w.repo, "main")
    assert accepted.returncode == 0, accepted.stderr
    assert remote_ref(w.remote, "refs/heads/main") == head


def test_the_key_in_a_variable_signs_and_a_client_check_uses_fetched_evidence(
    tmp_path: Path,
) -> None:
    w = world(tmp_path)
    fix_budget(w.repo)
    attest(w, env={"FAILGATE_EVIDENCE_KEY": w.key.read_text()})
    assert w.repo.failgate("evidence", "push").code == 0
    other = Repo(tmp_path / "other")
    subprocess.run(["git", "clone", "-q", str(w.remote), str(other.path)], check=True)
    assert other.failgate("evidence", "fetch").code == 0
    assert other.git("rev-parse", "refs/failgate/remotes/origin/evidence")
    assert push(w.repo, "HEAD:refs/heads/fix").returncode == 0  # not protected: it only warns
    other.git("fetch", "-q", "origin", "fix")
    other.git("checkout", "-q", w.repo.head())
    # No trust store here: only the evidence can clear the gate.
    checked = other.failgate("check", "--ref", "refs/heads/main", "--ledger-rev", "origin/main")
    assert checked.code == 0, checked
    assert "cleared by evidence" in checked.out
    # gates reads the same evidence, so it says what check said
    listed = other.failgate("gates", "--ref", "refs/heads/main")
    assert listed.code == 0, listed
    assert "cleared by evidence" in listed.out


BAD = ["unsigned", "unknown signer", "bad signature", "other digest", "other content",
       "unparsable", "revoked signer", "before the fixed locale"]  # fmt: skip


@pytest.mark.parametrize("kind", BAD)
def test_each_kind_of_bad_evidence_is_refused(tmp_path: Path, kind: str) -> None:
    keys = tmp_path / "more-keys"
    keys.mkdir()
    revoked, revoked_public = make_key(keys, "revoked")
    w = world(tmp_path, extra_signers=f'old@example.org valid-before="20200101" {revoked_public}\n')
    fix_budget(w.repo)
    attest(w, "--key", str(w.key))
    data, signature = split_line(the_line(w))
    good = parse_payload(data)
    path = evidence_path(good.content)
    stranger, _ = make_key(keys, "stranger")

    def signed(statement_bytes: bytes, key: Path) -> str:
        return encode_line(
            statement_bytes, sign(statement_bytes, key_file=str(key), key_text=None)[0]
        )

    if kind == "unsigned":
        line = encode_line(data, b"no signature at all")
    elif kind == "unknown signer":
        line = signed(data, stranger)
    elif kind == "bad signature":
        other = payload(good._replace(run_url="https://ci.example/run/8"))
        line = encode_line(other, signature)  # a real signature, over other bytes
    elif kind == "other digest":
        line = signed(payload(good._replace(verifier="vd2:" + "0" * 64)), w.key)
    elif kind == "other content":
        line = signed(payload(good._replace(content="ck1:" + "0" * 64)), w.key)
    elif kind == "before the fixed locale":  # the same verifier, signed by a vd4 failgate
        _, fingerprint = good.verifier.split(":", 1)
        line = signed(payload(good._replace(verifier="vd4:" + fingerprint)), w.key)
    elif kind == "unparsable":
        line = "fge1 this-is-not-base64! x"
    else:
        line = signed(data, revoked)
    replace_evidence(w, path, line)
    refused = push(w.repo, EVIDENCE_REF, "main")
    assert refused.returncode != 0, refused.stderr
    assert "no signed evidence covers it" in refused.stderr
    checked = w.repo.failgate(
        "check", "--verbose", "--ref", "refs/heads/main", "--ledger-rev", "origin/main",
        env={"PATH": os.environ["PATH"]},
    )  # fmt: skip
    assert "statement 1 skipped:" in checked.out, checked


def test_a_push_that_drops_an_evidence_line_is_refused(tmp_path: Path) -> None:
    w = world(tmp_path)
    fix_budget(w.repo)
    attest(w, "--key", str(w.key))
    assert push(w.repo, EVIDENCE_REF).returncode == 0
    before = remote_ref(w.remote, EVIDENCE_REF)
    path = evidence_path(parse_payload(split_line(the_line(w))[0]).content)
    replace_evidence(w, path, "fge1 YQ== YQ==")  # another line where the statement was
    refused = push(w.repo, f"+{EVIDENCE_REF}:{EVIDENCE_REF}")
    assert refused.returncode != 0, refused.stderr
    assert "drops 1 evidence line(s)" in refused.stderr
    # What was refused, and where: the evidence update, never the ledger.
    said = refused.stderr
    assert f"BLOCKED: the update of {EVIDENCE_REF} is refused: 2 problem(s)" in said, said
    assert "The ledger is not at fault" in said and "`failgate evidence push`" in said, said
    assert "a line no signer in force signed is refused however it is pushed" in said, said
    assert "ledger integrity" not in said and "fsck lists" not in said, said
    deleted = push(w.repo, f":{EVIDENCE_REF}")
    assert deleted.returncode != 0, deleted.stderr
    assert f"ERROR {EVIDENCE_REF}: deleting {EVIDENCE_REF} drops every statement" in deleted.stderr
    assert f"BLOCKED: the update of {EVIDENCE_REF} is refused: 1 problem(s)" in deleted.stderr
    assert "ledger integrity" not in deleted.stderr, deleted.stderr
    assert remote_ref(w.remote, EVIDENCE_REF) == before


def test_attesting_without_the_sandbox_is_refused_with_the_fix(tmp_path: Path) -> None:
    w = world(tmp_path)
    done = w.repo.failgate("attest", "--key", str(w.key))
    assert done.code != 0
    assert "attesting needs the sandbox" in done.err and "--sandbox" in done.err
    assert w.repo.git("for-each-ref", EVIDENCE_REF) == ""
    assert KEY  # the gate attested elsewhere is the budget's


PROBE = """\
import glob, os, sys
MARK, KEY_FILE = {mark!r}, {key_file!r}
found = [name for name, value in os.environ.items() if MARK in value]
for environ in [f"/proc/{{os.getppid()}}/environ", *glob.glob("/proc/*/environ")]:
    try:
        with open(environ, "rb") as handle:
            if MARK.encode() in handle.read():
                found.append(environ)
    except OSError:
        pass
try:
    with open(KEY_FILE) as handle:
        found.append(KEY_FILE) if MARK in handle.read() else None
except OSError:
    pass
print("the signing key is visible at", found) if found else None
sys.exit(1 if found else 0)
"""


def test_the_verifier_never_sees_the_key_in_its_environment_proc_or_file(tmp_path: Path) -> None:
    w = world(tmp_path)
    text = w.key.read_text()
    mark = text.splitlines()[2]  # a line of the private key's body
    w.repo.write("probe/check.py", PROBE.format(mark=mark, key_file=str(w.key)))
    w.repo.record(
        "key-probe", "--status", "observed", "--title", "the key stays out of reach",
        "--trigger", "push", "--verify", "python3 probe/check.py",
        "--verify-file", "probe/check.py", "--no-probe",
    )  # fmt: skip
    w.repo.commit("a verifier that hunts for the signing key")
    fix_budget(w.repo)
    env = {"FAILGATE_EVIDENCE_KEY": text}
    # Outside the sandbox the probe finds it (in failgate's own /proc/<pid>/environ):
    # the probe can see what it looks for.
    bare = w.repo.failgate("check", "--ref", "refs/heads/main", "--no-cache", env=env)
    assert bare.code != 0 and "the signing key is visible" in bare.out, bare
    done = w.repo.failgate(
        "attest", "--sandbox", "--key", str(w.key), "--ref", "refs/heads/main", env=env
    )
    assert done.code == 0, done
    assert "attested key-probe" in done.err, done


def test_a_signer_added_by_a_push_is_a_relaxation_and_one_removed_is_not(tmp_path: Path) -> None:
    w = world(tmp_path)
    _, stranger = make_key(w.keys, "stranger")
    signers = w.repo.path / SIGNERS
    original = signers.read_text()
    fix_budget(w.repo)
    attest(w, "--key", str(w.key))
    assert push(w.repo, EVIDENCE_REF, "main").returncode == 0
    signers.write_text(original + f"mallory@example.org {stranger}\n")
    w.repo.commit("let me attest too")
    refused = push(w.repo, "main")
    assert refused.returncode != 0, refused.stderr
    assert f"{SIGNERS} adds mallory@example.org" in refused.stderr
    w.repo.git("reset", "-q", "--hard", "HEAD~1")
    signers.write_text("")
    w.repo.commit("nobody attests any more")
    # The signers file is content too: this commit needs its own statement, and the
    # signer in force (main's file) may still make it.
    attest(w, "--key", str(w.key))
    accepted = push(w.repo, EVIDENCE_REF, "main")
    assert accepted.returncode == 0, accepted.stderr


def test_the_client_hook_runs_no_verifier_on_the_evidence_ref(tmp_path: Path) -> None:
    w = world(tmp_path)
    fix_budget(w.repo)
    attest(w, "--key", str(w.key))
    assert w.repo.failgate("install").code == 0
    pushed = subprocess.run(
        ["git", "push", "origin", EVIDENCE_REF], cwd=w.repo.path, capture_output=True,
        text=True, check=False,
    )  # fmt: skip
    assert pushed.returncode == 0, pushed.stderr
    assert "running verifier" not in pushed.stderr, pushed.stderr
    assert remote_ref(w.remote, EVIDENCE_REF) == w.repo.git("rev-parse", EVIDENCE_REF)


def test_gates_and_the_agent_read_the_destinations_tip_as_the_hook_does(tmp_path: Path) -> None:
    # release/1 on the server is the first commit, before any evidence rule: a push
    # there is judged by that commit's configuration, which lets no signed statement
    # clear a gate. What gates, check and an agent are told must say so too.
    w = world(tmp_path)
    fix_budget(w.repo)
    attest(w, env={"FAILGATE_EVIDENCE_KEY": w.key.read_text()})
    assert w.repo.failgate("evidence", "push").code == 0
    first = w.repo.git("rev-list", "--max-parents=0", "HEAD")
    subprocess.run(["git", "-C", str(w.remote), "update-ref", "refs/heads/release/1", first],
                   check=True)  # fmt: skip
    other = Repo(tmp_path / "other")
    subprocess.run(["git", "clone", "-q", str(w.remote), str(other.path)], check=True)
    assert other.failgate("evidence", "fetch").code == 0
    other.git("fetch", "-q", str(w.repo.path), "main")
    other.git("checkout", "-q", "-b", "release/1", "FETCH_HEAD")
    other.git("branch", "-q", "--set-upstream-to", "origin/release/1")
    # on main, where the statement counts, it clears
    assert other.failgate("gates", "--ref", "refs/heads/main").code == 0
    ref = "refs/heads/release/1"
    assert other.failgate("gates", "--ref", ref).code == 1
    assert other.failgate("check", "--ref", ref).code == 1
    told = json.loads(other.failgate("agent", "gates").out)
    assert told["ref"] == ref and told["held_count"] == 1, told


def test_a_signer_revoked_on_main_cannot_clear_a_release_branch(tmp_path: Path) -> None:
    from failgate_hooks.app import demo
    from failgate_hooks.verify.keys import content_key

    keys = tmp_path / "more-keys"
    keys.mkdir()
    leaked, leaked_public = make_key(keys, "leaked")
    w = world(tmp_path, extra_signers=f'old@example.org namespaces="failgate" {leaked_public}\n')
    fix_budget(w.repo)
    attest(w, "--key", str(w.key))
    good = parse_payload(split_line(the_line(w))[0])
    assert push(w.repo, EVIDENCE_REF, "main").returncode == 0
    assert push(w.repo, "main:refs/heads/release/1").returncode == 0

    # The old key leaked: main revokes it.
    signers = w.repo.path / SIGNERS
    signers.write_text(signers.read_text().splitlines()[0] + "\n")
    w.repo.commit("revoke the leaked key")
    attest(w, "--key", str(w.key))
    assert push(w.repo, EVIDENCE_REF, "main").returncode == 0

    # Whoever holds the leaked key signs a pass for a broken release.
    w.repo.git("checkout", "-q", "-b", "release/1", "origin/release/1")
    w.repo.write(demo.BUDGET_PATH, demo.budget_json(demo.BROKEN_BUDGET))
    broken = w.repo.commit("break the release's budget")
    with GitRepo.open(w.repo.path) as opened:
        forged = good._replace(content=content_key(opened, broken, "ledger"))
        data = payload(forged)
        line = encode_line(data, sign(data, key_file=str(leaked), key_text=None)[0])
        append_lines(opened, {evidence_path(forged.content): [line]})
    before = remote_ref(w.remote, "refs/heads/release/1")
    refused = push(w.repo, EVIDENCE_REF, "release/1")
    assert refused.returncode != 0, refused.stderr
    assert remote_ref(w.remote, "refs/heads/release/1") == before


def test_a_key_in_the_root_folder_is_refused_as_one_no_sandbox_can_hide(tmp_path: Path) -> None:
    """The sandbox hides the key's folder from the verifiers attest runs, and never hides /
    (it would hide everything): a key there would be in every verifier's reach."""
    w = world(tmp_path)
    made = Path("/") / f"failgate-test-key-{os.getpid()}"
    key = tmp_path / "key"
    if os.access("/", os.W_OK):  # root, as CI runs
        made.write_bytes(w.key.read_bytes())
        key.symlink_to(made)
    else:  # the rule reads where the key resolves to: any file in / will do
        files = [e.path for e in os.scandir("/") if e.is_file(follow_symlinks=False)]
        assert files, "no file in / to point a key at, and / is not writable"
        key.symlink_to(files[0])
    try:
        done = w.repo.failgate("attest", "--sandbox", "--key", str(key), "--ref", "refs/heads/main")
    finally:
        made.unlink(missing_ok=True)
    assert done.code == 2, done
    assert "a key in / cannot be hidden from the verifiers attest runs" in done.err, done
    assert "attested" not in done.err, done


def test_nothing_may_be_pushed_under_failgate_s_tracking_refs(tmp_path: Path) -> None:
    """Lookups read evidence from every ref under refs/failgate/remotes/ too (a mirror
    clone holds the server's there): lines pushed there would go unchecked."""
    w = world(tmp_path)
    fix_budget(w.repo)
    replace_evidence(w, "ab/cdef", "not a signed statement")
    tracking = "refs/failgate/remotes/origin/evidence"
    refused = push(w.repo, f"{EVIDENCE_REF}:{tracking}")
    assert refused.returncode != 0, refused.stderr
    assert f"{tracking} is failgate's: only {EVIDENCE_REF} may be pushed" in refused.stderr
    assert f"BLOCKED: the update of {tracking} is refused" in refused.stderr, refused.stderr
    assert "ledger integrity" not in refused.stderr, refused.stderr
    assert remote_ref(w.remote, tracking) is None
    assert push(w.repo, EVIDENCE_REF).returncode != 0  # the control: checked, and refused there


# --------------------------------------------------------------------------- ci --attest


def test_ci_attest_pushes_a_signed_statement_the_server_clears_the_gate_by(
    tmp_path: Path,
) -> None:
    """A pull request's fix, decided by `failgate ci --sandbox --attest` in a fresh CI clone:
    the verifier's pass is signed and pushed to origin's evidence ref, and main's next push,
    with no evidence of its own, is cleared by that statement."""
    keys = tmp_path / "keys"
    keys.mkdir()
    key, public = make_key(keys, "ci")
    repo = budget_repo(tmp_path / "work")
    repo.write(SIGNERS, f'ci@example.org namespaces="failgate" {public}\n')
    repo.write("failgate.toml", f'evidence_signers = "{SIGNERS}"\n')
    repo.commit("CI may attest")
    remote = with_remote(repo, tmp_path / "remote.git")
    record_failure(repo, "push")
    assert push(repo, "main").returncode == 0  # no server hook yet
    repo.git("switch", "-q", "-c", "feature")
    head = fix_budget(repo)
    checkout = ci_checkout(repo, tmp_path)
    install_pre_receive(remote)
    base = repo.git("rev-parse", "refs/remotes/origin/main")
    payload = {
        "pull_request": {"number": 1, "base": {"ref": "main", "sha": base}},
        "repository": {"default_branch": "main"},
    }
    env = github(
        tmp_path, "pull_request", payload, GITHUB_BASE_REF="main", GITHUB_HEAD_REF="feature",
        GITHUB_REF="refs/pull/1/merge", GITHUB_SHA=head, GITHUB_REPOSITORY="acme/budget",
        GITHUB_SERVER_URL="https://github.example", GITHUB_RUN_ID="42",
    )  # fmt: skip
    ran = run_ci(checkout, tmp_path, env, "--sandbox", "--attest", "--key", str(key))
    assert ran.code == 0, ran
    assert f"CLEARED {KEY}" in ran.out, ran
    assert "failgate: evidence pushed to origin" in ran.err, ran

    # What it wrote: one signed line on origin's evidence ref, for exactly this run.
    pushed = remote_ref(remote, EVIDENCE_REF)
    assert pushed is not None
    [path] = git(remote, "ls-tree", "-r", "--name-only", pushed).splitlines()
    [line] = git(remote, "show", f"{pushed}:{path}").splitlines()
    data, signature = split_line(line)
    statement = parse_payload(data)
    assert path == evidence_path(statement.content)
    assert f"attested {KEY} on {statement.content} (signed by SHA256:" in ran.err, ran
    assert (statement.entity, statement.result, statement.sandboxed) == (KEY, "pass", True)
    assert (statement.commit, statement.ref) == (head, "refs/heads/main")
    assert statement.tree == git(remote, "rev-parse", f"{head}^{{tree}}")
    assert statement.repository == "acme/budget"
    assert statement.run_url == "https://github.example/acme/budget/actions/runs/42"
    signers = tmp_path / "allowed_signers"
    signers.write_text(f'ci@example.org namespaces="failgate" {public}\n')
    (tmp_path / "statement.sig").write_bytes(signature)
    verified = subprocess.run(
        ["ssh-keygen", "-Y", "verify", "-f", str(signers), "-I", "ci@example.org",
         "-n", "failgate", "-s", str(tmp_path / "statement.sig")],
        input=data, capture_output=True, check=False,
    )  # fmt: skip
    assert verified.returncode == 0, verified.stderr

    # And the server reads it: main, fast-forwarded to the fix, pushes no evidence itself.
    repo.git("switch", "-q", "main")
    repo.git("merge", "-q", "--ff-only", "feature")
    accepted = push(repo, "main")
    assert accepted.returncode == 0, accepted.stderr
    assert "cleared by evidence" in accepted.stderr
    assert "run: https://github.example/acme/budget/actions/runs/42" in accepted.stderr
    assert remote_ref(remote, "refs/heads/main") == head
