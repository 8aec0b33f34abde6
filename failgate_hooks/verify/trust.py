"""This machine's trust store: the verifier version approved here for each gate.

Trust is a fact about this machine, never committed: it lives in
`<git-common-dir>/failgate/trust.json`, shared by linked worktrees. It holds
one approved version per gate: approving a new one revokes the one before and
remembers it, so that coming back to an old, perhaps laxer, version asks again
and says so. It is rewritten only under its lock file, so two approvals at
once lose nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from failgate_hooks.core.errors import TrustError
from failgate_hooks.core.events import Verification
from failgate_hooks.git.repo import local_folder
from failgate_hooks.verify.localfiles import (
    Pinned,
    canonical_json,
    pins_json,
    utc_now,
    write_atomically,
)
from failgate_hooks.verify.lockfile import LockUnavailable, locked

# 2: one approval per gate, with the versions it replaced. 1 kept every approval
# ever given: it is read as its last approval of each gate, the others replaced.
TRUST_FORMAT = 2
# fp3: the pins' shape too, `files` as listed. A folder pinned whole removes what the
# commit adds there, a list of its files keeps it: under fp2 `["lib"]` and
# `["lib/mod.py"]` were one verifier, so trust and passes carried from one to the other.
# An fp2 (or fp1) approval matches no fingerprint now: `failgate trust` asks once again.
FINGERPRINT_VERSION = "fp3"


RunSettings = dict[str, Any]
# Every field of a Verification but what the fingerprint covers otherwise (argv, and
# the pins that `files` resolves to).
SETTING_NAMES = ("env_pass", "inputs", "timeout_s", "workdir")


def run_settings(verification: Verification) -> RunSettings:
    """How a verifier runs beyond its argv and files: what it sees of the environment,
    where, for how long, and what its pass stands on. An approval covers these too.
    Names and patterns are sets: their order is not another verifier."""
    inputs = verification.inputs
    return {
        "env_pass": sorted(set(verification.env_pass)),
        "inputs": None if inputs is None else sorted(set(inputs)),
        "timeout_s": verification.timeout_s,
        "workdir": verification.workdir.value,
    }


def fingerprint(
    argv: Sequence[str], pinned: Iterable[Pinned], listed: Sequence[str], settings: RunSettings
) -> str:
    """sha256 of a verifier's argv, its sorted pinned (path, blob) pairs, the `files` they
    were `listed` as (a folder pinned whole is not the list of its files; their order is
    no other verifier) and its run settings: what trust names."""
    payload = [FINGERPRINT_VERSION, list(argv), pins_json(pinned), sorted(set(listed)), settings]
    return hashlib.sha256(canonical_json(payload)).hexdigest()


def verifier_fingerprint(verification: Verification, pinned: Iterable[Pinned]) -> str:
    """The fingerprint of `verification` run with these pinned files."""
    settings = run_settings(verification)
    return fingerprint(verification.command, pinned, verification.files, settings)


class TrustedVerifier(NamedTuple):
    """One approval: this verifier (argv, pinned blobs, run settings) may run for this entity."""

    fingerprint: str
    entity_key: str
    argv: tuple[str, ...]
    pinned: tuple[Pinned, ...]
    approved_by: str
    approved_at: str  # UTC, ISO 8601
    # the fingerprints of the gate's earlier approvals, oldest first
    replaced: tuple[str, ...] = ()
    # None in an approval made before fingerprints covered them
    settings: RunSettings | None = None

    @classmethod
    def new(
        cls,
        entity_key: str,
        verification: Verification,
        pinned: Iterable[Pinned],
        approved_by: str,
        approved_at: str | None = None,
    ) -> TrustedVerifier:
        """An approval made now, its fingerprint computed from the verification and the pins."""
        pins = tuple(sorted(pinned))
        return cls(
            fingerprint=verifier_fingerprint(verification, pins),
            entity_key=entity_key,
            argv=verification.command,
            pinned=pins,
            approved_by=approved_by,
            approved_at=approved_at or utc_now(),
            settings=run_settings(verification),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "fingerprint": self.fingerprint,
            "entity_key": self.entity_key,
            "argv": list(self.argv),
            "pinned": pins_json(self.pinned),
            "approved_by": self.approved_by,
            "approved_at": self.approved_at,
            "replaced": list(self.replaced),
            "settings": self.settings,
        }


class TrustStore:
    """`<git-common-dir>/failgate/trust.json`: the verifier version each gate may run here."""

    def __init__(self, common_dir: str) -> None:
        self.path = os.path.join(local_folder(common_dir), "trust.json")
        self._approvals: dict[str, TrustedVerifier] | None = None

    def entries(self) -> list[TrustedVerifier]:
        """The approval of each gate (read once, then kept)."""
        return list(self._by_gate().values())

    def approved(self, entity_key: str) -> TrustedVerifier | None:
        """The one version of this gate's verifier approved here, if any."""
        return self._by_gate().get(entity_key)

    def is_trusted(self, entity_key: str, fp: str) -> bool:
        """Whether the version with this fingerprint is the one approved for this gate."""
        found = self.approved(entity_key)
        return found is not None and found.fingerprint == fp

    def was_replaced(self, entity_key: str, fp: str) -> bool:
        """Whether this version was approved for this gate once, then replaced: a downgrade."""
        found = self.approved(entity_key)
        return found is not None and fp in found.replaced

    def approve(self, entries: Iterable[TrustedVerifier]) -> None:
        """Approve each version for its gate, revoking the gate's version before: re-read,
        merge and rename under the lock, so no concurrent approval is lost."""
        new = list(entries)
        folder = os.path.dirname(self.path)
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as exc:
            raise self._write_error(exc) from None
        try:
            with locked(self.path + ".lock", "the trust store"):
                current = self._load()
                for entry in new:
                    before = current.get(entry.entity_key)
                    if before is not None and before.fingerprint == entry.fingerprint:
                        continue  # approved already: the first approval stands
                    current[entry.entity_key] = _replacing(before, entry)
                data = {
                    "format": TRUST_FORMAT,
                    "verifiers": [e.to_json() for e in current.values()],
                }
                try:
                    body = json.dumps(data, indent=2).encode("utf-8") + b"\n"
                    write_atomically(self.path, body, durable=True)
                except OSError as exc:
                    raise self._write_error(exc) from None
                self._approvals = current
        except LockUnavailable as exc:
            raise TrustError(str(exc), hint=exc.hint or None) from None

    def _by_gate(self) -> dict[str, TrustedVerifier]:
        if self._approvals is None:
            self._approvals = self._load()
        return self._approvals

    def _write_error(self, exc: OSError) -> TrustError:
        return TrustError(
            f"cannot write the trust store {self.path}: {exc.strerror or exc}",
            hint="check that the git directory is writable",
        )

    def _load(self) -> dict[str, TrustedVerifier]:
        try:
            with open(self.path, "rb") as handle:
                raw = handle.read()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise TrustError(
                f"cannot read the trust store {self.path}: {exc.strerror or exc}",
                hint="check the file's permissions",
            ) from None
        try:
            return _parse_store(raw)
        except ValueError as exc:
            raise TrustError(
                f"the trust store {self.path} is corrupt: {exc}",
                hint=(
                    f"move it aside (mv {self.path} {self.path}.bad) and approve "
                    "the verifiers again with `failgate trust`"
                ),
            ) from None


