"""The gates held for a commit, as a coding agent needs them. Pure values.

For each held gate: what it is, the verifier to run (`failgate try KEY`), the
paths it applies to, what clears it and which evidence is missing; and for the
repository, who may relax a gate. States are the gate decision's with no verifier
run (a pass cached for the commit counts), and no free text changes an outcome.
"""

from __future__ import annotations

import shlex
from typing import NamedTuple

from failgate_hooks.core.gates import GateState
from failgate_hooks.core.ids import short_id


class HeldGate(NamedTuple):
    """One gate that holds a push of the commit until something clears it."""

    entity_key: str
    state: GateState  # open, conflict or invalid
    blocks_push: bool  # to the destination ref (else it only warns there)
    title: str | None
    reason: str
    command: tuple[str, ...] | None  # the verifier's argv
    paths: tuple[str, ...] | None  # applies when the commit has a file matching one

    @property
    def try_command(self) -> str | None:
        return f"failgate try {self.entity_key}" if self.command else None


class AgentGates(NamedTuple):
    """What holds a push of `commit` to `ref`, and who may relax it."""

    commit: str | None
    ref: str | None
    gates: tuple[HeldGate, ...]
    relaxers: tuple[str, ...] = ()
    identity_env: str | None = None
    problems: tuple[str, ...] = ()  # problems no entity owns: the ledger itself is invalid
    note: str = ""  # why there is nothing to say (no commit yet), for people


def clears_when(gate: HeldGate) -> str:
    """What makes the gate let the push through."""
    if gate.state is GateState.CONFLICT:
        return (
            "a person records an event that follows every head, settling the conflict "
            "(failgate log KEY shows the heads)".replace("KEY", gate.entity_key)
        )
    if gate.state is GateState.INVALID:
        return "its invalid event files are fixed or retracted (failgate fsck lists them)"
    if gate.command:
        return (
            f"its verifier ({shlex.join(gate.command)}) exits 0 on the pushed commit, "
            "in a clean checkout with its pinned files; or a person confirms that content"
        )
    return "a person confirms the pushed content (failgate confirm), or a verifier is added"


def evidence_missing(gate: HeldGate, commit: str | None) -> str:
    """Which evidence the ledger lacks for this commit."""
    at = f" for {short_id(commit)}" if commit else ""
    if gate.state is GateState.CONFLICT:
        return f"no event settles its conflicting heads{at}"
    if gate.state is GateState.INVALID:
        return f"valid events: the ledger's files for it do not validate{at}"
    if gate.command:
        return (
            f"a passing run of its verifier{at} "
            "(none is cached here from a trusted verifier; none was run)"
        )
    return f"a person's confirmation{at}: it has no verifier"


def relax_rule(view: AgentGates) -> str:
    """Who may relax a gate (expire, confirm, supersede, change its verifier or scope)."""
    pushers = (
        f", or when one of the relaxers pushes it ({', '.join(view.relaxers)}; identified by "
        f"{view.identity_env or 'the server'})"
        if view.relaxers
        else ""
    )
    return (
        "A person, never the agent. A relaxing event (an expiry, a confirmation, a "
        "supersession, a changed verifier or scope) counts on the server once it is on a "
        f"protected branch{pushers}; in CI the review of ledger/ decides; a local hook "
        "accepts it but lists it as RELAXED."
    )
