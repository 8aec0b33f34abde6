"""Signing and checking evidence with a real ssh-keygen."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from failgate_hooks.core.evidence import Statement
from failgate_hooks.core.gates import VerifierResult
from failgate_hooks.verify.signing import SignatureChecker, Signer, SigningError, key_source, sign


def make_key(folder: Path, name: str) -> tuple[Path, str]:
    """A fresh ed25519 key without passphrase: its file, and its public half."""
    path = folder / name
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(path)], check=True
    )
    public = " ".join(Path(f"{path}.pub").read_text().split()[:2])
    return path, public


def signers(*lines: str) -> bytes:
    return "".join(line + "\n" for line in lines).encode()


def test_a_signature_verifies_for_the_principal_that_holds_the_key(tmp_path: Path) -> None:
    key, public = make_key(tmp_path, "ci")
    signature, fingerprint = sign(b"payload", key_file=str(key), key_text=None)
    with SignatureChecker(signers(f'ci@example.org namespaces="failgate" {public}')) as checker:
        found = checker.check(b"payload", signature)
    assert found == Signer("ci@example.org", fingerprint)
    assert fingerprint.startswith("SHA256:")


def test_a_key_given_as_text_signs_the_same(tmp_path: Path) -> None:
    key, public = make_key(tmp_path, "ci")
    file, text = key_source(None, {"FAILGATE_EVIDENCE_KEY": key.read_text()})
    assert file is None
    signature, _ = sign(b"payload", key_file=None, key_text=text)
    with SignatureChecker(signers(f"ci {public}")) as checker:
        assert isinstance(checker.check(b"payload", signature), Signer)


def test_no_key_is_refused_with_the_fix() -> None:
    with pytest.raises(SigningError, match="--key FILE or set FAILGATE_EVIDENCE_KEY"):
        sign(b"payload", key_file=None, key_text=None)


def test_what_does_not_verify_says_why(tmp_path: Path) -> None:
    key, public = make_key(tmp_path, "ci")
    _, stranger = make_key(tmp_path, "stranger")
    signature, _ = sign(b"payload", key_file=str(key), key_text=None)
    with SignatureChecker(signers(f"ci {public}")) as checker:
        assert "bad signature" in str(checker.check(b"other payload", signature))
        assert "not a signature" not in str(checker.check(b"payload", b"garbage"))
        assert not isinstance(checker.check(b"payload", b"garbage"), Signer)
    with SignatureChecker(signers(f"other {stranger}")) as checker:
        assert "unknown signer" in str(checker.check(b"payload", signature))


def test_a_wildcard_principal_is_shown_as_itself_never_as_a_claimed_name(tmp_path: Path) -> None:
    key, public = make_key(tmp_path, "anyone")
    signature, fingerprint = sign(b"payload", key_file=str(key), key_text=None)
    with SignatureChecker(signers(f"* {public}")) as checker:
        assert checker.check(b"payload", signature) == Signer("*", fingerprint)


def test_a_signer_revoked_by_valid_before_or_another_namespace_does_not_verify(
    tmp_path: Path,
) -> None:
    key, public = make_key(tmp_path, "ci")
    signature, _ = sign(b"payload", key_file=str(key), key_text=None)
    with SignatureChecker(signers(f'ci valid-before="20200101" {public}')) as checker:
        assert not isinstance(checker.check(b"payload", signature), Signer)
    with SignatureChecker(signers(f'ci namespaces="git" {public}')) as checker:
        assert not isinstance(checker.check(b"payload", signature), Signer)


def test_env_pass_can_never_hand_the_signing_key_to_a_verifier() -> None:
    from failgate_hooks.verify.process import verifier_env

    env, refused = verifier_env(
        {"FAILGATE_EVIDENCE_KEY": "secret", "PATH": "/bin"},
        env_pass=["FAILGATE_EVIDENCE_KEY"],
        commit="c",
        entity_key="k",
        environment=None,
    )
    assert "secret" not in env.values()
    assert len(refused) == 1 and refused[0].startswith("env_pass FAILGATE_EVIDENCE_KEY not passed")


def test_find_principals_is_asked_once_per_signing_key(tmp_path: Path) -> None:
    import base64

    from failgate_hooks.verify.signing import signing_key

    key, public = make_key(tmp_path, "ci")
    first, _ = sign(b"one", key_file=str(key), key_text=None)
    second, _ = sign(b"two", key_file=str(key), key_text=None)
    assert signing_key(first) == base64.b64decode(public.split()[1]) == signing_key(second)
    assert signing_key(b"garbage") is None
    with SignatureChecker(signers(f"ci {public}")) as checker:
        assert isinstance(checker.check(b"one", first), Signer)
        assert isinstance(checker.check(b"two", second), Signer)
        assert "bad signature" in str(checker.check(b"one", second))


def _lookup_among(tmp_path: Path, good: Statement, lines: list[str], public: str) -> VerifierResult:
    """A lookup of `good`'s gate in an evidence ref holding `lines`, `public` the one signer."""
    from failgate_hooks.app.evidence import EvidenceCheck
    from failgate_hooks.app.evidence_store import append_lines
    from failgate_hooks.core.evidence import Subject, evidence_path
    from failgate_hooks.git.evidence import resolve
    from failgate_hooks.git.repo import GitRepo
    from failgate_hooks.ledger.config import Config
    from tests.conftest import make_repo

    repo = make_repo(tmp_path / "repo")
    subject = Subject(good.content, good.environment, good.verifier, good.entity)
    with GitRepo.open(repo.path) as opened:
        append_lines(opened, {evidence_path(good.content): lines})
        check = EvidenceCheck(opened, Config(), [str(resolve(opened))], signers(f"ci {public}"))
        try:
            return check._lookup(("true",), subject, [check._checker(signers(f"ci {public}"))])
        finally:
            check.close()


