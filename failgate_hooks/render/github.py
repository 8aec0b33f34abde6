"""`failgate ci`'s decision as GitHub Actions reads it: workflow commands and a step summary.

Pure. Everything printed there may come from the ledger, a verifier or git, so
it is sanitised and escaped: a command's message and properties are escaped as
the runner unescapes them, and each line of its message written so that the
runner reads no command in it (`sanitize.no_workflow_commands`: no legacy `##[`,
no data at a line's start `::`); the summary's Markdown through
render/markdown.py; and free text goes between `::stop-commands::` markers. The
commands built here are the only lines commands/output.py writes as they are:
every other line, the fenced text too, goes through its neutraliser there. No
line of it can forge a workflow command.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence

from failgate_hooks.core import sanitize
from failgate_hooks.core.ci import CiRun
from failgate_hooks.core.errors import FailgateError
from failgate_hooks.core.events import entity_folder
from failgate_hooks.core.gates import Decision, Gate, GateState, Relaxation
from failgate_hooks.core.ids import short_id
from failgate_hooks.render import markdown
from failgate_hooks.render.ci import against
from failgate_hooks.render.next_steps import PREFIX, next_steps
from failgate_hooks.render.text import render_tail, verdict_line

RELAXED_NOTE = (
    "accepted: in CI the review is the authority, so an owner of what it changes (the "
    "ledger folder, the configuration, a verifier's pinned files) must review it (CODEOWNERS)"
)
_LABELS = {GateState.OPEN: "OPEN", GateState.CONFLICT: "CONFLICT", GateState.INVALID: "INVALID"}


# --------------------------------------------------------------------------- workflow commands


def escape_data(text: str) -> str:
    """A workflow command's message: %, CR and LF escaped as the runner unescapes them."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value: also `:` and `,`, which end a property."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_command(kind: str, lines: Sequence[str], *, file: str | None = None) -> str:
    """`::error title=failgate::…` (or warning): each line sanitised, all of it escaped."""
    props = []
    # A path holding `##[` cannot be written whole (the runner unescapes no `[`): the
    # annotation then points at no file, and its message still names the path.
    if file and sanitize.LEGACY_COMMAND not in file:
        props.append(f"file={escape_property(sanitize.clean_line(file))}")
    props.append("title=failgate")
    # Each line is one field: a newline inside one never starts another line.
    message = "\n".join(sanitize.no_workflow_commands(sanitize.clean_line(line)) for line in lines)
    return f"::{kind} {','.join(props)}::{escape_data(message)}"


def stop_commands_fence() -> tuple[str, str]:
    """The two lines free text is printed between so that the runner reads no command in
    it: `::stop-commands::TOKEN` and `::TOKEN::`. (The text itself is also written as no
    command, by the printer: should the runner ever read the fence otherwise.)"""
    # A fresh random token: text from the ledger cannot guess it to resume commands.
    token = secrets.token_hex(16)
    return f"::stop-commands::{token}", f"::{token}::"


def annotation_lines(decision: Decision, ledger_dir: str = "ledger") -> list[str]:
    """One command per blocking or warning gate and problem, and one per relaxation, each
    pointing at the event file it comes from (GitHub shows it on that file in the diff)."""
    out = []
    for gate in decision.gates:
        if gate.blocking or gate.warning:
            kind = "error" if gate.blocking else "warning"
            latest = gate.event_ids[-1] if gate.event_ids else None
            file = next((p.path for p in gate.problems if p.path), None)
            if file is None and latest is not None:
                file = event_file(ledger_dir, gate.entity_key, latest)
            out.append(workflow_command(kind, _gate_message(gate), file=file))
    for relaxation in decision.relaxations:
        kind = "error" if relaxation.blocking else "warning"
        file = None
        if relaxation.event_id:
            file = event_file(ledger_dir, relaxation.entity_key, relaxation.event_id)
        out.append(workflow_command(kind, _relaxation_message(relaxation), file=file))
    for problem in decision.errors:
        out.append(workflow_command("error", [problem.describe()], file=problem.path))
    for problem in decision.warnings:
        out.append(workflow_command("warning", [problem.describe()], file=problem.path))
    return out


