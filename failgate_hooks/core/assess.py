"""Phase 1 of the gate decision: one resolved entity's state for commit C, and authority.

`assess` puts an entity into the state table for C, given git's answers about C
(`Facts`), and says which verifier, if any, could clear it. It also finds the
entity's relaxing events and, under authority `protected`, decides as if the
pending ones were superseded (`core/authority.py`). Pure: no I/O.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from failgate_hooks.core import wildmatch
from failgate_hooks.core.authority import authority
from failgate_hooks.core.events import EvidenceKind, Problem, Verification
from failgate_hooks.core.gates import (
    Assessment,
    Context,
    Facts,
    GateState,
    Policy,
    Relaxation,
    RelaxationKind,
)
from failgate_hooks.core.ids import short_id
from failgate_hooks.core.resolve import (
    EntityState,
    Outcome,
    Resolution,
)
from failgate_hooks.core.retraction import retract_advice, retract_command


def assess(
    resolution: Resolution,
    facts: Facts,
    context: Context,
    *,
    protected_ids: frozenset[str],
    policy: Policy,
) -> Assessment:
    """Phase 1: the entity's state for C, with its relaxations and the verifier to run."""
    relaxations, resolution = authority(resolution, protected_ids, policy)
    shown = resolution.state
    found = _state(resolution, facts, context)
    if found.state is not GateState.NOT_APPLICABLE:
        relaxations += _leaving_since(resolution, facts, policy)
    return Assessment(
        entity_key=resolution.entity_key,
        state=found.state,
        reason=found.reason,
        title=shown.title,
        status=shown.status,
        event_ids=_remaining(resolution),
        commit=facts.commit,
        verification=found.verification,
        relaxations=relaxations,
        notes=found.notes,
        problems=found.problems,
        retract_command=found.retract_command,
    )


def _remaining(resolution: Resolution) -> tuple[str, ...]:
    """The ids of the events not dropped, in resolution order."""
    if not resolution.dropped:
        return resolution.order
    return tuple(i for i in resolution.order if i not in resolution.dropped)


class _Found(NamedTuple):
    """What `_state` finds: the state and why, and what goes with it."""

    state: GateState
    reason: str
    notes: tuple[str, ...] = ()
    verification: Verification | None = None
    problems: tuple[Problem, ...] = ()
    retract_command: str | None = None


def _state(resolution: Resolution, facts: Facts, context: Context) -> _Found:
    """The row of the state table the entity is in for C."""
    verdicts = [_applicability(scope, facts, context) for scope in judged_scopes(resolution)]
    applying = [notes for applies, notes in verdicts if applies]
    if not applying:
        return _Found(GateState.NOT_APPLICABLE, _not_applicable(verdicts))
    notes = tuple(dict.fromkeys(note for head_notes in applying for note in head_notes))
    if _scope_dropped(resolution):
        notes += (SCOPE_UNKNOWN_NOTE,)
    shown = resolution.state
    if resolution.outcome is Outcome.INVALID:
        count = len(resolution.problems)
        reason = f"{count} problem(s) in its events: fix or retract them (failgate fsck)"
        command = retract_command(resolution)
        if command is not None:
            reason = f"{count} problem(s) in its events (failgate fsck): {retract_advice(command)}"
        found = _Found(GateState.INVALID, reason, notes, problems=resolution.problems)
        return found._replace(retract_command=command)
    if resolution.outcome is Outcome.CONFLICT:
        return _Found(GateState.CONFLICT, _conflict_reason(resolution), notes)
    if resolution.retired:
        return _Found(GateState.RETIRED, "status expired: the risk no longer exists", notes)
    confirmed = _human_clearance(resolution, facts)
    if confirmed is not None:
        return _Found(GateState.CLEARED, confirmed, notes)
    check = shown.verification
    if check is None:
        reason = (
            "no verifier: stays open until a person confirms the content "
            "(failgate confirm) or a verifier is added"
        )
    else:
        reason = f"needs verifier {shlex.join(check.command)}"
    return _Found(GateState.OPEN, reason, notes, verification=check)


