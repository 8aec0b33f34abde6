"""What `failgate export` found: every entity, its state and lifecycle, as values. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from failgate_hooks.core.events import Problem
from failgate_hooks.core.gates import GateState

# The order entities' states are counted in, on the leading line and in JSON.
STATE_ORDER = (
    GateState.OPEN,
    GateState.CLEARED,
    GateState.CONFLICT,
    GateState.INVALID,
    GateState.RETIRED,
    GateState.NOT_APPLICABLE,
)


# A frozen dataclass, not a NamedTuple like the other values: its `text` defaults to
# a fresh mapping, which a NamedTuple default would share between instances.
@dataclass(frozen=True)
class ExportedEvent:
    """One file of an entity's lifecycle: a valid event, or a file that failed to validate."""

    event_id: str
    path: str
    valid: bool
    status: str | None = None
    effective_at: str | None = None
    head: bool = False
    superseded_by: tuple[str, ...] = ()  # events whose supersedes or retracts name it
    retracted_by: tuple[str, ...] = ()
    follows: tuple[str, ...] = ()
    supersedes: tuple[str, ...] = ()
    retracts: tuple[str, ...] = ()
    protected: bool = False  # in a protected revision (the remote default branch)
    evidence_kind: str | None = None
    evidence_commit: str | None = None
    evidence_exit_code: int | None = None
    # Free text, by field name: title, note, recorded_by, output_tail, confirmed_by.
    text: Mapping[str, str] = field(default_factory=dict)
    problems: tuple[str, ...] = ()  # for an invalid file: what is wrong with it

    @property
    def superseded(self) -> bool:
        return bool(self.superseded_by)


class ExportedRelaxation(NamedTuple):
    """A relaxing event not yet in a protected revision (accepted, as `gates` shows it)."""

    event_id: str
    kind: str
    what: str


class ExportedEntity(NamedTuple):
    """One entity: its state for a push to an unknown ref, why, and its lifecycle."""

    entity_key: str
    state: GateState
    blocking: bool
    reason: str
    outcome: str  # resolved, conflict or invalid
    status: str | None
    title: str | None
    heads: tuple[str, ...]
    command: tuple[str, ...] | None
    notes: tuple[str, ...]
    problems: tuple[str, ...]
    relaxations: tuple[ExportedRelaxation, ...]
    events: tuple[ExportedEvent, ...]


class ExportedRevision(NamedTuple):
    """A revision the ledger was read from: `label` for people, `commit` the id."""

    label: str
    commit: str
    protected: bool = False


class ExportReport(NamedTuple):
    """Every entity of the ledger at a revision, with the revisions it was read from."""

    commit: str
    trigger: str
    revisions: tuple[ExportedRevision, ...]
    entities: tuple[ExportedEntity, ...]
    ledger_problems: tuple[Problem, ...]

    @property
    def counts(self) -> dict[str, int]:
        """How many entities are in each state, and how many problems no entity owns."""
        counts = {"entities": len(self.entities)}
        for state in STATE_ORDER:
            counts[state.value] = sum(1 for e in self.entities if e.state is state)
        counts["ledger_problems"] = len(self.ledger_problems)
        return counts
