"""One ledger event: the typed record of a failure's lifecycle.

The record types, the rules for ids, entity keys and paths, and writing an
event as TOML. Reading and validating an event file is `core.validate`.
"""

from __future__ import annotations

import datetime as dt
import enum
import functools
import re
from collections.abc import Sequence
from typing import Any, NamedTuple

SCHEMA_VERSION = 1

ID_RE = re.compile(r"^(?P<time>[0-9]{8}T[0-9]{6}Z)-(?P<hex>[0-9a-f]{8})\Z")
SEGMENT_RE = re.compile(r"^[a-z0-9][a-z0-9_-]*\Z")
# What a `retracts` may name besides an id: the file name's stem of a misnamed file of
# the entity's folder (`oops.toml`, a copy saved as `<id>-old.toml`). Such a file
# makes its entity invalid, and append-only keeps it: without a name to retract it by,
# only a history rewrite could clear it. The stem must be portable so that it reads
# the same in TOML, a shell and a message; every id is one.
RETRACTABLE_STEM_RE = re.compile(r"^[A-Za-z0-9._-]{1,100}\Z")


class Status(enum.StrEnum):
    OBSERVED = "observed"
    DIAGNOSED = "diagnosed"
    MITIGATED = "mitigated"
    VERIFIED = "verified"
    EXPIRED = "expired"


class EvidenceKind(enum.StrEnum):
    COMMAND = "command"
    HUMAN = "human"
    NOTE = "note"


class Workdir(enum.StrEnum):
    CHECKOUT = "checkout"
    INPLACE = "inplace"


class Problem(NamedTuple):
    """One thing wrong with the ledger, located as precisely as it can be."""

    code: str
    message: str
    path: str | None = None
    key: str | None = None
    commit: str | None = None
    entity_key: str | None = None

    def describe(self) -> str:
        where = self.path or (f"entity {self.entity_key}" if self.entity_key else "ledger")
        if self.key:
            where += f": {self.key}"
        if self.commit:
            where += f" @ {self.commit[:12]}"
        return f"{where}: {self.message}"


class AppliesTo(NamedTuple):
    """The scope of an entity; an unset key does not narrow it."""

    since: str | None = None
    paths: tuple[str, ...] | None = None
    refs: tuple[str, ...] | None = None
    environments: tuple[str, ...] | None = None


# A verifier's time limit when neither its event nor the configuration sets one.
DEFAULT_TIMEOUT_S = 300


class Verification(NamedTuple):
    """The reviewed command that clears a gate, and what it depends on."""

    command: tuple[str, ...]
    files: tuple[str, ...] = ()
    timeout_s: int | None = None
    inputs: tuple[str, ...] | None = None
    env_pass: tuple[str, ...] = ()
    workdir: Workdir = Workdir.CHECKOUT


class Evidence(NamedTuple):
    """What an event saw; informational except for `human` confirmation."""

    kind: EvidenceKind
    commit: str | None = None
    exit_code: int | None = None
    output_tail: str | None = None
    confirmed_by: str | None = None


class Event(NamedTuple):
    """One event file. Keys that are None were absent and are inherited."""

    id: str
    entity_key: str
    status: Status
    effective_at: dt.datetime
    schema: int = SCHEMA_VERSION
    follows: tuple[str, ...] = ()
    title: str | None = None
    triggers: tuple[str, ...] | None = None
    supersedes: tuple[str, ...] = ()
    retracts: tuple[str, ...] = ()
    recorded_by: str | None = None
    note: str | None = None
    applies_to: AppliesTo | None = None
    verification: Verification | None = None
    evidence: Evidence | None = None

    @property
    def replaces(self) -> tuple[str, ...]:
        """Ids this event drops from resolution (`retracts` implies `supersedes`)."""
        return self.supersedes + tuple(r for r in self.retracts if r not in self.supersedes)


# --------------------------------------------------------------------------- ids and keys