def judged_scopes(resolution: Resolution) -> list[EntityState]:
    """The states whose scope decides applicability: the heads of a conflict, else the fold.

    An invalid entity is judged on its fold and on every head: for heads that disagree,
    the fold takes the keys of the head last by id, and a broken file must not let the
    narrowest head decide where a conflict would have held. When a broken file sets
    applies_to (or triggers), no valid event's applies_to (or triggers) narrows them; a
    file that does not parse may set either, so then neither does."""
    heads = [resolution.head_states[h] for h in resolution.heads]
    if resolution.outcome is Outcome.CONFLICT:
        return heads
    if resolution.outcome is Outcome.INVALID:
        states = [resolution.state, *(head for head in heads if head != resolution.state)]
        unknown = _unknown_scope(resolution)
        if unknown:
            return [state._replace(**dict.fromkeys(unknown)) for state in states]
        return states
    return [resolution.state]


SCOPE_UNKNOWN_NOTE = (
    "a file that fails to validate sets its scope (applies_to or triggers, or it does not "
    "parse): where it applies is unknown, so that key narrows nothing (fail closed)"
)
_SCOPE_KEYS = ("applies_to", "triggers")


def _scope_dropped(resolution: Resolution) -> bool:
    """Whether a valid event's scope or triggers went unheeded for a broken file: worth
    saying, where an entity with no valid scope has nothing to drop."""
    states = [resolution.state, *(resolution.head_states[h] for h in resolution.heads)]
    unknown = _unknown_scope(resolution)
    return any(getattr(state, key) is not None for state in states for key in unknown)


def _unknown_scope(resolution: Resolution) -> tuple[str, ...]:
    """The scope keys an event file that failed to validate may set: what it meant (a
    short ref name, a bad glob, a trigger) may reach where the valid events do not, so
    their value cannot stand for it. A problem of the whole file (it does not parse, or
    is not this entity's) may hide either key."""
    if resolution.outcome is not Outcome.INVALID:
        return ()
    unknown: set[str] = set()
    for problem in resolution.problems:
        if problem.path is None:
            continue
        if problem.key is None:
            return _SCOPE_KEYS
        unknown.update(k for k in _SCOPE_KEYS if problem.key.split(".")[0].split("[")[0] == k)
    return tuple(k for k in _SCOPE_KEYS if k in unknown)


def _not_applicable(verdicts: Sequence[tuple[bool, tuple[str, ...]]]) -> str:
    why = verdicts[0][1][0]
    return f"no head applies: {why}" if len(verdicts) > 1 else why


def _applicability(
    state: EntityState, facts: Facts, context: Context
) -> tuple[bool, tuple[str, ...]]:
    """Whether one (head) state applies; if not, why; if so, any fail-closed notes.

    Cheap checks first, so git is asked only about entities that could apply.
    A key no valid event set does not narrow the scope (an invalid entity applies
    everywhere)."""
    triggers = state.triggers
    if triggers is not None and context.trigger not in triggers:
        return False, (f'trigger "{context.trigger}" is not in its triggers ({_list(triggers)})',)
    scope = state.applies_to
    if scope is None:
        return True, ()
    notes: list[str] = []
    if scope.refs is not None:
        if context.ref is None:
            notes.append("destination ref unknown: its refs scope applies (fail closed)")
        elif not wildmatch.match_any(scope.refs, context.ref):
            return False, (f"ref {context.ref} matches none of its refs ({_list(scope.refs)})",)
    if scope.environments is not None:
        env = context.environment
        if env is None:
            notes.append("no environment given: its environments scope applies")
        elif env not in scope.environments:
            envs = _list(scope.environments)
            return False, (f'environment "{env}" is not in its environments ({envs})',)
    if scope.since is not None:
        related = facts.since_relation(scope.since)
        if related is None:
            notes.append(
                f"since {short_id(scope.since)} is not in this repository: applies (fail closed)"
            )
        elif not related:
            # History is the pusher's to write: a force push, or a new ref, can carry
            # any tree under a commit that does not descend from `since`. So C is out
            # of scope only where the gate did not hold already.
            protected = _left_since(scope.since, facts)
            if protected is None:
                return False, (
                    f"since {short_id(scope.since)} is neither {short_id(facts.commit)} "
                    "nor an ancestor of it",
                )
            notes.append(
                f"{short_id(facts.commit)} does not descend from since "
                f"{short_id(scope.since)}, but {protected}, the protected revision it is "
                "judged against, does: applies, or new history would escape the gate"
            )
    if scope.paths is not None:
        matched = facts.tree_matches(scope.paths)
        if matched is None:
            notes.append(
                "its paths were not all matched within the work one decision may take "
                "(many long globs, or very long file names): applies (fail closed)"
            )
        elif not matched:
            return False, (
                f"no file of {short_id(facts.commit)} matches its paths ({_list(scope.paths)})",
            )
    return True, tuple(notes)


