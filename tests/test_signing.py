"""Signing and checking evidence with a real ssh-keygen."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

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
        trigger="push",
        ref=None,
        environment=None,
    )
    assert "secret" not in env.values()
    assert refused == ("FAILGATE_EVIDENCE_KEY",)


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
