"""A decision as text for people and as JSON for programs. Pure.

Every string in a decision may come from the ledger, a verifier or git: it is
data, never instructions, so each one is sanitised here, on every output path,
before it is printed. Colour is added after sanitising, so only failgate's own
escapes ever reach a terminal.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from failgate_hooks.core import sanitize
from failgate_hooks.core.events import Problem
from failgate_hooks.core.gates import (
    Decision,
    DecisionKind,
    Gate,
    GateState,
    Relaxation,
    VerifierOutcome,
    VerifierResult,
)
from failgate_hooks.core.ids import short_id
from failgate_hooks.core.resolve import Resolution
from failgate_hooks.core.sanitize import clean_line, shown_ref
from failgate_hooks.render.next_steps import next_steps

JSON_SCHEMA_VERSION = 1
INDENT = "     "
# A verifier's tail is bounded where it is captured; this bounds the screen.
TAIL_LINES = 20

_LABELS = {
    GateState.OPEN: "OPEN",
    GateState.CLEARED: "CLEARED",
    GateState.CONFLICT: "CONFLICT",
    GateState.INVALID: "INVALID",
}
_COLORS = {
    "OPEN": "31",
    "CLEARED": "32",
    "CONFLICT": "35",
    "INVALID": "1;31",
    "RELAXED": "33",
    "PENDING": "33",
    "ERROR": "31",
    "WARNING": "33",
    "BLOCKED": "1;31",
    "ESCALATED": "1;35",
    "WARN": "1;33",
    "OK": "1;32",
}


# What to do when no protected revision was read, said after the count of accepted
# relaxations: how `check` comes to read one, and how to see the relaxations.
CHECK_ADVICE = (
    "for check to read a protected revision, set ledger_refs in the configuration (e.g. "
    '["refs/remotes/origin/main"], once a remote holds the default branch) or pass '
    "--ledger-rev; --verbose lists them"
)


def render_text(
    decision: Decision,
    *,
    color: bool = False,
    verbose: bool = False,
    unprotected_advice: str = CHECK_ADVICE,
) -> str:
    """The text: a header, one line per gate, relaxations, problems, the verdict.

    With no protected revision, the accepted relaxations are counted on one line,
    followed by `unprotected_advice`, unless `verbose` asks for each."""
    lines = [_header(decision)]
    for gate in decision.gates:
        if gate.state in _LABELS:
            lines.extend(_gate_lines(gate, color))
            lines.extend(_evidence_lines(gate, verbose))
    lines.extend(_summary(decision.gates))
    if verbose or decision.protected_read:
        lines.extend(_relaxation_line(r, color) for r in decision.relaxations)
    else:
        lines.extend(_unprotected_relaxation_lines(decision.relaxations, color, unprotected_advice))
    lines.extend(_problem_line("ERROR", p, color) for p in decision.errors)
    lines.extend(_problem_line("WARNING", p, color) for p in decision.warnings)
    lines.append(_verdict(decision, color))
    lines.extend(next_steps(decision))
    return "\n".join(lines)


def render_json(decision: Decision) -> str:
    """The JSON object; fields are only ever added."""
    doc: dict[str, Any] = {
        "schema_version": JSON_SCHEMA_VERSION,
        "trigger": decision.trigger,
        "commit": decision.commit,
        "ref": decision.ref,
        "environment": decision.environment,
        "decision": decision.decision.value,
        "exit_code": decision.exit_code,
        "counts": decision.counts,
        "gates": [_gate_json(g) for g in decision.gates],
        "relaxations": [
            {
                "event_id": r.event_id,
                "entity_key": r.entity_key,
                "kind": r.kind,
                "accepted": r.accepted,
                "what": r.what,
                "blocking": r.blocking,
            }
            for r in decision.relaxations
        ],
        "errors": [_problem_json(p) for p in decision.errors],
        "warnings": [_problem_json(p) for p in decision.warnings],
    }
    return _json_text(doc)


# --------------------------------------------------------------------------- text


def _header(decision: Decision) -> str:
    counts = decision.counts
    tally = f"{counts['open']} open / {counts['cleared']} cleared / {counts['conflict']} conflict"
    if counts["invalid"]:
        tally += f" / {counts['invalid']} invalid"
    ref = shown_ref(decision.ref) if decision.ref is not None else "(no ref)"
    where = f"-> {ref}"
    if decision.environment is not None:
        where += f', environment "{clean_line(decision.environment)}"'
    commit = short_id(clean_line(decision.commit)) or "(no commit)"
    return f'GATES for "{clean_line(decision.trigger)}" @ {commit} {where}: {tally}'


def _gate_lines(gate: Gate, color: bool) -> list[str]:
    """The gate's line and, unless it is cleared, why it is in that state."""
    head = f"{_paint(_LABELS[gate.state], color)} {clean_line(gate.entity_key)}"
    if gate.title:
        head += f" — {clean_line(gate.title)}"
    lines = [head]
    if gate.state is GateState.CLEARED:
        return lines
    if gate.problems:
        lines.extend(INDENT + clean_line(p.describe()) for p in gate.problems)
    else:
        lines.append(INDENT + clean_line(gate.reason))
    lines.extend(INDENT + clean_line(note) for note in gate.notes)
    if gate.verifier is not None:
        lines.extend(render_tail(gate.verifier.output_tail))
    return lines


