"""Writing events: `record`, `confirm` and `expire`.

Each writes one new event file into the working tree, with `follows` filled by
the entity's current heads, taken from its files committed at HEAD plus its
files in the working tree at paths HEAD lacks.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from failgate_hooks.core.errors import GitError, LedgerError, UsageError
from failgate_hooks.core.events import (
    AppliesTo,
    Event,
    Evidence,
    EvidenceKind,
    Status,
    Verification,
    entity_folder,
    event_to_dict,
    is_safe_relative_path,
    is_valid_entity_key,
    new_event_id,
)
from failgate_hooks.core.resolve import heads_of
from failgate_hooks.core.validate import parse_event
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.ledger.config import Config
from failgate_hooks.ledger.worktree import EventFileExists, working_tree_files, write_event_file


class EventDraft(NamedTuple):
    """What the person asked for; None means "not given" (inherited)."""

    entity_key: str
    status: Status
    title: str | None = None
    triggers: tuple[str, ...] = ()
    since: str | None = None
    paths: tuple[str, ...] = ()
    refs: tuple[str, ...] = ()
    environments: tuple[str, ...] = ()
    verify: tuple[str, ...] = ()
    verify_files: tuple[str, ...] = ()
    timeout_s: int | None = None
    inputs: tuple[str, ...] = ()
    supersedes: tuple[str, ...] = ()
    retracts: tuple[str, ...] = ()
    note: str | None = None
    effective_at: dt.datetime | None = None
    evidence: Evidence | None = None


@dataclass
class Written:
    path: str
    event: Event
    warnings: list[str] = field(default_factory=list)


class EntityFiles(NamedTuple):
    """The entity's current events as `record` sees them (HEAD plus new working files)."""

    events: dict[str, Event]
    unreadable: list[str]

    @property
    def is_new(self) -> bool:
        return not self.events and not self.unreadable


def current_entity_files(repo: GitRepo, root: str, config: Config, key: str) -> EntityFiles:
    """The entity's event files committed at HEAD, plus working-tree files HEAD lacks.

    Each is read only up to `max_event_bytes`: a larger one is unreadable, as the
    union reads it, and its bytes are never held."""
    folder = f"{config.ledger}/{entity_folder(key)}"
    limit = config.max_event_bytes
    raw: dict[str, bytes | None] = {}
    head = repo.try_resolve_commit("HEAD")
    if head is not None:
        committed = {
            entry.oid: entry.path
            for entry in repo.ls_tree(head, folder)
            if entry.path.count("/") == folder.count("/") + 1 and entry.type == "blob"
        }
        for blob in repo.iter_bounded_blobs(committed, limit):
            raw[committed[blob.oid]] = blob.data
    for path, read in working_tree_files(root, config.ledger, key, limit).items():
        raw.setdefault(path, read if len(read) <= limit else None)
    events: dict[str, Event] = {}
    unreadable: list[str] = []
    for path, data in sorted(raw.items()):
        if not path.endswith(".toml") or path.rsplit("/", 1)[-1].startswith("."):
            continue
        event = None if data is None else parse_event(data, path, entity_key=key)[0]
        if event is None:
            unreadable.append(path)
        else:
            events[event.id] = event
    return EntityFiles(events, unreadable)


def write_event(
    repo: GitRepo,
    config: Config,
    draft: EventDraft,
    *,
    recorded_by: str | None,
) -> Written:
    """Validate a draft against the entity as it stands, and write it as a new event file."""
    root = repo.working_dir
    if root is None:
        raise UsageError("events are written into a work tree; this repository is bare")
    if not is_valid_entity_key(draft.entity_key):
        raise UsageError(
            f"invalid entity key {draft.entity_key!r}: expected segments of "
            "[a-z0-9][a-z0-9_-]* joined by ':', such as deploy:mainnet:gas-budget"
        )
    current = current_entity_files(repo, root, config, draft.entity_key)
    warnings = [
        f"{path} does not validate; it is not followed (run failgate fsck)"
        for path in current.unreadable
    ]
    if current.is_new:
        if not draft.triggers:
            raise UsageError(
                f"{draft.entity_key} is a new entity: say what must check it with --trigger "
                "(e.g. --trigger push)"
            )
        if not draft.title:
            raise UsageError(f"{draft.entity_key} is a new entity: give it a --title")
    for ref in (*draft.supersedes, *draft.retracts):
        if ref not in current.events:
            raise UsageError(
                f"{ref} is not an event of {draft.entity_key} "
                "(committed at HEAD or in the working tree)"
            )

    title, triggers, applies_to, verification = _carried_forward(draft, current.events)
    event = Event(
        id=new_event_id(),
        entity_key=draft.entity_key,
        status=draft.status,
        effective_at=(draft.effective_at or dt.datetime.now(dt.UTC)).replace(microsecond=0),
        follows=_follows(current.events, draft.retracts),
        title=title,
        triggers=triggers,
        supersedes=draft.supersedes,
        retracts=draft.retracts,
        recorded_by=recorded_by,
        note=draft.note,
        applies_to=applies_to,
        verification=verification,
        evidence=draft.evidence,
    )
    _refuse_non_text(event)
    _refuse_credentials(event)
    _check_round_trip(event)
    return Written(_write_fresh(root, config.ledger, event), event, warnings)


