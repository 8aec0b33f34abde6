"""What each event comes after, walked once: the same answers as the set-per-event
algorithm it replaced, and a long `follows` chain costs its length, not its cube."""

from __future__ import annotations

import random
import time
import tracemalloc
from collections.abc import Collection, Mapping

from hypothesis import given, settings

from failgate_hooks.core.authority import can_hold
from failgate_hooks.core.events import Event, Problem, Status, Verification
from failgate_hooks.core.resolve import (
    CYCLE,
    MAX_ENTITY_EVENTS,
    TOO_MANY_EVENTS,
    EntityState,
    Outcome,
    Resolution,
    _collect,
    _decision_key,
    _references,
    _Reporter,
    before_each,
    fold,
    resolve_entity,
)
from tests.test_resolve_properties import KEY, WHEN, ledgers_with_pending

# --------------------------------------------------------------------------- the old algorithm
# Kept here only, as the oracle: sets of every ancestor per event, heads from their union.


def _old_reachable(start: str, preds: Mapping[str, Collection[str]]) -> set[str]:
    found: set[str] = set()
    stack = list(preds[start])
    while stack:
        event_id = stack.pop()
        if event_id not in found:
            found.add(event_id)
            stack.extend(preds[event_id])
    return found


def _old_break_cycles(preds: dict[str, set[str]], report: _Reporter) -> None:
    reach = {event_id: _old_reachable(event_id, preds) for event_id in preds}
    seen: set[str] = set()
    for event_id in sorted(preds):
        if event_id in seen or event_id not in reach[event_id]:
            continue
        group = {event_id} | {other for other in reach[event_id] if event_id in reach[other]}
        seen |= group
        members = sorted(group)
        report(
            CYCLE,
            f"follows makes a cycle through {', '.join(members)}; "
            f"ordered by id instead: event {members[0]} first",
            key="follows",
        )
        for member in members:
            preds[member] = {p for p in preds[member] if p not in group or p < member}


def _old_ancestors(
    order: tuple[str, ...], preds: Mapping[str, Collection[str]]
) -> dict[str, frozenset[str]]:
    ancestors: dict[str, frozenset[str]] = {}
    for event_id in order:
        found: set[str] = set()
        for pred in preds[event_id]:
            found.add(pred)
            found |= ancestors[pred]
        ancestors[event_id] = frozenset(found)
    return ancestors


def _old_heads(remaining: list[str], ancestors: Mapping[str, frozenset[str]]) -> tuple[str, ...]:
    covered: set[str] = set()
    for event_id in remaining:
        covered |= ancestors[event_id]
    return tuple(sorted(event_id for event_id in remaining if event_id not in covered))


def _old_settled_heads(
    res: Resolution, ancestors: Mapping[str, frozenset[str]], event_id: str
) -> tuple[str, ...]:
    before = ancestors[event_id]
    earlier = [i for i in res.order if i in before and i not in res.dropped]
    heads = _old_heads(earlier, ancestors)
    if len(heads) < 2:
        return ()
    keys = {
        _decision_key(fold(res.events[i] for i in earlier if i == h or i in ancestors[h]))[1:]
        for h in heads
    }
    return heads if len(keys) > 1 else ()


def assert_as_the_old_algorithm(events: list[Event], pending: frozenset[str]) -> None:
    res = resolve_entity(KEY, events, also_dropped=pending)
    found: list[Problem] = []
    report = _Reporter(KEY, found)
    valid, foreign, unusable = _collect(KEY, events, report)
    preds, _ = _references(valid, foreign, unusable, report)
    _old_break_cycles(preds, report)
    assert [p for p in res.problems if p.code == CYCLE] == [p for p in found if p.code == CYCLE]

    ancestors = _old_ancestors(res.order, preds)
    assert dict(res.ancestors) == ancestors
    remaining = [i for i in res.order if i not in res.dropped]
    assert res.heads == _old_heads(remaining, ancestors)
    assert res.head_states == {
        h: fold(res.events[i] for i in remaining if i == h or i in ancestors[h]) for h in res.heads
    }
    before = before_each(res)
    assert list(before) == list(res.order)
    for event_id in res.order:
        earlier = fold(res.events[i] for i in remaining if i in ancestors[event_id])
        assert before[event_id].state == earlier
        assert before[event_id].settles == _old_settled_heads(res, ancestors, event_id)


@given(ledgers_with_pending(acyclic=False))
@settings(max_examples=400)
def test_small_graphs_with_cycles_resolve_as_the_old_algorithm(
    ledger: tuple[list[Event], frozenset[str]],
) -> None:
    assert_as_the_old_algorithm(*ledger)


