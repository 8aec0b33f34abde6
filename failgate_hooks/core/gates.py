"""The gate decision (DESIGN §4): applicability, authority, enforcement. Pure: no I/O.

Two phases, because the imperative shell runs verifiers between them:

1. `assess` puts one resolved entity into the §4 table for commit C, given git's
   answers about C (`Facts`), and says which verifier, if any, could clear it.
   It also finds the entity's relaxing events (§1) and, under authority
   `protected`, decides as if the pending ones were superseded.
2. `decide` turns the assessments and the verifier results into the run's
   decision and exit code: what blocks, what only warns, and why.

Every string here may come from the ledger, a verifier or git: it is data, and
`render` sanitises it on every output path. Nothing here prints.
"""

from __future__ import annotations

import enum
import shlex
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol, overload

from failgate_hooks.core import exitcodes, resolve, wildmatch
from failgate_hooks.core.events import EvidenceKind, Problem, Status, Verification
from failgate_hooks.core.resolve import EntityState, Outcome, Resolution, fold, resolve_entity

PUSH = "push"
BLOCK_ON = ("protected", "all")
MODES = ("enforce", "warn")
AUTHORITIES = ("accept", "protected")

# The problems of an entity that depend on which events are dropped. When an entity
# is resolved again without its pending relaxations these are found afresh: one
# that a pending event caused must not outlive it. Every other problem is kept, as
# some (a foreign or duplicated event) cannot be found again from the valid events.
_DROP_DEPENDENT = frozenset({resolve.MISSING_TITLE, resolve.MISSING_TRIGGERS})


class GateState(enum.StrEnum):
    NOT_APPLICABLE = "not_applicable"
    INVALID = "invalid"
    CONFLICT = "conflict"
    RETIRED = "retired"
    CLEARED = "cleared"
    OPEN = "open"


# The states that refuse an action where enforcement applies (§4 Enforcement).
BLOCKING_STATES = frozenset({GateState.OPEN, GateState.CONFLICT, GateState.INVALID})


class RelaxationKind(enum.StrEnum):
    EXPIRED = "expired"
    HUMAN = "human"
    SUPERSEDES = "supersedes"
    RETRACTS = "retracts"
    VERIFICATION = "verification"
    TRIGGERS = "triggers"
    APPLIES_TO = "applies_to"
    # Two that are not events (§1): what loosens the configuration in force, and the
    # deletion of a protected ref whose ledger holds events the default branch lacks.
    CONFIG = "config"
    REF_DELETION = "ref_deletion"


