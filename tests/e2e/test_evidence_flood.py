"""Lines anyone can write cannot hide a genuine statement: real ssh-keygen keys, a real
bare remote and the real pre-receive hook.

A forged line names the team's listed public key (public keys are public) beside a
signature that does not verify. The evidence ref is append-only, so such a line, once
in, stays for good: the server lets none in, and a lookup reaches the genuine statement
however many of them got in some other way.
"""

from __future__ import annotations

import base64
import struct
from pathlib import Path

from failgate_hooks.app.evidence import MAX_CHECKED
from failgate_hooks.app.evidence_store import append_lines
from failgate_hooks.app.evidence_update import MAX_NEW_LINES
from failgate_hooks.core.evidence import (
    encode_line,
    evidence_path,
    parse_payload,
    payload,
    split_line,
)
from failgate_hooks.git.evidence import EVIDENCE_REF
from failgate_hooks.git.repo import GitRepo
from tests.e2e.test_evidence import World, attest, the_line, world
from tests.e2e.test_pre_receive import push, server
from tests.worlds import fix_budget, remote_ref

FLOOD = MAX_CHECKED  # as many as a lookup checks the signatures of


def forged_signature(public_key: str, junk: bytes) -> bytes:
    """An armored SSH signature (PROTOCOL.sshsig) naming `public_key`, over nothing."""

    def field(data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + data

    key = base64.b64decode(public_key.split()[1])
    blob = b"SSHSIG" + struct.pack(">I", 1) + field(key) + field(b"failgate") + field(b"")
    blob += field(b"sha512") + field(junk)
    body = base64.b64encode(blob)
    return b"-----BEGIN SSH SIGNATURE-----\n" + body + b"\n-----END SSH SIGNATURE-----\n"


def listed_key(w: World) -> str:
    return (w.keys / "ci.pub").read_text()


def attested(w: World) -> tuple[str, str]:
    """The genuine statement's evidence path and line, attested for the fixed budget."""
    fix_budget(w.repo)
    attest(w, "--key", str(w.key))
    line = the_line(w)
    return evidence_path(parse_payload(split_line(line)[0]).content), line


def test_the_server_refuses_lines_that_do_not_verify_however_they_look(tmp_path: Path) -> None:
    w = world(tmp_path)
    path, line = attested(w)
    assert push(w.repo, EVIDENCE_REF, "main").returncode == 0
    before = remote_ref(w.remote, EVIDENCE_REF)
    good = parse_payload(split_line(line)[0])
    # Each claims the gate's very subject, under the listed key: only ssh-keygen tells.
    forged = []
    for n in range(FLOOD):
        data = payload(good._replace(run_url=f"https://ci.example/run/{n}"))
        forged.append(encode_line(data, forged_signature(listed_key(w), b"junk%d" % n)))
    with GitRepo.open(w.repo.path) as opened:
        append_lines(opened, {path: forged})
    refused = push(w.repo, EVIDENCE_REF)
    assert refused.returncode != 0, refused.stderr
    assert "adds a line no signer in force signed (bad signature" in refused.stderr
    assert remote_ref(w.remote, EVIDENCE_REF) == before

    more = [f"fge1 {base64.b64encode(b'%d' % n).decode()} YQ==" for n in range(MAX_NEW_LINES)]
    with GitRepo.open(w.repo.path) as opened:
        append_lines(opened, {path: more})
    refused = push(w.repo, EVIDENCE_REF)
    assert refused.returncode != 0, refused.stderr
    assert f"adds {FLOOD + MAX_NEW_LINES} evidence lines, more than the" in refused.stderr
    assert remote_ref(w.remote, EVIDENCE_REF) == before


def test_a_server_where_nobody_may_attest_lets_no_line_in(tmp_path: Path) -> None:
    repo, remote = server(tmp_path)
    data = b'{"not": "a statement"}'
    with GitRepo.open(repo.path) as opened:
        append_lines(opened, {"ck1/00/" + "0" * 62: [encode_line(data, b"no signature")]})
    refused = push(repo, EVIDENCE_REF)
    assert refused.returncode != 0, refused.stderr
    assert "nobody may attest here" in refused.stderr
    assert remote_ref(remote, EVIDENCE_REF) is None


def test_forged_lines_that_got_in_anyway_do_not_hide_the_genuine_statement(
    tmp_path: Path,
) -> None:
    w = world(tmp_path)
    path, _ = attested(w)
    assert push(w.repo, EVIDENCE_REF).returncode == 0
    # Written on the server without its hook (as on one that ran none): payloads that
    # sort before the genuine one, under the listed key, with signatures that fail.
    forged = [
        f"fge1 {base64.b64encode(b'%c%d' % (0, n)).decode()} "
        + base64.b64encode(forged_signature(listed_key(w), b"junk%d" % n)).decode()
        for n in range(FLOOD)
    ]
    with GitRepo.open(w.remote) as opened:
        append_lines(opened, {path: forged})
    accepted = push(w.repo, "main")
    assert accepted.returncode == 0, accepted.stderr
    assert "cleared by evidence" in accepted.stderr
    assert remote_ref(w.remote, "refs/heads/main") == w.repo.head()
