"""The gates held for HEAD and the ref a plain `git push` updates, read without verifiers.

What a coding agent is told at the start of a session, in a refusal, and by the
MCP server. The ledger is the union of HEAD's and the remote default branch's
(protected), as `failgate export` reads it; states are the gate decision's without running a
verifier, so an open gate with a verifier stays open here.
"""

from __future__ import annotations

from failgate_hooks.app.evaluate import GitFacts
from failgate_hooks.app.push import _default_branch_as_remote_ref as as_remote_ref
from failgate_hooks.core.agent_gates import AgentGates, HeldGate
from failgate_hooks.core.assess import assess
from failgate_hooks.core.decide import enforces
from failgate_hooks.core.gates import BLOCKING_STATES, Context, Policy
from failgate_hooks.git.repo import GitRepo, default_remote, remote_default_branch
from failgate_hooks.ledger.union import Revision, inspection_config, read_union

TRIGGER = "push"


def held_gates(repo: GitRepo) -> AgentGates:
    """Every gate that holds a push of HEAD, blocking or only warning at its destination."""
    config = inspection_config(repo)
    commit = repo.try_resolve_commit("HEAD")
    if commit is None:
        return AgentGates(None, None, (), note="no commit yet: nothing to push")
    revisions = [Revision("HEAD", commit)]
    remote = default_remote(repo)
    found = remote_default_branch(repo, remote) if remote else None
    extra_protected: tuple[str, ...] = ()
    if found is not None:
        revisions.append(Revision(found[0], found[1], protected=True))
        extra_protected = (as_remote_ref(found[0], remote or ""),)
    ref = push_ref(repo, remote) or (extra_protected[0] if extra_protected else None)
    ledger = read_union(repo, revisions, config.ledger, config.max_event_bytes)
    facts = GitFacts(repo, commit, config.ledger)
    context = Context(trigger=TRIGGER, ref=ref)
    policy = Policy(
        protected_refs=tuple(config.protected_refs) + extra_protected,
        block_on=config.block_on,
        mode=config.mode,
    )
    blocks = enforces(context, policy) and policy.mode == "enforce"
    held = []
    for resolution in ledger.resolve_all().values():
        item = assess(resolution, facts, context, protected_ids=ledger.protected_ids, policy=policy)
        if item.state not in BLOCKING_STATES:
            continue
        state = resolution.state
        held.append(
            HeldGate(
                entity_key=item.entity_key,
                state=item.state,
                blocks_push=blocks,
                title=item.title,
                reason=item.reason,
                command=state.verification.command if state.verification else None,
                paths=state.applies_to.paths if state.applies_to else None,
            )
        )
    return AgentGates(
        commit=commit,
        ref=ref,
        gates=tuple(held),
        relaxers=tuple(config.relaxers),
        identity_env=config.identity_env,
        problems=tuple(p.describe() for p in ledger.problems),
    )


def push_ref(repo: GitRepo, remote: str | None) -> str | None:
    """The remote ref a plain `git push` of the current branch updates (`@{push}`)."""
    if not repo.succeeds("rev-parse", "--verify", "--quiet", "@{push}"):
        return None
    tracking = repo.run("rev-parse", "--symbolic-full-name", "@{push}")
    parts = tracking.split("/", 3)
    if len(parts) == 4 and parts[:2] == ["refs", "remotes"]:
        return as_remote_ref(tracking, parts[2])
    return None