def _evidence_lines(gate: Gate, verbose: bool) -> list[str]:
    """The statement that cleared a gate, one field per line; with `verbose`, those skipped."""
    result = gate.verifier
    if result is None:
        return []
    lines = []
    if gate.state is GateState.CLEARED and result.evidence:
        lines.append(INDENT + clean_line(f"{result.detail}:"))
        lines.extend(
            f"{INDENT}  {clean_line(name)}: {clean_line(value)}" for name, value in result.evidence
        )
    if verbose:
        lines.extend(INDENT + clean_line(why) for why in result.skipped_evidence)
    return lines


def render_tail(output: str) -> list[str]:
    """The last lines of a verifier's output, cleaned and quoted as `     | line`."""
    return [f"{INDENT}| {line}" for line in _tail(output)]


def _tail(output: str) -> list[str]:
    """The last lines of a verifier's output, each cleaned, blank ends dropped."""
    lines = [clean_line(line) for line in sanitize.clean(output).split("\n")]
    while lines and not lines[-1].strip():
        lines.pop()
    while lines and not lines[0].strip():
        lines.pop(0)
    return lines[-TAIL_LINES:]


def _summary(gates: Sequence[Gate]) -> list[str]:
    """One line counting the entities that are not gates here, when there are any."""
    states = [g.state for g in gates]
    parts = [
        f"{states.count(state)} {label}"
        for state, label in (
            (GateState.NOT_APPLICABLE, "not applicable"),
            (GateState.RETIRED, "retired"),
        )
        if state in states
    ]
    return [f"({', '.join(parts)})"] if parts else []


def _relaxation_line(relaxation: Relaxation, color: bool) -> str:
    if not relaxation.event_id:  # a change that is not an event: config, ref deletion
        label = "RELAXED" if relaxation.accepted else "PENDING"
        tail = "" if relaxation.accepted else " — only a relaxer may push it (config relaxers)"
        return f"{_paint(label, color)} {clean_line(relaxation.what)}{tail}"
    what = (
        f"({clean_line(relaxation.entity_key)}: {clean_line(relaxation.what or relaxation.kind)})"
    )
    event_id = clean_line(relaxation.event_id)
    if relaxation.accepted:
        return f"{_paint('RELAXED', color)} by {event_id} {what}"
    return (
        f"{_paint('PENDING', color)} {event_id} {what} — not yet in a protected revision: "
        "decided as if it were not there"
    )


def _unprotected_relaxation_lines(
    relaxations: Sequence[Relaxation], color: bool, advice: str
) -> list[str]:
    """Accepted relaxing events counted; pending ones (each blocks or warns) and every
    change that is not an event (a configuration change, a ref's deletion) listed.

    With no protected revision every relaxing event of the ledger is new: in a
    ledger of thousands of events, a line each would bury the verdict."""
    accepted = sum(1 for r in relaxations if r.accepted and r.event_id)
    lines = []
    if accepted:
        lines.append(
            f"{_paint('RELAXED', color)} {accepted:,} relaxing event(s) accepted: no protected "
            f"revision was read, so every one counts as new and none is listed; {advice}."
        )
    listed = (r for r in relaxations if not r.accepted or not r.event_id)
    lines.extend(_relaxation_line(r, color) for r in listed)
    return lines


def _problem_line(label: str, problem: Problem, color: bool) -> str:
    return f"{_paint(label, color)} {clean_line(problem.describe())}"


def verdict_line(decision: Decision) -> str:
    """The verdict alone, uncoloured (a step summary's heading)."""
    return _verdict(decision, color=False)


