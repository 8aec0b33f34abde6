"""The gate decision: each table row, each enforcement and authority case."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import pytest

from failgate_hooks.core import exitcodes, wildmatch
from failgate_hooks.core.assess import SCOPE_UNKNOWN_NOTE, assess
from failgate_hooks.core.decide import decide, enforces, verifier_reason
from failgate_hooks.core.events import (
    AppliesTo,
    Event,
    Evidence,
    EvidenceKind,
    Problem,
    Status,
    Verification,
)
from failgate_hooks.core.gates import (
    Assessment,
    Context,
    Decision,
    DecisionKind,
    GateState,
    Policy,
    VerifierOutcome,
    VerifierResult,
)
from failgate_hooks.core.resolve import MISSING_TITLE, MISSING_TRIGGERS, resolve_entity
from failgate_hooks.core.validate import parse_event

KEY = "deploy:mainnet:gas-budget"
WHEN = dt.datetime(2026, 11, 29, 23, 5, tzinfo=dt.UTC)
CHECK = Verification(command=("python", "checks/check_gas_budget.py"))
OTHER_CHECK = Verification(command=("true",))

C = "c" * 40  # the commit under test
ANCESTOR = "a" * 40  # an ancestor of C
SIBLING = "b" * 40  # in the repository, not an ancestor of C
MISSING = "e" * 40  # not in the repository at all
TWIN = "d" * 40  # another commit with C's content key
ELSEWHERE = "f" * 40  # a commit with other content

PROTECTED = ("refs/heads/main", "refs/heads/master", "refs/heads/release/*", "refs/tags/*")
POLICY = Policy(protected_refs=PROTECTED)
MAIN = "refs/heads/main"
FEATURE = "refs/heads/feature/x"


@dataclass
class FakeFacts:
    """git's answers about C, declared instead of asked."""

    commit: str = C
    ancestors: frozenset[str] = frozenset({ANCESTOR})
    known: frozenset[str] = frozenset({SIBLING, TWIN, ELSEWHERE})
    files: tuple[str, ...] = ("deploy/budget.json", "src/app.py")
    same_content: frozenset[str] = frozenset({TWIN})
    bind_calls: list[tuple[str, Verification | None]] = field(default_factory=list)
    # the commits the protected revision C is judged against descends from
    protected_ancestors: frozenset[str] = frozenset()
    # matching the gates' paths would take more work than one decision may
    match_work_spent: bool = False

    def since_relation(self, since: str) -> bool | None:
        if since == self.commit or since in self.ancestors:
            return True
        return False if since in self.known else None

    def protected_under_since(self, since: str) -> str | None:
        return "refs/heads/main" if since in self.protected_ancestors else None

    def tree_matches(self, patterns: Sequence[str]) -> bool | None:
        if self.match_work_spent:
            return None
        return any(wildmatch.match_any(patterns, path) for path in self.files)

    def evidence_binds(self, evidence_commit: str, verification: Verification | None) -> bool:
        self.bind_calls.append((evidence_commit, verification))
        return evidence_commit == self.commit or evidence_commit in self.same_content


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
    evidence: Evidence | None = None,
) -> Event:
    """One event; a first event (no follows) names the entity and gates `push`."""
    if not follows:
        title = title or "Gas budget must scale with module count"
        triggers = triggers or ("push",)
    return Event(
        id=event_id,
        entity_key=KEY,
        status=Status(status),
        effective_at=WHEN,
        follows=follows,
        title=title,
        triggers=triggers,
        supersedes=supersedes,
        retracts=retracts,
        applies_to=applies_to,
        verification=verification,
        evidence=evidence,
    )


def human(commit: str) -> Evidence:
    return Evidence(kind=EvidenceKind.HUMAN, commit=commit, confirmed_by="Ada <ada@example.org>")


def observed(**kwargs: object) -> Event:
    """The usual first event: observed, with a verifier."""
    kwargs.setdefault("verification", CHECK)
    return ev("e1", **kwargs)  # type: ignore[arg-type]


def run_assess(
    events: Iterable[Event],
    *,
    context: Context | None = None,
    facts: FakeFacts | None = None,
    protected: Iterable[str] = (),
    policy: Policy | None = None,
    problems: Iterable[Problem] = (),
) -> Assessment:
    resolution = resolve_entity(KEY, events, problems)
    return assess(
        resolution,
        facts or FakeFacts(),
        context or Context("push", MAIN),
        protected_ids=frozenset(protected),
        policy=policy or Policy(protected_refs=PROTECTED),
    )


def run(
    events: Iterable[Event],
    *,
    context: Context | None = None,
    policy: Policy | None = None,
    protected: Iterable[str] = (),
    results: dict[str, VerifierResult] | None = None,
    facts: FakeFacts | None = None,
) -> Decision:
    """Both phases for one entity, as the shell runs them."""
    context = context or Context("push", MAIN)
    policy = policy or Policy(protected_refs=PROTECTED)
    item = run_assess(events, context=context, facts=facts, protected=protected, policy=policy)
    return decide([item], results or {}, context=context, policy=policy)


def result(outcome: str, exit_code: int | None = None, **kwargs: object) -> VerifierResult:
    return VerifierResult(
        command=CHECK.command,
        outcome=VerifierOutcome(outcome),
        exit_code=exit_code,
        **kwargs,  # type: ignore[arg-type]
    )


PASSED = result("passed", 0, duration_s=0.12)
FAILED = result("failed", 1, duration_s=0.12, output_tail="budget 50M < required 120M")


# --------------------------------------------------------------------------- the state table


