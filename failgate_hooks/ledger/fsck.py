"""`failgate fsck`: every problem of the ledger at one revision, and of a range."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from failgate_hooks.core.events import RETRACTABLE_STEM_RE, Problem
from failgate_hooks.core.resolve import Resolution
from failgate_hooks.core.retraction import (
    retract_advice,
    retract_command,
    retracted_paths,
    retracting_events,
)
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.ledger.union import Ledger, Revision, inspection_config, read_union


@dataclass
class FsckReport:
    commit: str
    events: int
    entities: int
    problems: list[Problem] = field(default_factory=list)
    # what to do about the problems: the command that retracts each entity's invalid files
    hints: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        at = self.commit[:12]
        if self.ok:
            return f"fsck: ledger OK at {at}: {self.events} event(s), {self.entities} entity(ies)"
        return f"fsck: {len(self.problems)} problem(s) in the ledger at {at}"

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": 1,
            "commit": self.commit,
            "ok": self.ok,
            "events": self.events,
            "entities": self.entities,
            "hints": list(self.hints),
            "errors": [
                {
                    "code": p.code,
                    "message": p.message,
                    "path": p.path,
                    "key": p.key,
                    "entity_key": p.entity_key,
                    "commit": p.commit,
                }
                for p in self.problems
            ],
        }


def ledger_problems(
    repo: GitRepo,
    ledger: Ledger,
    commit: str,
    max_event_bytes: int,
    resolutions: Mapping[str, Resolution],
) -> list[Problem]:
    """Every problem of a ledger: files, resolution, committed credentials, pinned symlinks.

    `resolutions` are every entity's, as `Ledger.resolve_all` gives them: fsck resolves
    each entity once, for its problems and for its hint."""
    found: list[Problem] = list(ledger.problems)
    retracted_by: dict[str, tuple[str, ...]] = {}  # by path: the events that retract it
    files_by_entity = ledger.files_by_entity()
    for key, resolution in resolutions.items():
        found.extend(resolution.problems)
        # a file that fails validation and that a valid event retracts is no problem
        cleared = retracted_paths(resolution)
        retracting = retracting_events(resolution)
        for file in files_by_entity.get(key, ()):
            if file.path not in cleared:
                found.extend(file.problems)
            # fsck holds nothing pending: a valid file an event retracts is retracted,
            # and one that fails validation once that retraction clears it
            by = retracting.get(file.event_id, ())
            if by and (file.path in cleared or not file.problems):
                retracted_by[file.path] = by
    found.extend(_committed_credentials(repo, ledger, max_event_bytes, retracted_by))
    found.extend(_pinned_symlinks(repo, ledger, commit))
    unique: dict[tuple[Any, ...], Problem] = {}
    for p in found:
        p = p if p.commit else p._replace(commit=commit)
        unique.setdefault((p.code, p.path, p.key, p.message), p)
    return sorted(unique.values(), key=lambda p: (p.path or "", p.key or "", p.code))


def _committed_credentials(
    repo: GitRepo, ledger: Ledger, max_event_bytes: int, retracted_by: dict[str, tuple[str, ...]]
) -> list[Problem]:
    from failgate_hooks.core.credentials import describe, find_credentials

    # a symlink or a submodule: `not-a-file` already says so; no blob to read
    files = [f for f in ledger.files.values() if all(p.code != "not-a-file" for p in f.problems)]
    # Bounded as the union reads them: a file over the limit already fails fsck (too
    # large, or not an event's name), and its bytes are never held to be scanned.
    texts = {
        blob.oid: blob.data.decode("utf-8", "replace")
        for blob in repo.iter_bounded_blobs({f.oid for f in files}, max_event_bytes)
        if blob.data is not None
    }
    out = []
    for file in files:
        by = retracted_by.get(file.path)
        # what is left to do: a retracted file still in the tree is only to be deleted
        if by:
            todo = f"retracted by {', '.join(by)}: delete the file, and rotate the secret"
        elif RETRACTABLE_STEM_RE.match(file.event_id):
            todo = (
                f"record an event that retracts {file.event_id}, delete the file, "
                "and rotate the secret"
            )
        else:
            todo = (
                "no retraction can name the file: rewrite history to remove it (once a "
                "protected branch holds it, an administrator rewrites that branch), and "
                "rotate the secret"
            )
        for finding in find_credentials(texts.get(file.oid, ""))[:1]:
            out.append(
                Problem(
                    code="credential",
                    message=f"holds {describe(finding)}: {todo}",
                    path=file.path,
                    entity_key=file.entity_key,
                )
            )
    return out


def _pinned_symlinks(repo: GitRepo, ledger: Ledger, commit: str) -> list[Problem]:
    pinned: dict[str, list[str]] = {}
    for file in ledger.files.values():
        if file.event is not None and file.event.verification is not None:
            for path in file.event.verification.files:
                pinned.setdefault(path, []).append(file.path)
    if not pinned:
        return []
    out = []
    for entry in repo.ls_tree(commit):
        if entry.path in pinned and entry.mode == "120000":
            for event_path in pinned[entry.path]:
                out.append(
                    Problem(
                        code="pinned-symlink",
                        message=f"pinned verifier file {entry.path} is a symlink; "
                        "symlinks are never followed, so the gate stays open",
                        path=event_path,
                        key="verification.files",
                    )
                )
    return out


def run_fsck(repo: GitRepo, rev: str, range_: str | None) -> FsckReport:
    """Validate the ledger at `rev`; with `range_`, append-only over A..B too."""
    commit = repo.resolve_commit(rev)
    config = inspection_config(repo)
    ledger = read_union(repo, [Revision(rev, commit)], config.ledger, config.max_event_bytes)
    resolutions = ledger.resolve_all()
    problems = ledger_problems(repo, ledger, commit, config.max_event_bytes, resolutions)
    if range_:
        from failgate_hooks.ledger.appendonly import check_range

        problems.extend(check_range(repo, range_, config.ledger, config.max_event_bytes))
    events = sum(1 for f in ledger.files.values() if f.event is not None)
    hints = [
        f"{key}: {retract_advice(command)}"
        for key, resolution in resolutions.items()
        if (command := retract_command(resolution)) is not None
    ]
    return FsckReport(commit, events, len(resolutions), problems, hints)