def _verdict(decision: Decision, color: bool) -> str:
    """The last line: what happens to the action, and what to do about it."""
    action = f'"{clean_line(decision.trigger)}"'
    gates = decision.gates

    def count(state: GateState, *, blocking: bool) -> int:
        """Gates in `state` that block (blocking=True) or only warn here."""
        return sum(1 for g in gates if g.state is state and (g.blocking if blocking else g.warning))

    if decision.decision is DecisionKind.REFUSED:
        ref = shown_ref(decision.ref) if decision.ref else "failgate's ref"
        text = (
            f"the update of {ref} is refused: {len(decision.errors)} problem(s), each above "
            "with what to do. The ledger is not at fault: there is nothing for failgate fsck "
            "to repair."
        )
        return f"{_paint('BLOCKED', color)}: {text}"
    if decision.decision is DecisionKind.INTEGRITY:
        parts = _counted(
            (len(decision.errors), "error(s)"),
            (count(GateState.INVALID, blocking=True), "invalid entity(ies)"),
        )
        text = f"ledger integrity: {parts}. Repair the ledger before {action} (failgate fsck)."
        return f"{_paint('BLOCKED', color)}: {text}"
    if decision.decision is DecisionKind.ESCALATED:
        n = count(GateState.CONFLICT, blocking=True)
        text = (
            f"{n} gate(s) in conflict. A person must settle each with an event that "
            f"follows all its heads before {action}."
        )
        return f"{_paint('ESCALATED', color)}: {text}"
    if decision.decision is DecisionKind.HELD:
        parts = _counted(
            (count(GateState.OPEN, blocking=True), "gate(s) still open"),
            (sum(1 for r in decision.relaxations if r.blocking), "relaxation(s) pending review"),
            joiner=" and ",
        )
        not_run = sum(1 for g in gates if g.blocking and _not_run(g))
        if not_run:
            parts += f" ({not_run} whose verifier was not run here)"
        return f"{_paint('BLOCKED', color)}: {parts}. Resolve them before {action}."
    warned = _counted(
        (count(GateState.OPEN, blocking=False), "gate(s) open"),
        (count(GateState.CONFLICT, blocking=False), "conflict(s)"),
        (count(GateState.INVALID, blocking=False), "invalid entity(ies)"),
        (sum(1 for r in decision.relaxations if r.warning), "relaxation(s) pending review"),
        (len(decision.warnings), "append-only violation(s)"),
    )
    if warned:
        text = f"{warned}, not blocking {_why_not_blocking(decision)}. {action} may proceed."
        return f"{_paint('WARN', color)}: {text}"
    if any(g.state is GateState.CLEARED for g in gates):
        return f"{_paint('OK', color)}: all gates cleared. {action} may proceed."
    return f"{_paint('OK', color)}: no gate applies. {action} may proceed."


def _not_run(gate: Gate) -> bool:
    return gate.verifier is not None and gate.verifier.outcome is VerifierOutcome.NOT_RUN


def _why_not_blocking(decision: Decision) -> str:
    if decision.policy.mode == "warn":
        return '(mode = "warn")'
    if not decision.enforcing:
        return f"on {shown_ref(decision.ref or '')} (not a protected ref)"
    # Enforcing, and still only warnings: open gates where no verifier runs.
    return "(no verifier runs here)"


def _counted(*items: tuple[int, str], joiner: str = ", ") -> str:
    return joiner.join(f"{n} {what}" for n, what in items if n)


def _paint(label: str, color: bool) -> str:
    """A label in its colour; labels are failgate's own text, never data."""
    return f"\x1b[{_COLORS[label]}m{label}\x1b[0m" if color else label


# --------------------------------------------------------------------------- json


def _gate_json(gate: Gate) -> dict[str, Any]:
    return {
        "entity_key": gate.entity_key,
        "state": gate.state.value,
        "blocking": gate.blocking,
        "warning": gate.warning,
        "status": gate.status.value if gate.status is not None else None,
        "title": gate.title,
        "reason": "; ".join((gate.reason, *gate.notes)),
        "event_ids": list(gate.event_ids),
        "verifier": verifier_json(gate.verifier) if gate.verifier is not None else None,
        "problems": [_problem_json(p) for p in gate.problems],
    }


def verifier_json(result: VerifierResult) -> dict[str, Any]:
    """A verifier's result as `--json` gives it, in a gate or from `try`."""
    return {
        "command": list(result.command),
        "exit_code": result.exit_code,
        "duration_s": result.duration_s,
        "cached": result.cached,
        "output_tail": result.output_tail,
        "outcome": result.outcome.value,
        "detail": result.detail,
        "evidence": dict(result.evidence) or None,
        "skipped_evidence": list(result.skipped_evidence),
    }


def _problem_json(problem: Problem) -> dict[str, Any]:
    return {
        "code": problem.code,
        "message": problem.message,
        "path": problem.path,
        "commit": problem.commit,
        "key": problem.key,
        "entity_key": problem.entity_key,
    }


# --------------------------------------------------------------------------- log