TABLE = [
    # not_applicable, one clause at a time
    pytest.param(
        [observed(triggers=("deploy",))], Context("push", MAIN), FakeFacts(),
        GateState.NOT_APPLICABLE, 'trigger "push" is not in its triggers (deploy)',
        id="trigger-not-in-triggers",
    ),
    pytest.param(
        [observed(applies_to=AppliesTo(since=SIBLING))], Context("push", MAIN), FakeFacts(),
        GateState.NOT_APPLICABLE, "since bbbbbbbbbbbb is neither cccccccccccc nor an ancestor of it",
        id="since-not-an-ancestor",
    ),
    pytest.param(
        [observed(applies_to=AppliesTo(since=SIBLING))], Context("push", MAIN),
        FakeFacts(protected_ancestors=frozenset({SIBLING})), GateState.OPEN,
        "cccccccccccc does not descend from since bbbbbbbbbbbb, but refs/heads/main, the "
        "protected revision it is judged against, does: applies",
        id="since-not-an-ancestor-of-c-but-of-the-protected-revision-applies",
    ),
    pytest.param(
        [observed(applies_to=AppliesTo(since=SIBLING, paths=("contracts/**",)))],
        Context("push", MAIN), FakeFacts(protected_ancestors=frozenset({SIBLING})),
        GateState.NOT_APPLICABLE, "no file of cccccccccccc matches its paths (contracts/**)",
        id="since-of-the-protected-revision-leaves-the-rest-of-the-scope-to-c",
    ),
    pytest.param(
        [observed(applies_to=AppliesTo(since=ANCESTOR))], Context("push", MAIN), FakeFacts(),
        GateState.OPEN, "needs verifier python checks/check_gas_budget.py",
        id="since-an-ancestor-applies",
    ),
    pytest.param(
        [observed(applies_to=AppliesTo(paths=("contracts/**",)))], Context("push", MAIN),
        FakeFacts(match_work_spent=True), GateState.OPEN,
        "its paths were not all matched within the work one decision may take",
        id="paths-past-the-matching-budget-apply",
    ),
    pytest.param(
        [observed(applies_to=AppliesTo(since=C))], Context("push", MAIN), FakeFacts(),
        GateState.OPEN, "needs verifier", id="since-is-c-itself-applies",
    ),
    pytest.param(
        [observed(applies_to=AppliesTo(since=MISSING))], Context("push", MAIN), FakeFacts(),
        GateState.OPEN, "since eeeeeeeeeeee is not in this repository: applies (fail closed)",
        id="since-unknown-fails-closed",
    ),
    pytest.param(
        [observed(applies_to=AppliesTo(paths=("contracts/**",)))], Context("push", MAIN),
        FakeFacts(), GateState.NOT_APPLICABLE,
        "no file of cccccccccccc matches its paths (contracts/**)", id="paths-no-file-matches",
    ),
    pytest.param(
        [observed(applies_to=AppliesTo(paths=("deploy/*.json",)))], Context("push", MAIN),
        FakeFacts(), GateState.OPEN, "needs verifier", id="paths-a-file-matches",
    ),
    pytest.param(
        [observed(applies_to=AppliesTo(refs=("refs/heads/release/*",)))], Context("push", MAIN),
        FakeFacts(), GateState.NOT_APPLICABLE,
        "ref refs/heads/main matches none of its refs (refs/heads/release/*)",
        id="refs-known-ref-matches-none",
    ),
    pytest.param(
        [observed(applies_to=AppliesTo(refs=("refs/heads/release/*",)))],
        Context("push", "refs/heads/release/2026"), FakeFacts(), GateState.OPEN,
        "needs verifier", id="refs-known-ref-matches",
    ),
    pytest.param(
        [observed(applies_to=AppliesTo(refs=("refs/heads/release/*",)))], Context("push", None),
        FakeFacts(), GateState.OPEN, "destination ref unknown: its refs scope applies",
        id="refs-unknown-ref-applies",
    ),
    pytest.param(
        [observed(applies_to=AppliesTo(environments=("mainnet",)))],
        Context("push", MAIN, "testnet"), FakeFacts(), GateState.NOT_APPLICABLE,
        'environment "testnet" is not in its environments (mainnet)',
        id="environments-given-matches-none",
    ),
    pytest.param(
        [observed(applies_to=AppliesTo(environments=("mainnet",)))],
        Context("push", MAIN, "mainnet"), FakeFacts(), GateState.OPEN, "needs verifier",
        id="environments-given-matches",
    ),
    pytest.param(
        [observed(applies_to=AppliesTo(environments=("mainnet",)))], Context("push", MAIN),
        FakeFacts(), GateState.OPEN, "no environment given", id="environments-none-given-applies",
    ),
    # conflict: two heads disagree
    pytest.param(
        [observed(), ev("e2", "expired", follows=("e1",)), ev("e3", "mitigated", follows=("e1",))],
        Context("push", MAIN), FakeFacts(), GateState.CONFLICT,
        "heads e2, e3 disagree on status: settle it with an event that follows all of them",
        id="conflict",
    ),
    pytest.param(
        [
            observed(),
            ev("e2", follows=("e1",), triggers=("deploy",)),
            ev("e3", "mitigated", follows=("e1",)),
        ],
        Context("push", MAIN), FakeFacts(), GateState.CONFLICT, "disagree on status, triggers",
        id="conflict-applies-when-one-head-applies",
    ),
    pytest.param(
        [
            observed(),
            ev("e2", follows=("e1",), triggers=("deploy",)),
            ev("e3", follows=("e1",), triggers=("release",)),
        ],
        Context("push", MAIN), FakeFacts(), GateState.NOT_APPLICABLE,
        'no head applies: trigger "push" is not in its triggers (deploy)',
        id="conflict-not-applicable-when-no-head-applies",
    ),
    # retired, cleared, open
    pytest.param(
        [observed(), ev("e2", "expired", follows=("e1",))], Context("push", MAIN), FakeFacts(),
        GateState.RETIRED, "status expired", id="expired-is-retired",
    ),
    pytest.param(
        [observed(), ev("e2", "verified", follows=("e1",), evidence=human(TWIN))],
        Context("push", MAIN), FakeFacts(), GateState.CLEARED,
        "confirmed by Ada <ada@example.org> in e2 for dddddddddddd, the same content as cccccccccccc",
        id="human-evidence-on-same-content-clears",
    ),
    pytest.param(
        [observed(), ev("e2", "verified", follows=("e1",), evidence=human(ELSEWHERE))],
        Context("push", MAIN), FakeFacts(), GateState.OPEN, "needs verifier",
        id="human-evidence-on-other-content-does-not-clear",
    ),
    pytest.param(
        [
            observed(),
            ev(
                "e2", "verified", follows=("e1",),
                evidence=Evidence(kind=EvidenceKind.COMMAND, commit=C, exit_code=0),
            ),
        ],
        Context("push", MAIN), FakeFacts(), GateState.OPEN, "needs verifier",
        id="recorded-verified-with-command-evidence-never-clears",
    ),
    pytest.param(
        [
            observed(),
            ev(
                "e2", "verified", follows=("e1",),
                evidence=Evidence(kind=EvidenceKind.NOTE, commit=C),
            ),
        ],
        Context("push", MAIN), FakeFacts(), GateState.OPEN, "needs verifier",
        id="note-evidence-never-clears",
    ),
    pytest.param(
        [observed(verification=None)], Context("push", MAIN), FakeFacts(), GateState.OPEN,
        "no verifier: stays open until a person confirms the content",
        id="open-without-verifier",
    ),
    *[
        pytest.param(
            [observed(), ev("e2", status, follows=("e1",))], Context("push", MAIN), FakeFacts(),
            GateState.OPEN, "needs verifier", id=f"status-{status}-is-open",
        )
        for status in ("observed", "diagnosed", "mitigated", "verified")
    ],
]  # fmt: skip


