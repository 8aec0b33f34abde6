"""Properties of resolution over random event graphs."""

from __future__ import annotations

import datetime as dt
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from failgate_hooks.core.events import AppliesTo, Event, Status, Verification
from failgate_hooks.core.resolve import Outcome, Resolution, fold, heads_of, resolve_entity

KEY = "deploy:mainnet:gas-budget"
WHEN = dt.datetime(2026, 11, 29, 23, 5, tzinfo=dt.UTC)
CHECK = Verification(command=("python", "checks/check.py"))

# Biased towards repeating and inheriting, so that heads often agree on all but one key.
statuses = st.one_of(st.just(Status.OBSERVED), st.sampled_from(list(Status)))
titles = st.sampled_from([None, "one", "two"])
triggers = st.one_of(
    st.none(), st.sampled_from([("push",), ("deploy",), ("push", "deploy"), ("deploy", "push")])
)
scopes = st.one_of(
    st.none(),
    st.sampled_from([AppliesTo(paths=("deploy/**",)), AppliesTo(refs=("refs/tags/*",))]),
)
checks = st.one_of(st.none(), st.just(CHECK))
clocks = st.datetimes(
    min_value=dt.datetime(1990, 1, 1), max_value=dt.datetime(2099, 1, 1), timezones=st.just(dt.UTC)
)


@st.composite
def ledgers(draw: st.DrawFn, *, acyclic: bool = True) -> list[Event]:
    """An entity's events. Graph order and id order differ, so ties by id matter.

    acyclic=False also draws cycles and references to unknown or foreign ids."""
    n = draw(st.integers(min_value=1, max_value=8))
    ids = draw(st.permutations([f"e{i}" for i in range(n)]))
    extra = [] if acyclic else ["ghost", "x0"]
    events = []
    for i, event_id in enumerate(ids):
        before = list(ids[:i]) if acyclic else [*ids, *extra]
        others = [other for other in [*ids, *extra] if other != event_id]
        events.append(
            Event(
                id=event_id,
                entity_key=KEY,
                status=draw(statuses),
                effective_at=draw(clocks),
                follows=tuple(draw(st.lists(st.sampled_from(before), unique=True, max_size=3)))
                if before
                else (),
                title="first" if i == 0 else draw(titles),
                triggers=("push",) if i == 0 else draw(triggers),
                supersedes=tuple(
                    draw(st.lists(st.sampled_from(others), unique=True, max_size=2))
                    if others and draw(st.integers(0, 3)) == 0
                    else ()
                ),
                retracts=tuple(
                    draw(st.lists(st.sampled_from(others), unique=True, max_size=1))
                    if others and draw(st.integers(0, 6)) == 0
                    else ()
                ),
                applies_to=draw(scopes),
                verification=draw(checks),
            )
        )
    if not acyclic and draw(st.booleans()):
        events.append(
            Event(id="x0", entity_key="other:risk", status=Status.OBSERVED, effective_at=WHEN)
        )
    return events


@st.composite
def ledgers_with_pending(
    draw: st.DrawFn, *, acyclic: bool = True
) -> tuple[list[Event], frozenset[str]]:
    events = draw(ledgers(acyclic=acyclic))
    pending = draw(st.sets(st.sampled_from([e.id for e in events]), max_size=2))
    return events, frozenset(pending)


def _reaches(events: list[Event], start: str) -> set[str]:
    """Oracle: every id `start` follows, transitively, straight from the events."""
    follows = {e.id: e.follows for e in events}
    found: set[str] = set()
    todo = list(follows[start])
    while todo:
        event_id = todo.pop()
        if event_id not in found:
            found.add(event_id)
            todo.extend(follows.get(event_id, ()))
    return found


@given(ledgers_with_pending(acyclic=False), st.randoms(use_true_random=False))
@settings(max_examples=300)
def test_resolution_does_not_depend_on_the_order_events_are_given(
    ledger: tuple[list[Event], frozenset[str]], rng: random.Random
) -> None:
    events, pending = ledger
    shuffled = list(events)
    rng.shuffle(shuffled)
    assert resolve_entity(KEY, shuffled, also_dropped=pending) == resolve_entity(
        KEY, events, also_dropped=pending
    )


