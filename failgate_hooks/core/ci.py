"""What one `failgate ci` run checks, as the environment names it, and what it found. Pure."""

from __future__ import annotations

from typing import NamedTuple

from failgate_hooks.core import exitcodes
from failgate_hooks.core.gates import Decision


class CiTarget(NamedTuple):
    """What one CI run checks, as the environment names it (revisions, not yet ids)."""

    source: str  # for people: "github pull_request", "FAILGATE_BASE", …
    head: str
    bases: tuple[str, ...]  # names of the base, the first one git knows wins
    base_label: str
    ref: str | None  # the destination; None: unknown, and an unknown destination blocks
    new_ref: bool = False  # a push that creates the ref: there is no base
    # A push's `before` may be gone (a force push): fail closed, not with an error.
    base_may_be_gone: bool = False
    # A pull request's base may have moved on since the branch was cut.
    from_merge_base: bool = False
    deletion: bool = False
    default_branch: str | None = None  # the repository's default branch, when CI says it


class CiRun(NamedTuple):
    """The outcome of `failgate ci`: what was compared, and the decision (None: a deletion)."""

    target: CiTarget
    head: str
    base: str | None
    decision: Decision | None
    notes: tuple[str, ...] = ()
    ledger_dir: str = "ledger"  # where the event files an annotation points at live

    @property
    def exit_code(self) -> int:
        return exitcodes.ALLOWED if self.decision is None else self.decision.exit_code

    def outputs(self) -> dict[str, str]:
        """The step's outputs: the decision and the counts, for later steps."""
        if self.decision is None:
            return {"decision": "allowed"}
        counts = {key: str(value) for key, value in self.decision.counts.items()}
        return {"decision": self.decision.decision.value, **counts}
