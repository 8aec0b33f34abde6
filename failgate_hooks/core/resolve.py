"""Resolving an entity's events into one state. Pure: no I/O.

The steps, in the order the design fixes them:

1. Supersession first. An event named in the `supersedes` or `retracts` of any
   event of the entity is dropped, even when the naming event is itself
   dropped: if C supersedes B and B superseded A, A stays dropped, else
   superseding a typo fix would revive the typo. Ids in `also_dropped`
   (pending relaxations) are dropped as if superseded, and their own
   `supersedes` and `retracts` drop nothing: a pending event must count as if
   it were not there. Every dropped event keeps its `follows` edges for order.
2. Order by the `follows` graph, ties by id; `effective_at` never decides.
3. Fold along that order.
4. Heads are the remaining events that no remaining event comes after, sorted
   by id. They agree when their folds have the same status, verification,
   triggers and scope; lists that mean sets (triggers, globs, environments,
   pinned files) are compared as sets.
5. Broken references, cycles, foreign events, a missing title or trigger and
   more than MAX_ENTITY_EVENTS events make the entity INVALID (so many are
   ordered by id alone); it still gets a best-effort state, order and heads:
   broken edges are ignored, and a cycle is broken by ordering its members by id.
   A head whose own lineage has no triggers left is a missing trigger too.
   An id named in a `retracts` may be absent without being a broken reference:
   a retracted file may be deleted, and what followed it still names it.
6. A file that fails validation is named by its file name's stem: what the naming
   rule makes its id, and for a misnamed file (`oops.toml`) the only name it has,
   when that stem is portable (RETRACTABLE_STEM_RE). When a valid event of the
   entity that is not pending retracts that stem, the file's problems no longer make
   the entity invalid: they are kept in `retracted_problems`, so that a caller
   resolving again with more events pending gives them back. A duplicated id is
   never cleared this way.
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Iterable, Mapping
from typing import NamedTuple

from failgate_hooks.core.ancestry import (
    NO_IDS,
    Ancestry,
    Deciders,
    Walk,
    positions,
    strongly_connected,
    topological_order,
    walk,
)
from failgate_hooks.core.events import (
    ID_RE,
    RETRACTABLE_STEM_RE,
    AppliesTo,
    Event,
    Problem,
    Status,
    Verification,
)

# Problem codes of an INVALID resolution, besides the validation problems passed in.
UNKNOWN_REFERENCE = "unknown-reference"
FOREIGN_REFERENCE = "foreign-reference"
SELF_REFERENCE = "self-reference"
FOREIGN_EVENT = "foreign-event"
DUPLICATE_ID = "duplicate-id"
CYCLE = "cycle"
MISSING_TITLE = "missing-title"
MISSING_TRIGGERS = "missing-triggers"
TOO_MANY_EVENTS = "too-many-events"

# The most events of one entity resolved by their `follows`; a real failure's history
# has tens. Beyond it the entity is invalid and its events are ordered by id alone:
# what each event comes after takes a bit per pair of events.
MAX_ENTITY_EVENTS = 5000


class EntityState(NamedTuple):
    """The folded keys of an entity; None means no remaining event set that key."""

    status: Status | None = None
    title: str | None = None
    triggers: tuple[str, ...] | None = None
    applies_to: AppliesTo | None = None
    verification: Verification | None = None


class Outcome(enum.StrEnum):
    RESOLVED = "resolved"
    CONFLICT = "conflict"
    INVALID = "invalid"


class Resolution(NamedTuple):
    entity_key: str
    outcome: Outcome
    # RESOLVED: the heads' state. CONFLICT: the fold of all remaining events in
    # order (for display only; decide on head_states). INVALID: the best-effort
    # fold of the valid events (keys may be None: the entity then applies everywhere).
    state: EntityState
    heads: tuple[str, ...]
    head_states: Mapping[str, EntityState]
    # every valid event id, in resolution order (topological by follows, ties by id),
    # dropped ones included so `log` can show them
    order: tuple[str, ...]
    dropped: frozenset[str]
    # for each valid event id: every event id it comes after, transitively,
    # through dropped events too
    ancestors: Ancestry
    events: Mapping[str, Event]
    problems: tuple[Problem, ...]
    # the problems of files that failed validation and that a counting (valid, not
    # pending) event of the entity retracts: they no longer make it invalid
    retracted_problems: tuple[Problem, ...] = ()

    @property
    def retired(self) -> bool:
        """Whether the entity is retired (resolved, its status expired): its gate can no
        longer hold, so its verifier never runs. A conflict or an invalid entity can."""
        return self.outcome is Outcome.RESOLVED and self.state.status is Status.EXPIRED


def fold(events: Iterable[Event]) -> EntityState:
    """Fold events given in resolution order: each overrides the keys it sets."""
    status: Status | None = None
    title: str | None = None
    triggers: tuple[str, ...] | None = None
    applies_to: AppliesTo | None = None
    verification: Verification | None = None
    for event in events:
        status = event.status
        if event.title is not None:
            title = event.title
        if event.triggers is not None:
            triggers = event.triggers
        if event.applies_to is not None:
            applies_to = event.applies_to
        if event.verification is not None:
            verification = event.verification
    return EntityState(
        status=status,
        title=title,
        triggers=triggers,
        applies_to=applies_to,
        verification=verification,
    )


def resolve_entity(
    entity_key: str,
    events: Iterable[Event],
    problems: Iterable[Problem] = (),
    *,
    also_dropped: Collection[str] = (),
) -> Resolution:
    """Resolve one entity. `problems` are its files' validation problems (they make it
    INVALID); `also_dropped` are ids to treat as superseded (pending relaxations).

    Ids in `also_dropped` that are not events of this entity are ignored, so a caller
    may pass every pending id of the ledger. The result does not depend on the order
    of `events`."""
    problems = tuple(problems)
    found = list(problems)
    report = _Reporter(entity_key, found)
    valid, foreign, unusable = _collect(entity_key, events, report)
    preds, replaced_by = _references(valid, foreign, unusable, report)
    too_many = len(valid) > MAX_ENTITY_EVENTS
    if too_many:
        report(
            TOO_MANY_EVENTS,
            f"{len(valid)} events, more than the {MAX_ENTITY_EVENTS} failgate orders by "
            "follows: ordered by id instead. Delete the events that were not meant, or "
            "expire the entity and record a new one",
        )
        preds = {event_id: set() for event_id in preds}
    _break_cycles(preds, report)
    order = topological_order(preds)
    ancestors = Ancestry(order, preds)

    pending = frozenset(also_dropped) & valid.keys()
    retracted = _retracted_files(entity_key, problems, valid, pending)
    if retracted:
        problems = tuple(p for p in problems if p not in retracted)
        found[:] = [p for p in found if p not in retracted]  # the list `report` appends to
    dropped = pending | {
        target
        for event_id, targets in replaced_by.items()
        if event_id not in pending
        for target in targets
    }
    remaining = [event_id for event_id in order if event_id not in dropped]
    heads = ancestors.heads(remaining)
    overall = fold(valid[event_id] for event_id in remaining)
    if len(heads) == 1:
        # every remaining event is the head or comes before it: its lineage is them all
        head_states = {heads[0]: overall}
    else:
        lineages = _walk(ancestors, valid, dropped).lineage
        head_states = {
            head: _fold_of(lineages[ancestors.position[head]], ancestors, valid) for head in heads
        }
    if not problems and not too_many:
        # A file that fails to validate may be the event that sets them: saying that no
        # event does would send a person looking for a title instead of the broken file.
        # Nor do events ordered without their follows lack them, each its own head.
        _report_missing(overall, heads, head_states, report)

    if found:
        outcome, state = Outcome.INVALID, overall
    elif len({_decision_key(head_states[head]) for head in heads}) == 1:
        # With one head (the usual case) its state is the overall one: the same object,
        # not a copy, so that the parse cache keeps it once.
        first = head_states[heads[0]]
        state = first if first.title == overall.title else first._replace(title=overall.title)
        outcome = Outcome.RESOLVED
    else:
        outcome, state = Outcome.CONFLICT, overall

    return Resolution(
        entity_key=entity_key,
        outcome=outcome,
        state=state,
        heads=heads,
        head_states=head_states,
        order=order,
        dropped=frozenset(dropped) if dropped else NO_IDS,
        ancestors=ancestors,
        events={event_id: valid[event_id] for event_id in order},
        problems=tuple(found),
        retracted_problems=retracted,
    )


def retractable_stem(problem: Problem, entity_key: str) -> str | None:
    """The file name's stem a retraction names to clear a problem, when one may: the
    problem is its own (a duplicated id is two files' problem, never cleared so) of a
    file of this entity's folder whose stem is an id or, misnamed, at least portable."""
    if problem.path is None or problem.entity_key != entity_key or problem.code == DUPLICATE_ID:
        return None
    name = problem.path.rsplit("/", 1)[-1]
    if not name.endswith(".toml"):
        return None
    stem = name.removesuffix(".toml")
    return stem if RETRACTABLE_STEM_RE.match(stem) else None


def _retracted_files(
    entity_key: str,
    problems: tuple[Problem, ...],
    valid: Mapping[str, Event],
    pending: frozenset[str],
) -> tuple[Problem, ...]:
    """The problems of invalid files that a valid, not pending, event of the entity
    retracts (a dropped one still retracts, as in rule 1)."""
    ids = {
        target
        for event_id, event in valid.items()
        if event_id not in pending
        for target in event.retracts
    }
    if not ids:
        return ()
    return tuple(p for p in problems if retractable_stem(p, entity_key) in ids)


def _report_missing(
    overall: EntityState,
    heads: tuple[str, ...],
    head_states: Mapping[str, EntityState],
    report: _Reporter,
) -> None:
    if overall.title is None:
        report(MISSING_TITLE, "no remaining event sets title (after supersession)")
    if overall.triggers is None:
        report(MISSING_TRIGGERS, "no remaining event sets triggers (after supersession)")
    else:
        # A head whose own lineage lost its triggers to supersession: gates could not
        # tell when it applies, so fail closed rather than call it a mere conflict.
        for head in heads:
            if head_states[head].triggers is None:
                report(
                    MISSING_TRIGGERS,
                    f"head {head} has no triggers: every event before it that set "
                    "them is dropped (superseded, retracted or pending)",
                )


def heads_of(events: Iterable[Event]) -> tuple[str, ...]:
    """The ids a new event of this entity must follow (`record`, `confirm`, `expire`).

    The heads of the resolution, sorted by id, whatever its outcome: following every
    head of a conflict is how a person settles it. The entity is the one all events
    share."""
    events = tuple(events)
    keys = {event.entity_key for event in events}
    if not keys:
        return ()
    if len(keys) > 1:
        raise ValueError(f"events of several entities: {', '.join(sorted(keys))}")
    (entity_key,) = keys
    return resolve_entity(entity_key, events).heads


class Before(NamedTuple):
    """What an event comes after."""

    # the fold of the remaining events it comes after
    state: EntityState
    # the heads it settles: the remaining events it comes after that no other of
    # them comes after, when they disagree on triggers, scope or verifier; else ().
    # Status is left out: every event sets its own, so the settling event's is the
    # entity's whatever its heads said.
    settles: tuple[str, ...]


def before_each(resolution: Resolution) -> dict[str, Before]:
    """What each valid event of a resolution comes after, by id, in one walk of its order
    (one walk per event would cost the square of a long `follows` chain)."""
    ancestors, events = resolution.ancestors, resolution.events
    walk = _walk(ancestors, events, resolution.dropped)
    found: dict[str, Before] = {}
    for position, event_id in enumerate(ancestors.order):
        settles: tuple[str, ...] = ()
        heads = walk.tops[position]
        if heads.bit_count() > 1:
            ids = tuple(sorted(ancestors.order[i] for i in positions(heads)))
            keys = {
                _decision_key(_fold_of(walk.lineage[ancestors.position[h]], ancestors, events))[1:]
                for h in ids
            }
            settles = ids if len(keys) > 1 else ()
        found[event_id] = Before(_fold_of(walk.before[position], ancestors, events), settles)
    return found


# --------------------------------------------------------------------------- steps


class _Reporter:
    """Appends this entity's problems to one list, in a deterministic order."""

    def __init__(self, entity_key: str, found: list[Problem]) -> None:
        self.entity_key = entity_key
        self.found = found

    def __call__(self, code: str, message: str, key: str | None = None) -> None:
        self.found.append(Problem(code=code, message=message, key=key, entity_key=self.entity_key))


def _collect(
    entity_key: str, events: Iterable[Event], report: _Reporter
) -> tuple[dict[str, Event], dict[str, str], set[str]]:
    """This entity's events by id; foreign ids with their entity; ids known but unusable
    (a file that failed validation, a retracted file that may be gone, a duplicated id)."""
    events = tuple(events)
    by_id: dict[str, list[Event]] = {}
    for event in events:
        by_id.setdefault(event.id, []).append(event)
    valid: dict[str, Event] = {}
    foreign: dict[str, str] = {}
    # A file that failed validation still has an id (its stem): a reference to it
    # is not unknown, and the file's own problem already makes the entity invalid.
    unusable = {
        match["time"] + "-" + match["hex"]
        for problem in report.found
        if problem.path
        and (match := ID_RE.match(problem.path.rsplit("/", 1)[-1].removesuffix(".toml")))
    }
    # A retracted file may be deleted: what still names it is no broken reference.
    unusable.update(
        target for event in events if event.entity_key == entity_key for target in event.retracts
    )
    for event_id in sorted(by_id):
        copies = set(by_id[event_id])  # equal copies (one event at two revisions) are one
        own = [e for e in copies if e.entity_key == entity_key]
        for other in sorted({e.entity_key for e in copies} - {entity_key}):
            foreign[event_id] = other
            report(
                FOREIGN_EVENT,
                f"event {event_id} belongs to entity {other!r}, not {entity_key!r}",
                key="entity_key",
            )
        if len(own) > 1:
            # Which copy is right cannot be told; using neither keeps the result
            # independent of the order the copies came in.
            unusable.add(event_id)
            report(DUPLICATE_ID, f"event {event_id} is given {len(own)} times, differently")
        elif own:
            valid[event_id] = own[0]
    return valid, foreign, unusable


def _references(
    valid: Mapping[str, Event],
    foreign: Mapping[str, str],
    unusable: Collection[str],
    report: _Reporter,
) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """The usable `follows` edges (id -> ids it follows) and `replaces` (id -> ids it drops).

    A reference that cannot be used is reported and otherwise ignored."""
    preds: dict[str, set[str]] = {event_id: set() for event_id in valid}
    replaced_by: dict[str, set[str]] = {event_id: set() for event_id in valid}
    for event_id in sorted(valid):
        event = valid[event_id]
        references = (
            ("follows", event.follows),
            ("supersedes", event.supersedes),
            ("retracts", event.retracts),
        )
        for key, targets in references:
            usable = preds[event_id] if key == "follows" else replaced_by[event_id]
            for target in sorted(set(targets)):
                if target == event_id:
                    report(SELF_REFERENCE, f"event {event_id} names itself in {key}", key=key)
                elif target in valid:
                    usable.add(target)
                elif target in foreign:
                    report(
                        FOREIGN_REFERENCE,
                        f"event {event_id} names {target} in {key}, an event of "
                        f"entity {foreign[target]!r}",
                        key=key,
                    )
                elif target not in unusable:
                    report(
                        UNKNOWN_REFERENCE,
                        f"event {event_id} names {target} in {key}, which is no event "
                        f"of entity {report.entity_key!r}",
                        key=key,
                    )
    return preds, replaced_by


def _break_cycles(preds: dict[str, set[str]], report: _Reporter) -> None:
    """Report each cycle of `follows` and break it in place: within one strongly
    connected group, keep only the edges that go from a smaller id to a larger."""
    for group in sorted(strongly_connected(preds), key=min):
        members = sorted(group)
        report(
            CYCLE,
            f"follows makes a cycle through {', '.join(members)}; "
            f"ordered by id instead: event {members[0]} first",
            key="follows",
        )
        for member in members:
            preds[member] = {p for p in preds[member] if p not in group or p < member}


def _walk(ancestors: Ancestry, events: Mapping[str, Event], dropped: Collection[str]) -> Walk:
    """The ancestry's walk over these events; the keys an event sets are those its own
    fold has (status always)."""
    sets = [
        None if event_id in dropped else tuple(v is not None for v in fold((events[event_id],)))
        for event_id in ancestors.order
    ]
    return walk(ancestors, sets, len(EntityState._fields))


def _fold_of(deciders: Deciders, ancestors: Ancestry, events: Mapping[str, Event]) -> EntityState:
    """The fold of the events a walk says decide it."""
    return fold(events[ancestors.order[i]] for i in sorted(set(deciders)) if i >= 0)


def _decision_key(state: EntityState) -> tuple[object, ...]:
    """What heads must agree on. Lists that mean sets compare as sets:
    two branches that name the same triggers in another order do not disagree."""
    scope = state.applies_to
    check = state.verification
    return (
        state.status,
        _as_set(state.triggers),
        None
        if scope is None
        else (scope.since, _as_set(scope.paths), _as_set(scope.refs), _as_set(scope.environments)),
        None if check is None else verification_key(check),
    )


def verification_key(check: Verification) -> tuple[object, ...]:
    """A verification as heads compare it: the pinned files, inputs and env_pass as sets."""
    return (
        check.command,
        frozenset(check.files),
        check.timeout_s,
        _as_set(check.inputs),
        frozenset(check.env_pass),
        check.workdir,
    )


def _as_set(values: tuple[str, ...] | None) -> frozenset[str] | None:
    return None if values is None else frozenset(values)
