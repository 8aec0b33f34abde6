"""The values of the gate decision: states, the action at hand, policy, and results. Pure.

The decision takes two phases, because the imperative shell runs verifiers
between them: `core/assess.py` puts each resolved entity into the state table
for commit C, and `core/decide.py` turns the assessments and the verifier
results into the run's decision and exit code.

Every string here may come from the ledger, a verifier or git: it is data, and
`render` sanitises it on every output path. Nothing here prints.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from typing import NamedTuple, Protocol

from failgate_hooks.core import exitcodes, resolve
from failgate_hooks.core.events import Problem, Status, Verification

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


# The states that refuse an action where enforcement applies.
BLOCKING_STATES = frozenset({GateState.OPEN, GateState.CONFLICT, GateState.INVALID})


class RelaxationKind(enum.StrEnum):
    EXPIRED = "expired"
    HUMAN = "human"
    SUPERSEDES = "supersedes"
    RETRACTS = "retracts"
    VERIFICATION = "verification"
    TRIGGERS = "triggers"
    APPLIES_TO = "applies_to"
    # An event after heads that disagree: it settles their conflict, for one side.
    SETTLES = "settles"
    # A new entity's verifier that asks for variables of the environment it runs in: on a
    # server its pusher would read the server's own (a deploy token) in its output.
    ENV_PASS = "env_pass"
    # Five that are not events: what loosens the configuration in force, the
    # deletion of a protected ref whose ledger holds events the default branch lacks,
    # a pushed commit whose copy of a verifier's pinned files is not the pinned one
    # (once landed on a protected ref, its copy is what later pushes run), and the
    # creation of the missing branch a server's HEAD names, which would take over
    # from the default branch in force.
    CONFIG = "config"
    REF_DELETION = "ref_deletion"
    PINNED_FILES = "pinned_files"
    DEFAULT_BRANCH = "default_branch"
    # A commit outside a gate's `since`, pushed where the protected revision is inside:
    # accepted, it would become a tip the gate no longer holds, and so would its children.
    LEAVES_SINCE = "leaves_since"


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
    # A pushed update of one of failgate's own refs (refs/failgate/) that breaks its rule:
    # no ledger is read there, so it is none of the ledger's integrity.
    REFUSED = "refused"


EXIT_CODES: Mapping[DecisionKind, int] = {
    DecisionKind.ALLOWED: exitcodes.ALLOWED,
    DecisionKind.HELD: exitcodes.HELD,
    DecisionKind.ESCALATED: exitcodes.ESCALATED,
    DecisionKind.INTEGRITY: exitcodes.INTEGRITY,
    DecisionKind.REFUSED: exitcodes.INTEGRITY,  # what was pushed cannot be taken as it is
}


class Facts(Protocol):
    """What the shell asks git about commit C, for one decision."""

    @property
    def commit(self) -> str:
        """C's full id."""
        ...

    def since_relation(self, since: str) -> bool | None:
        """True: `since` is C or an ancestor; False: it is not; None: git lacks it."""
        ...

    def protected_under_since(self, since: str) -> str | None:
        """The name of the protected revision C is judged against (the first one the
        decision reads: the destination's tip, else the default branch's) when `since`
        is it or an ancestor of it; None when it is not, or when there is none."""
        ...

    def tree_matches(self, patterns: Sequence[str]) -> bool | None:
        """Whether C's tree has a file matching any of the wildmatch `patterns`; None
        when matching them would take more work than a decision may."""
        ...

    def evidence_binds(self, evidence_commit: str, verification: Verification | None) -> bool:
        """Whether that commit has C's content key (or, with `inputs`, C's input blobs)."""
        ...


class Context(NamedTuple):
    """The action at hand: a trigger, and where it goes when that is known."""

    trigger: str
    ref: str | None = None  # None: unknown, and an unknown destination blocks
    environment: str | None = None


