"""`failgate ci`'s decision as text and JSON, with what it was compared against. Pure."""

from __future__ import annotations

import json

from failgate_hooks.core import sanitize
from failgate_hooks.core.ci import CiRun
from failgate_hooks.core.ids import short_id
from failgate_hooks.core.sanitize import clean_line, shown_ref
from failgate_hooks.render.text import render_json, render_text


def render_ci_text(run: CiRun, *, color: bool = False) -> str:
    """What was compared, then the text of the decision."""
    assert run.decision is not None
    lines = [f"CI {clean_line(run.target.source)}: {short_id(clean_line(run.head))} {against(run)}"]
    lines += [f"NOTE {clean_line(note)}" for note in run.notes]
    lines.append(render_text(run.decision, color=color))
    return "\n".join(lines)


def render_ci_json(run: CiRun) -> str:
    """The JSON object, with a `ci` field saying what was compared."""
    assert run.decision is not None
    doc = json.loads(render_json(run.decision))
    doc["ci"] = {
        "source": run.target.source,
        "head": run.head,
        "base": run.base,
        "base_label": run.target.base_label,
        "ref": run.target.ref,
        "notes": list(run.notes),
    }
    # Where a CI runner reads workflow commands, the printer writes it as none
    # (commands/output.py: sanitize.json_no_workflow_commands, the same value).
    return json.dumps(sanitize.clean_tree(doc), indent=2, ensure_ascii=True)


def against(run: CiRun) -> str:
    """What the commit was compared with and where it goes, for people, on one line."""
    if run.base:
        base = f"against {clean_line(run.target.base_label)} {short_id(clean_line(run.base))}"
    elif run.target.new_ref:
        base = "against nothing (a new ref)"
    else:
        base = "against a base this clone lacks"
    return f"{base} -> {shown_ref(run.target.ref) if run.target.ref else '(no ref)'}"
