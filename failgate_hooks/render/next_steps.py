"""What to do next, after a verdict that refuses: the lines that end BLOCKED, ESCALATED
and a pending relaxation. Pure.

Each line names a command to run, quoted for a shell: an entity key or event id
comes from the ledger, so it is cleaned and quoted before it is shown.
"""

from __future__ import annotations

import shlex

from failgate_hooks.core.gates import (
    Decision,
    DecisionKind,
    Gate,
    GateState,
    Policy,
    Relaxation,
    RelaxationKind,
    VerifierOutcome,
)
from failgate_hooks.core.retraction import retract_advice
from failgate_hooks.core.sanitize import clean_line

PREFIX = "  next: "
# A ledger of hundreds of open gates must not bury the verdict: the first few, then a count.
MAX_GATES = 5


def next_steps(decision: Decision) -> list[str]:
    """The lines after a verdict that refuses; none when the action may proceed."""
    if decision.decision is DecisionKind.ALLOWED:
        return []
    lines: list[str] = []
    blocking = [g for g in decision.gates if g.blocking]
    for gate in blocking[:MAX_GATES]:
        lines.extend(_gate_steps(gate, decision.policy, decision.commit))
    if len(blocking) > MAX_GATES:
        lines.append(f"{len(blocking) - MAX_GATES} more gate(s): failgate gates lists them all")
    pending = [r for r in decision.relaxations if r.blocking]
    if pending:
        lines.extend(_pending_steps(pending, decision.policy, decision.ref))
    if decision.decision is DecisionKind.REFUSED:
        lines.append(
            "failgate's refs move only as failgate writes them: `failgate evidence push` "
            "sends refs/failgate/evidence built on the remote's copy (it fetches that, merges "
            "it line by line with yours and pushes again: no line is ever dropped)"
        )
        if any(p.code == "evidence-unsigned" for p in decision.errors):
            lines.append(
                "a line no signer in force signed is refused however it is pushed: start your "
                "copy again from the remote's (`failgate evidence fetch REMOTE`, then `git "
                "update-ref refs/failgate/evidence refs/failgate/remotes/REMOTE/evidence`) "
                "and let a signer attest"
            )
    elif decision.errors:
        lines.append(
            "the ledger's errors: failgate fsck lists each one and its file; an event file "
            "is never edited: record a new event that supersedes or retracts it"
        )
    return [PREFIX + clean_line(line) for line in lines]


def _gate_steps(gate: Gate, policy: Policy, commit: str) -> list[str]:
    key = _quoted(gate.entity_key)
    if gate.state is GateState.CONFLICT:
        return [
            f"{gate.entity_key} is in conflict (its heads are named above): on a commit that "
            f"holds every head, `failgate record {key} --status STATUS --note WHY` writes an "
            "event whose follows names them all, and settles it"
        ]
    if gate.state is GateState.INVALID and gate.retract_command is not None:
        # worded where fsck's hint and the gate's reason are: one sentence for all three
        return [f"{gate.entity_key}: {retract_advice(gate.retract_command)}"]
    if gate.state is GateState.INVALID:
        return [
            f"{gate.entity_key} has invalid events: failgate fsck says what is wrong with each; "
            f"retract one with `failgate record {key} --status STATUS --retracts ID`"
        ]
    return [_open_step(gate, key), _relax_step(key, policy, _quoted(commit[:12]))]


def _open_step(gate: Gate, key: str) -> str:
    """How to clear an open gate with its verifier, or give it one."""
    verifier = gate.verifier
    if verifier is None:
        return (
            f"{gate.entity_key} has no verifier: add one with `failgate record {key} "
            "--status diagnosed --verify CMD`, fix and commit, and let it pass"
        )
    if verifier.outcome is VerifierOutcome.UNTRUSTED:
        return "review its verifier with `failgate trust`, then try again"
    if verifier.outcome is VerifierOutcome.NOT_RUN:
        return (
            f"`failgate check` runs {gate.entity_key}'s verifier; `failgate try {key}` runs "
            "it on your work tree: fix and commit until it passes"
        )
    return (
        f"`failgate try {key}` runs {gate.entity_key}'s verifier on your work tree: fix and "
        "commit until it passes"
    )


def _relax_step(key: str, policy: Policy, commit: str) -> str:
    """Confirm or expire instead, and who may."""
    if policy.authority == "protected":
        who = (
            "on this server either counts only from the default branch (merge it through "
            f"review) or when a relaxer pushes it ({_relaxers(policy)})"
        )
    else:
        who = (
            "anyone may record either here; a server that holds authority takes it only "
            "from the default branch or from a relaxer"
        )
    return (
        f"or, if a person has checked this commit, `failgate confirm {key} --commit {commit} "
        f"--note WHAT`; if the risk is gone, `failgate expire {key} --note WHY`: {who}"
    )


def _pending_steps(pending: list[Relaxation], policy: Policy, ref: str | None) -> list[str]:
    """Who was seen pushing, who may relax, and how identity is read; and how review
    lets it in, which a push straight to the default branch cannot be."""
    first = pending[0]
    what = clean_line(first.event_id) if first.event_id else clean_line(first.what)
    more = f" and {len(pending) - 1} more" if len(pending) > 1 else ""
    if policy.identity_env is None:
        seen = (
            "no pusher identity is read: identity_env is not set in the configuration in "
            "force, so no one pushes as a relaxer"
        )
    elif policy.pusher is None:
        seen = (
            f"no pusher was seen: identity_env = {policy.identity_env}, which is not set in "
            "the environment failgate ran in"
        )
    else:
        seen = (
            f"the pusher seen is {clean_line(policy.pusher)} (identity_env = {policy.identity_env})"
        )
    if first.kind == RelaxationKind.REF_DELETION.value:
        review = (
            "A deletion cannot be merged through review: have a relaxer delete the ref, "
            "or keep it; git config receive.denyDeletes true on the server refuses every "
            "deletion"
        )
    elif ref is not None and ref == policy.default_ref:
        review = (
            "This push goes straight to the default branch: push it to another branch and "
            "merge it through review, or have a relaxer push it"
        )
    else:
        review = "Merge it into the default branch through review, or have a relaxer push it"
    return [
        f"{what}{more} relaxes a gate and is not yet in a protected revision: {seen}; "
        f"{_relaxers(policy)}. {review}"
    ]


def _relaxers(policy: Policy) -> str:
    if not policy.relaxers:
        return "relaxers is empty in the configuration in force"
    return "relaxers: " + ", ".join(clean_line(r) for r in policy.relaxers)


def _quoted(text: str) -> str:
    return shlex.quote(clean_line(text))