@pytest.mark.parametrize(("events", "context", "facts", "state", "reason"), TABLE)
def test_the_state_table(
    events: list[Event], context: Context, facts: FakeFacts, state: GateState, reason: str
) -> None:
    got = run_assess(events, context=context, facts=facts)
    assert got.state is state
    assert reason in "; ".join((got.reason, *got.notes))


INVALID = Problem(code="invalid-event", message="bad", path="ledger/deploy/x/e9.toml", key="id")


@pytest.mark.parametrize(
    ("events", "trigger", "state"),
    [
        pytest.param([observed()], "push", GateState.INVALID, id="invalid-entity-that-applies"),
        pytest.param(
            [observed(triggers=("deploy",))], "push", GateState.NOT_APPLICABLE,
            id="invalid-entity-keeps-the-scope-of-its-valid-events",
        ),
        pytest.param(
            [], "release", GateState.INVALID,
            id="invalid-entity-without-scope-applies-everywhere",
        ),
        pytest.param(
            [observed(), ev("e2", "expired", follows=("e1",))], "push", GateState.INVALID,
            id="invalid-comes-before-retired",
        ),
    ],
)  # fmt: skip
def test_invalid_entities(events: list[Event], trigger: str, state: GateState) -> None:
    got = run_assess(events, context=Context(trigger, MAIN), problems=[INVALID])
    assert got.state is state
    if state is GateState.INVALID:
        assert INVALID in got.problems


def _short_ref_file(event_id: str, follows: tuple[str, ...] = ()) -> tuple[Problem, ...]:
    """The problems of a real event file whose applies_to.refs holds a short `main`."""
    import tomli_w

    doc = {
        "schema": 1, "id": event_id, "entity_key": KEY, "status": "observed",
        "follows": list(follows), "effective_at": WHEN, "applies_to": {"refs": ["main"]},
    }  # fmt: skip
    if not follows:
        doc |= {"title": "t", "triggers": ["push"]}
    path = f"ledger/deploy/mainnet/gas-budget/{event_id}.toml"
    event, problems = parse_event(tomli_w.dumps(doc).encode(), path, entity_key=KEY)
    assert event is None and problems, problems
    return problems


FIRST_ID = "20261129T230500Z-00000001"
LATER_ID = "20261129T230600Z-00000002"


def test_a_short_ref_in_an_entity_s_only_event_holds_it_invalid_on_the_full_ref() -> None:
    """`refs = ["main"]` once matched no destination: the gate was silently not
    applicable on refs/heads/main. Now its file is invalid, and the entity holds there."""
    problems = _short_ref_file(FIRST_ID)
    got = run_assess([], context=Context("push", MAIN), problems=problems)
    assert got.state is GateState.INVALID, got
    assert any("write refs/heads/main" in p.message for p in got.problems), got.problems


def test_a_broken_scope_in_a_later_event_is_not_narrowed_by_the_valid_ones() -> None:
    """The valid first event scopes the gate to release branches; a later file meant to
    move it to main, with a short name. Judged on the valid events alone, main would
    be out of scope and the push would pass with the broken file unsaid."""
    first = ev(FIRST_ID, applies_to=AppliesTo(refs=("refs/heads/release/*",)), verification=CHECK)
    problems = _short_ref_file(LATER_ID, follows=(FIRST_ID,))
    got = run_assess([first], context=Context("push", MAIN), problems=problems)
    assert got.state is GateState.INVALID, got
    assert SCOPE_UNKNOWN_NOTE in got.notes
    # its triggers still narrow it: a broken scope says nothing about which actions
    other = run_assess([first], context=Context("deploy", MAIN), problems=problems)
    assert other.state is GateState.NOT_APPLICABLE, other


def test_a_later_event_that_does_not_parse_narrows_neither_scope_nor_triggers() -> None:
    """A later file meant to move the gate to main, but its TOML does not parse: it may
    set applies_to or triggers, so neither the valid events' scope nor their triggers
    can stand for it, and the entity holds invalid on main and for any action."""
    first = ev(FIRST_ID, applies_to=AppliesTo(refs=("refs/heads/release/*",)), verification=CHECK)
    path = f"ledger/deploy/mainnet/gas-budget/{LATER_ID}.toml"
    event, problems = parse_event(
        b'applies_to = { refs = ["refs/heads/main",, ] }\n', path, entity_key=KEY
    )
    assert event is None and all(p.key is None for p in problems), problems
    for trigger in ("push", "deploy"):
        got = run_assess([first], context=Context(trigger, MAIN), problems=problems)
        assert got.state is GateState.INVALID, (trigger, got)
        assert SCOPE_UNKNOWN_NOTE in got.notes


def test_not_applicable_wins_over_conflict_and_retired() -> None:
    events = [observed(triggers=("deploy",)), ev("e2", "expired", follows=("e1",))]
    assert run_assess(events).state is GateState.NOT_APPLICABLE


def test_open_gate_names_the_verifier_to_run_and_other_states_do_not() -> None:
    assert run_assess([observed()]).verification == CHECK
    assert run_assess([observed(verification=None)]).verification is None
    retired = run_assess([observed(), ev("e2", "expired", follows=("e1",))])
    assert retired.verification is None


def test_assessment_carries_title_status_and_remaining_event_ids() -> None:
    got = run_assess(
        [
            observed(),
            ev("e2", "diagnosed", follows=("e1",)),
            ev("e3", "mitigated", follows=("e2",), supersedes=("e2",)),
        ]
    )
    assert got.entity_key == KEY
    assert got.title == "Gas budget must scale with module count"
    assert got.status is Status.MITIGATED
    assert got.event_ids == ("e1", "e3")
    assert got.commit == C


