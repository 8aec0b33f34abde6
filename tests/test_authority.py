"""Authority's pending set, bounded: new events that each change what the next one
relaxes stop after MAX_PENDING_ROUNDS rounds, with the entity invalid (its gate held)."""

from __future__ import annotations

import time

import pytest

from failgate_hooks.core.authority import MAX_PENDING_ROUNDS, PENDING_TOO_DEEP
from failgate_hooks.core.events import Event, Verification
from failgate_hooks.core.gates import GateState
from failgate_hooks.core.resolve import Before, Resolution
from tests.test_gates import CHECK, STRICT, ev, observed, run_assess

RESTATED = Verification(command=("true",))


def restating(n: int) -> list[Event]:
    """A reviewed first event with CHECK, then `n` new ones in a chain, each setting
    RESTATED: the first changes the verifier; once it is pending the next one does,
    and so on, one more pending event a round."""
    events = [observed()]
    for i in range(2, n + 2):
        events.append(ev(f"e{i:05d}", follows=(events[-1].id,), verification=RESTATED))
    return events


def test_a_cascade_within_the_bound_leaves_every_change_pending() -> None:
    events = restating(MAX_PENDING_ROUNDS)
    got = run_assess(events, protected={"e1"}, policy=STRICT)
    assert [r.event_id for r in got.relaxations] == [e.id for e in events[1:]]
    assert all(not r.accepted and r.kind == "verification" for r in got.relaxations)
    assert got.state is GateState.OPEN
    assert got.verification == CHECK
    assert got.problems == ()


def test_a_cascade_beyond_the_bound_makes_the_entity_invalid_and_holds_its_gate() -> None:
    events = restating(MAX_PENDING_ROUNDS + 1)
    got = run_assess(events, protected={"e1"}, policy=STRICT)
    assert got.state is GateState.INVALID
    (problem,) = got.problems
    assert problem.code == PENDING_TOO_DEEP
    assert f"more than {MAX_PENDING_ROUNDS} rounds deep" in problem.message
    assert "push fewer of them at a time" in problem.message
    assert [r.event_id for r in got.relaxations] == [e.id for e in events[1:]]


def test_a_long_cascade_costs_the_bound_not_a_round_per_event() -> None:
    # A round per event would resolve the entity again 2000 times.
    events = restating(2000)
    started = time.process_time()
    got = run_assess(events, protected={"e1"}, policy=STRICT)
    spent = time.process_time() - started
    assert got.state is GateState.INVALID
    assert spent < 20, f"{spent:.1f} s of CPU"


def test_an_entity_every_event_of_which_is_reviewed_walks_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The usual entity on a warm run: nothing new relaxes anything, and the walk of what
    each event comes after (core/resolve.before_each) is not paid for every entity."""
    import failgate_hooks.core.authority as authority

    events = restating(3)
    walked: list[str] = []
    real = authority.before_each

    def counting(resolution: Resolution) -> dict[str, Before]:
        walked.append(resolution.entity_key)
        return real(resolution)

    monkeypatch.setattr(authority, "before_each", counting)
    reviewed = run_assess(events, protected={e.id for e in events}, policy=STRICT)
    assert reviewed.relaxations == () and walked == []
    pending = run_assess(events, protected={"e1"}, policy=STRICT)
    assert pending.relaxations and walked, walked  # one new event: the walk is made
