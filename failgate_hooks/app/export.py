"""`failgate export`: every entity, its state, reason and lifecycle, for an agent.

A coding agent reads this to learn which risks the repository remembers. States
come from `core/assess.py` alone, without running any verifier, so no free text
can change an outcome: render/export.py only shows the text, as quoted data.
"""

from __future__ import annotations

from failgate_hooks.app.evaluate import GitFacts
from failgate_hooks.core.assess import assess
from failgate_hooks.core.decide import enforces
from failgate_hooks.core.events import Event
from failgate_hooks.core.export import (
    ExportedEntity,
    ExportedEvent,
    ExportedRelaxation,
    ExportedRevision,
    ExportReport,
)
from failgate_hooks.core.gates import BLOCKING_STATES, Assessment, Context, Policy
from failgate_hooks.core.resolve import Resolution
from failgate_hooks.git.repo import GitRepo, default_remote, remote_default_branch
from failgate_hooks.ledger.config import Config
from failgate_hooks.ledger.union import Ledger, LedgerFile, Revision, read_union

TRIGGER = "push"


def export_ledger(repo: GitRepo, config: Config, *, rev: str = "HEAD") -> ExportReport:
    """Every entity at `rev` (with the remote default branch, protected), no verifier run."""
    # The state is the decision for trigger push and an unknown ref, as `failgate gates` decides
    # it: relaxations are accepted and listed, and an open gate with a verifier stays
    # open. A GitError propagates: an export that cannot tell a state does not guess.
    commit = repo.resolve_commit(rev)
    revisions = [Revision(rev, commit)]
    remote = default_remote(repo)
    found = remote_default_branch(repo, remote) if remote else None
    extra_protected: tuple[str, ...] = ()
    if found is not None:
        revisions.append(Revision(found[0], found[1], protected=True))
        extra_protected = ("refs/heads/" + found[0].removeprefix(f"refs/remotes/{remote}/"),)
    ledger = read_union(repo, revisions, config.ledger, config.max_event_bytes)
    facts = GitFacts(repo, commit, config.ledger)
    context = Context(trigger=TRIGGER)
    policy = Policy(
        protected_refs=tuple(config.protected_refs) + extra_protected,
        block_on=config.block_on,
        mode=config.mode,
    )
    block = enforces(context, policy) and policy.mode == "enforce"
    entities = []
    protected_ids = ledger.protected_ids
    for resolution in ledger.resolve_all().values():
        item = assess(resolution, facts, context, protected_ids=protected_ids, policy=policy)
        entities.append(_entity(ledger, resolution, item, block))
    return ExportReport(
        commit=commit,
        rev=rev,
        trigger=TRIGGER,
        revisions=tuple(ExportedRevision(r.label, r.commit, r.protected) for r in revisions),
        entities=tuple(entities),
        ledger_problems=tuple(ledger.problems),
    )


def _entity(
    ledger: Ledger, resolution: Resolution, item: Assessment, block: bool
) -> ExportedEntity:
    """One entity's export from its resolution and its assessment."""
    state = resolution.state
    problems = tuple(dict.fromkeys(p.describe() for p in (*resolution.problems, *item.problems)))
    return ExportedEntity(
        entity_key=resolution.entity_key,
        state=item.state,
        blocking=block and item.state in BLOCKING_STATES,
        reason=item.reason,
        outcome=resolution.outcome.value,
        status=item.status.value if item.status is not None else None,
        title=item.title,
        heads=resolution.heads,
        command=state.verification.command if state.verification is not None else None,
        notes=item.notes,
        problems=problems,
        relaxations=tuple(ExportedRelaxation(r.event_id, r.kind, r.what) for r in item.relaxations),
        events=_lifecycle(ledger, resolution),
    )


def _lifecycle(ledger: Ledger, resolution: Resolution) -> tuple[ExportedEvent, ...]:
    """The entity's events in resolution order, then the files that failed to validate."""
    replaced_by: dict[str, list[str]] = {}
    retracted_by: dict[str, list[str]] = {}
    for event in resolution.events.values():
        for target in event.replaces:
            replaced_by.setdefault(target, []).append(event.id)
        for target in event.retracts:
            retracted_by.setdefault(target, []).append(event.id)
    out = []
    for event_id in resolution.order:
        event = resolution.events[event_id]
        file = ledger.file_of_id(event_id)
        out.append(
            _event(
                event,
                file,
                head=event_id in resolution.heads,
                superseded_by=tuple(sorted(replaced_by.get(event_id, ()))),
                retracted_by=tuple(sorted(retracted_by.get(event_id, ()))),
            )
        )
    for file in sorted(ledger.files_of(resolution.entity_key), key=lambda f: f.path):
        if file.event is None or file.event.id not in resolution.events:
            out.append(
                ExportedEvent(
                    event_id=file.event_id,
                    path=file.path,
                    valid=False,
                    protected=file.protected,
                    problems=tuple(p.describe() for p in file.problems)
                    or ("not used: another file gives the same id",),
                )
            )
    return tuple(out)


def _event(
    event: Event,
    file: LedgerFile | None,
    *,
    head: bool,
    superseded_by: tuple[str, ...],
    retracted_by: tuple[str, ...],
) -> ExportedEvent:
    evidence = event.evidence
    text = {
        name: value
        for name, value in (
            ("title", event.title),
            ("note", event.note),
            ("recorded_by", event.recorded_by),
            ("output_tail", evidence.output_tail if evidence else None),
            ("confirmed_by", evidence.confirmed_by if evidence else None),
        )
        if value is not None
    }
    return ExportedEvent(
        event_id=event.id,
        path=file.path if file is not None else "",
        valid=True,
        status=event.status.value,
        effective_at=event.effective_at.isoformat(),
        head=head,
        superseded_by=superseded_by,
        retracted_by=retracted_by,
        follows=event.follows,
        supersedes=event.supersedes,
        retracts=event.retracts,
        protected=file.protected if file is not None else False,
        evidence_kind=evidence.kind.value if evidence else None,
        evidence_commit=evidence.commit if evidence else None,
        evidence_exit_code=evidence.exit_code if evidence else None,
        text=text,
    )