def _left_since(since: str, facts: Facts) -> str | None:
    """The protected revision C is judged against, when it descends from `since` and C
    does not (C is new history outside the gate's scope); else None."""
    if facts.since_relation(since) is not False:
        return None
    return facts.protected_under_since(since)


def _leaving_since(resolution: Resolution, facts: Facts, policy: Policy) -> tuple[Relaxation, ...]:
    """A gate that applies to C only because the protected revision is inside its
    `since`: C is new history outside it. The verifier still judges C's tree; but once
    accepted, C is a tip the gate no longer holds, nor any commit built on it, so
    only a relaxer may push it (a branch cut from before `since`, a rewritten main)."""
    for state in judged_scopes(resolution):
        since = state.applies_to.since if state.applies_to is not None else None
        protected = _left_since(since, facts) if since is not None else None
        if since is not None and protected is not None:
            what = (
                f"{resolution.entity_key}: {short_id(facts.commit)} does not descend from "
                f"since {short_id(since)}, which {protected} does: accepted, it and every "
                "commit on it would leave the gate"
            )
            accepted = policy.authority == "accept" or policy.pusher_is_relaxer
            kind = RelaxationKind.LEAVES_SINCE.value
            return (Relaxation("", resolution.entity_key, kind, accepted, what),)
    return ()


def _conflict_reason(resolution: Resolution) -> str:
    """Which heads disagree, on what, and how a person settles it."""
    states = [resolution.head_states[h] for h in resolution.heads]
    keys = [
        name
        for name in ("status", "verification", "triggers", "applies_to")
        if len({repr(getattr(s, name)) for s in states}) > 1
    ]
    on = f" on {', '.join(keys)}" if keys else ""
    return (
        f"heads {', '.join(resolution.heads)} disagree{on}: "
        "settle it with an event that follows all of them"
    )


def _human_clearance(resolution: Resolution, facts: Facts) -> str | None:
    """Why human evidence clears the gate for C, or None when none does.

    It must come after (descend from) every remaining event that set verification,
    triggers or applies_to: a confirmation given before the verifier or the scope
    changed confirmed something else. An event that both sets them and confirms is
    not after itself, so it does not clear."""
    remaining = [resolution.events[i] for i in resolution.order if i not in resolution.dropped]
    setters = [
        e.id
        for e in remaining
        if e.verification is not None or e.triggers is not None or e.applies_to is not None
    ]
    after_setters = resolution.ancestors.mask(setters)
    for event in reversed(remaining):
        evidence = event.evidence
        if evidence is None or evidence.kind is not EvidenceKind.HUMAN or evidence.commit is None:
            continue
        if not resolution.ancestors.comes_after(event.id, after_setters):
            continue
        if facts.evidence_binds(evidence.commit, resolution.state.verification):
            who = f" by {evidence.confirmed_by}" if evidence.confirmed_by else ""
            return (
                f"confirmed{who} in {event.id} for {short_id(evidence.commit)}, "
                f"the same content as {short_id(facts.commit)}"
            )
    return None


def _list(values: Iterable[str]) -> str:
    return ", ".join(values)
