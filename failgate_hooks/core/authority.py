"""Authority: which of an entity's events relax its gate and are not yet protected, and,
under authority `protected`, the entity resolved as if the pending ones were
superseded. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable

from failgate_hooks.core.events import Event, EvidenceKind, Problem, Status
from failgate_hooks.core.gates import _DROP_DEPENDENT, Policy, Relaxation, RelaxationKind
from failgate_hooks.core.ids import short_id
from failgate_hooks.core.resolve import Outcome, Resolution, before_each, resolve_entity


def can_hold(resolution: Resolution, protected_ids: frozenset[str]) -> bool:
    """Whether the entity's gate can still hold anywhere, so its verifier can still run:
    it is not retired, or only by events no protected revision holds yet, which under
    authority `protected` are pending and leave the gate as it was."""
    reviewed = Policy(protected_refs=(), authority="protected")
    return not authority(resolution, protected_ids, reviewed)[1].retired


# Rounds of the pending set before the entity counts as invalid. Each round resolves
# the entity again; a real entity settles in one or two. New events that each change
# what the next one relaxes (a chain that re-states a changed verifier) would take a
# round per event, each as costly as the entity.
MAX_PENDING_ROUNDS = 32
PENDING_TOO_DEEP = "pending-too-deep"


def authority(
    resolution: Resolution, protected_ids: frozenset[str], policy: Policy
) -> tuple[tuple[Relaxation, ...], Resolution]:
    """The entity's relaxations not yet protected, and the resolution to decide on.

    Under authority `protected`, without a relaxer pushing, a relaxing event is
    pending and the entity is resolved again as if it were superseded; that can
    revive an event it superseded, which may be a relaxing event in turn, so the
    pending set grows until it is stable, or for MAX_PENDING_ROUNDS rounds: then the
    entity is invalid, which holds its gate (fail closed)."""
    known = not protected_ids.isdisjoint(resolution.events)
    resolution = _without_inserted(resolution, protected_ids)
    accept = policy.authority == "accept" or policy.pusher_is_relaxer
    found = _relaxing(resolution, protected_ids, known)
    if accept:
        return _relaxations(resolution, found, True), resolution

    original = resolution
    pending: dict[str, tuple[RelaxationKind, ...]] = {}
    for rounds in range(MAX_PENDING_ROUNDS + 1):
        new = {e: kinds for e, kinds in found if e not in pending}
        if not new:
            break
        pending.update(new)
        if rounds == MAX_PENDING_ROUNDS:
            resolution = _too_deep(resolution)
            break
        # the files a pending retraction names come back as they are: invalid
        kept = [p for p in original.problems if p.code not in _DROP_DEPENDENT]
        kept += original.retracted_problems
        again = resolve_entity(
            original.entity_key,
            original.events.values(),
            kept,
            also_dropped=frozenset(pending),
        )
        # The problems found again from the same events repeat the kept ones.
        resolution = again._replace(problems=tuple(dict.fromkeys(again.problems)))
        found = _relaxing(resolution, protected_ids, known)
    ordered = [(e, pending[e]) for e in original.order if e in pending]
    return _relaxations(original, ordered, False), resolution


def _too_deep(resolution: Resolution) -> Resolution:
    """The resolution, invalid: its pending set was still growing after the last round."""
    problem = Problem(
        code=PENDING_TOO_DEEP,
        message=(
            f"its new events relax one another more than {MAX_PENDING_ROUNDS} rounds deep "
            "(each one pending changes what the next relaxes); failgate stops there and "
            "holds the gate: push fewer of them at a time, or have a relaxer push them"
        ),
        entity_key=resolution.entity_key,
    )
    return resolution._replace(outcome=Outcome.INVALID, problems=(*resolution.problems, problem))


def _without_inserted(resolution: Resolution, protected_ids: frozenset[str]) -> Resolution:
    """The resolution without the new events that reviewed ones name.

    A protected event can name a new one only when the new one's id was retracted
    (its file deleted) and a file of that id brought back, by a branch older than the
    retraction or on purpose. Retracted, it is dropped and relaxes nothing, yet its
    `follows` would put reviewed events after whatever it names (settling a conflict,
    or placing a confirmation after a verifier it never saw). So it counts as the
    protected revision has it: gone."""
    named = {
        target
        for event_id, event in resolution.events.items()
        if event_id in protected_ids
        for target in (*event.follows, *event.replaces)
        if target in resolution.events and target not in protected_ids
    }
    if not named:
        return resolution
    problems = [p for p in resolution.problems if p.code not in _DROP_DEPENDENT]
    problems += resolution.retracted_problems
    events = [e for event_id, e in resolution.events.items() if event_id not in named]
    again = resolve_entity(resolution.entity_key, events, problems)
    return again._replace(problems=tuple(dict.fromkeys(again.problems)))


def _relaxing(
    resolution: Resolution, protected_ids: frozenset[str], known: bool
) -> list[tuple[str, tuple[RelaxationKind, ...]]]:
    """The unprotected relaxing events, in resolution order, with kinds.

    A superseded event changes nothing but what it supersedes or retracts: those
    stay dropped with it (resolution's rule 1), so two new events that supersede
    each other would drop a protected event and leave no remaining event to name."""
    found: list[tuple[str, tuple[RelaxationKind, ...]]] = []
    if protected_ids.issuperset(resolution.order):
        return found  # nothing new: the usual entity, whose every event is reviewed
    prior = before_each(resolution) if known else {}
    for event_id in resolution.order:
        if event_id in protected_ids:
            continue
        event = resolution.events[event_id]
        if event_id in resolution.dropped:
            replacing = _replacing(event)
            if replacing:
                found.append((event_id, replacing))
            continue
        kinds: list[RelaxationKind] = []
        if event.status is Status.EXPIRED:
            kinds.append(RelaxationKind.EXPIRED)
        if event.evidence is not None and event.evidence.kind is EvidenceKind.HUMAN:
            kinds.append(RelaxationKind.HUMAN)
        kinds += _replacing(event)
        if known:
            # Only a change counts: re-stating what its ancestors already say relaxes
            # nothing. On an entity no protected revision knows, every key is new and
            # can only tighten.
            before = prior[event_id].state
            if event.verification is not None and event.verification != before.verification:
                kinds.append(RelaxationKind.VERIFICATION)
            if event.triggers is not None and event.triggers != before.triggers:
                kinds.append(RelaxationKind.TRIGGERS)
            if event.applies_to is not None and event.applies_to != before.applies_to:
                kinds.append(RelaxationKind.APPLIES_TO)
            # Settling a conflict chooses between reviewed states, even with no key set:
            # the fold then takes the keys of whichever head comes last by id.
            if prior[event_id].settles:
                kinds.append(RelaxationKind.SETTLES)
        elif event.verification is not None and event.verification.env_pass:
            # A verifier change on a known entity is one already; a new entity's verifier
            # only tightens, unless it reads the environment it runs in.
            kinds.append(RelaxationKind.ENV_PASS)
        if kinds:
            found.append((event_id, tuple(kinds)))
    return found


def _replacing(event: Event) -> tuple[RelaxationKind, ...]:
    """The kinds of the events `event` drops: its supersedes and its retracts."""
    kinds = (RelaxationKind.SUPERSEDES,) if event.supersedes else ()
    return kinds + ((RelaxationKind.RETRACTS,) if event.retracts else ())


def _relaxations(
    resolution: Resolution,
    found: Iterable[tuple[str, tuple[RelaxationKind, ...]]],
    accepted: bool,
) -> tuple[Relaxation, ...]:
    """The listed relaxations, described from `resolution`."""
    found = tuple(found)
    settling = any(RelaxationKind.SETTLES in kinds for _, kinds in found)
    prior = before_each(resolution) if settling else {}
    return tuple(
        _relaxation(resolution, e, kinds, accepted, prior[e].settles if settling else ())
        for e, kinds in found
    )


def _relaxation(
    resolution: Resolution,
    event_id: str,
    kinds: Iterable[RelaxationKind],
    accepted: bool,
    settles: tuple[str, ...],
) -> Relaxation:
    """One listed relaxation, with a description of what it changes (`settles`: the
    heads it settles)."""
    kinds = tuple(kinds)
    event = resolution.events[event_id]
    parts: list[str] = []
    for kind in kinds:
        if kind is RelaxationKind.EXPIRED:
            parts.append("status expired")
        elif kind is RelaxationKind.HUMAN:
            evidence = event.evidence
            commit = evidence.commit if evidence is not None else None
            parts.append(f"human confirmation of {short_id(commit) if commit else 'no commit'}")
        elif kind is RelaxationKind.SUPERSEDES:
            parts.append(f"supersedes {_list(event.supersedes)}")
        elif kind is RelaxationKind.RETRACTS:
            parts.append(f"retracts {_list(event.retracts)}")
        elif kind is RelaxationKind.SETTLES:
            parts.append(f"settles the conflict of {_list(settles)}")
        elif kind is RelaxationKind.ENV_PASS:
            verification = event.verification
            names = verification.env_pass if verification is not None else ()
            parts.append(f"a new verifier reads env_pass {_list(names)}")
        else:
            parts.append(f"changes {kind.value}")
    return Relaxation(
        event_id=event_id,
        entity_key=resolution.entity_key,
        kind="+".join(k.value for k in kinds),
        accepted=accepted,
        what="; ".join(parts),
        note=event.note or "",
    )


def _list(values: Iterable[str]) -> str:
    return ", ".join(values)