class VerifierOutcome(enum.StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    TIMEOUT = "timeout"
    CANNOT_START = "cannot_start"
    NO_VERDICT = "no_verdict"
    UNTRUSTED = "untrusted"
    NOT_RUN = "not_run"


class DecisionKind(enum.StrEnum):
    ALLOWED = "allowed"
    HELD = "held"
    ESCALATED = "escalated"
    INTEGRITY = "integrity"


EXIT_CODES: Mapping[DecisionKind, int] = {
    DecisionKind.ALLOWED: exitcodes.ALLOWED,
    DecisionKind.HELD: exitcodes.HELD,
    DecisionKind.ESCALATED: exitcodes.ESCALATED,
    DecisionKind.INTEGRITY: exitcodes.INTEGRITY,
}


class Facts(Protocol):
    """What the shell asks git about commit C, for one decision."""

    @property
    def commit(self) -> str:
        """C's full id."""
        ...

    @property
    def content_key(self) -> str:
        """C's content key (§6): its tree without the ledger folder."""
        ...

    def since_relation(self, since: str) -> bool | None:
        """True: `since` is C or an ancestor; False: it is not; None: git lacks it."""
        ...

    def tree_matches(self, patterns: Sequence[str]) -> bool:
        """Whether C's tree has a file matching any of the wildmatch `patterns`."""
        ...

    def evidence_binds(self, evidence_commit: str, verification: Verification | None) -> bool:
        """Whether that commit has C's content key (or, with `inputs`, C's input blobs)."""
        ...


@dataclass(frozen=True)
class Context:
    """The action at hand: a trigger, and where it goes when that is known."""

    trigger: str
    ref: str | None = None  # None: unknown, and an unknown destination blocks
    environment: str | None = None


@dataclass(frozen=True)
class Policy:
    """Enforcement and authority, from the protected configuration (§4, §9)."""

    # Required, so that a forgotten list cannot quietly protect nothing; the caller
    # has already added the remote's default branch.
    protected_refs: tuple[str, ...]
    block_on: str = "protected"
    mode: str = "enforce"
    authority: str = "accept"
    pusher_is_relaxer: bool = False
    # False where verifiers do not run at all (pre-receive without --exec, §7): an
    # open gate then only warns; conflicts, invalid entities and pending
    # relaxations still block, since no verifier could have settled them.
    hold_open: bool = True

    def __post_init__(self) -> None:
        """Refuse a value the decision cannot interpret: an unknown one must not mean "off"."""
        for name, value, choices in (
            ("block_on", self.block_on, BLOCK_ON),
            ("mode", self.mode, MODES),
            ("authority", self.authority, AUTHORITIES),
        ):
            if value not in choices:
                raise ValueError(f"{name} must be one of {', '.join(choices)}, got {value!r}")


@dataclass(frozen=True)
class Relaxation:
    """A relaxing event (§1) not yet in a protected revision, or a relaxing change that is
    not an event (a configuration change, a ref deletion: `event_id` and `entity_key` "")."""

    event_id: str
    entity_key: str
    kind: str  # the RelaxationKind values that apply, joined by "+", e.g. "expired"
    accepted: bool  # False: PENDING, decided as if it were superseded
    what: str = ""  # for people: "status expired; supersedes 2026…"
    blocking: bool = False  # set by `decide` for a pending one where enforcement applies
    warning: bool = False


@dataclass(frozen=True)
class Assessment:
    """Phase 1: one entity's §4 state for C, before any verifier ran."""

    entity_key: str
    state: GateState
    reason: str
    title: str | None
    status: Status | None
    event_ids: tuple[str, ...]  # the remaining events, in resolution order
    commit: str
    # The verifier to run: set only when the state is open and the entity has one.
    verification: Verification | None = None
    relaxations: tuple[Relaxation, ...] = ()
    # Facts worth saying beside the reason, e.g. a `since` that failed closed.
    notes: tuple[str, ...] = ()
    problems: tuple[Problem, ...] = ()


@dataclass(frozen=True)
class VerifierResult:
    """What running (or not running) one entity's verifier on C gave."""

    command: tuple[str, ...]
    outcome: VerifierOutcome
    exit_code: int | None = None
    duration_s: float | None = None
    cached: bool = False
    output_tail: str = ""
    detail: str = ""


@dataclass(frozen=True)
class Gate:
    """Phase 2: one entity's final state, and whether it blocks or warns here."""

    entity_key: str
    state: GateState
    blocking: bool
    warning: bool
    reason: str
    title: str | None
    status: Status | None
    event_ids: tuple[str, ...]
    verifier: VerifierResult | None = None
    notes: tuple[str, ...] = ()
    problems: tuple[Problem, ...] = ()


class Gates(Sequence[Gate]):
    """Every entity's gate, in key order; those settled from a summary are made when asked.

    At 10,000 events a decision has 5,000 gates, nearly all decided not applicable
    from the ledger index without their events (ledgerindex). The verdict, the
    counts and the text output need only how many of those there are, so they are
    built only for whatever reads them one by one (JSON, CI, export). Iterating
    gives every gate, always: a reader that does not know the difference loses
    nothing."""

    def __init__(
        self,
        assessed: Iterable[Gate] = (),
        settled: int = 0,
        make_settled: Callable[[], Iterable[Gate]] | None = None,
    ) -> None:
        self.assessed = tuple(assessed)  # every gate that is not a settled one
        self.settled = settled  # how many more: not applicable, never blocking or warning
        self._make = make_settled
        self._all: tuple[Gate, ...] | None = None if settled else self.assessed

    def _gates(self) -> tuple[Gate, ...]:
        if self._all is None:
            made = tuple(self._make() if self._make is not None else ())
            if len(made) != self.settled or any(
                g.state is not GateState.NOT_APPLICABLE or g.blocking or g.warning for g in made
            ):
                raise ValueError("settled gates must be as many as said, and not applicable")
            everything = sorted((*self.assessed, *made), key=lambda g: g.entity_key)
            if len({g.entity_key for g in everything}) != len(everything):
                raise ValueError("an entity was decided twice")
            self._all = tuple(everything)
        return self._all

    def in_state(self, state: GateState) -> int:
        """How many gates are in `state`, without making the settled ones."""
        found = sum(1 for g in self.assessed if g.state is state)
        return found + (self.settled if state is GateState.NOT_APPLICABLE else 0)

    def __len__(self) -> int:
        return len(self.assessed) + self.settled

    @overload
    def __getitem__(self, index: int) -> Gate: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[Gate, ...]: ...
    def __getitem__(self, index: int | slice) -> Gate | tuple[Gate, ...]:
        return self._gates()[index]

    def __iter__(self) -> Iterator[Gate]:
        return iter(self._gates())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Gates | tuple | list):
            return list(self) == list(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._gates())

    def __repr__(self) -> str:
        return f"Gates({list(self)!r})"