def test_cheap_scope_checks_spare_git_questions() -> None:
    class Refusing(FakeFacts):
        def since_relation(self, since: str) -> bool | None:
            raise AssertionError("git asked about an entity the trigger rules out")

    got = run_assess(
        [observed(triggers=("deploy",), applies_to=AppliesTo(since=MISSING))], facts=Refusing()
    )
    assert got.state is GateState.NOT_APPLICABLE


# --------------------------------------------------------------------------- human evidence


@pytest.mark.parametrize(
    ("events", "state"),
    [
        pytest.param(
            [
                observed(),
                ev("e2", "verified", follows=("e1",), evidence=human(C)),
                ev("e3", "diagnosed", follows=("e2",), verification=OTHER_CHECK),
            ],
            GateState.OPEN,
            id="confirmed-before-the-verifier-changed",
        ),
        pytest.param(
            [
                observed(),
                ev("e2", "diagnosed", follows=("e1",), verification=OTHER_CHECK),
                ev("e3", "verified", follows=("e2",), evidence=human(C)),
            ],
            GateState.CLEARED,
            id="confirmed-after-the-verifier-changed",
        ),
        pytest.param(
            [
                observed(),
                ev("e2", "verified", follows=("e1",), evidence=human(C)),
                ev("e3", "observed", follows=("e2",), applies_to=AppliesTo(paths=("deploy/**",))),
            ],
            GateState.OPEN,
            id="confirmed-before-the-scope-changed",
        ),
        pytest.param(
            [
                observed(),
                ev("e2", "verified", follows=("e1",), evidence=human(C)),
                ev("e3", "observed", follows=("e2",), triggers=("push", "deploy")),
            ],
            GateState.OPEN,
            id="confirmed-before-the-triggers-changed",
        ),
        pytest.param(
            [
                observed(),
                ev("e2", "verified", follows=("e1",), evidence=human(C), verification=OTHER_CHECK),
            ],
            GateState.OPEN,
            id="confirmed-in-the-event-that-changes-the-verifier",
        ),
        pytest.param(
            [
                observed(),
                ev("e2", "verified", follows=("e1",), evidence=human(C)),
                ev("e3", "diagnosed", follows=("e1",), verification=OTHER_CHECK),
                ev("e4", "diagnosed", follows=("e2", "e3")),
            ],
            GateState.OPEN,
            id="confirmed-on-a-branch-beside-the-verifier-change",
        ),
        pytest.param(
            [
                observed(),
                ev("e2", "verified", follows=("e1",), evidence=human(C)),
                ev("e3", "diagnosed", follows=("e2",)),
            ],
            GateState.CLEARED,
            id="a-later-status-only-event-keeps-the-confirmation",
        ),
        pytest.param(
            [
                observed(),
                ev("e2", "verified", follows=("e1",), evidence=human(C)),
                ev("e3", "verified", follows=("e2",), supersedes=("e2",)),
            ],
            GateState.OPEN,
            id="a-superseded-confirmation-does-not-clear",
        ),
    ],
)
def test_human_evidence_must_follow_the_latest_change(
    events: list[Event], state: GateState
) -> None:
    assert run_assess(events).state is state


def test_human_evidence_is_bound_with_the_entitys_verification() -> None:
    inputs = Verification(command=("python", "x.py"), inputs=("deploy/*.json",))
    facts = FakeFacts()
    got = run_assess(
        [
            observed(verification=inputs),
            ev("e2", "verified", follows=("e1",), evidence=human(TWIN)),
        ],
        facts=facts,
    )
    assert got.state is GateState.CLEARED
    assert facts.bind_calls == [(TWIN, inputs)]


# --------------------------------------------------------------------------- verifier results


@pytest.mark.parametrize(
    ("verdict", "state", "reason"),
    [
        pytest.param(PASSED, GateState.CLEARED, "exited 0 in 0.12 s", id="passed-clears"),
        pytest.param(
            result("passed", 0, duration_s=0.5, cached=True), GateState.CLEARED,
            "exited 0 in 0.50 s (cached)", id="cached-pass-clears",
        ),
        pytest.param(
            FAILED, GateState.OPEN,
            "verifier python checks/check_gas_budget.py exited 1 in 0.12 s", id="failed-holds",
        ),
        pytest.param(
            result("timeout", duration_s=120.0), GateState.OPEN, "timeout after 120 s",
            id="timeout-holds",
        ),
        pytest.param(
            result("cannot_start", detail="No such file or directory: 'python'"), GateState.OPEN,
            "cannot start: No such file or directory: 'python'", id="cannot-start-holds",
        ),
        pytest.param(
            result("no_verdict", 125, duration_s=0.3), GateState.OPEN,
            "gave no verdict (exit 125) in 0.30 s: it could not judge",
            id="no-verdict-holds",
        ),
        pytest.param(
            result("untrusted"), GateState.OPEN,
            "not trusted on this machine: run failgate trust", id="untrusted-holds",
        ),
        pytest.param(
            result("untrusted", detail="verifier not trusted on this machine: review it"),
            GateState.OPEN,
            "verifier python checks/check_gas_budget.py is not trusted on this machine: "
            "run failgate trust", id="untrusted-says-what-to-run-once",
        ),
        pytest.param(
            result("failed", -9, duration_s=1.5, detail="killed by SIGKILL"), GateState.OPEN,
            "exited -9 in 1.50 s: killed by SIGKILL", id="detail-adds-to-the-reason",
        ),
        pytest.param(result("not_run"), GateState.OPEN, "not run", id="not-run-holds"),
        pytest.param(None, GateState.OPEN, "not run", id="no-result-holds"),
    ],
)  # fmt: skip
def test_verifier_results(verdict: VerifierResult | None, state: GateState, reason: str) -> None:
    decision = run([observed()], results={KEY: verdict} if verdict else {})
    (gate,) = decision.gates
    assert gate.state is state
    assert gate.reason.endswith(reason)
    assert gate.verifier is not None


def test_a_pass_does_not_clear_an_entity_without_a_verifier() -> None:
    decision = run([observed(verification=None)], results={KEY: PASSED})
    assert decision.gates[0].state is GateState.OPEN
    assert decision.gates[0].verifier is None


def test_a_pass_for_another_entity_clears_nothing() -> None:
    decision = run([observed()], results={"other:entity": PASSED})
    assert decision.gates[0].state is GateState.OPEN