def test_statements_by_a_listed_key_are_checked_before_any_number_of_others(
    tmp_path: Path,
) -> None:

    from failgate_hooks.app.evidence import MAX_CHECKED
    from failgate_hooks.core.evidence import encode_line, payload
    from tests.test_evidence import statement

    key, public = make_key(tmp_path, "ci")
    stranger, _ = make_key(tmp_path, "stranger")
    good = statement(commit="f" * 40)  # its line sorts after every other one
    lines = [encode_line(payload(good), sign(payload(good), key_file=str(key), key_text=None)[0])]
    for n in range(MAX_CHECKED + 1):
        junk = payload(good._replace(commit=f"{n:040d}"))
        lines.append(encode_line(junk, sign(junk, key_file=str(stranger), key_text=None)[0]))
    found = _lookup_among(tmp_path, good, lines, public)
    assert found.evidence, found
    assert found.evidence[0][1].startswith("ci SHA256:")


def test_lines_that_could_not_cover_the_gate_spend_no_signature_check(tmp_path: Path) -> None:

    from failgate_hooks.app.evidence import MAX_CHECKED
    from failgate_hooks.core.evidence import encode_line, payload
    from tests.test_evidence import statement

    key, public = make_key(tmp_path, "ci")
    good = statement(commit="f" * 40)  # its line sorts after every other one
    lines = [encode_line(payload(good), sign(payload(good), key_file=str(key), key_text=None)[0])]
    for n in range(2 * MAX_CHECKED):
        other = payload(good._replace(entity=f"other-{n}", commit=f"{n:040d}"))
        lines.append(encode_line(other, b"not checked: it is about another entity"))
    found = _lookup_among(tmp_path, good, lines, public)
    assert found.evidence, found
    # Each one said why, but so many only as a lookup checks, and how many more.
    assert len(found.skipped_evidence) == MAX_CHECKED + 1, found.skipped_evidence
    assert "it is about entity 'other-0' (its signature was not checked)" in str(found)
    assert (
        found.skipped_evidence[-1] == f"{MAX_CHECKED} more statement(s) could not cover it either"
    )
