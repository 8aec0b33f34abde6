"""Signing and checking evidence with OpenSSH's `ssh-keygen -Y`, in failgate's own namespace.

The payload always goes through standard input (signing a file prompts when
its `.sig` exists). A signature is checked in two steps: `-Y find-principals`
says which allowed-signers line holds the signing key, and `-Y verify` checks
the signature for exactly that principal. A statement's claimed signer is
never asked for: a wildcard principal (`*`) verifies any name, so the name
shown is the line's own pattern, beside the key's fingerprint. No
`-Overify-time` is passed: the signers file's `valid-before` is judged
against this machine's clock, never against the time a statement claims.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from typing import NamedTuple

NAMESPACE = "failgate"
KEY_VARIABLE = "FAILGATE_EVIDENCE_KEY"  # the private key's text, for CI secrets
_TIMEOUT_S = 30
_FINGERPRINT = re.compile(r"with \S+ key (SHA256:[A-Za-z0-9+/=]+)")
# ssh-keygen must never wait on a terminal for a passphrase in a hook or in CI.
_QUIET = {"SSH_ASKPASS_REQUIRE": "never", "DISPLAY": ""}


class SigningError(Exception):
    """A statement cannot be signed: the message says why and what to do."""


class Signer(NamedTuple):
    """Who a signature verified as: the allowed-signers principal and the key's fingerprint."""

    principal: str
    fingerprint: str


def _ssh_keygen() -> str | None:
    return shutil.which("ssh-keygen")


def _run(argv: list[str], stdin: bytes) -> subprocess.CompletedProcess[bytes]:
    env = {"PATH": os.environ.get("PATH", os.defpath), **_QUIET}
    return subprocess.run(
        argv,
        input=stdin,
        capture_output=True,
        env=env,
        timeout=_TIMEOUT_S,
        check=False,
        start_new_session=True,  # no controlling terminal to prompt on
    )


def private_folder() -> tempfile.TemporaryDirectory[str]:
    """A folder only this user can read (mkdtemp's 0o700), removed afterwards: for key and
    signature files."""
    return tempfile.TemporaryDirectory(prefix="failgate-sig-", ignore_cleanup_errors=True)


def key_source(key_file: str | None, environ: Mapping[str, str]) -> tuple[str | None, str | None]:
    """(the key file, the key's text): a file given wins over the variable; both None: no key."""
    if key_file:
        return key_file, None
    text = environ.get(KEY_VARIABLE)
    return None, text or None


def sign(data: bytes, *, key_file: str | None, key_text: str | None) -> tuple[bytes, str]:
    """An armored signature over `data`, and the signing key's fingerprint; SigningError if not.

    A key given as text is written to a private file only for the call."""
    program = _ssh_keygen()
    if program is None:
        raise SigningError("ssh-keygen is not installed: install OpenSSH's client to attest")
    with private_folder() as folder:
        if key_file is None:
            if not key_text:
                raise SigningError(
                    f"no signing key: pass --key FILE or set {KEY_VARIABLE} to the private key"
                )
            key_file = os.path.join(folder, "key")
            fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(key_text.strip() + "\n")
        try:
            done = _run([program, "-Y", "sign", "-n", NAMESPACE, "-f", key_file], data)
            listed = _run([program, "-l", "-f", key_file], b"")
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SigningError(f"ssh-keygen -Y sign could not run: {exc}") from None
    if done.returncode != 0 or not done.stdout.startswith(b"-----BEGIN SSH SIGNATURE-----"):
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        why = said[-1] if said else f"exit {done.returncode}"
        raise SigningError(f"ssh-keygen -Y sign failed: {why}")
    words = listed.stdout.decode("utf-8", "replace").split()
    fingerprint = words[1] if len(words) > 1 and words[1].startswith("SHA256:") else "?"
    return done.stdout, fingerprint