@dataclass(frozen=True)
class Decision:
    """The decision of one run for one commit and destination, and its exit code."""

    trigger: str
    commit: str
    ref: str | None
    environment: str | None
    decision: DecisionKind
    exit_code: int
    gates: Gates
    relaxations: tuple[Relaxation, ...]
    errors: tuple[Problem, ...]  # blocking: ledger integrity, append-only on enforced refs
    warnings: tuple[Problem, ...]  # append-only violations where they only warn
    enforcing: bool  # whether a gate that blocks would block here (ref, trigger, block_on)
    policy: Policy

    @property
    def counts(self) -> dict[str, int]:
        """How many gates are open, cleared, in conflict and invalid (§10)."""
        wanted = (GateState.OPEN, GateState.CLEARED, GateState.CONFLICT, GateState.INVALID)
        return {str(s): self.gates.in_state(s) for s in wanted}


# --------------------------------------------------------------------------- phase 1


def assess(
    resolution: Resolution,
    facts: Facts,
    context: Context,
    *,
    protected_ids: frozenset[str],
    policy: Policy,
) -> Assessment:
    """Phase 1: the entity's §4 state for C, with its relaxations and the verifier to run."""
    relaxations, resolution = _authority(resolution, protected_ids, policy)
    shown = resolution.state
    base = Assessment(
        entity_key=resolution.entity_key,
        state=GateState.NOT_APPLICABLE,
        reason="",
        title=shown.title,
        status=shown.status,
        event_ids=tuple(i for i in resolution.order if i not in resolution.dropped),
        commit=facts.commit,
        relaxations=relaxations,
    )

    verdicts = [_applicability(scope, facts, context) for scope in judged_scopes(resolution)]
    applying = [notes for applies, notes in verdicts if applies]
    if not applying:
        return replace(base, reason=_not_applicable(verdicts))
    notes = tuple(dict.fromkeys(note for head_notes in applying for note in head_notes))
    base = replace(base, notes=notes)

    if resolution.outcome is Outcome.INVALID:
        count = len(resolution.problems)
        reason = f"{count} problem(s) in its events: fix or retract them (failgate fsck)"
        return replace(base, state=GateState.INVALID, reason=reason, problems=resolution.problems)
    if resolution.outcome is Outcome.CONFLICT:
        return replace(base, state=GateState.CONFLICT, reason=_conflict_reason(resolution))
    if shown.status is Status.EXPIRED:
        reason = "status expired: the risk no longer exists"
        return replace(base, state=GateState.RETIRED, reason=reason)
    confirmed = _human_clearance(resolution, facts)
    if confirmed is not None:
        return replace(base, state=GateState.CLEARED, reason=confirmed)
    check = shown.verification
    if check is None:
        reason = (
            "no verifier: stays open until a person confirms the content "
            "(failgate confirm) or a verifier is added"
        )
    else:
        reason = f"needs verifier {shlex.join(check.command)}"
    return replace(base, state=GateState.OPEN, reason=reason, verification=check)


def judged_scopes(resolution: Resolution) -> list[EntityState]:
    """The states whose scope decides applicability: the heads of a conflict, else the fold."""
    if resolution.outcome is Outcome.CONFLICT:
        return [resolution.head_states[h] for h in resolution.heads]
    return [resolution.state]