def _replacing(before: TrustedVerifier | None, entry: TrustedVerifier) -> TrustedVerifier:
    """`entry` as the gate's approval, remembering the versions approved before it."""
    replaced = () if before is None else (*before.replaced, before.fingerprint)
    return entry._replace(replaced=tuple(fp for fp in replaced if fp != entry.fingerprint))


def _parse_store(raw: bytes) -> dict[str, TrustedVerifier]:
    """The approval of each gate in a trust.json; ValueError saying what is wrong with it."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"not JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("verifiers"), list):
        raise ValueError('expected an object with a "verifiers" list')
    version = data.get("format")
    if version not in (1, TRUST_FORMAT):
        raise ValueError(f"format {version!r}, this failgate reads 1 and {TRUST_FORMAT}")
    out: dict[str, TrustedVerifier] = {}
    for i, item in enumerate(data["verifiers"]):
        entry = _parse_approval(item, with_replaced=version == TRUST_FORMAT)
        if entry is None:
            raise ValueError(f"verifiers[{i}] is not a valid approval")
        before = out.get(entry.entity_key)
        if before is not None and version == TRUST_FORMAT:
            raise ValueError(f"verifiers[{i}] is a second approval for {entry.entity_key}")
        # format 1 appended approvals in order: the gate's version is its last one
        out[entry.entity_key] = _replacing(before, entry) if before is not None else entry
    return out


def _parse_approval(item: object, *, with_replaced: bool) -> TrustedVerifier | None:
    """One approval from its JSON object, or None when it is not one."""
    if not isinstance(item, dict):
        return None
    try:
        argv, pinned = item["argv"], item["pinned"]
        replaced = item["replaced"] if with_replaced else []
        strings = [item[k] for k in ("fingerprint", "entity_key", "approved_by", "approved_at")]
    except KeyError:
        return None
    if not all(isinstance(v, list) for v in (argv, pinned, replaced)):
        return None
    if not all(isinstance(s, str) for s in [*strings, *argv, *replaced]):
        return None
    if not all(isinstance(p, list) and len(p) == 2 and all(isinstance(s, str) for s in p)
               for p in pinned):  # fmt: skip
        return None
    return TrustedVerifier(
        fingerprint=item["fingerprint"],
        entity_key=item["entity_key"],
        argv=tuple(argv),
        pinned=tuple((p[0], p[1]) for p in pinned),
        approved_by=item["approved_by"],
        approved_at=item["approved_at"],
        replaced=tuple(replaced),
        settings=_parse_settings(item.get("settings")),
    )


def _parse_settings(value: object) -> RunSettings | None:
    """The run settings an approval recorded; None when it recorded none (or not as ours):
    they are only shown, the fingerprint alone decides."""
    if not isinstance(value, dict) or set(value) != set(SETTING_NAMES):
        return None
    return value