def _follows(known: dict[str, Event], retracts: Sequence[str]) -> tuple[str, ...]:
    """The entity's heads, plus what each retracted event followed.

    A retracted file is deleted; naming its predecessors here keeps the order
    that ran through it, so an older event cannot become a head again.
    """
    ids = list(heads_of(known.values()))
    for retracted in retracts:
        ids += [i for i in known[retracted].follows if i not in ids]
    return tuple(ids)


def _carried_forward(
    draft: EventDraft, known: dict[str, Event]
) -> tuple[str | None, tuple[str, ...] | None, AppliesTo | None, Verification | None]:
    """The keys the draft sets, with a superseded event's keys carried over.

    `record --supersedes X` (or `--retracts X`) replaces X as if it were never written; X's title,
    triggers, scope and verifier come forward so that a typo fix does not
    silently revert them.
    """
    title = draft.title
    triggers: tuple[str, ...] | None = draft.triggers or None
    scope = None
    if draft.since or draft.paths or draft.refs or draft.environments:
        scope = AppliesTo(
            since=draft.since,
            paths=draft.paths or None,
            refs=draft.refs or None,
            environments=draft.environments or None,
        )
    verification = None
    if draft.verify:
        verification = Verification(
            command=draft.verify,
            files=draft.verify_files,
            timeout_s=draft.timeout_s,
            inputs=draft.inputs or None,
        )
    elif draft.verify_files or draft.inputs or draft.timeout_s:
        raise UsageError("--verify-file, --input and --timeout describe a verifier: add --verify")
    for old_id in (*draft.supersedes, *draft.retracts):
        old = known[old_id]
        title = title if title is not None else old.title
        triggers = triggers if triggers is not None else old.triggers
        scope = scope if scope is not None else old.applies_to
        verification = verification if verification is not None else old.verification
    return title, triggers, scope, verification


def _refuse_non_text(event: Event) -> None:
    """An argument that is not UTF-8 (its bytes kept as surrogates) cannot be written."""
    for key, text in _free_text(event_to_dict(event)):
        if any("\ud800" <= char <= "\udfff" for char in text):
            raise UsageError(
                f"refused: {key.rstrip('.') or 'a value'} is not UTF-8 text; nothing was written",
                hint="give it as UTF-8 (check the terminal's or the script's encoding)",
            )


def _refuse_credentials(event: Event) -> None:
    from failgate_hooks.core.credentials import describe, find_credentials

    for key, text in _free_text(event_to_dict(event)):
        findings = find_credentials(text)
        if findings:
            raise UsageError(
                f"refused: {key} holds {describe(findings[0])}. The ledger is committed "
                "and never a credential store; nothing was written.",
                hint="remove the secret (and rotate it if it was real), then record again",
            )


def _free_text(doc: object, prefix: str = "") -> list[tuple[str, str]]:
    if isinstance(doc, str):
        return [(prefix, doc)]
    if isinstance(doc, dict):
        return [pair for k, v in doc.items() for pair in _free_text(v, f"{prefix}{k}.")]
    if isinstance(doc, list):
        return [pair for v in doc for pair in _free_text(v, prefix)]
    return []


def _check_round_trip(event: Event) -> None:
    """Refuse to write what failgate itself would not read back as the same event."""
    from failgate_hooks.core.events import event_to_toml

    path = f"{entity_folder(event.entity_key)}/{event.id}.toml"
    parsed, problems = parse_event(event_to_toml(event), path, entity_key=event.entity_key)
    if problems:
        raise UsageError(
            "; ".join(p.message if not p.key else f"{p.key}: {p.message}" for p in problems)
        )
    assert parsed == event, "an event must read back as written"


def _write_fresh(root: str, ledger_dir: str, event: Event) -> str:
    for _ in range(5):
        try:
            return write_event_file(root, ledger_dir, event)
        except EventFileExists:
            event = event._replace(id=new_event_id())  # a collision: draw another id
    raise LedgerError("could not find a free event id after 5 attempts")


def check_paths(paths: Sequence[str], option: str) -> None:
    """Pinned files must be relative, normalised and inside the repository."""
    for path in paths:
        if not is_safe_relative_path(path):
            raise UsageError(f"{option} {path!r}: expected a relative path inside the repository")


def git_identity(repo: GitRepo) -> str | None:
    """`Name <email>` as git would sign a commit now; informational, never identity."""
    try:
        ident = repo.run("var", "GIT_AUTHOR_IDENT")
    except GitError:
        return None
    # "Name <email> 1764460800 +0000": drop the timestamp
    return ident.rsplit(" ", 2)[0] if ident.count(" ") >= 2 else ident or None


__all__ = [
    "EventDraft",
    "EvidenceKind",
    "Written",
    "check_paths",
    "current_entity_files",
    "git_identity",
    "write_event",
]