def _not_applicable(verdicts: Sequence[tuple[bool, tuple[str, ...]]]) -> str:
    why = verdicts[0][1][0]
    return f"no head applies: {why}" if len(verdicts) > 1 else why


def ruled_out(scopes: Sequence[EntityState], facts: Facts, context: Context) -> str | None:
    """Why no scope applies (`assess`'s not-applicable reason), or None when one does.

    `assess` of an entity none of whose relaxations is pending or listed (every
    event protected) gives exactly this, so an entity's scopes are then enough to
    decide it, without its events (ledgerindex)."""
    verdicts = [_applicability(scope, facts, context) for scope in scopes]
    if any(applies for applies, _ in verdicts):
        return None
    return _not_applicable(verdicts)


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
                f"since {_short(scope.since)} is not in this repository: applies (fail closed)"
            )
        elif not related:
            return False, (
                f"since {_short(scope.since)} is neither {_short(facts.commit)} "
                "nor an ancestor of it",
            )
    if scope.paths is not None and not facts.tree_matches(scope.paths):
        return False, (
            f"no file of {_short(facts.commit)} matches its paths ({_list(scope.paths)})",
        )
    return True, tuple(notes)


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
    for event in reversed(remaining):
        evidence = event.evidence
        if evidence is None or evidence.kind is not EvidenceKind.HUMAN or evidence.commit is None:
            continue
        before = resolution.ancestors.get(event.id, frozenset())
        if not all(s in before for s in setters):
            continue
        if facts.evidence_binds(evidence.commit, resolution.state.verification):
            who = f" by {evidence.confirmed_by}" if evidence.confirmed_by else ""
            return (
                f"confirmed{who} in {event.id} for {_short(evidence.commit)}, "
                f"the same content as {_short(facts.commit)}"
            )
    return None


# --------------------------------------------------------------------------- authority


def _authority(
    resolution: Resolution, protected_ids: frozenset[str], policy: Policy
) -> tuple[tuple[Relaxation, ...], Resolution]:
    """The entity's relaxations not yet protected, and the resolution to decide on.

    Under authority `protected`, without a relaxer pushing, a relaxing event is
    pending and the entity is resolved again as if it were superseded; that can
    revive an event it superseded, which may be a relaxing event in turn, so the
    pending set grows until it is stable."""
    known = any(event_id in protected_ids for event_id in resolution.events)
    accept = policy.authority == "accept" or policy.pusher_is_relaxer
    found = _relaxing(resolution, protected_ids, known)
    if accept:
        return tuple(_relaxation(resolution, e, kinds, True) for e, kinds in found), resolution

    original = resolution
    pending: dict[str, tuple[RelaxationKind, ...]] = {}
    while True:
        new = {e: kinds for e, kinds in found if e not in pending}
        if not new:
            break
        pending.update(new)
        kept = [p for p in original.problems if p.code not in _DROP_DEPENDENT]
        again = resolve_entity(
            original.entity_key,
            original.events.values(),
            kept,
            also_dropped=frozenset(pending),
        )
        # The problems found again from the same events repeat the kept ones.
        resolution = replace(again, problems=tuple(dict.fromkeys(again.problems)))
        found = _relaxing(resolution, protected_ids, known)
    ordered = [e for e in original.order if e in pending]
    return tuple(_relaxation(original, e, pending[e], False) for e in ordered), resolution


def _relaxing(
    resolution: Resolution, protected_ids: frozenset[str], known: bool
) -> list[tuple[str, tuple[RelaxationKind, ...]]]:
    """The remaining, unprotected relaxing events (§1), in resolution order, with kinds.

    A superseded event changes nothing, so it relaxes nothing."""
    found: list[tuple[str, tuple[RelaxationKind, ...]]] = []
    for event_id in resolution.order:
        if event_id in resolution.dropped or event_id in protected_ids:
            continue
        event = resolution.events[event_id]
        kinds: list[RelaxationKind] = []
        if event.status is Status.EXPIRED:
            kinds.append(RelaxationKind.EXPIRED)
        if event.evidence is not None and event.evidence.kind is EvidenceKind.HUMAN:
            kinds.append(RelaxationKind.HUMAN)
        if event.supersedes:
            kinds.append(RelaxationKind.SUPERSEDES)
        if event.retracts:
            kinds.append(RelaxationKind.RETRACTS)
        if known:
            # Only a change counts: re-stating what its ancestors already say relaxes
            # nothing. On an entity no protected revision knows, every key is new and
            # can only tighten.
            before = _fold_before(resolution, event_id)
            if event.verification is not None and event.verification != before.verification:
                kinds.append(RelaxationKind.VERIFICATION)
            if event.triggers is not None and event.triggers != before.triggers:
                kinds.append(RelaxationKind.TRIGGERS)
            if event.applies_to is not None and event.applies_to != before.applies_to:
                kinds.append(RelaxationKind.APPLIES_TO)
        if kinds:
            found.append((event_id, tuple(kinds)))
    return found