def test_a_failing_verifier_does_not_reopen_a_human_clearance() -> None:
    events = [observed(), ev("e2", "verified", follows=("e1",), evidence=human(C))]
    decision = run(events, results={KEY: FAILED})
    assert decision.gates[0].state is GateState.CLEARED
    assert decision.decision is DecisionKind.ALLOWED


def test_verifier_reason_says_a_repeated_detail_once() -> None:
    text = verifier_reason(result("not_run", detail="not run"))
    assert text == "verifier python checks/check_gas_budget.py not run"


def test_verifier_reason_without_duration_or_exit_code() -> None:
    text = verifier_reason(result("failed"))
    assert text == "verifier python checks/check_gas_budget.py exited ?"


# --------------------------------------------------------------------------- enforcement


OPEN = [observed()]


@pytest.mark.parametrize(
    ("context", "policy", "decision", "blocking"),
    [
        pytest.param(Context("push", MAIN), Policy(protected_refs=PROTECTED),
                     DecisionKind.HELD, True, id="push-to-protected-ref-blocks"),
        pytest.param(Context("push", "refs/tags/v1.0"), Policy(protected_refs=PROTECTED),
                     DecisionKind.HELD, True, id="push-to-protected-tag-blocks"),
        pytest.param(Context("push", FEATURE), Policy(protected_refs=PROTECTED),
                     DecisionKind.ALLOWED, False, id="push-to-unprotected-ref-warns"),
        pytest.param(Context("push", "refs/heads/trunk"),
                     Policy(protected_refs=(*PROTECTED, "refs/heads/trunk")),
                     DecisionKind.HELD, True, id="push-to-remote-default-branch-blocks"),
        pytest.param(Context("push", None), Policy(protected_refs=PROTECTED),
                     DecisionKind.HELD, True, id="push-to-unknown-ref-blocks"),
        pytest.param(Context("push", FEATURE), Policy(protected_refs=PROTECTED, block_on="all"),
                     DecisionKind.HELD, True, id="block-on-all-blocks-unprotected-ref"),
        pytest.param(Context("push", MAIN), Policy(protected_refs=PROTECTED, mode="warn"),
                     DecisionKind.ALLOWED, False, id="mode-warn-turns-block-into-warning"),
        pytest.param(Context("deploy", FEATURE), Policy(protected_refs=PROTECTED),
                     DecisionKind.HELD, True, id="other-trigger-always-blocks"),
        pytest.param(Context("deploy", None), Policy(protected_refs=PROTECTED, mode="warn"),
                     DecisionKind.ALLOWED, False, id="other-trigger-under-mode-warn-warns"),
        pytest.param(Context("push", MAIN), Policy(protected_refs=PROTECTED, hold_open=False),
                     DecisionKind.ALLOWED, False, id="open-gate-warns-where-no-verifier-runs"),
    ],
)  # fmt: skip
def test_enforcement_of_an_open_gate(
    context: Context, policy: Policy, decision: DecisionKind, blocking: bool
) -> None:
    events = [observed(triggers=("push", "deploy"))]
    got = run(events, context=context, policy=policy, results={KEY: FAILED})
    (gate,) = got.gates
    assert gate.state is GateState.OPEN
    assert (gate.blocking, gate.warning) == (blocking, not blocking)
    assert got.decision is decision


@pytest.mark.parametrize(
    ("ref", "block_on", "expected"),
    [
        pytest.param("refs/heads/release/1.2", "protected", True, id="release-glob"),
        pytest.param("refs/heads/release/1.2/hotfix", "protected", False,
                     id="star-stays-in-segment"),
        pytest.param("refs/heads/mainline", "protected", False, id="whole-ref-must-match"),
        pytest.param("refs/heads/mainline", "all", True, id="all"),
    ],
)  # fmt: skip
def test_protected_refs_are_wildmatch_globs(ref: str, block_on: str, expected: bool) -> None:
    policy = Policy(protected_refs=PROTECTED, block_on=block_on)
    assert enforces(Context("push", ref), policy) is expected


@pytest.mark.parametrize("state", ["conflict", "invalid"])
def test_conflicts_and_invalid_entities_warn_on_an_unprotected_ref(state: str) -> None:
    item = _assessment(GateState(state))
    got = decide(
        [item], {}, context=Context("push", FEATURE), policy=Policy(protected_refs=PROTECTED)
    )
    assert got.decision is DecisionKind.ALLOWED
    assert got.gates[0].warning and not got.gates[0].blocking


@pytest.mark.parametrize("state", ["conflict", "invalid"])
def test_conflicts_and_invalid_entities_block_even_where_no_verifier_runs(state: str) -> None:
    policy = Policy(protected_refs=PROTECTED, hold_open=False)
    got = decide([_assessment(GateState(state))], {}, context=Context("push", MAIN), policy=policy)
    assert got.gates[0].blocking
    assert got.exit_code != exitcodes.ALLOWED


@pytest.mark.parametrize("state", ["cleared", "retired", "not_applicable"])
def test_settled_states_neither_block_nor_warn(state: str) -> None:
    got = decide([_assessment(GateState(state))], {}, context=Context("deploy"), policy=POLICY)
    assert not got.gates[0].blocking and not got.gates[0].warning
    assert got.decision is DecisionKind.ALLOWED


def test_policy_refuses_values_it_cannot_interpret() -> None:
    with pytest.raises(ValueError, match="mode"):
        Policy(PROTECTED, mode="off")
    with pytest.raises(ValueError, match="block_on"):
        Policy(PROTECTED, block_on="none")
    with pytest.raises(ValueError, match="authority"):
        Policy(PROTECTED, authority="anyone")
    # nor may a copy with one field changed hold one
    with pytest.raises(ValueError, match="mode"):
        Policy(PROTECTED)._replace(mode="off")


# --------------------------------------------------------------------------- decision and exit


def _assessment(state: GateState, key: str = KEY) -> Assessment:
    return Assessment(
        entity_key=key,
        state=state,
        reason=str(state),
        title="t",
        status=Status.OBSERVED,
        event_ids=("e1",),
        commit=C,
    )


BROKEN = Problem(code="unreadable", message="not valid TOML", path="ledger/x.toml")
DROPPED = Problem(code="append-only", message="event dropped", path="ledger/a/e1.toml", commit=C)


