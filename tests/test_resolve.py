"""Resolving an entity's events: each test states one rule."""

from __future__ import annotations

import datetime as dt

import pytest

from failgate_hooks.core.events import AppliesTo, Event, Problem, Status, Verification
from failgate_hooks.core.resolve import (
    CYCLE,
    DUPLICATE_ID,
    FOREIGN_EVENT,
    FOREIGN_REFERENCE,
    MISSING_TITLE,
    MISSING_TRIGGERS,
    UNKNOWN_REFERENCE,
    EntityState,
    Outcome,
    fold,
    heads_of,
    resolve_entity,
)

KEY = "deploy:mainnet:gas-budget"
WHEN = dt.datetime(2026, 11, 29, 23, 5, tzinfo=dt.UTC)
CHECK = Verification(command=("python", "checks/check_gas_budget.py"))


def ev(
    event_id: str,
    status: str = "observed",
    *,
    follows: tuple[str, ...] = (),
    title: str | None = None,
    triggers: tuple[str, ...] | None = None,
    supersedes: tuple[str, ...] = (),
    retracts: tuple[str, ...] = (),
    applies_to: AppliesTo | None = None,
    verification: Verification | None = None,
    effective_at: dt.datetime = WHEN,
    entity_key: str = KEY,
) -> Event:
    """One event; a first event (no follows) names the entity unless told otherwise."""
    if not follows and title is None:
        title = "Gas budget must scale with module count"
    if not follows and triggers is None:
        triggers = ("push",)
    return Event(
        id=event_id,
        entity_key=entity_key,
        status=Status(status),
        effective_at=effective_at,
        follows=follows,
        title=title,
        triggers=triggers,
        supersedes=supersedes,
        retracts=retracts,
        applies_to=applies_to,
        verification=verification,
    )


def codes(problems: tuple[Problem, ...]) -> list[str]:
    return [p.code for p in problems]


# --------------------------------------------------------------------------- fold


def test_fold_overrides_only_the_keys_an_event_sets() -> None:
    state = fold(
        [
            ev("a", title="first", triggers=("push",), applies_to=AppliesTo(paths=("x/**",))),
            ev("b", "diagnosed", follows=("a",), verification=CHECK),
            ev("c", "mitigated", follows=("b",), title="better"),
        ]
    )
    assert state == EntityState(
        status=Status.MITIGATED,
        title="better",
        triggers=("push",),
        applies_to=AppliesTo(paths=("x/**",)),
        verification=CHECK,
    )


def test_fold_of_nothing_sets_nothing() -> None:
    assert fold([]) == EntityState()


# --------------------------------------------------------------------------- lifecycle


def test_a_linear_lifecycle_resolves_to_its_last_event() -> None:
    res = resolve_entity(
        KEY,
        [
            ev("a", title="budget", triggers=("push", "deploy")),
            ev("b", "diagnosed", follows=("a",), verification=CHECK),
            ev("c", "verified", follows=("b",)),
        ],
    )
    assert res.outcome is Outcome.RESOLVED
    assert res.heads == ("c",)
    assert res.order == ("a", "b", "c")
    assert res.state == EntityState(
        status=Status.VERIFIED, title="budget", triggers=("push", "deploy"), verification=CHECK
    )
    assert res.ancestors == {"a": frozenset(), "b": {"a"}, "c": {"a", "b"}}
    assert res.problems == ()
    assert res.dropped == frozenset()


def test_order_follows_the_graph_not_the_ids() -> None:
    res = resolve_entity(KEY, [ev("z"), ev("m", "diagnosed", follows=("z",))])
    assert res.order == ("z", "m")
    assert res.state.status is Status.DIAGNOSED


def test_two_heads_that_agree_resolve_and_the_title_comes_from_the_whole_fold() -> None:
    res = resolve_entity(
        KEY,
        [
            ev("a"),
            ev("b", "mitigated", follows=("a",)),
            ev("c", "mitigated", follows=("a",), title="renamed on one branch"),
        ],
    )
    assert res.outcome is Outcome.RESOLVED
    assert res.heads == ("b", "c")
    assert res.state.status is Status.MITIGATED
    assert res.state.title == "renamed on one branch"
    assert res.head_states["b"].title == "Gas budget must scale with module count"


