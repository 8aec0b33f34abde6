"""Rendering a decision: golden text, the JSON fields, and text that is data."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

import pytest

from failgate_hooks.core.decide import decide
from failgate_hooks.core.events import Problem, Status
from failgate_hooks.core.gates import (
    Assessment,
    Context,
    Decision,
    GateState,
    Policy,
    Relaxation,
    VerifierOutcome,
    VerifierResult,
)
from failgate_hooks.render.next_steps import PREFIX as NEXT
from failgate_hooks.render.text import render_json, render_text

KEY = "deploy:mainnet:gas-budget"
TITLE = "Gas budget must scale with module count"
COMMAND = ("python", "checks/check_gas_budget.py")
HELD_AT = "9f2a1c4e" + "0" * 32
CLEARED_AT = "4d1e0b2a" + "0" * 32
MAIN = "refs/heads/main"
PROTECTED = ("refs/heads/main", "refs/heads/master", "refs/heads/release/*", "refs/tags/*")
POLICY = Policy(protected_refs=PROTECTED)


def item(
    state: GateState = GateState.OPEN,
    *,
    key: str = KEY,
    title: str | None = TITLE,
    reason: str = "needs verifier",
    commit: str = HELD_AT,
    notes: tuple[str, ...] = (),
    relaxations: tuple[Relaxation, ...] = (),
    problems: tuple[Problem, ...] = (),
    event_ids: tuple[str, ...] = ("20261129T230500Z-7f3a9c1e",),
    verifier: bool = True,
) -> Assessment:
    from failgate_hooks.core.events import Verification

    return Assessment(
        entity_key=key,
        state=state,
        reason=reason,
        title=title,
        status=Status.OBSERVED,
        event_ids=event_ids,
        commit=commit,
        verification=Verification(command=COMMAND) if verifier else None,
        relaxations=relaxations,
        notes=notes,
        problems=problems,
    )


def failed(tail: str = "budget 50M < required 120M", **kwargs: Any) -> VerifierResult:
    return VerifierResult(
        COMMAND, VerifierOutcome.FAILED, exit_code=1, duration_s=0.12, output_tail=tail, **kwargs
    )


PASSED = VerifierResult(COMMAND, VerifierOutcome.PASSED, exit_code=0, duration_s=0.08)


def decision(
    items: Iterable[Assessment],
    results: dict[str, VerifierResult] | None = None,
    *,
    context: Context | None = None,
    policy: Policy = POLICY,
    errors: Iterable[Problem] = (),
    history_errors: Iterable[Problem] = (),
    commit: str | None = None,
) -> Decision:
    return decide(
        items,
        results or {},
        context=context or Context("push", MAIN),
        policy=policy,
        errors=errors,
        history_errors=history_errors,
        commit=commit,
    )


def without_next(text: str) -> list[str]:
    """The lines up to the verdict: what to do next is tested on its own."""
    return [line for line in text.splitlines() if not line.startswith(NEXT)]


# --------------------------------------------------------------------------- golden text


def test_golden_held() -> None:
    got = render_text(decision([item()], {KEY: failed()}))
    assert got == (
        'GATES for "push" @ 9f2a1c4e0000 -> refs/heads/main: 1 open / 0 cleared / 0 conflict\n'
        "OPEN deploy:mainnet:gas-budget — Gas budget must scale with module count\n"
        "     verifier python checks/check_gas_budget.py exited 1 in 0.12 s\n"
        "     | budget 50M < required 120M\n"
        'BLOCKED: 1 gate(s) still open. Resolve them before "push".\n'
        "  next: `failgate try deploy:mainnet:gas-budget` runs deploy:mainnet:gas-budget's "
        "verifier on your work tree: fix and commit until it passes\n"
        "  next: or, if a person has checked this commit, `failgate confirm "
        "deploy:mainnet:gas-budget --commit 9f2a1c4e0000 --note WHAT`; if the risk is gone, "
        "`failgate expire deploy:mainnet:gas-budget --note WHY`: anyone may record either "
        "here; a server that holds authority takes it only from the default branch or from "
        "a relaxer"
    )


def test_golden_cleared() -> None:
    got = render_text(decision([item(commit=CLEARED_AT)], {KEY: PASSED}))
    assert got == (
        'GATES for "push" @ 4d1e0b2a0000 -> refs/heads/main: 0 open / 1 cleared / 0 conflict\n'
        "CLEARED deploy:mainnet:gas-budget — Gas budget must scale with module count\n"
        'OK: all gates cleared. "push" may proceed.'
    )


def test_unknown_ref_and_environment_in_the_header() -> None:
    got = render_text(decision([item()], context=Context("deploy", None, "mainnet")))
    assert got.splitlines()[0] == (
        'GATES for "deploy" @ 9f2a1c4e0000 -> (no ref), environment "mainnet": '
        "1 open / 0 cleared / 0 conflict"
    )
    assert got.splitlines()[2] == "     verifier python checks/check_gas_budget.py not run"
    assert without_next(got)[-1] == (
        "BLOCKED: 1 gate(s) still open (1 whose verifier was not run here). "
        'Resolve them before "deploy".'
    )


def test_not_applicable_and_retired_entities_are_counted_in_one_line() -> None:
    items = [
        item(GateState.NOT_APPLICABLE, key="a:one"),
        item(GateState.NOT_APPLICABLE, key="a:two"),
        item(GateState.RETIRED, key="a:three"),
    ]
    got = render_text(decision(items))
    assert got.splitlines() == [
        'GATES for "push" @ 9f2a1c4e0000 -> refs/heads/main: 0 open / 0 cleared / 0 conflict',
        "(2 not applicable, 1 retired)",
        'OK: no gate applies. "push" may proceed.',
    ]


def test_notes_and_a_long_tail_are_indented_under_the_gate() -> None:
    tail = "\n".join(f"line {n}" for n in range(30)) + "\n\n"
    note = "since 9f2a1c4 is not in this repository: applies (fail closed)"
    got = without_next(render_text(decision([item(notes=(note,))], {KEY: failed(tail)})))
    assert got[3] == f"     {note}"
    assert got[4] == "     | line 10"
    assert got[-2] == "     | line 29"


def test_conflict_escalates() -> None:
    reason = "heads a, b disagree on status: settle it with an event that follows all of them"
    got = without_next(render_text(decision([item(GateState.CONFLICT, reason=reason)])))
    assert got[0].endswith("0 open / 0 cleared / 1 conflict")
    assert got[1] == f"CONFLICT {KEY} — {TITLE}"
    assert got[2] == f"     {reason}"
    assert got[-1].startswith("ESCALATED: 1 gate(s) in conflict.")


def test_integrity_lists_each_error_on_its_own_line() -> None:
    errors = [
        Problem(code="unreadable", message="not valid TOML", path="ledger/x/a.toml"),
        Problem(
            code="append-only", message="event dropped", path="ledger/y/b.toml", commit="1" * 40
        ),
    ]
    bad = Problem(code="cycle", message="follows makes a cycle", key="follows", entity_key="k:x")
    items = [item(GateState.INVALID, key="k:x", title=None, problems=(bad,))]
    got = without_next(render_text(decision(items, errors=errors)))
    assert got[0].endswith("0 open / 0 cleared / 0 conflict / 1 invalid")
    assert got[1:] == [
        "INVALID k:x",
        f"     {bad.describe()}",
        f"ERROR {errors[0].describe()}",
        f"ERROR {errors[1].describe()}",
        "BLOCKED: ledger integrity: 2 error(s), 1 invalid entity(ies). "
        'Repair the ledger before "push" (failgate fsck).',
    ]


@pytest.mark.parametrize(
    ("context", "policy", "verdict"),
    [
        pytest.param(
            Context("push", "refs/heads/wip"), POLICY,
            'WARN: 1 gate(s) open, not blocking on refs/heads/wip (not a protected ref). '
            '"push" may proceed.',
            id="unprotected-ref",
        ),
        pytest.param(
            Context("push", MAIN), Policy(protected_refs=PROTECTED, mode="warn"),
            'WARN: 1 gate(s) open, not blocking (mode = "warn"). "push" may proceed.',
            id="mode-warn",
        ),
        pytest.param(
            Context("push", MAIN), Policy(protected_refs=PROTECTED, hold_open=False),
            'WARN: 1 gate(s) open, not blocking (no verifier runs here). "push" may proceed.',
            id="no-verifier-runs",
        ),
    ],
)  # fmt: skip
def test_warn_verdicts(context: Context, policy: Policy, verdict: str) -> None:
    got = render_text(decision([item()], {KEY: failed()}, context=context, policy=policy))
    assert got.splitlines()[-1] == verdict
    assert got.splitlines()[1].startswith("OPEN ")


def test_append_only_violation_on_an_unprotected_ref_warns() -> None:
    dropped = Problem(code="append-only", message="event dropped", path="ledger/a/b.toml")
    got = render_text(
        decision(
            [], context=Context("push", "refs/heads/wip"), history_errors=[dropped], commit=HELD_AT
        )
    ).splitlines()
    assert got[-2] == f"WARNING {dropped.describe()}"
    assert got[-1].startswith("WARN: 1 append-only violation(s), not blocking on refs/heads/wip")


def test_nothing_applies() -> None:
    got = render_text(decision([], commit=HELD_AT))
    assert got.splitlines()[-1] == 'OK: no gate applies. "push" may proceed.'


def relaxation(accepted: bool) -> Relaxation:
    return Relaxation(
        event_id="20261130T101500Z-0badf00d",
        entity_key=KEY,
        kind="expired",
        accepted=accepted,
        what="status expired",
    )


def test_relaxed_lines() -> None:
    items = [item(GateState.RETIRED, relaxations=(relaxation(True),))]
    got = render_text(decision(items)).splitlines()
    assert f"RELAXED by 20261130T101500Z-0badf00d ({KEY}: status expired)" in got
    assert got[-1] == 'OK: no gate applies. "push" may proceed.'


def test_pending_lines_and_verdict() -> None:
    items = [item(GateState.NOT_APPLICABLE, relaxations=(relaxation(False),))]
    got = without_next(render_text(decision(items)))
    assert got[-2] == (
        f"PENDING 20261130T101500Z-0badf00d ({KEY}: status expired) — not yet in a protected "
        "revision: decided as if it were not there"
    )
    assert got[-1] == 'BLOCKED: 1 relaxation(s) pending review. Resolve them before "push".'


def test_with_nothing_protected_accepted_relaxations_are_counted_and_pending_ones_listed() -> None:
    pending = relaxation(False)._replace(event_id="20261130T101600Z-0badf00e")
    items = [
        item(GateState.RETIRED, relaxations=(relaxation(True),)),
        item(GateState.NOT_APPLICABLE, key="b:c", relaxations=(pending,)),
    ]
    unprotected = decision(items)._replace(protected_read=False)
    got = render_text(unprotected, unprotected_advice="ADVICE").splitlines()
    relaxed = [line for line in got if line.startswith(("RELAXED", "PENDING"))]
    assert relaxed == [
        "RELAXED 1 relaxing event(s) accepted: no protected revision was read, so every one "
        "counts as new and none is listed; ADVICE.",
        f"PENDING 20261130T101600Z-0badf00e ({KEY}: status expired) — not yet in a protected "
        "revision: decided as if it were not there",
    ]
    listed = render_text(unprotected, verbose=True).splitlines()
    assert f"RELAXED by 20261130T101500Z-0badf00d ({KEY}: status expired)" in listed


def test_with_nothing_protected_an_accepted_change_that_is_no_event_is_listed() -> None:
    """Only relaxing events can be thousands: a ref's deletion or a configuration
    change is one line, and what it loosens is the point of listing it."""
    deletion = Relaxation("", "", "ref_deletion", True, "deletion of refs/heads/release/1: X")
    unprotected = decision([item(GateState.RETIRED, relaxations=(relaxation(True),))])
    unprotected = unprotected._replace(
        protected_read=False, relaxations=(*unprotected.relaxations, deletion)
    )
    got = render_text(unprotected, unprotected_advice="ADVICE").splitlines()
    relaxed = [line for line in got if line.startswith("RELAXED")]
    assert relaxed == [
        "RELAXED 1 relaxing event(s) accepted: no protected revision was read, so every one "
        "counts as new and none is listed; ADVICE.",
        "RELAXED deletion of refs/heads/release/1: X",
    ]


def test_open_gate_and_pending_relaxation_in_one_verdict() -> None:
    items = [item(relaxations=(relaxation(False),))]
    got = without_next(render_text(decision(items, {KEY: failed()})))
    assert got[-1] == (
        "BLOCKED: 1 gate(s) still open and 1 relaxation(s) pending review. "
        'Resolve them before "push".'
    )


def test_colour_only_when_asked() -> None:
    held = decision([item()], {KEY: failed()})
    assert "\x1b" not in render_text(held)
    coloured = render_text(held, color=True)
    assert "\x1b[31mOPEN\x1b[0m" in coloured
    assert "\x1b[1;31mBLOCKED\x1b[0m" in coloured


# --------------------------------------------------------------------------- json


def test_json_fields() -> None:
    items = [item(relaxations=(relaxation(True),)), item(GateState.RETIRED, key="b:retired")]
    doc = json.loads(render_json(decision(items, {KEY: failed()})))
    assert {
        "schema_version", "trigger", "commit", "ref", "environment", "decision", "counts",
        "gates", "relaxations", "errors",
    } <= doc.keys()  # fmt: skip
    assert doc["schema_version"] == 1
    assert (doc["trigger"], doc["commit"], doc["ref"], doc["environment"]) == (
        "push",
        HELD_AT,
        MAIN,
        None,
    )
    assert doc["decision"] == "held"
    assert doc["counts"] == {"open": 1, "cleared": 0, "conflict": 0, "invalid": 0}
    gate = doc["gates"][1]
    assert {
        "entity_key", "state", "blocking", "status", "title", "reason", "event_ids", "verifier",
    } <= gate.keys()  # fmt: skip
    assert (gate["entity_key"], gate["state"], gate["blocking"], gate["status"]) == (
        KEY,
        "open",
        True,
        "observed",
    )
    assert gate["event_ids"] == ["20261129T230500Z-7f3a9c1e"]
    assert gate["reason"] == "verifier python checks/check_gas_budget.py exited 1 in 0.12 s"
    assert {"command", "exit_code", "duration_s", "cached", "output_tail"} <= gate[
        "verifier"
    ].keys()
    assert gate["verifier"]["command"] == list(COMMAND)
    assert gate["verifier"]["exit_code"] == 1
    assert doc["gates"][0]["verifier"] is None
    assert doc["relaxations"] == [
        {
            "event_id": "20261130T101500Z-0badf00d",
            "entity_key": KEY,
            "kind": "expired",
            "accepted": True,
            "what": "status expired",
            "blocking": False,
        }
    ]


def test_json_errors_and_decisions() -> None:
    broken = Problem(code="unreadable", message="not valid TOML", path="ledger/x.toml")
    doc = json.loads(render_json(decision([], errors=[broken], commit=HELD_AT)))
    assert doc["decision"] == "integrity"
    assert (
        doc["errors"][0].items()
        >= {
            "code": "unreadable",
            "message": "not valid TOML",
            "path": "ledger/x.toml",
            "commit": None,
        }.items()
    )


def test_a_refused_update_of_failgate_s_own_ref_is_its_own_kind_not_the_ledger_s() -> None:
    from failgate_hooks.app.evidence_update import judge_other_failgate_ref
    from failgate_hooks.core.sanitize import clean_line, shown_ref

    ref = "refs/failgate/remotes/o\x07/evidence"  # sanitised wherever it is shown
    shown = shown_ref(ref)  # escaped where a line names the ref
    assert shown == "$'refs/failgate/remotes/o\\x07/evidence'"
    refused = judge_other_failgate_ref(ref, "0" * 40, "1" * 40)
    text = render_text(refused)
    assert "\x07" not in text and "ledger" not in text.replace("The ledger is not at", "")
    lines = text.splitlines()
    assert lines[1].startswith(f"ERROR {clean_line(ref)}: {shown} is failgate's")
    assert lines[2] == (
        f"BLOCKED: the update of {shown} is refused: 1 problem(s), each above with what to "
        "do. The ledger is not at fault: there is nothing for failgate fsck to repair."
    )
    assert lines[3].startswith(f"{NEXT}failgate's refs move only as failgate writes them")
    doc = json.loads(render_json(refused))
    assert (doc["decision"], doc["exit_code"]) == ("refused", 4)
    assert [(e["code"], e["path"]) for e in doc["errors"]] == [
        ("failgate-ref", ref.replace("\x07", ""))  # located at the ref, never "the ledger"
    ]
    assert judge_other_failgate_ref(ref, "1" * 40, "0" * 40).decision == "allowed"  # a deletion


def test_json_is_ascii_and_keeps_ordinary_non_ascii_text() -> None:
    title = "Gasbudget für Module — größer"
    raw = render_json(decision([item(title=title)]))
    assert raw.isascii()
    assert json.loads(raw)["gates"][0]["title"] == title


def test_json_notes_join_the_reason() -> None:
    note = "since 9f2a1c4 is not in this repository: applies (fail closed)"
    doc = json.loads(render_json(decision([item(notes=(note,))], {KEY: failed()})))
    assert doc["gates"][0]["reason"].endswith(f"; {note}")


# --------------------------------------------------------------------------- text that is data

HOSTILE = "\x1b[31m red \x1b]0;pwned\x07 \u202e evil \r back \x9b31m"
FORBIDDEN = ("\x1b", "\x07", "\u202e", "\r", "\x9b", "0;pwned")


def hostile_decision() -> Decision:
    bad_problem = Problem(code="x" + HOSTILE, message=HOSTILE, path="ledger/" + HOSTILE)
    items = [
        item(
            key="k:open" + HOSTILE,
            title=HOSTILE,
            notes=(HOSTILE,),
            event_ids=("e1" + HOSTILE,),
            relaxations=(
                Relaxation("e2" + HOSTILE, "k:open" + HOSTILE, HOSTILE, False, what=HOSTILE),
                Relaxation("e3" + HOSTILE, "k:open" + HOSTILE, HOSTILE, True, what=HOSTILE),
            ),
        ),
        item(GateState.CONFLICT, key="k:conflict", title=HOSTILE, reason=HOSTILE),
        item(GateState.INVALID, key="k:invalid", title=HOSTILE, problems=(bad_problem,)),
    ]
    result = VerifierResult(
        ("python", HOSTILE),
        VerifierOutcome.FAILED,
        exit_code=1,
        duration_s=0.1,
        output_tail=f"ok\n{HOSTILE}\n{HOSTILE}",
        detail=HOSTILE,
    )
    return decide(
        items,
        {"k:open" + HOSTILE: result},
        context=Context("push" + HOSTILE, "refs/heads/" + HOSTILE, HOSTILE),
        policy=Policy(protected_refs=PROTECTED, block_on="all"),
        errors=[bad_problem],
        history_errors=[bad_problem],
    )


def strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item_ in value.items():
            yield key
            yield from strings(item_)
    elif isinstance(value, list):
        for item_ in value:
            yield from strings(item_)


@pytest.mark.parametrize("color", [False, True], ids=["plain", "colour"])
def test_hostile_text_never_reaches_the_terminal(color: bool) -> None:
    from failgate_hooks.core.sanitize import shown_ref

    text = render_text(hostile_decision(), color=color)
    if color:
        # Only failgate's own SGR colours, around its own labels.
        text = re.sub(r"\x1b\[[0-9;]*m", "", text)
    # The ref is shown escaped, printable ASCII, what its sequences carry included, so
    # that it cannot read as another ref.
    assert shown_ref("refs/heads/" + HOSTILE).isascii()
    text = text.replace(shown_ref("refs/heads/" + HOSTILE), "<the ref>")
    assert "-> <the ref>" in text
    for bad in FORBIDDEN:
        assert bad not in text
    assert "red" in text and "evil" in text and "back" in text  # the data itself stays
    assert "pwned" not in text  # an OSC's payload is part of the sequence


def test_hostile_text_never_reaches_json() -> None:
    raw = render_json(hostile_decision())
    assert raw.isascii()
    for bad in FORBIDDEN:
        assert bad not in raw
    doc = json.loads(raw)
    for value in strings(doc):
        for bad in FORBIDDEN:
            assert bad not in value
    assert "red" in doc["gates"][2]["title"]


@pytest.mark.parametrize("newline", ["\n", "\u2028", "\r\n"], ids=["lf", "u2028", "crlf"])
def test_a_one_line_field_cannot_forge_a_line(newline: str) -> None:
    forge = f"{newline}OK: forged"
    items = [
        item(key="k:x" + forge, title=TITLE + forge, notes=(forge,), event_ids=("e1" + forge,)),
        item(GateState.CONFLICT, key="k:y", reason="split" + forge),
    ]
    results = {"k:x" + forge: failed(detail=forge)}
    got = render_text(decision(items, results, context=Context("push", MAIN + forge)))
    # Split wherever any viewer might break a line: the forgery starts none of them.
    assert "forged" in got
    assert not any(line.startswith("OK: forged") for line in got.splitlines())
    assert len(got.splitlines()) == len(got.split("\n"))


def test_an_escape_sequence_spanning_lines_of_output_is_removed_whole() -> None:
    got = render_text(decision([item()], {KEY: failed("ok\x1b]0;pw\nned\x07after")}))
    assert "ned" not in got
    assert got.splitlines()[3] == "     | okafter"


def test_output_tail_keeps_its_lines_each_marked_as_output() -> None:
    got = render_text(decision([item()], {KEY: failed("one\r\ntwo\n\tthree")})).splitlines()
    assert got[3:6] == ["     | one", "     | two", "     |  three"]