@pytest.mark.parametrize(
    ("states", "errors", "history", "ref", "mode", "decision", "code"),
    [
        pytest.param([], [], [], MAIN, "enforce", DecisionKind.ALLOWED, 0, id="nothing-allowed"),
        pytest.param(["cleared"], [], [], MAIN, "enforce", DecisionKind.ALLOWED, 0,
                     id="cleared-allowed"),
        pytest.param(["open"], [], [], MAIN, "enforce", DecisionKind.HELD, 1, id="open-held"),
        pytest.param(["conflict", "open"], [], [], MAIN, "enforce", DecisionKind.ESCALATED, 3,
                     id="conflict-escalated-over-held"),
        pytest.param(["invalid", "conflict", "open"], [], [], MAIN, "enforce",
                     DecisionKind.INTEGRITY, 4, id="invalid-integrity-over-all"),
        pytest.param(["conflict"], [BROKEN], [], MAIN, "enforce", DecisionKind.INTEGRITY, 4,
                     id="error-integrity-over-conflict"),
        pytest.param([], [BROKEN], [], FEATURE, "enforce", DecisionKind.ALLOWED, 0,
                     id="integrity-error-warns-on-unprotected-ref"),
        pytest.param([], [BROKEN], [], None, "enforce", DecisionKind.INTEGRITY, 4,
                     id="integrity-error-blocks-on-unknown-ref"),
        pytest.param([], [BROKEN], [], MAIN, "warn", DecisionKind.INTEGRITY, 4,
                     id="integrity-error-blocks-under-mode-warn"),
        pytest.param([], [], [DROPPED], MAIN, "enforce", DecisionKind.INTEGRITY, 4,
                     id="append-only-violation-blocks-protected-ref"),
        pytest.param([], [], [DROPPED], FEATURE, "enforce", DecisionKind.ALLOWED, 0,
                     id="append-only-violation-warns-unprotected-ref"),
        pytest.param(["open"], [], [DROPPED], FEATURE, "enforce", DecisionKind.ALLOWED, 0,
                     id="unprotected-ref-only-warns"),
        pytest.param(["invalid"], [], [], MAIN, "warn", DecisionKind.ALLOWED, 0,
                     id="invalid-entity-warns-under-mode-warn"),
    ],
)  # fmt: skip
def test_decision_and_exit_code(
    states: list[str],
    errors: list[Problem],
    history: list[Problem],
    ref: str,
    mode: str,
    decision: DecisionKind,
    code: int,
) -> None:
    items = [_assessment(GateState(s), key=f"k{i}") for i, s in enumerate(states)]
    got = decide(
        items,
        {},
        context=Context("push", ref),
        policy=Policy(protected_refs=PROTECTED, mode=mode),
        errors=errors,
        history_errors=history,
        commit=C,
    )
    assert (got.decision, got.exit_code) == (decision, code)
    if (errors or history) and decision is DecisionKind.ALLOWED:
        assert got.warnings == tuple(errors) + tuple(history) and got.errors == ()


def test_exit_codes_are_the_contracts() -> None:
    def code(state: str) -> int:
        return decide(
            [_assessment(GateState(state))], {}, context=Context("push"), policy=POLICY
        ).exit_code

    assert code("cleared") == exitcodes.ALLOWED
    assert code("open") == exitcodes.HELD
    assert code("conflict") == exitcodes.ESCALATED
    assert code("invalid") == exitcodes.INTEGRITY


def test_decision_carries_the_run_and_counts() -> None:
    items = [
        _assessment(GateState.OPEN, "b"),
        _assessment(GateState.CLEARED, "a"),
        _assessment(GateState.CONFLICT, "c"),
        _assessment(GateState.RETIRED, "d"),
        _assessment(GateState.OPEN, "e"),
    ]
    got = decide(items, {}, context=Context("push", MAIN, "mainnet"), policy=POLICY)
    assert (got.trigger, got.commit, got.ref, got.environment) == ("push", C, MAIN, "mainnet")
    assert got.counts == {"open": 2, "cleared": 1, "conflict": 1, "invalid": 0}
    assert [g.entity_key for g in got.gates] == ["a", "b", "c", "d", "e"]


def test_decide_refuses_assessments_of_another_commit() -> None:
    with pytest.raises(ValueError, match="different commits"):
        decide(
            [_assessment(GateState.OPEN)], {}, context=Context("push"), policy=POLICY, commit=TWIN
        )


def test_decide_refuses_an_entity_assessed_twice() -> None:
    twice = [_assessment(GateState.OPEN), _assessment(GateState.CLEARED)]
    with pytest.raises(ValueError, match="twice"):
        decide(twice, {}, context=Context("push"), policy=POLICY)


# --------------------------------------------------------------------------- authority


ACCEPT = Policy(protected_refs=PROTECTED, authority="accept")
STRICT = Policy(protected_refs=PROTECTED, authority="protected")
RELAXER = Policy(protected_refs=PROTECTED, authority="protected", pusher_is_relaxer=True)

EXPIRE = [observed(), ev("e2", "expired", follows=("e1",))]


@pytest.mark.parametrize(
    ("policy", "protected", "state", "listed", "decision"),
    [
        pytest.param(ACCEPT, {"e1"}, GateState.RETIRED, [("e2", "expired", True)],
                     DecisionKind.ALLOWED, id="accept-applies-and-lists-relaxed"),
        pytest.param(STRICT, {"e1"}, GateState.OPEN, [("e2", "expired", False)],
                     DecisionKind.HELD, id="protected-lists-pending-and-decides-without-it"),
        pytest.param(RELAXER, {"e1"}, GateState.RETIRED, [("e2", "expired", True)],
                     DecisionKind.ALLOWED, id="protected-accepts-a-relaxer"),
        pytest.param(STRICT, {"e1", "e2"}, GateState.RETIRED, [],
                     DecisionKind.ALLOWED, id="relaxation-already-protected-is-not-listed"),
        pytest.param(ACCEPT, {"e1", "e2"}, GateState.RETIRED, [],
                     DecisionKind.ALLOWED, id="accept-does-not-list-a-protected-relaxation"),
        pytest.param(STRICT, set(), GateState.OPEN, [("e2", "expired", False)],
                     DecisionKind.HELD, id="protected-with-no-protected-revision-all-pending"),
    ],
)  # fmt: skip
def test_authority_over_an_expiry(
    policy: Policy,
    protected: set[str],
    state: GateState,
    listed: list[tuple[str, str, bool]],
    decision: DecisionKind,
) -> None:
    got = run(EXPIRE, policy=policy, protected=protected, results={KEY: FAILED})
    assert got.gates[0].state is state
    assert [(r.event_id, r.kind, r.accepted) for r in got.relaxations] == listed
    assert all(r.entity_key == KEY for r in got.relaxations)
    assert got.decision is decision