def test_two_heads_naming_the_same_triggers_in_another_order_agree() -> None:
    res = resolve_entity(
        KEY,
        [
            ev("a"),
            ev("b", follows=("a",), triggers=("push", "deploy")),
            ev("c", follows=("a",), triggers=("deploy", "push")),
        ],
    )
    assert res.outcome is Outcome.RESOLVED


@pytest.mark.parametrize(
    "late",
    [
        pytest.param({"status": "expired"}, id="status"),
        pytest.param({"verification": CHECK}, id="verification"),
        pytest.param({"triggers": ("push", "deploy")}, id="triggers"),
        pytest.param({"applies_to": AppliesTo(environments=("mainnet",))}, id="applies_to"),
    ],
)
def test_two_branches_that_change_a_decided_key_differently_conflict(
    late: dict[str, object],
) -> None:
    status = str(late.pop("status", "observed"))
    res = resolve_entity(
        KEY,
        [ev("a"), ev("b", status, follows=("a",), **late), ev("c", follows=("a",))],  # type: ignore[arg-type]
    )
    assert res.outcome is Outcome.CONFLICT
    assert res.heads == ("b", "c")
    assert res.head_states["b"] != res.head_states["c"]


def test_a_conflict_is_not_settled_by_the_later_clock() -> None:
    far_future = dt.datetime(2099, 1, 1, tzinfo=dt.UTC)
    long_ago = dt.datetime(1999, 1, 1, tzinfo=dt.UTC)
    for left, right in ((far_future, long_ago), (long_ago, far_future)):
        res = resolve_entity(
            KEY,
            [
                ev("a"),
                ev("b", "expired", follows=("a",), effective_at=left),
                ev("c", "mitigated", follows=("a",), effective_at=right),
            ],
        )
        assert res.outcome is Outcome.CONFLICT
        assert res.head_states["b"].status is Status.EXPIRED
        assert res.head_states["c"].status is Status.MITIGATED


def test_an_event_dated_2099_does_not_come_after_the_event_that_follows_it() -> None:
    res = resolve_entity(
        KEY,
        [
            ev("a"),
            ev("b", "expired", follows=("a",), effective_at=dt.datetime(2099, 1, 1, tzinfo=dt.UTC)),
            ev("c", "diagnosed", follows=("b",)),
        ],
    )
    assert res.heads == ("c",)
    assert res.state.status is Status.DIAGNOSED


def test_an_event_that_follows_both_heads_settles_a_conflict() -> None:
    res = resolve_entity(
        KEY,
        [
            ev("a"),
            ev("b", "expired", follows=("a",)),
            ev("c", "mitigated", follows=("a",)),
            ev("d", "mitigated", follows=("b", "c")),
        ],
    )
    assert res.outcome is Outcome.RESOLVED
    assert res.heads == ("d",)
    assert res.state.status is Status.MITIGATED


# --------------------------------------------------------------------------- supersession


def test_a_typo_fix_of_the_newest_event_does_not_revive_the_one_before_it() -> None:
    # `record --supersedes b` follows the heads (b) and supersedes b.
    res = resolve_entity(
        KEY,
        [
            ev("a", title="Gas budgte"),
            ev("b", "expired", follows=("a",)),
            ev("c", "expired", follows=("b",), supersedes=("b",), title="Gas budget"),
        ],
    )
    assert res.outcome is Outcome.RESOLVED
    assert res.heads == ("c",)
    assert res.dropped == {"b"}
    assert res.order == ("a", "b", "c")
    assert res.state.status is Status.EXPIRED
    assert res.state.title == "Gas budget"


def test_follows_edges_through_a_dropped_event_are_kept() -> None:
    # c follows dropped b, b followed a: c still comes after a, so a is no head.
    res = resolve_entity(
        KEY,
        [
            ev("a", "observed"),
            ev("b", "diagnosed", follows=("a",)),
            ev("c", "mitigated", follows=("b",)),
            ev("d", "mitigated", follows=("c",), supersedes=("b",)),
        ],
    )
    assert res.dropped == {"b"}
    assert res.heads == ("d",)
    assert res.ancestors["c"] == {"a", "b"}
    assert res.outcome is Outcome.RESOLVED