@given(ledgers_with_pending(), st.data())
def test_clocks_never_decide(
    ledger: tuple[list[Event], frozenset[str]], data: st.DataObject
) -> None:
    events, pending = ledger
    retimed = [e._replace(effective_at=data.draw(clocks)) for e in events]
    before = resolve_entity(KEY, events, also_dropped=pending)
    after = resolve_entity(KEY, retimed, also_dropped=pending)
    assert after._replace(events=before.events) == before


@given(ledgers_with_pending())
def test_a_superseded_event_is_never_a_head(ledger: tuple[list[Event], frozenset[str]]) -> None:
    events, pending = ledger
    res = resolve_entity(KEY, events, also_dropped=pending)
    replaced = {t for e in events if e.id not in pending for t in e.replaces}
    assert replaced | pending == res.dropped
    assert not set(res.heads) & res.dropped


@given(ledgers_with_pending(), st.data())
def test_a_superseded_event_never_contributes_to_the_state(
    ledger: tuple[list[Event], frozenset[str]], data: st.DataObject
) -> None:
    events, pending = ledger
    before = resolve_entity(KEY, events, also_dropped=pending)
    rewritten = [
        e._replace(
            status=data.draw(statuses),
            title=data.draw(titles),
            triggers=data.draw(triggers),
            applies_to=data.draw(scopes),
            verification=data.draw(checks),
        )
        if e.id in before.dropped
        else e
        for e in events
    ]
    after = resolve_entity(KEY, rewritten, also_dropped=pending)
    assert after._replace(events=before.events) == before


@given(ledgers_with_pending())
def test_heads_are_the_remaining_events_no_remaining_event_follows_through_anything(
    ledger: tuple[list[Event], frozenset[str]],
) -> None:
    events, pending = ledger
    res = resolve_entity(KEY, events, also_dropped=pending)
    remaining = [e.id for e in events if e.id not in res.dropped]
    covered = {a for r in remaining for a in _reaches(events, r)}
    assert res.heads == tuple(sorted(r for r in remaining if r not in covered))
    assert {k: set(v) for k, v in res.ancestors.items()} == {
        e.id: _reaches(events, e.id) for e in events
    }


@given(ledgers_with_pending())
def test_order_is_topological_with_ties_by_id(ledger: tuple[list[Event], frozenset[str]]) -> None:
    events, pending = ledger
    res = resolve_entity(KEY, events, also_dropped=pending)
    assert sorted(res.order) == sorted(e.id for e in events)
    follows = {e.id: set(e.follows) for e in events}
    for i, event_id in enumerate(res.order):
        placed = set(res.order[:i])
        ready = [x for x in follows if x not in placed and follows[x] <= placed]
        assert event_id == min(ready)


@given(ledgers_with_pending())
@settings(max_examples=300)
def test_heads_whose_states_disagree_never_resolve(
    ledger: tuple[list[Event], frozenset[str]],
) -> None:
    events, pending = ledger
    res = resolve_entity(KEY, events, also_dropped=pending)
    states = list(res.head_states.values())
    disagree = any(
        (a.status, a.verification, a.applies_to) != (b.status, b.verification, b.applies_to)
        or set(a.triggers or ()) != set(b.triggers or ())
        for a in states
        for b in states
    )
    if disagree:
        assert res.outcome in (Outcome.CONFLICT, Outcome.INVALID)
    if res.outcome is Outcome.RESOLVED:
        assert not disagree
        everything = fold(res.events[i] for i in res.order if i not in res.dropped)
        assert res.state == states[0]._replace(title=everything.title)


@given(ledgers_with_pending())
def test_each_head_state_is_the_fold_of_its_remaining_lineage(
    ledger: tuple[list[Event], frozenset[str]],
) -> None:
    events, pending = ledger
    res = resolve_entity(KEY, events, also_dropped=pending)
    for head, state in res.head_states.items():
        lineage = _reaches(events, head) | {head}
        assert state == fold(
            res.events[i] for i in res.order if i in lineage and i not in res.dropped
        )


@given(ledgers())
def test_an_event_that_follows_every_head_is_the_only_head(events: list[Event]) -> None:
    settle = Event(
        id="zz",
        entity_key=KEY,
        status=Status.MITIGATED,
        effective_at=WHEN,
        follows=heads_of(events),
    )
    res: Resolution = resolve_entity(KEY, [*events, settle])
    assert res.heads == ("zz",)
    if not res.problems:
        assert res.outcome is Outcome.RESOLVED
