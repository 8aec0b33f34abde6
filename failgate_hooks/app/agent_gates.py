"""The gates held for HEAD and the ref a plain `git push` updates, read without verifiers.

What a coding agent is told at the start of a session, in a refusal, and by the
MCP server. It is `app/report.py`'s decision, the one `failgate gates` reaches:
a gate whose verifier passed here for HEAD (cached) is cleared and not listed,
and a listed gate blocks the push exactly when that decision says it blocks.
"""

from __future__ import annotations

from failgate_hooks.app.report import report
from failgate_hooks.core.agent.agent_gates import AgentGates, HeldGate
from failgate_hooks.core.gates import BLOCKING_STATES
from failgate_hooks.git.repo import GitRepo


def held_gates(repo: GitRepo) -> AgentGates:
    """Every gate that holds a push of HEAD, blocking or only warning at its destination."""
    if repo.try_resolve_commit("HEAD") is None:
        return AgentGates(None, None, (), note="no commit yet: nothing to push")
    found = report(repo, plain_push=True)
    gates = [g for g in found.decision.gates if g.state in BLOCKING_STATES]
    resolutions = found.ledger.resolve_all() if gates else {}
    held = []
    for gate in gates:
        state = resolutions[gate.entity_key].state
        held.append(
            HeldGate(
                entity_key=gate.entity_key,
                state=gate.state,
                blocks_push=gate.blocking,
                title=gate.title,
                reason=gate.reason,
                command=state.verification.command if state.verification else None,
                paths=state.applies_to.paths if state.applies_to else None,
            )
        )
    return AgentGates(
        commit=found.decision.commit,
        ref=found.decision.ref,
        gates=tuple(held),
        relaxers=tuple(found.config.relaxers),
        identity_env=found.config.identity_env,
        problems=tuple(p.describe() for p in found.ledger.problems),
    )