def test_a_superseded_event_sets_nothing() -> None:
    res = resolve_entity(
        KEY,
        [
            ev("a"),
            ev("b", "expired", follows=("a",), verification=CHECK, title="wrong"),
            ev("c", "diagnosed", follows=("b",), supersedes=("b",)),
        ],
    )
    assert res.state.status is Status.DIAGNOSED
    assert res.state.verification is None
    assert res.state.title == "Gas budget must scale with module count"


def test_retracts_implies_supersedes() -> None:
    res = resolve_entity(
        KEY,
        [
            ev("a"),
            ev("b", "expired", follows=("a",)),
            ev("c", "diagnosed", follows=("b",), retracts=("b",)),
        ],
    )
    assert res.dropped == {"b"}
    assert res.heads == ("c",)
    assert res.state.status is Status.DIAGNOSED


def test_a_retracted_event_whose_file_is_gone_is_no_broken_reference() -> None:
    # once retracted, b's file may be deleted; c (written to follow b) still names it.
    res = resolve_entity(KEY, [ev("a"), ev("c", "diagnosed", follows=("a", "b"), retracts=("b",))])
    assert res.problems == ()
    assert res.outcome is Outcome.RESOLVED
    assert res.heads == ("c",)


def test_supersession_comes_before_any_filtering_by_scope_or_trigger() -> None:
    # b narrowed the entity to deploy/mainnet; c replaces b without that narrowing.
    res = resolve_entity(
        KEY,
        [
            ev("a", triggers=("push",)),
            ev(
                "b",
                follows=("a",),
                triggers=("deploy",),
                applies_to=AppliesTo(environments=("mainnet",)),
            ),
            ev("c", "diagnosed", follows=("b",), supersedes=("b",)),
        ],
    )
    assert res.outcome is Outcome.RESOLVED
    assert res.state.triggers == ("push",)
    assert res.state.applies_to is None


def test_superseding_a_typo_fix_keeps_the_original_dropped() -> None:
    res = resolve_entity(
        KEY,
        [
            ev("a"),
            ev("b", "expired", follows=("a",)),
            ev("c", "verified", follows=("b",), supersedes=("b",)),
            ev("d", "diagnosed", follows=("c",), supersedes=("c",)),
        ],
    )
    assert res.dropped == {"b", "c"}
    assert res.heads == ("d",)
    assert res.state.status is Status.DIAGNOSED


def test_superseding_one_branch_of_a_conflict_settles_it() -> None:
    res = resolve_entity(
        KEY,
        [
            ev("a"),
            ev("b", "expired", follows=("a",)),
            ev("c", "mitigated", follows=("a",)),
            ev("d", "mitigated", follows=("b", "c"), supersedes=("b",)),
        ],
    )
    assert res.outcome is Outcome.RESOLVED
    assert res.heads == ("d",)


# --------------------------------------------------------------------------- pending


def test_also_dropped_drops_an_event_as_if_superseded() -> None:
    events = [ev("a"), ev("b", "expired", follows=("a",))]
    res = resolve_entity(KEY, events, also_dropped={"b"})
    assert res.dropped == {"b"}
    assert res.heads == ("a",)
    assert res.state.status is Status.OBSERVED
    assert res.order == ("a", "b")


def test_a_pending_event_supersedes_nothing() -> None:
    events = [
        ev("a", verification=CHECK),
        ev("b", "expired", follows=("a",), supersedes=("a",), title="t", triggers=("push",)),
    ]
    assert resolve_entity(KEY, events).dropped == {"a"}
    res = resolve_entity(KEY, events, also_dropped={"b"})
    assert res.dropped == {"b"}
    assert res.outcome is Outcome.RESOLVED
    assert res.heads == ("a",)
    assert res.state.verification == CHECK


def test_an_event_that_follows_a_pending_one_still_comes_after_its_ancestors() -> None:
    res = resolve_entity(
        KEY,
        [
            ev("a"),
            ev("b", "expired", follows=("a",)),
            ev("c", "expired", follows=("b",)),
        ],
        also_dropped={"b"},
    )
    assert res.heads == ("c",)


def test_also_dropped_ignores_ids_of_other_entities() -> None:
    res = resolve_entity(KEY, [ev("a")], also_dropped={"elsewhere"})
    assert res.outcome is Outcome.RESOLVED
    assert res.dropped == frozenset()


# --------------------------------------------------------------------------- invalid