CHECKS = [None, Verification(command=("sh", "a.sh")), Verification(command=("sh", "b.sh"))]


def random_graph(rng: random.Random) -> tuple[list[Event], frozenset[str]]:
    """Up to 60 events whose `follows` name up to three earlier ones (sometimes a later
    one: a cycle), with supersessions, retractions and pending ids."""
    n = rng.randint(1, 60)
    ids = [f"2026{i:04d}T000000Z-{rng.getrandbits(32):08x}" for i in range(n)]
    rng.shuffle(ids)  # id order is not graph order
    events = []
    for i, event_id in enumerate(ids):
        earlier = ids[:i]
        follows = set(rng.sample(earlier, min(len(earlier), rng.randint(0, 3))))
        if rng.random() < 0.03:
            follows.add(rng.choice(ids))  # may make a cycle, or name itself
        replaces = rng.sample(earlier, 1) if earlier and rng.random() < 0.1 else []
        events.append(
            Event(
                id=event_id,
                entity_key=KEY,
                status=rng.choice(list(Status)),
                effective_at=WHEN,
                follows=tuple(sorted(follows)),
                title="t" if i == 0 or rng.random() < 0.2 else None,
                triggers=("push",) if i == 0 else rng.choice([None, None, ("deploy",)]),
                verification=rng.choice(CHECKS),
                supersedes=tuple(replaces) if rng.random() < 0.7 else (),
                retracts=tuple(replaces) if rng.random() < 0.3 else (),
            )
        )
    pending = frozenset(rng.sample(ids, min(n, rng.randint(0, 3))))
    return events, pending


def test_larger_random_graphs_resolve_as_the_old_algorithm() -> None:
    rng = random.Random(20261204)
    for _ in range(300):
        assert_as_the_old_algorithm(*random_graph(rng))


# --------------------------------------------------------------------------- cost


def chain(n: int) -> list[Event]:
    """An entity of `n` events, each following the one before."""
    ids = [
        f"20261204T{i // 3600 % 24:02d}{i // 60 % 60:02d}{i % 60:02d}Z-{i:08x}" for i in range(n)
    ]
    return [
        Event(
            id=event_id,
            entity_key=KEY,
            status=Status.OBSERVED,
            effective_at=WHEN,
            follows=(ids[i - 1],) if i else (),
            title="t" if i == 0 else None,
            triggers=("push",) if i == 0 else None,
        )
        for i, event_id in enumerate(ids)
    ]


def test_a_chain_of_4000_events_resolves_and_assesses_in_little_memory_and_time() -> None:
    # The set-per-event algorithm did cubic work here and kept a set entry per pair of
    # events; the bounds are far above one walk's and far below that.
    events = chain(4000)
    tracemalloc.start()
    started = time.process_time()
    try:
        res = resolve_entity(KEY, events)
        # the first event reviewed, the rest new: every new event is assessed as a
        # possible relaxation, the settling of a conflict included
        assert can_hold(res, frozenset({events[0].id}))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    spent = time.process_time() - started
    assert res.heads == (events[-1].id,)
    assert res.ancestors[events[-1].id] == {e.id for e in events[:-1]}
    assert peak < 40_000_000, f"peak {peak} bytes"
    assert spent < 20, f"{spent:.1f} s of CPU"


def test_what_an_event_of_a_long_chain_comes_after_is_its_whole_past() -> None:
    events = chain(3000)
    before = before_each(resolve_entity(KEY, events))
    last = before[events[-1].id]
    assert last.state == EntityState(status=Status.OBSERVED, title="t", triggers=("push",))
    assert last.settles == ()
    assert before[events[0].id].state == EntityState()


def test_an_entity_of_more_events_than_the_bound_is_invalid_and_ordered_by_id() -> None:
    # a chain against id order: each event follows the one whose id comes after it
    events = chain(MAX_ENTITY_EVENTS + 1)
    ids = [e.id for e in events]
    events = [
        e._replace(follows=(ids[i + 1],) if i + 1 < len(ids) else ()) for i, e in enumerate(events)
    ]
    res = resolve_entity(KEY, events)
    assert res.outcome is Outcome.INVALID
    assert [p.code for p in res.problems] == [TOO_MANY_EVENTS]
    assert f"{MAX_ENTITY_EVENTS + 1} events, more than the {MAX_ENTITY_EVENTS}" in (
        res.problems[0].message
    )
    assert res.order == tuple(ids)
    assert not any(res.ancestors.bits)


def test_an_entity_at_the_bound_is_ordered_by_follows() -> None:
    events = chain(MAX_ENTITY_EVENTS)
    res = resolve_entity(KEY, events)
    assert res.outcome is Outcome.RESOLVED
    assert res.heads == (events[-1].id,)