@pytest.mark.parametrize(
    ("policy", "accepted", "decision"),
    [
        pytest.param(STRICT, False, DecisionKind.HELD, id="pending-where-protected-decides"),
        pytest.param(RELAXER, True, DecisionKind.ALLOWED, id="a-relaxer-may-push-it"),
        pytest.param(ACCEPT, True, DecisionKind.ALLOWED, id="listed-where-it-is-accepted"),
    ],
)
def test_a_commit_leaving_a_since_the_protected_revision_is_in_is_a_relaxation(
    policy: Policy, accepted: bool, decision: DecisionKind
) -> None:
    """Its verifier passing is not enough: accepted, C is a tip outside `since`, and
    every commit built on it would be too."""
    facts = FakeFacts(protected_ancestors=frozenset({SIBLING}))
    events = [observed(applies_to=AppliesTo(since=SIBLING))]
    got = run(events, policy=policy, facts=facts, results={KEY: PASSED})
    assert got.gates[0].state is GateState.CLEARED
    assert [(r.kind, r.accepted) for r in got.relaxations] == [("leaves_since", accepted)]
    assert "does not descend from since bbbbbbbbbbbb, which refs/heads/main does" in (
        got.relaxations[0].what
    )
    assert got.decision is decision


def test_a_commit_inside_since_or_out_of_scope_leaves_nothing() -> None:
    facts = FakeFacts(protected_ancestors=frozenset({SIBLING, ANCESTOR}))
    inside = run([observed(applies_to=AppliesTo(since=ANCESTOR))], policy=STRICT, facts=facts)
    elsewhere = AppliesTo(since=SIBLING, paths=("contracts/**",))
    outside = run([observed(applies_to=elsewhere)], policy=STRICT, facts=facts)
    assert inside.relaxations == () and outside.relaxations == ()


def test_a_pending_relaxation_blocks_even_where_its_entity_does_not_apply() -> None:
    events = [observed(triggers=("deploy",)), ev("e2", "expired", follows=("e1",))]
    got = run(events, policy=STRICT, protected={"e1"})
    assert got.gates[0].state is GateState.NOT_APPLICABLE
    (pending,) = got.relaxations
    assert pending.blocking and not pending.accepted
    assert got.decision is DecisionKind.HELD
    assert got.exit_code == exitcodes.HELD


@pytest.mark.parametrize(
    ("context", "policy", "blocking"),
    [
        pytest.param(Context("push", FEATURE), STRICT, False, id="unprotected-ref-warns"),
        pytest.param(Context("push", None), STRICT, True, id="unknown-ref-blocks"),
        pytest.param(Context("push", FEATURE),
                     Policy(PROTECTED, authority="protected", block_on="all"), True,
                     id="block-on-all-blocks"),
        pytest.param(Context("release", FEATURE), STRICT, True, id="other-trigger-blocks"),
        pytest.param(Context("push", MAIN), Policy(authority="protected", mode="warn",
                     protected_refs=PROTECTED), False, id="mode-warn-warns"),
        pytest.param(Context("push", MAIN), Policy(authority="protected", hold_open=False,
                     protected_refs=PROTECTED), True, id="blocks-where-no-verifier-runs"),
    ],
)  # fmt: skip
def test_a_pending_relaxation_blocks_where_an_open_gate_would(
    context: Context, policy: Policy, blocking: bool
) -> None:
    events = [observed(triggers=("nothing",)), ev("e2", "expired", follows=("e1",))]
    got = run(events, context=context, policy=policy, protected={"e1"})
    (pending,) = got.relaxations
    assert (pending.blocking, pending.warning) == (blocking, not blocking)
    assert got.decision is (DecisionKind.HELD if blocking else DecisionKind.ALLOWED)


def test_a_pending_confirmation_does_not_clear() -> None:
    events = [observed(), ev("e2", "verified", follows=("e1",), evidence=human(C))]
    accepted = run(events, policy=ACCEPT, protected={"e1"})
    pending = run(events, policy=STRICT, protected={"e1"})
    assert accepted.gates[0].state is GateState.CLEARED
    assert [r.kind for r in accepted.relaxations] == ["human"]
    assert pending.gates[0].state is GateState.OPEN
    assert pending.decision is DecisionKind.HELD


def test_a_pending_retraction_revives_what_it_retracted() -> None:
    events = [
        observed(),
        ev("e2", "expired", follows=("e1",)),
        ev("e3", "observed", follows=("e2",), retracts=("e2",)),
    ]
    got = run(events, policy=STRICT, protected={"e1", "e2"})
    assert [(r.event_id, r.kind) for r in got.relaxations] == [("e3", "retracts")]
    assert got.gates[0].state is GateState.RETIRED


def test_a_pending_retraction_cannot_make_an_entity_invalid() -> None:
    # Accepted, e2 retracts the only event with a title and triggers: invalid.
    # Pending, it counts as if it were not there, problems it caused included.
    events = [observed(), ev("e2", "observed", follows=("e1",), retracts=("e1",))]
    assert run(events, policy=ACCEPT, protected={"e1"}).gates[0].state is GateState.INVALID
    strict = run(events, policy=STRICT, protected={"e1"}, results={KEY: FAILED})
    assert strict.gates[0].state is GateState.OPEN
    assert strict.gates[0].problems == ()


@pytest.mark.parametrize(
    "stray",
    [
        pytest.param(ev("x1")._replace(entity_key="other:entity"), id="foreign-event"),
        pytest.param(ev("e1", "diagnosed"), id="duplicated-id"),
        pytest.param(ev("e3", follows=("e2", "e0")), id="unknown-reference"),
    ],
)
def test_a_pending_relaxation_does_not_hide_a_problem_it_did_not_cause(stray: Event) -> None:
    events = [observed(), ev("e2", "expired", follows=("e1",)), stray]
    resolution = resolve_entity(KEY, events)
    assert resolution.problems
    got = assess(
        resolution,
        FakeFacts(),
        Context("push", MAIN),
        protected_ids=frozenset({"e1"}),
        policy=STRICT,
    )
    assert got.state is GateState.INVALID
    lasting = {p for p in resolution.problems if p.code not in (MISSING_TITLE, MISSING_TRIGGERS)}
    assert lasting <= set(got.problems)
    assert len(got.problems) == len(set(got.problems))


