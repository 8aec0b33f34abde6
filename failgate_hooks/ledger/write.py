"""Writing events: `record`, `confirm` and `expire`.

Each writes one new event file into the working tree, with `follows` filled by
the entity's current heads, taken from its files committed at HEAD plus its
files in the working tree at paths HEAD lacks.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from failgate_hooks.core.errors import GitError, LedgerError, UsageError
from failgate_hooks.core.events import (
    RETRACTABLE_STEM_RE,
    AppliesTo,
    Event,
    Evidence,
    EvidenceKind,
    Status,
    Verification,
    entity_folder,
    event_to_dict,
    is_ledger_file,
    is_safe_relative_path,
    is_valid_entity_key,
    new_event_id,
)
from failgate_hooks.core.resolve import heads_of
from failgate_hooks.core.sanitize import clean_line, shown_ref
from failgate_hooks.core.validate import parse_event, read_event
from failgate_hooks.git.repo import GitRepo, local_folder
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
    notes: list[str] = field(default_factory=list)  # what the event does, said once


class EntityFiles(NamedTuple):
    """The entity's current events as `record` sees them (HEAD plus new working files)."""

    events: dict[str, Event]
    unreadable: list[str]
    # the paths of the unreadable files by the `id` each holds, where it can be read:
    # a second name a retraction may give one (a name may fit several files)
    written_ids: Mapping[str, tuple[str, ...]] = {}

    def invalid_paths(self, name: str) -> tuple[str, ...]:
        """The unreadable files `name` names: the one whose file name's stem it is, else
        those that hold it as their `id`."""
        by_stem = tuple(p for p in self.unreadable if _stem(p) == name)
        return by_stem or tuple(self.written_ids.get(name, ()))

    @property
    def is_new(self) -> bool:
        return not self.events and not self.unreadable

    @property
    def retracted(self) -> frozenset[str]:
        """The ids the entity's valid events retract."""
        return frozenset(i for event in self.events.values() for i in event.retracts)


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
    names: dict[str, list[str]] = {}
    for path, data in sorted(raw.items()):
        if not is_ledger_file(path):
            continue
        found = None if data is None else read_event(data, path, entity_key=key)
        if found is None or found.event is None:
            unreadable.append(path)
            written = None if found is None else found.written_id
            if written is not None and written != _stem(path):
                names.setdefault(written, []).append(path)
        else:
            events[found.event.id] = found.event
    return EntityFiles(events, unreadable, {n: tuple(p) for n, p in names.items()})


def _stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].removesuffix(".toml")


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
    notes: list[str] = []
    retracts = tuple(
        dict.fromkeys(_retraction_target(current, draft.entity_key, ref, notes)
                      for ref in draft.retracts)
    )  # fmt: skip
    draft = draft._replace(retracts=retracts)
    warnings = _unreadable_warnings(current, draft)
    if current.is_new:
        if not draft.triggers:
            raise UsageError(
                f"{draft.entity_key} is a new entity: say what must check it with --trigger "
                "(e.g. --trigger push)"
            )
        if not draft.title:
            raise UsageError(f"{draft.entity_key} is a new entity: give it a --title")
    elif not current.events and (not draft.triggers or not draft.title):
        # nothing to follow: this event is the entity's first, which sets both
        raise UsageError(
            f"{draft.entity_key} has no event that validates, so this one is its first: "
            "give it a --title and say what must check it with --trigger (e.g. --trigger push)"
        )
    for ref in draft.supersedes:
        if ref not in current.events:
            _refuse_unknown(current, draft.entity_key, ref, "--supersedes")

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
    temp_dir = os.path.join(local_folder(repo.common_dir), "writing")
    return Written(_write_fresh(root, config.ledger, event, temp_dir), event, warnings, notes)


# What a name the command line gives is shown as: an id is 24 characters.
_SHOWN = 80