def _fold_before(resolution: Resolution, event_id: str) -> EntityState:
    """The fold of the remaining events an event comes after."""
    before = resolution.ancestors.get(event_id, frozenset())
    return fold(
        resolution.events[i]
        for i in resolution.order
        if i in before and i not in resolution.dropped
    )


def _relaxation(
    resolution: Resolution, event_id: str, kinds: Iterable[RelaxationKind], accepted: bool
) -> Relaxation:
    """One listed relaxation, with a description of what it changes."""
    kinds = tuple(kinds)
    event = resolution.events[event_id]
    parts: list[str] = []
    for kind in kinds:
        if kind is RelaxationKind.EXPIRED:
            parts.append("status expired")
        elif kind is RelaxationKind.HUMAN:
            evidence = event.evidence
            commit = evidence.commit if evidence is not None else None
            parts.append(f"human confirmation of {_short(commit) if commit else 'no commit'}")
        elif kind is RelaxationKind.SUPERSEDES:
            parts.append(f"supersedes {_list(event.supersedes)}")
        elif kind is RelaxationKind.RETRACTS:
            parts.append(f"retracts {_list(event.retracts)}")
        else:
            parts.append(f"changes {kind.value}")
    return Relaxation(
        event_id=event_id,
        entity_key=resolution.entity_key,
        kind="+".join(k.value for k in kinds),
        accepted=accepted,
        what="; ".join(parts),
    )


# --------------------------------------------------------------------------- phase 2


def decide(
    assessments: Iterable[Assessment],
    results: Mapping[str, VerifierResult],
    *,
    context: Context,
    policy: Policy,
    errors: Iterable[Problem] = (),
    history_errors: Iterable[Problem] = (),
    commit: str | None = None,
    other_relaxations: Iterable[Relaxation] = (),
    settled: int = 0,
    make_settled: Callable[[], Iterable[Gate]] | None = None,
) -> Decision:
    """Phase 2: the run's decision from the assessments and the verifier results.

    `results` maps entity keys to what their verifier gave; `errors` are ledger
    integrity problems (they always block); `history_errors` are append-only
    violations (they block where a gate would, else warn). `commit` is C's id,
    needed when no entity was assessed; it must agree with every assessment.
    `other_relaxations` are the relaxing changes that are not events (a config change,
    a ref deletion); a pending one blocks where a gate would.
    `settled` more entities were found not applicable without assessing them;
    `make_settled` makes their gates when something reads them (Gates)."""
    assessments = tuple(assessments)
    commits = {a.commit for a in assessments} | ({commit} if commit is not None else set())
    if len(commits) > 1:
        raise ValueError(f"assessments of different commits: {', '.join(sorted(commits))}")
    keys = [a.entity_key for a in assessments]
    if len(set(keys)) != len(keys):
        raise ValueError("an entity was assessed twice")

    enforcing = enforces(context, policy)
    # mode warn softens gates and pending relaxations, never integrity: a ledger that
    # cannot be trusted to answer cannot say a gate is only worth a warning.
    block = enforcing and policy.mode == "enforce"

    gates: list[Gate] = []
    relaxations: list[Relaxation] = []
    for item in sorted(assessments, key=lambda a: a.entity_key):
        gate = _finish(item, results.get(item.entity_key))
        if gate.state in BLOCKING_STATES:
            blocks = block and (gate.state is not GateState.OPEN or policy.hold_open)
            gate = replace(gate, blocking=blocks, warning=not blocks)
        gates.append(gate)
        for relaxation in item.relaxations:
            if not relaxation.accepted:
                relaxation = replace(relaxation, blocking=block, warning=not block)
            relaxations.append(relaxation)
    for relaxation in other_relaxations:
        if not relaxation.accepted:
            relaxation = replace(relaxation, blocking=block, warning=not block)
        relaxations.append(relaxation)

    # Integrity errors follow enforcement like gates do: a branch that repairs a
    # broken ledger must be pushable for review, while protected refs stay shut.
    found = tuple(errors) + tuple(history_errors)
    blocking_errors = found if enforcing else ()
    warnings = () if enforcing else found

    def blocking(state: GateState) -> bool:
        return any(g.blocking and g.state is state for g in gates)

    if blocking_errors or blocking(GateState.INVALID):
        kind = DecisionKind.INTEGRITY
    elif blocking(GateState.CONFLICT):
        kind = DecisionKind.ESCALATED
    elif blocking(GateState.OPEN) or any(r.blocking for r in relaxations):
        kind = DecisionKind.HELD
    else:
        kind = DecisionKind.ALLOWED
    return Decision(
        trigger=context.trigger,
        commit=commits.pop() if commits else "",
        ref=context.ref,
        environment=context.environment,
        decision=kind,
        exit_code=EXIT_CODES[kind],
        gates=Gates(gates, settled, make_settled),
        relaxations=tuple(relaxations),
        errors=blocking_errors,
        warnings=warnings,
        enforcing=enforcing,
        policy=policy,
    )