def _gate_message(gate: Gate) -> list[str]:
    """The gate's line, why it is in that state, and its verifier's last lines."""
    head = f"{_LABELS.get(gate.state, gate.state.value.upper())} {gate.entity_key}"
    if gate.title:
        head += f" — {gate.title}"
    lines = [head]
    lines += [p.describe() for p in gate.problems] or [gate.reason]
    lines += list(gate.notes)
    if gate.verifier is not None:
        lines += [line.strip() for line in render_tail(gate.verifier.output_tail)]
    return lines


def event_file(ledger_dir: str, entity_key: str, event_id: str) -> str:
    """The repository path of an event's file."""
    return f"{ledger_dir}/{entity_folder(entity_key)}/{event_id}.toml"


def _relaxation_message(relaxation: Relaxation) -> list[str]:
    if not relaxation.event_id:  # a change that is not an event: config, ref deletion
        head = f"{'RELAXED' if relaxation.accepted else 'PENDING'} {relaxation.what}"
    else:
        what = f"({relaxation.entity_key}: {relaxation.what or relaxation.kind})"
        label = "RELAXED by" if relaxation.accepted else "PENDING"
        head = f"{label} {relaxation.event_id} {what}"
    note = [f"note: {relaxation.note}"] if relaxation.note else []
    if relaxation.accepted:
        return [head, *note, RELAXED_NOTE]
    return [f"{head}: not yet in a protected revision", *note]


# --------------------------------------------------------------------------- step summary


def step_summary(run: CiRun) -> str:
    """The Markdown for $GITHUB_STEP_SUMMARY: the gates, the relaxations, the verdict."""
    decision = run.decision
    assert decision is not None
    verdict = verdict_line(decision)
    label = verdict.split(":", 1)[0]
    text = markdown.text
    lines = [
        f"## failgate: {text(label)}",
        "",
        f"{markdown.code(short_id(run.head))} {text(against(run))} ({text(run.target.source)})",
        "",
    ]
    if decision.gates:
        lines += ["| state | gate | title | why |", "|---|---|---|---|"]
        for gate in decision.gates:
            state = gate.state.value + (" (blocking)" if gate.blocking else "")
            state += " (warning)" if gate.warning else ""
            why = "; ".join((gate.reason, *gate.notes))
            cells = (state, gate.entity_key, gate.title or "", why)
            lines.append("| " + " | ".join(text(cell) for cell in cells) + " |")
    else:
        lines.append("No entity in the ledger.")
    if decision.relaxations:
        lines += ["", "### Relaxations", ""]
        for relaxation in decision.relaxations:
            item = _relaxation_message(relaxation)[0]
            if relaxation.note:
                item += f" — note: {relaxation.note}"
            lines.append(f"- {text(item)}")
        lines += ["", text(RELAXED_NOTE)]
    for title, problems in (("Errors", decision.errors), ("Warnings", decision.warnings)):
        if problems:
            lines += ["", f"### {title}", ""]
            lines += [f"- {text(p.describe())}" for p in problems]
    if run.notes:
        lines += [""] + [f"- {text(note)}" for note in run.notes]
    lines += ["", f"**{text(verdict)}**", ""]
    steps = [step.removeprefix(PREFIX) for step in next_steps(decision)]
    if steps:
        lines += ["### What to do next", "", *(f"- {text(step)}" for step in steps), ""]
    return "\n".join(lines)


def error_summary(error: FailgateError) -> str:
    """The step summary when failgate could not decide."""
    lines = ["## failgate: could not decide", "", markdown.text(error.message)]
    if error.hint:
        lines += ["", f"hint: {markdown.text(error.hint)}"]
    return "\n".join([*lines, ""])