def log_lines(resolution: Resolution, gate: Gate | None, decision: Decision) -> list[str]:
    """`failgate log KEY`: events in resolution order, superseded and heads marked, what
    they resolve to, and the gate's state as `gates` decides it (`gate`, of `decision`)."""
    state = resolution.state
    title = clean_line(state.title or "(no title)")
    lines = [f"LOG {clean_line(resolution.entity_key)} — {title}"]
    replaced_by = _replaced_by(resolution)
    for event_id in resolution.order:
        event = resolution.events[event_id]
        mark = "*" if event_id in resolution.heads else " "
        status = event.status.value
        when = event.effective_at.isoformat().replace("+00:00", "Z")
        tags = []
        if event_id in resolution.dropped:
            tags.append(
                f"superseded by {', '.join(replaced_by.get(event_id, ['a pending event']))}"
            )
        if event_id in resolution.heads:
            tags.append("head")
        if event.evidence is not None:
            tags.append(f"{event.evidence.kind.value} evidence")
        by = f"  {event.recorded_by}" if event.recorded_by else ""
        suffix = f"  [{'; '.join(tags)}]" if tags else ""
        lines.append(clean_line(f"{mark} {event_id}  {status:<9}  {when}{by}{suffix}"))
        if event.note:
            lines.extend(f"{INDENT}| {clean_line(n)}" for n in event.note.splitlines())
    lines.append(clean_line(_state_line(resolution)))
    lines.extend(f"ERROR {clean_line(p.describe())}" for p in resolution.problems)
    if gate is not None:
        lines.append(_gate_state_line(gate, decision))
        if gate.blocking:
            lines.extend(next_steps(decision._replace(gates=(gate,), relaxations=(), errors=())))
    return lines


def _gate_state_line(gate: Gate, decision: Decision) -> str:
    """The gate's state for the decision's trigger and ref, and why."""
    where = shown_ref(decision.ref) if decision.ref is not None else "an unknown ref"
    effect = " (blocks)" if gate.blocking else " (warns)" if gate.warning else ""
    state = gate.state.value.replace("_", " ").upper()
    reason = "; ".join(clean_line(r) for r in (gate.reason, *gate.notes) if r)
    return f'GATE {state}{effect} for "{clean_line(decision.trigger)}" to {where}: {reason}'


def _replaced_by(resolution: Resolution) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for event in resolution.events.values():
        for old in event.replaces:
            out.setdefault(old, []).append(event.id)
    return out


def _state_line(resolution: Resolution) -> str:
    state = resolution.state
    parts = [f"status {state.status.value if state.status else '(none)'}"]
    parts.append(f"triggers {', '.join(state.triggers) if state.triggers else '(none)'}")
    if state.verification is not None:
        parts.append(f"verifier {' '.join(state.verification.command)}")
    else:
        parts.append("no verifier")
    scope = state.applies_to
    if scope is not None:
        for name in ("since", "paths", "refs", "environments"):
            value = getattr(scope, name)
            if value:
                parts.append(f"{name} {value if isinstance(value, str) else ', '.join(value)}")
    return f"RESOLUTION {resolution.outcome.value}: " + "; ".join(parts)


def log_json(resolution: Resolution, gate: Gate | None = None) -> str:
    """The same as one JSON object; `gate` is the gate's state as `gates --json` gives it."""
    replaced_by = _replaced_by(resolution)
    doc = {
        "schema_version": JSON_SCHEMA_VERSION,
        "entity_key": resolution.entity_key,
        "outcome": resolution.outcome.value,
        "heads": list(resolution.heads),
        "state": {
            "status": resolution.state.status.value if resolution.state.status else None,
            "title": resolution.state.title,
            "triggers": list(resolution.state.triggers or ()),
        },
        "events": [
            {
                "id": event_id,
                "status": resolution.events[event_id].status.value,
                "effective_at": resolution.events[event_id].effective_at.isoformat(),
                "recorded_by": resolution.events[event_id].recorded_by,
                "note": resolution.events[event_id].note,
                "follows": list(resolution.events[event_id].follows),
                "superseded": event_id in resolution.dropped,
                "superseded_by": replaced_by.get(event_id, []),
                "head": event_id in resolution.heads,
            }
            for event_id in resolution.order
        ],
        "errors": [_problem_json(p) for p in resolution.problems],
        "gate": _gate_json(gate) if gate is not None else None,
    }
    return _json_text(doc)


def _json_text(doc: dict[str, Any]) -> str:
    """`doc` sanitised, as `--json` prints it."""
    import json  # only `--json` loads the encoder: a plain check prints text

    # ASCII only: even a character the sanitiser let through reaches no terminal raw.
    return json.dumps(sanitize.clean_tree(doc), indent=2, ensure_ascii=True)