def new_event_id(now: dt.datetime | None = None) -> str:
    """A fresh id: UTC time plus 32 random bits, so two branches never collide."""
    import secrets  # only commands that record load it: a push never makes an id

    moment = (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    return f"{moment:%Y%m%dT%H%M%SZ}-{secrets.token_hex(4)}"


_ENTITY_KEY_RE = re.compile(r"[a-z0-9][a-z0-9_-]*(?::[a-z0-9][a-z0-9_-]*)*")


def is_valid_entity_key(key: str) -> bool:
    """Segments of [a-z0-9][a-z0-9_-]* joined by ':'."""
    return _ENTITY_KEY_RE.fullmatch(key) is not None


def entity_folder(key: str) -> str:
    """`deploy:mainnet:gas-budget` -> `deploy/mainnet/gas-budget` (no `:` in paths)."""
    return "/".join(key.split(":"))


def is_ledger_file(path: str) -> bool:
    """Whether a file under the ledger folder is read as an event file, well named or not:
    a `.toml` file. Anything else there is the team's, never an event: a README, or the
    dot-file of an interrupted write (`.<id>.<pid>.tmp`, linked into place when whole)."""
    name = path.rsplit("/", 1)[-1]
    return name.endswith(".toml") and not name.startswith(".")


# Every file of a folder asks again, thousands of times in one ledger read: kept, within
# a bound that no ledger reaches (MAX_LEDGER_FILES).
@functools.lru_cache(maxsize=1 << 17)
def entity_key_of_folder(folder: str) -> str | None:
    """The entity a folder (relative to the ledger root) names, or None if it names none."""
    segments = [s for s in folder.split("/") if s]
    if not segments or not all(SEGMENT_RE.match(s) for s in segments):
        return None
    return ":".join(segments)


def is_safe_relative_path(path: str) -> bool:
    """Relative, normalised, inside the repository and outside `.git`."""
    if not path or "\0" in path or "\\" in path or path.startswith("/"):
        return False
    parts = path.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return False
    # git refuses a `.git` component at any depth and in any case (and as `.git.`
    # or `.git ` where file systems drop the tail): a nested repository's git
    # folder is never content.
    return not any(p.lower().rstrip(". ") == ".git" for p in parts)


# --------------------------------------------------------------------------- writing


def event_to_dict(event: Event) -> dict[str, Any]:
    """The TOML document of an event: absent (None) keys stay absent."""
    doc: dict[str, Any] = {
        "schema": event.schema,
        "id": event.id,
        "entity_key": event.entity_key,
        "status": event.status.value,
        "follows": list(event.follows),
        "effective_at": event.effective_at,
    }
    if event.title is not None:
        doc["title"] = event.title
    if event.triggers is not None:
        doc["triggers"] = list(event.triggers)
    doc["supersedes"] = list(event.supersedes)
    doc["retracts"] = list(event.retracts)
    if event.recorded_by is not None:
        doc["recorded_by"] = event.recorded_by
    if event.note is not None:
        doc["note"] = event.note
    if event.applies_to is not None:
        doc["applies_to"] = _drop_none(
            {
                "since": event.applies_to.since,
                "paths": _list_or_none(event.applies_to.paths),
                "refs": _list_or_none(event.applies_to.refs),
                "environments": _list_or_none(event.applies_to.environments),
            }
        )
    if event.verification is not None:
        v = event.verification
        doc["verification"] = _drop_none(
            {
                "command": list(v.command),
                "files": list(v.files),
                "timeout_s": v.timeout_s,
                "inputs": _list_or_none(v.inputs),
                "env_pass": list(v.env_pass) or None,
                "workdir": v.workdir.value if v.workdir is not Workdir.CHECKOUT else None,
            }
        )
    if event.evidence is not None:
        e = event.evidence
        doc["evidence"] = _drop_none(
            {
                "kind": e.kind.value,
                "commit": e.commit,
                "exit_code": e.exit_code,
                "output_tail": e.output_tail,
                "confirmed_by": e.confirmed_by,
            }
        )
    return doc


def event_to_toml(event: Event) -> bytes:
    import tomli_w  # only `record` and friends write; keep it off the hook's path

    return tomli_w.dumps(event_to_dict(event)).encode("utf-8")


def _list_or_none(value: Sequence[str] | None) -> list[str] | None:
    return None if value is None else list(value)


def _drop_none(table: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in table.items() if v is not None}