class _PolicyFields(NamedTuple):
    # Required, so that a forgotten list cannot quietly protect nothing; the caller
    # has already added the remote's default branch.
    protected_refs: tuple[str, ...]
    block_on: str = "protected"
    mode: str = "enforce"
    authority: str = "accept"
    pusher_is_relaxer: bool = False
    # False where verifiers do not run at all (pre-receive without --exec): an
    # open gate then only warns; conflicts, invalid entities and pending
    # relaxations still block, since no verifier could have settled them.
    hold_open: bool = True
    # For the advice on a pending relaxation: who may relax, and who was seen pushing.
    relaxers: tuple[str, ...] = ()
    identity_env: str | None = None
    pusher: str | None = None
    # The server's default branch, where review merges a relaxation (None: not known).
    default_ref: str | None = None


class Policy(_PolicyFields):
    """Enforcement and authority, from the protected configuration.

    Unlike the other values, it refuses when made a value the decision cannot
    interpret: an unknown one must not mean "off". `_replace` would make one
    without that check, so it checks too."""

    __slots__ = ()

    def __new__(cls, *args: object, **kwargs: object) -> Policy:
        policy = super().__new__(cls, *args, **kwargs)  # type: ignore[arg-type]
        for name, value, choices in (
            ("block_on", policy.block_on, BLOCK_ON),
            ("mode", policy.mode, MODES),
            ("authority", policy.authority, AUTHORITIES),
        ):
            if value not in choices:
                raise ValueError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
        return policy

    def _replace(self, **changes: object) -> Policy:
        return Policy(**{**self._asdict(), **changes})


class Relaxation(NamedTuple):
    """A relaxing event not yet in a protected revision, or a relaxing change that is
    not an event (a configuration change, a ref deletion: `event_id` and `entity_key` "")."""

    event_id: str
    entity_key: str
    kind: str  # the RelaxationKind values that apply, joined by "+", e.g. "expired"
    accepted: bool  # False: PENDING, decided as if it were superseded
    what: str = ""  # for people: "status expired; supersedes 2026…"
    blocking: bool = False  # set by `decide` for a pending one where enforcement applies
    warning: bool = False
    note: str = ""  # the relaxing event's own note: why its author relaxed the gate


class Assessment(NamedTuple):
    """Phase 1: one entity's state for C, before any verifier ran."""

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
    # INVALID: the command that retracts its event files that do not validate
    retract_command: str | None = None


class VerifierResult(NamedTuple):
    """What running (or not running) one entity's verifier on C gave."""

    command: tuple[str, ...]
    outcome: VerifierOutcome
    exit_code: int | None = None
    duration_s: float | None = None
    cached: bool = False
    output_tail: str = ""
    detail: str = ""
    # A pass taken from a signed statement: its fields (signer, time, run), one per line.
    evidence: tuple[tuple[str, str], ...] = ()
    skipped_evidence: tuple[str, ...] = ()  # why each statement looked at did not count


class Gate(NamedTuple):
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
    retract_command: str | None = None  # as the assessment's


class Decision(NamedTuple):
    """The decision of one run for one commit and destination, and its exit code."""

    trigger: str
    commit: str
    ref: str | None
    environment: str | None
    decision: DecisionKind
    exit_code: int
    gates: tuple[Gate, ...]
    relaxations: tuple[Relaxation, ...]
    errors: tuple[Problem, ...]  # blocking: ledger integrity, append-only on enforced refs
    warnings: tuple[Problem, ...]  # append-only violations where they only warn
    enforcing: bool  # whether a gate that blocks would block here (ref, trigger, block_on)
    policy: Policy
    # False when no protected revision was read: every relaxing event is then new
    protected_read: bool = True

    @property
    def counts(self) -> dict[str, int]:
        """How many gates are open, cleared, in conflict and invalid."""
        wanted = (GateState.OPEN, GateState.CLEARED, GateState.CONFLICT, GateState.INVALID)
        return {str(s): sum(1 for g in self.gates if g.state is s) for s in wanted}