def test_settling_reviewed_heads_that_disagree_on_triggers_is_pending() -> None:
    events = [
        observed(),
        ev("e2", follows=("e1",), triggers=("push", "deploy")),
        ev("e3", follows=("e1",), triggers=("deploy",)),
        ev("e4", follows=("e2", "e3")),
    ]
    got = run_assess(events, protected={"e1", "e2", "e3"}, policy=STRICT)
    assert [(r.event_id, r.kind) for r in got.relaxations] == [("e4", "settles")]
    assert got.state is GateState.CONFLICT


def test_settling_heads_that_disagree_only_on_status_relaxes_nothing() -> None:
    # every event sets its own status: the settling event's is the entity's
    events = [
        observed(),
        ev("e2", "diagnosed", follows=("e1",)),
        ev("e3", "mitigated", follows=("e1",)),
        ev("e4", "mitigated", follows=("e2", "e3")),
    ]
    got = run_assess(events, protected={"e1"}, policy=STRICT)
    assert got.relaxations == ()
    assert got.state is GateState.OPEN


@pytest.mark.parametrize("policy", [STRICT, POLICY], ids=["protected", "accept"])
def test_a_retracted_event_brought_back_cannot_reorder_reviewed_events(policy: Policy) -> None:
    # Reviewed: heads e3 (pushes too) and e4 (deploys only, retracting e2, whose file
    # is gone) disagree. A new e2, retracted so dropped and no relaxation, that follows
    # e3 would put e3 before e4 through e4's own follows and settle the conflict.
    reviewed = [
        observed(),
        ev("e3", follows=("e1",), triggers=("push", "deploy")),
        ev("e4", follows=("e2", "e1"), retracts=("e2",), triggers=("deploy",)),
    ]
    brought_back = ev("e2", follows=("e3",))
    got = assess(
        resolve_entity(KEY, [*reviewed, brought_back]),
        FakeFacts(),
        Context("push", MAIN),
        protected_ids=frozenset({"e1", "e3", "e4"}),
        policy=policy,
    )
    assert got.state is GateState.CONFLICT
    assert "e2" not in got.event_ids


def test_pending_events_that_supersede_a_pending_relaxation_all_stay_pending() -> None:
    # e3 supersedes the expiry e2: once e3 is pending, e2 is no longer superseded
    # and relaxes in turn, so it must be pending too, not quietly applied.
    events = [
        observed(),
        ev("e2", "expired", follows=("e1",)),
        ev("e3", "mitigated", follows=("e2",), supersedes=("e2",)),
    ]
    strict = run(events, policy=STRICT, protected={"e1"})
    assert [(r.event_id, r.kind) for r in strict.relaxations] == [
        ("e2", "expired"),
        ("e3", "supersedes"),
    ]
    assert strict.gates[0].state is GateState.OPEN
    accepted = run(events, policy=ACCEPT, protected={"e1"})
    assert [r.event_id for r in accepted.relaxations] == ["e3"]


@pytest.mark.parametrize(
    ("change", "kind"),
    [
        pytest.param({"verification": OTHER_CHECK}, "verification", id="verification"),
        pytest.param({"triggers": ("deploy",)}, "triggers", id="triggers"),
        pytest.param({"applies_to": AppliesTo(paths=("nothing/**",))}, "applies_to",
                     id="applies_to"),
    ],
)  # fmt: skip
def test_changing_a_known_entity_relaxes(change: dict[str, object], kind: str) -> None:
    events = [observed(), ev("e2", "diagnosed", follows=("e1",), **change)]  # type: ignore[arg-type]
    strict = run(events, policy=STRICT, protected={"e1"})
    assert [(r.event_id, r.kind, r.accepted) for r in strict.relaxations] == [("e2", kind, False)]
    assert strict.gates[0].state is GateState.OPEN
    assert strict.decision is DecisionKind.HELD
    accepted = run(events, policy=ACCEPT, protected={"e1"})
    assert [(r.event_id, r.kind, r.accepted) for r in accepted.relaxations] == [("e2", kind, True)]


def test_adding_a_verifier_to_a_known_entity_relaxes() -> None:
    events = [
        observed(verification=None),
        ev("e2", "diagnosed", follows=("e1",), verification=CHECK),
    ]
    got = run(events, policy=STRICT, protected={"e1"})
    assert [r.kind for r in got.relaxations] == ["verification"]
    assert got.gates[0].verifier is None
    assert "no verifier" in got.gates[0].reason


def test_restating_the_same_value_does_not_relax() -> None:
    events = [observed(), ev("e2", "diagnosed", follows=("e1",), verification=CHECK)]
    got = run(events, policy=STRICT, protected={"e1"}, results={KEY: FAILED})
    assert got.relaxations == ()


def test_a_new_entity_only_tightens() -> None:
    events = [observed(), ev("e2", "diagnosed", follows=("e1",), verification=OTHER_CHECK)]
    got = run(events, policy=STRICT, protected=set(), results={KEY: FAILED})
    assert got.relaxations == ()
    assert got.decision is DecisionKind.HELD


@pytest.mark.parametrize(
    ("event", "kind"),
    [
        pytest.param(ev("e3", "observed", follows=("e2",), supersedes=("e2",)), "supersedes",
                     id="supersedes"),
        pytest.param(ev("e3", "observed", follows=("e2",), retracts=("e2",)), "retracts",
                     id="retracts"),
        pytest.param(ev("e3", "expired", follows=("e2",), supersedes=("e2",)), "expired+supersedes",
                     id="several-kinds-in-one-event"),
    ],
)  # fmt: skip
def test_relaxation_kinds(event: Event, kind: str) -> None:
    events = [observed(), ev("e2", "diagnosed", follows=("e1",)), event]
    got = run(events, policy=ACCEPT, protected={"e1", "e2"})
    assert [(r.event_id, r.kind) for r in got.relaxations] == [("e3", kind)]
    assert got.relaxations[0].what


def test_tightening_events_are_never_listed() -> None:
    events = [
        observed(),
        ev("e2", "diagnosed", follows=("e1",)),
        ev("e3", "mitigated", follows=("e2",)),
    ]
    assert run(events, policy=STRICT, protected={"e1"}).relaxations == ()
