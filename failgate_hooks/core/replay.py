"""What a historical replay found, and whether it proves the gate. Pure."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import NamedTuple

from failgate_hooks.core.ids import short_id


class StepState(enum.StrEnum):
    """What the verifier said at one commit; only exit 0 and a plain failure are verdicts."""

    HELD = "held"
    CLEARED = "cleared"
    NO_VERDICT = "no_verdict"


class ReplayStep(NamedTuple):
    """The verifier's verdict on one commit of the chain."""

    commit: str
    subject: str
    state: StepState
    exit_code: int | None  # None: it timed out or never started
    duration_s: float
    detail: str = ""  # why there is no verdict, or how it ended
    output_tail: str = ""


class ReplayReport(NamedTuple):
    """Everything a replay found, for the text, the JSON and the receipt."""

    entity_key: str
    title: str
    trigger: str
    parent: str
    repair: str
    ledger_rev: str  # full id
    ledger_rev_label: str  # as the caller named it
    command: tuple[str, ...]
    pinned: tuple[tuple[str, str], ...]  # (path, blob id) as the ledger revision holds them
    timeout_s: float
    steps: tuple[ReplayStep, ...]  # oldest first: the parent first, the repair last
    changed_files: tuple[str, ...]
    expect_files: tuple[str, ...] | None
    author: str
    date: str
    reasons: tuple[str, ...]  # why the replay failed; empty when it proves the gate
    failgate_version: str
    # what each step ran in: "bwrap", "bwrap+network", or None, with the user's access
    isolation: str | None = None

    @property
    def ok(self) -> bool:
        """Held at the parent, cleared at the repair, and the expected files changed."""
        return not self.reasons

    @property
    def reason(self) -> str | None:
        """Every reason the replay failed, in one line; None when it proves the gate."""
        return "; ".join(self.reasons) if self.reasons else None


def failure_reasons(
    steps: Sequence[ReplayStep], changed: Sequence[str], expected: Sequence[str] | None
) -> tuple[str, ...]:
    """Why the replay proves nothing; empty when it proves the gate."""
    reasons = []
    first, last = steps[0], steps[-1]
    if first.state is StepState.NO_VERDICT:
        reasons.append(
            f"no verdict at the parent {short_id(first.commit)} ({first.detail}): "
            "a gate held for the wrong reason proves nothing"
        )
    elif first.state is StepState.CLEARED:
        reasons.append(
            f"cleared at the parent {short_id(first.commit)}: the verifier does not see the failure"
        )
    if last.state is StepState.NO_VERDICT:
        reasons.append(f"no verdict at the repair {short_id(last.commit)} ({last.detail})")
    elif last.state is StepState.HELD:
        reasons.append(
            f"still held at the repair {short_id(last.commit)} (exit {last.exit_code}): "
            "the repair does not repair"
        )
    if expected is not None and set(expected) != set(changed):
        parts = []
        if unchanged := sorted(set(expected) - set(changed)):
            parts.append(f"expected but not changed: {', '.join(unchanged)}")
        if unexpected := sorted(set(changed) - set(expected)):
            parts.append(f"changed but not expected: {', '.join(unexpected)}")
        reasons.append(f"the changed files differ from --expect-files ({'; '.join(parts)})")
    return tuple(reasons)