def signing_key(signature: bytes) -> bytes | None:
    """The public key an armored SSH signature names (PROTOCOL.sshsig), or None.

    Only to ask find-principals once per key: the signature is still checked whole."""
    body = b"".join(
        line.strip() for line in signature.splitlines() if line and not line.startswith(b"-----")
    )
    try:
        blob = base64.b64decode(body, validate=True)
    except (binascii.Error, ValueError):
        return None
    if not blob.startswith(b"SSHSIG") or len(blob) < 14:
        return None
    size = int.from_bytes(blob[10:14], "big")
    key = blob[14 : 14 + size]
    return key if len(key) == size and size else None


def _key_blobs(allowed_signers: bytes) -> frozenset[bytes]:
    """The public keys an allowed-signers file spells out (base64 key fields)."""
    found = set()
    for token in allowed_signers.split():
        try:
            blob = base64.b64decode(token, validate=True)
        except (binascii.Error, ValueError):
            continue
        size = int.from_bytes(blob[:4], "big") if len(blob) > 4 else 0
        if 0 < size < 64 and blob[4 : 4 + size].isascii():
            found.add(blob)
    return frozenset(found)


class SignatureChecker:
    """Checks signatures against one allowed-signers file's bytes; use it as a context.

    Each (payload, signature) is checked once. Whatever cannot be checked (no
    ssh-keygen, a signature it cannot read) is a reason, never a pass."""

    def __init__(self, allowed_signers: bytes) -> None:
        self._allowed = allowed_signers
        self._stack = contextlib.ExitStack()
        self._folder: str | None = None
        self._seen: dict[tuple[bytes, bytes], Signer | str] = {}
        self._principals: dict[bytes, str | None] = {}  # by signing key
        self._listed_keys = _key_blobs(allowed_signers)
        self._count = 0

    def listed(self, signature: bytes) -> bool:
        """Whether the signing key is one the signers file names outright: checked first."""
        key = signing_key(signature)
        return key is not None and key in self._listed_keys

    def __enter__(self) -> SignatureChecker:
        self._folder = self._stack.enter_context(private_folder())
        with open(os.path.join(self._folder, "allowed_signers"), "wb") as handle:
            handle.write(self._allowed)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()
        self._folder = None

    def _principal(self, program: str, allowed: str, sig_file: str, signature: bytes) -> str | None:
        """The allowed-signers principal that holds the signing key, asked once per key.

        The line's own pattern, never a name a statement claims."""
        key = signing_key(signature)
        if key is not None and key in self._principals:
            return self._principals[key]
        found = _run([program, "-Y", "find-principals", "-s", sig_file, "-f", allowed], b"")
        principals = found.stdout.decode("utf-8", "replace").split()
        principal = principals[0] if found.returncode == 0 and principals else None
        if key is not None:
            self._principals[key] = principal
        return principal

    def check(self, data: bytes, signature: bytes) -> Signer | str:
        """The signer `signature` over `data` verifies as, or why it does not."""
        key = (data, signature)
        if key not in self._seen:
            self._seen[key] = self._check(data, signature)
        return self._seen[key]

    def _check(self, data: bytes, signature: bytes) -> Signer | str:
        program = _ssh_keygen()
        if program is None:
            return "ssh-keygen is not installed here, so no signature can be checked"
        if self._folder is None:
            raise RuntimeError("SignatureChecker used outside its `with` block")
        allowed = os.path.join(self._folder, "allowed_signers")
        self._count += 1
        sig_file = os.path.join(self._folder, f"{self._count}.sig")
        with open(sig_file, "wb") as handle:
            handle.write(signature)
        try:
            principal = self._principal(program, allowed, sig_file, signature)
            if principal is None:
                return "unknown signer: its key is not in the signers file (or is revoked there)"
            base = [program, "-Y", "verify", "-f", allowed, "-n", NAMESPACE, "-s", sig_file]
            done = _run([*base, "-I", principal], data)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"ssh-keygen could not check the signature: {exc}"
        finally:
            with contextlib.suppress(OSError):
                os.unlink(sig_file)
        if done.returncode != 0:
            return "bad signature: ssh-keygen -Y verify refused it"
        said = _FINGERPRINT.search(done.stdout.decode("utf-8", "replace"))
        if said is None:
            return "ssh-keygen -Y verify named no key fingerprint"
        return Signer(principal, said.group(1))