@pytest.mark.parametrize("key", ["follows", "supersedes"])
def test_a_reference_to_an_unknown_event_makes_the_entity_invalid(key: str) -> None:
    references: dict[str, tuple[str, ...]] = {"follows": ("a",), key: ("nope",)}
    if key == "follows":
        references["follows"] = ("a", "nope")
    b = ev("b", "diagnosed", **references)  # type: ignore[arg-type]
    res = resolve_entity(KEY, [ev("a"), b])
    assert res.outcome is Outcome.INVALID
    assert codes(res.problems) == [UNKNOWN_REFERENCE]
    problem = res.problems[0]
    assert "b" in problem.message and "nope" in problem.message
    assert problem.key == key
    assert problem.entity_key == KEY
    # best effort: the broken edge is ignored, the rest still resolves
    assert res.state.status is Status.DIAGNOSED
    assert res.heads == ("b",)


def test_a_reference_to_an_event_of_another_entity_is_reported_as_foreign() -> None:
    other = ev("x", entity_key="deploy:testnet:gas-budget")
    res = resolve_entity(KEY, [ev("a"), ev("b", follows=("a", "x")), other])
    assert codes(res.problems) == [FOREIGN_EVENT, FOREIGN_REFERENCE]
    assert "deploy:testnet:gas-budget" in res.problems[0].message
    assert "x" not in res.events
    assert res.outcome is Outcome.INVALID


def test_a_reference_to_an_event_whose_file_failed_validation_is_not_called_unknown() -> None:
    bad_id = "20261129T230500Z-7f3a9c1e"
    broken = Problem(
        code="invalid-event",
        message="expected a string",
        path=f"ledger/deploy/mainnet/gas-budget/{bad_id}.toml",
        key="title",
    )
    res = resolve_entity(KEY, [ev("a"), ev("b", follows=("a", bad_id))], [broken])
    assert res.problems == (broken,)
    assert res.outcome is Outcome.INVALID


def test_any_validation_problem_makes_the_entity_invalid_but_keeps_its_scope() -> None:
    scope = AppliesTo(paths=("deploy/**",))
    broken = Problem(code="invalid-event", message="bad", path="ledger/x.toml")
    res = resolve_entity(KEY, [ev("a", applies_to=scope)], [broken])
    assert res.outcome is Outcome.INVALID
    assert res.state.applies_to == scope
    assert res.heads == ("a",)


def test_a_cycle_in_follows_makes_the_entity_invalid_and_is_broken_by_id() -> None:
    res = resolve_entity(
        KEY,
        [
            ev("a"),
            ev("b", "diagnosed", follows=("a", "c")),
            ev("c", "mitigated", follows=("b",)),
            ev("d", "verified", follows=("c",)),
        ],
    )
    assert res.outcome is Outcome.INVALID
    assert codes(res.problems) == [CYCLE]
    assert "b" in res.problems[0].message and "c" in res.problems[0].message
    assert res.order == ("a", "b", "c", "d")
    assert res.heads == ("d",)
    assert res.state.status is Status.VERIFIED
    assert all(event_id not in res.ancestors[event_id] for event_id in res.order)


def test_an_event_that_follows_itself_makes_the_entity_invalid() -> None:
    res = resolve_entity(KEY, [ev("a"), ev("b", follows=("a", "b"))])
    assert res.outcome is Outcome.INVALID
    assert res.heads == ("b",)


def test_an_entity_whose_only_title_is_superseded_is_invalid() -> None:
    res = resolve_entity(
        KEY,
        [
            ev("a", title="the only title"),
            ev("b", "diagnosed", follows=("a",), supersedes=("a",), triggers=("push",)),
        ],
    )
    assert res.outcome is Outcome.INVALID
    assert codes(res.problems) == [MISSING_TITLE]
    assert res.state.title is None
    assert res.state.triggers == ("push",)


def test_an_entity_whose_triggers_are_superseded_is_invalid_and_applies_everywhere() -> None:
    res = resolve_entity(
        KEY,
        [ev("a"), ev("b", "diagnosed", follows=("a",), supersedes=("a",), title="kept")],
    )
    assert res.outcome is Outcome.INVALID
    assert codes(res.problems) == [MISSING_TRIGGERS]
    assert res.state.triggers is None
    assert res.state.applies_to is None


