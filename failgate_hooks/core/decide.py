"""Phase 2 of the gate decision: the run's decision from the assessments and the
verifier results — what blocks, what only warns, and the exit code. Pure: no I/O.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping

from failgate_hooks.core import wildmatch
from failgate_hooks.core.events import Problem
from failgate_hooks.core.gates import (
    BLOCKING_STATES,
    EXIT_CODES,
    PUSH,
    Assessment,
    Context,
    Decision,
    DecisionKind,
    Gate,
    GateState,
    Policy,
    Relaxation,
    VerifierOutcome,
    VerifierResult,
)


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
) -> Decision:
    """Phase 2: the run's decision from the assessments and the verifier results.

    `results` maps entity keys to what their verifier gave; `errors` are ledger
    integrity problems (they always block); `history_errors` are append-only
    violations (they block where a gate would, else warn). `commit` is C's id,
    needed when no entity was assessed; it must agree with every assessment.
    `other_relaxations` are the relaxing changes that are not events (a config change,
    a ref deletion); a pending one blocks where a gate would."""
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
    ordered = sorted(assessments, key=lambda a: a.entity_key)
    for item in ordered:
        gate = _finish(item, results.get(item.entity_key))
        if gate.state in BLOCKING_STATES:
            blocks = block and (gate.state is not GateState.OPEN or policy.hold_open)
            gate = gate._replace(blocking=blocks, warning=not blocks)
        gates.append(gate)
    # A pending relaxation, an event's or another change's, blocks where a gate would.
    every = [*(r for item in ordered for r in item.relaxations), *other_relaxations]
    relaxations = [
        r if r.accepted else r._replace(blocking=block, warning=not block) for r in every
    ]

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
        gates=tuple(gates),
        relaxations=tuple(relaxations),
        errors=blocking_errors,
        warnings=warnings,
        enforcing=enforcing,
        policy=policy,
    )


def enforces(context: Context, policy: Policy) -> bool:
    """Whether something that blocks blocks here, before mode warn.

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
        retract_command=item.retract_command,
    )


def verifier_reason(result: VerifierResult) -> str:
    """One line on what a verifier gave, e.g. "verifier python x.py exited 1 in 0.12 s"."""
    name = f"verifier {shlex.join(result.command)}"
    took = f" in {result.duration_s:.2f} s" if result.duration_s is not None else ""
    outcome, detail = result.outcome, result.detail
    if outcome is VerifierOutcome.PASSED and result.evidence:
        text, detail = f"{name} cleared by evidence", ""
    elif outcome is VerifierOutcome.PASSED or outcome is VerifierOutcome.FAILED:
        code = "?" if result.exit_code is None else str(result.exit_code)
        text = f"{name} exited {code}{took}"
    elif outcome is VerifierOutcome.TIMEOUT:
        after = f" after {result.duration_s:.0f} s" if result.duration_s is not None else ""
        text = f"{name}: timeout{after}"
    elif outcome is VerifierOutcome.CANNOT_START:
        text = f"{name} cannot start"
    elif outcome is VerifierOutcome.NO_VERDICT:
        # a run refused before it started (a shadowed pinned module) exited nothing
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
