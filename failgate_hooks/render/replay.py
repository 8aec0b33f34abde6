"""A replay's report as text, as JSON and as a Markdown receipt. Pure."""

from __future__ import annotations

import json
import shlex
from typing import Any

from failgate_hooks.core import sanitize
from failgate_hooks.core.ids import short_id
from failgate_hooks.core.replay import ReplayReport, ReplayStep, StepState
from failgate_hooks.core.sanitize import clean_line
from failgate_hooks.render import markdown

JSON_SCHEMA_VERSION = 1
OK_VERDICT = "REPLAY OK: held at parent, cleared at repair"

_LABELS = {
    StepState.HELD: "HELD",
    StepState.CLEARED: "CLEARED",
    StepState.NO_VERDICT: "NO VERDICT",
}


def _short(commit: str) -> str:
    return short_id(clean_line(commit))


def _exit(step: ReplayStep) -> str:
    return "-" if step.exit_code is None else str(step.exit_code)


def _verdict(report: ReplayReport) -> str:
    return OK_VERDICT if report.ok else f"REPLAY FAILED: {clean_line(report.reason or '')}"


def render_replay_text(report: ReplayReport) -> str:
    """The replay's text: a header, one line per commit oldest first, the repair, the verdict."""
    lines = [
        f"REPLAY {clean_line(report.entity_key)} over "
        f"{_short(report.parent)}..{_short(report.repair)}: {len(report.steps)} commit(s), "
        f"verifier {clean_line(shlex.join(report.command))} "
        f"from {clean_line(report.ledger_rev_label)} "
        f"@ {_short(report.ledger_rev)}"
    ]
    for step in report.steps:
        lines.append(
            f"{_short(step.commit)}  {_LABELS[step.state]}  "
            f"exit {_exit(step)} in {step.duration_s:.2f} s  {clean_line(step.subject)}"
        )
    lines.append(f"repair: {clean_line(report.author)} {clean_line(report.date)}")
    changed = ", ".join(clean_line(path) for path in report.changed_files) or "(none)"
    lines.append(f"changed: {changed}")
    lines.append(_verdict(report))
    return "\n".join(lines)


def render_replay_json(report: ReplayReport) -> str:
    """The replay's JSON object: the text's facts, and a few more; fields are only ever added."""
    doc: dict[str, Any] = {
        "schema_version": JSON_SCHEMA_VERSION,
        "ok": report.ok,
        "entity_key": report.entity_key,
        "title": report.title,
        "trigger": report.trigger,
        "parent": report.parent,
        "repair": report.repair,
        "ledger_rev": report.ledger_rev,
        "command": list(report.command),
        "pinned_files": [{"path": path, "blob": oid} for path, oid in report.pinned],
        "timeout_s": report.timeout_s,
        "sandbox": report.isolation or "none",
        "steps": [
            {
                "commit": step.commit,
                "state": step.state.value,
                "exit_code": step.exit_code,
                "duration_s": round(step.duration_s, 3),
                "subject": step.subject,
                "detail": step.detail,
            }
            for step in report.steps
        ],
        "changed_files": list(report.changed_files),
        "expect_files": None if report.expect_files is None else list(report.expect_files),
        "author": report.author,
        "date": report.date,
        "reason": report.reason,
        "failgate_version": report.failgate_version,
    }
    # ASCII only: even a character the sanitiser let through reaches no terminal raw.
    return json.dumps(sanitize.clean_tree(doc), indent=2, ensure_ascii=True)


def render_receipt(report: ReplayReport) -> str:
    """A Markdown receipt: what was replayed, with which verifier, and what each commit gave."""
    facts = [
        ("entity", f"{_cell(report.entity_key)} {markdown.text(report.title)}"),
        ("trigger", _cell(report.trigger)),
        ("parent", _cell(report.parent)),
        ("repair", _cell(report.repair)),
        ("repair author", _cell(report.author)),
        ("repair date", _cell(report.date)),
        ("ledger revision", f"{_cell(report.ledger_rev)} (named {_cell(report.ledger_rev_label)})"),
        ("verifier argv", _cell(json.dumps(list(report.command)))),
        ("pinned files", _pinned(report)),
        ("timeout", f"{report.timeout_s:g} s"),
        ("sandbox", _cell(report.isolation) if report.isolation else "none: unsandboxed"),
        ("failgate version", _cell(report.failgate_version)),
    ]
    lines = [
        f"# failgate replay receipt: {markdown.code(report.entity_key)}",
        "",
        f"**{markdown.text(_verdict(report))}**",
        "",
        "| | |",
        "|---|---|",
        *(f"| {name} | {cell} |" for name, cell in facts),
        "",
        "## Steps, oldest first",
        "",
        "| commit | state | exit | duration | subject |",
        "|---|---|---|---|---|",
    ]
    for step in report.steps:
        state = _LABELS[step.state]
        if step.detail:
            state += f": {markdown.text(step.detail)}"
        lines.append(
            f"| {_cell(step.commit)} | {state} | {_exit(step)} | "
            f"{step.duration_s:.2f} s | {markdown.text(step.subject)} |"
        )
    lines += ["", "## Files changed between parent and repair", ""]
    lines += [f"- {markdown.code(path)}" for path in report.changed_files] or ["(none)"]
    if report.expect_files is not None:
        expected = ", ".join(markdown.code(p) for p in report.expect_files) or "(none)"
        lines += ["", f"Expected: {expected}"]
    for name, step in (("parent", report.steps[0]), ("repair", report.steps[-1])):
        output = markdown.fenced(step.output_tail, empty="(no output)")
        lines += ["", f"## Verifier output at the {name}", "", *output]
    return "\n".join(lines) + "\n"


def _pinned(report: ReplayReport) -> str:
    pinned = [f"{_cell(path)} @ blob {_cell(oid)}" for path, oid in report.pinned]
    return ", ".join(pinned) or "(none)"


def _cell(value: str) -> str:
    """Data as a code span inside a table cell."""
    return markdown.code(value, in_table=True)