def test_a_head_that_lost_its_triggers_to_supersession_makes_the_entity_invalid() -> None:
    # b replaced the first event (copying its keys forward); c was written on a
    # branch that only knew the first event.
    res = resolve_entity(
        KEY,
        [
            ev("a"),
            ev("b", follows=("a",), supersedes=("a",), title="t", triggers=("push",)),
            ev("c", "diagnosed", follows=("a",)),
        ],
    )
    assert res.outcome is Outcome.INVALID
    assert codes(res.problems) == [MISSING_TRIGGERS]
    assert "c" in res.problems[0].message
    assert res.heads == ("b", "c")


def test_an_entity_with_no_events_is_invalid() -> None:
    res = resolve_entity(KEY, [])
    assert res.outcome is Outcome.INVALID
    assert codes(res.problems) == [MISSING_TITLE, MISSING_TRIGGERS]
    assert res.heads == ()


def test_two_different_events_with_one_id_make_the_entity_invalid() -> None:
    res = resolve_entity(KEY, [ev("a"), ev("a", "expired")])
    assert codes(res.problems)[0] == DUPLICATE_ID
    assert res.outcome is Outcome.INVALID


def test_the_same_event_given_twice_is_one_event() -> None:
    res = resolve_entity(KEY, [ev("a"), ev("a")])
    assert res.outcome is Outcome.RESOLVED
    assert res.order == ("a",)


# --------------------------------------------------------------------------- heads_of


def test_heads_of_names_every_head_of_a_conflict() -> None:
    events = [ev("a"), ev("b", "expired", follows=("a",)), ev("c", follows=("a",))]
    assert heads_of(events) == ("b", "c")


def test_heads_of_an_invalid_entity_are_the_remaining_events_no_one_follows() -> None:
    events = [ev("a"), ev("b", follows=("a", "nope")), ev("c", follows=("b",), supersedes=("b",))]
    assert heads_of(events) == ("c",)


def test_heads_of_are_sorted_by_id_not_by_resolution_order() -> None:
    events = [ev("b"), ev("c"), ev("a", follows=("c",))]
    assert resolve_entity(KEY, events).order == ("b", "c", "a")
    assert heads_of(events) == ("a", "b")


def test_heads_of_no_events_is_empty() -> None:
    assert heads_of([]) == ()


def test_heads_of_refuses_events_of_several_entities() -> None:
    events = [ev("a"), ev("x", entity_key="other:risk")]
    with pytest.raises(ValueError, match="several entities"):
        heads_of(events)


# --------------------------------------------------------------------------- retracting a file that does not validate

BROKEN_ID = "20261129T230500Z-0000dead"


def broken_file(
    entity_key: str = KEY, code: str = "invalid-event", event_id: str = BROKEN_ID
) -> Problem:
    """A problem of an event file of the entity's folder that fails validation."""
    folder = entity_key.replace(":", "/")
    return Problem(
        code=code,
        message="expected a full ref name",
        path=f"ledger/{folder}/{event_id}.toml",
        key="applies_to.refs[0]",
        entity_key=entity_key,
    )


def test_a_retracted_file_that_does_not_validate_no_longer_makes_the_entity_invalid() -> None:
    retraction = ev("b", follows=("a",), retracts=(BROKEN_ID,))
    res = resolve_entity(KEY, [ev("a"), retraction], [broken_file()])
    assert res.outcome is Outcome.RESOLVED, res.problems
    assert res.problems == ()
    assert res.retracted_problems == (broken_file(),)


def test_a_pending_retraction_leaves_the_file_invalid() -> None:
    retraction = ev("b", follows=("a",), retracts=(BROKEN_ID,))
    res = resolve_entity(KEY, [ev("a"), retraction], [broken_file()], also_dropped={"b"})
    assert res.outcome is Outcome.INVALID
    assert res.problems == (broken_file(),)
    assert res.retracted_problems == ()


def test_only_the_entitys_own_files_and_never_a_duplicated_id_are_cleared() -> None:
    retraction = ev("b", follows=("a",), retracts=(BROKEN_ID,))
    for problem in (
        broken_file(entity_key="deploy:testnet:gas-budget"),  # another entity's file
        broken_file(code=DUPLICATE_ID),  # two contents for one id
        broken_file(event_id="20261129T230500Z-0000beef"),  # a file it does not name
    ):
        res = resolve_entity(KEY, [ev("a"), retraction], [problem])
        assert res.outcome is Outcome.INVALID, problem
        assert res.retracted_problems == (), problem


