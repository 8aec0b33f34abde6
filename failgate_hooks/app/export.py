"""`failgate export`: every entity, its state, reason and lifecycle, for an agent.

A coding agent reads this to learn which risks the repository remembers. States
are `app/report.py`'s, the decision `check` reaches with no verifier run, so no
free text can change an outcome: render/export.py only shows the text, as quoted
data.
"""

from __future__ import annotations

from failgate_hooks.app.report import report
from failgate_hooks.core.events import Event
from failgate_hooks.core.export import (
    ExportedEntity,
    ExportedEvent,
    ExportedRelaxation,
    ExportedRevision,
    ExportReport,
)
from failgate_hooks.core.gates import Gate, Relaxation
from failgate_hooks.core.resolve import Resolution
from failgate_hooks.core.retraction import retracted_paths, retracting_events
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.ledger.union import Ledger, LedgerFile

TRIGGER = "push"


def export_ledger(repo: GitRepo, *, rev: str = "HEAD", trust_ledger: bool = False) -> ExportReport:
    """Every entity at `rev` (with the remote default branch, protected), no verifier run."""
    # The state is the one `failgate gates` and `check` reach for trigger push and an
    # unknown ref: relaxations are accepted and listed, and an open gate's verifier is
    # answered by the pass cache or is "not run". A GitError propagates: an export that
    # cannot tell a state does not guess.
    found = report(repo, rev=rev, trigger=TRIGGER, trust_ledger=trust_ledger)
    decision, ledger = found.decision, found.ledger
    entities = [
        _entity(ledger, ledger.resolve(gate.entity_key), gate, decision.relaxations)
        for gate in decision.gates
    ]
    return ExportReport(
        commit=decision.commit,
        trigger=TRIGGER,
        revisions=tuple(ExportedRevision(r.label, r.commit, r.protected) for r in found.revisions),
        entities=tuple(entities),
        ledger_problems=tuple(ledger.problems),
    )


def _entity(
    ledger: Ledger, resolution: Resolution, gate: Gate, relaxations: tuple[Relaxation, ...]
) -> ExportedEntity:
    """One entity's export from its resolution and its gate in the decision."""
    state = resolution.state
    problems = tuple(dict.fromkeys(p.describe() for p in (*resolution.problems, *gate.problems)))
    return ExportedEntity(
        entity_key=resolution.entity_key,
        state=gate.state,
        blocking=gate.blocking,
        reason=gate.reason,
        outcome=resolution.outcome.value,
        status=gate.status.value if gate.status is not None else None,
        title=gate.title,
        heads=resolution.heads,
        command=state.verification.command if state.verification is not None else None,
        notes=gate.notes,
        problems=problems,
        relaxations=tuple(
            ExportedRelaxation(r.event_id, r.kind, r.what)
            for r in relaxations
            if r.entity_key == gate.entity_key
        ),
        events=_lifecycle(ledger, resolution),
    )


def _lifecycle(ledger: Ledger, resolution: Resolution) -> tuple[ExportedEvent, ...]:
    """The entity's events in resolution order, then the files that failed to validate."""
    replaced_by: dict[str, list[str]] = {}
    for event in resolution.events.values():
        for target in event.replaces:
            replaced_by.setdefault(target, []).append(event.id)
    retracted_by = retracting_events(resolution)
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
                retracted_by=retracted_by.get(event_id, ()),
            )
        )
    # a file that fails validation and that a counting retraction clears: its problems
    # no longer count, as resolution and fsck have it, and export lists none
    cleared = retracted_paths(resolution)
    for file in sorted(ledger.files_of(resolution.entity_key), key=lambda f: f.path):
        if file.path in cleared:
            out.append(
                ExportedEvent(
                    event_id=file.event_id,
                    path=file.path,
                    valid=False,
                    retracted_by=retracted_by.get(file.event_id, ()),
                    protected=file.protected,
                )
            )
        elif file.event is None or file.event.id not in resolution.events:
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