def _retraction_target(current: EntityFiles, key: str, ref: str, notes: list[str]) -> str:
    """The id `--retracts REF` names: a valid event's, or the file name's stem of the one
    file of this entity's folder that fails validation and that REF names (by its stem,
    or by the `id` it holds). The stem is what the gate and append-only know it by; a
    misnamed file's stem serves when it is portable (RETRACTABLE_STEM_RE)."""
    if ref in current.events:
        return ref
    paths = current.invalid_paths(ref)
    if len(paths) > 1:
        raise UsageError(
            f"{clean_line(ref, _SHOWN)} names {len(paths)} files of {key} that do not "
            f"validate ({', '.join(paths)}): retract each by its file name's stem",
        )
    if not paths:
        _refuse_unknown(current, key, ref, "--retracts")
    (path,) = paths
    stem = _stem(path)
    if not RETRACTABLE_STEM_RE.match(stem):
        raise UsageError(
            f"{shown_ref(path)} cannot be retracted: a retraction names a file by its name "
            "without .toml, and this one's is not 1 to 100 of A-Z a-z 0-9 . _ -; until it "
            f"is gone it keeps {key} invalid, and its gate holds",
            hint="no event can name it, and append-only refuses a commit that deletes or "
            "renames it. If no protected branch holds it yet, rewrite your commits that add "
            "it (git rebase -i) to give it a portable name; if one does, an administrator "
            "must rewrite that branch's history to rename or remove it",
        )
    by = "" if stem == ref else f" (it holds id {ref}; the retraction names its file, {stem})"
    notes.append(
        f"retracts {path}, which does not validate{by}: once this event is committed it no "
        "longer makes the entity invalid (on a server, once it is on a protected branch or "
        "a relaxer pushes it), and the file may then be deleted"
    )
    return stem


def _refuse_unknown(current: EntityFiles, key: str, ref: str, option: str) -> None:
    shown = clean_line(ref, _SHOWN)
    paths = current.invalid_paths(ref)
    if paths and option != "--retracts":
        raise UsageError(
            f"{option} {shown}: {paths[0]} does not validate, so nothing of it can be "
            f"carried forward; retract it instead with --retracts {_stem(paths[0])}"
        )
    raise UsageError(
        f"{option} {shown}: no event of {key} has that id, and no file of its folder that "
        "fails validation has that name (committed at HEAD or in the working tree)",
        hint=f"failgate log {key} lists its events; failgate fsck names the files that "
        "do not validate",
    )


def _unreadable_warnings(current: EntityFiles, draft: EventDraft) -> list[str]:
    """A warning for each file of the entity that fails validation and that no event
    (this one included) retracts."""
    retracted = current.retracted | set(draft.retracts)
    return [
        f"{path} does not validate; it is not followed: retract it (failgate record "
        f"{draft.entity_key} --status {draft.status.value} --retracts {_stem(path)})"
        if RETRACTABLE_STEM_RE.match(_stem(path))
        else f"{shown_ref(path)} has a name no retraction can give; it is not followed and "
        "keeps the entity invalid (run failgate fsck)"
        for path in current.unreadable
        if _stem(path) not in retracted
    ]


def _follows(known: dict[str, Event], retracts: Sequence[str]) -> tuple[str, ...]:
    """The entity's heads, plus what each retracted event followed.

    A retracted file is deleted; naming its predecessors here keeps the order
    that ran through it, so an older event cannot become a head again. A file that
    fails validation names nothing that can be read: nothing of it is followed.
    """
    ids = list(heads_of(known.values()))
    for retracted in retracts:
        if retracted in known:
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
        old = known.get(old_id)
        if old is None:
            continue  # a file that fails validation: nothing of it can be read
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


def _write_fresh(root: str, ledger_dir: str, event: Event, temp_dir: str) -> str:
    for _ in range(5):
        try:
            return write_event_file(root, ledger_dir, event, temp_dir)
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