def test_retracting_the_only_titled_event_file_leaves_a_missing_title() -> None:
    # The broken file was the entity's first event: its retraction must set title and
    # triggers itself, or the entity is still invalid, now for that.
    first = ev("b", retracts=(BROKEN_ID,))._replace(title=None, triggers=None)
    res = resolve_entity(KEY, [first], [broken_file()])
    assert res.outcome is Outcome.INVALID
    assert set(codes(res.problems)) == {MISSING_TITLE, MISSING_TRIGGERS}


# --------------------------------------------------------------------------- retracting a misnamed file


def misnamed_file(stem: str = "oops", entity_key: str = KEY) -> Problem:
    """The problem of a `.toml` file of the entity's folder not named as an event: it
    has no id, only its file name's stem."""
    folder = entity_key.replace(":", "/")
    return Problem(
        code="bad-file-name",
        message="not an event file name (<YYYYMMDDTHHMMSSZ>-<8 hex>.toml)",
        path=f"ledger/{folder}/{stem}.toml",
        entity_key=entity_key,
    )


def test_a_misnamed_file_retracted_by_its_stem_no_longer_makes_the_entity_invalid() -> None:
    for stem in ("oops", "Notes.v2_draft-1", f"{BROKEN_ID}.old", "-x", "a" * 100):
        retraction = ev("b", follows=("a",), retracts=(stem,))
        res = resolve_entity(KEY, [ev("a"), retraction], [misnamed_file(stem)])
        assert res.outcome is Outcome.RESOLVED, (stem, res.problems)
        assert res.problems == ()
        assert res.retracted_problems == (misnamed_file(stem),)
        assert res.heads == ("b",)


def test_a_misnamed_file_blocks_until_a_counting_event_of_its_entity_retracts_its_stem() -> None:
    retraction = ev("b", follows=("a",), retracts=("oops",))
    for events, problem, pending in (
        ([ev("a")], misnamed_file(), ()),  # nothing retracts it
        ([ev("a"), retraction], misnamed_file(), ("b",)),  # its retraction is pending
        ([ev("a"), retraction], misnamed_file(entity_key="deploy:testnet:gas-budget"), ()),
        ([ev("a"), retraction], misnamed_file("oops2"), ()),  # a stem it does not name
    ):
        res = resolve_entity(KEY, events, [problem], also_dropped=pending)
        assert res.outcome is Outcome.INVALID, problem
        assert res.retracted_problems == (), problem


def test_a_stem_no_retraction_can_write_is_never_cleared() -> None:
    # validate refuses such a `retracts`; were one to reach the resolver, it clears nothing
    for stem in ("2026-01-01 note", "a" * 101, "oop\u0455", ""):
        retraction = ev("b", follows=("a",), retracts=(stem,))
        res = resolve_entity(KEY, [ev("a"), retraction], [misnamed_file(stem)])
        assert res.outcome is Outcome.INVALID, stem
        assert res.retracted_problems == (), stem


def test_a_retracted_stem_whose_file_is_gone_is_no_broken_reference() -> None:
    # as a retracted id: once retracted, the misnamed file may be deleted
    res = resolve_entity(KEY, [ev("a"), ev("b", follows=("a",), retracts=("oops",))])
    assert res.outcome is Outcome.RESOLVED, res.problems
    assert res.problems == () and res.dropped == frozenset()


def test_a_retraction_that_is_itself_retracted_still_clears_the_misnamed_file() -> None:
    # rule 1: a dropped event still drops what it names, so retracting the retraction
    # (its file deleted, say) does not bring the misnamed file's problem back
    retraction = ev("b", follows=("a",), retracts=("oops",))
    again = ev("c", follows=("b",), retracts=("b",))
    res = resolve_entity(KEY, [ev("a"), retraction, again], [misnamed_file()])
    assert res.outcome is Outcome.RESOLVED, res.problems
    assert res.dropped == frozenset({"b"}) and res.heads == ("c",)
    assert res.retracted_problems == (misnamed_file(),)