def enforces(context: Context, policy: Policy) -> bool:
    """Whether something that blocks blocks here, before mode warn (§4 Enforcement).

    Any trigger but push always enforces; a push enforces on a protected ref, on
    an unknown one (fail closed), and on every ref under block_on = "all"."""
    if context.trigger != PUSH or context.ref is None or policy.block_on == "all":
        return True
    return wildmatch.match_any(policy.protected_refs, context.ref)


def _finish(item: Assessment, result: VerifierResult | None) -> Gate:
    """An assessment with its verifier's result folded in (not yet blocking or warning)."""
    state, reason, verifier = item.state, item.reason, None
    if item.state is GateState.OPEN and item.verification is not None:
        command = item.verification.command
        verifier = (
            result if result is not None else VerifierResult(command, VerifierOutcome.NOT_RUN)
        )
        reason = verifier_reason(verifier)
        if verifier.outcome is VerifierOutcome.PASSED:
            state = GateState.CLEARED
    return Gate(
        entity_key=item.entity_key,
        state=state,
        blocking=False,
        warning=False,
        reason=reason,
        title=item.title,
        status=item.status,
        event_ids=item.event_ids,
        verifier=verifier,
        notes=item.notes,
        problems=item.problems,
    )


def verifier_reason(result: VerifierResult) -> str:
    """One line on what a verifier gave, e.g. "verifier python x.py exited 1 in 0.12 s"."""
    name = f"verifier {shlex.join(result.command)}"
    took = f" in {result.duration_s:.2f} s" if result.duration_s is not None else ""
    outcome, detail = result.outcome, result.detail
    if outcome is VerifierOutcome.PASSED or outcome is VerifierOutcome.FAILED:
        code = "?" if result.exit_code is None else str(result.exit_code)
        text = f"{name} exited {code}{took}"
    elif outcome is VerifierOutcome.TIMEOUT:
        after = f" after {result.duration_s:.0f} s" if result.duration_s is not None else ""
        text = f"{name}: timeout{after}"
    elif outcome is VerifierOutcome.CANNOT_START:
        text = f"{name} cannot start"
    elif outcome is VerifierOutcome.NO_VERDICT:
        code = "" if result.exit_code is None else f" (exit {result.exit_code})"
        text = f"{name} gave no verdict{code}{took}"
        detail = detail or "it could not judge"
    elif outcome is VerifierOutcome.UNTRUSTED:
        # `failgate trust` shows what is untrusted and why; the reason says what to run.
        text, detail = f"{name} is not trusted on this machine: run failgate trust", ""
    else:
        text = f"{name} not run"
    if result.cached:
        text += " (cached)"
    # The detail adds to the outcome; one that only repeats it is said once.
    return f"{text}: {detail}" if detail and detail not in text else text


# --------------------------------------------------------------------------- helpers


def _short(commit: str) -> str:
    return commit[:7]


def _list(values: Iterable[str]) -> str:
    return ", ".join(values)
