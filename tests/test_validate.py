"""The event format: every rule broken once gives its named error."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
import tomli_w

from failgate_hooks.core.events import AppliesTo, Event
from failgate_hooks.core.validate import parse_event, read_event

EID = "20261129T230500Z-7f3a9c1e"
PATH = f"ledger/deploy/mainnet/gas-budget/{EID}.toml"
KEY = "deploy:mainnet:gas-budget"
C40 = "9f2a1c4e" * 5
OTHER_ID = "20261129T230501Z-00000001"


def valid_doc() -> dict[str, Any]:
    return {
        "schema": 1,
        "id": EID,
        "entity_key": KEY,
        "status": "observed",
        "follows": [],
        "effective_at": dt.datetime(2026, 11, 29, 23, 5, tzinfo=dt.UTC),
        "title": "Gas budget must scale with module count",
        "triggers": ["push", "deploy"],
        "supersedes": [],
        "retracts": [],
        "recorded_by": "Ada <ada@example.org>",
        "note": "six modules, budget sized for two and a half",
        "applies_to": {
            "since": C40,
            "paths": ["deploy/**"],
            "refs": ["refs/heads/main", "refs/heads/release/*"],
            "environments": ["mainnet"],
        },
        "verification": {
            "command": ["python", "checks/check_gas_budget.py"],
            "files": ["checks/check_gas_budget.py"],
            "timeout_s": 120,
            "inputs": ["deploy/*.json"],
            "env_pass": ["NODE_OPTIONS"],
            "workdir": "checkout",
        },
        "evidence": {
            "kind": "command",
            "commit": C40,
            "exit_code": 1,
            "output_tail": "budget 50M < required 120M",
        },
    }


def parse(doc: dict[str, Any], path: str = PATH) -> tuple[Event | None, list[str]]:
    event, problems = parse_event(tomli_w.dumps(doc).encode(), path, entity_key=KEY)
    return event, [f"{p.key}: {p.message}" for p in problems]


def test_the_design_example_is_valid() -> None:
    event, problems = parse(valid_doc())
    assert problems == []
    assert event is not None
    assert event.verification is not None
    assert event.verification.command == ("python", "checks/check_gas_budget.py")
    assert event.applies_to == AppliesTo(
        since=C40,
        paths=("deploy/**",),
        refs=("refs/heads/main", "refs/heads/release/*"),
        environments=("mainnet",),
    )


def _set(path: str, value: Any) -> Any:
    def mutate(doc: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target = doc
        for p in parents:
            target = target[p]
        if value is _DELETE:
            del target[last]
        else:
            target[last] = value

    return mutate


_DELETE = object()

BROKEN = [
    ("missing schema", _set("schema", _DELETE), "schema: required key is missing"),
    ("schema as string", _set("schema", "1"), "schema: expected the integer 1"),
    ("newer schema", _set("schema", 2), "schema: schema 2 is newer than this failgate reads (1): upgrade"),
    ("missing id", _set("id", _DELETE), "id: required key is missing"),
    ("bad id format", _set("id", "2026-11-29-abc"), "id: expected <YYYYMMDDTHHMMSSZ>-<8 lowercase hex>"),
    ("uppercase hex id", _set("id", "20261129T230500Z-7F3A9C1E"), "id: expected <YYYYMMDDTHHMMSSZ>"),
    ("id differs from stem", _set("id", "20261129T230500Z-00000000"), "id: must equal the file name's stem"),
    ("missing entity_key", _set("entity_key", _DELETE), "entity_key: required key is missing"),
    ("bad entity key", _set("entity_key", "Deploy:Main"), "entity_key: expected segments of"),
    ("entity key with slash", _set("entity_key", "deploy/mainnet"), "entity_key: expected segments of"),
    ("key not matching folder", _set("entity_key", "deploy:testnet:gas-budget"), "entity_key: must match its folder"),
    ("missing status", _set("status", _DELETE), "status: required key is missing"),
    ("unknown status", _set("status", "fixed"), "status: expected one of observed, diagnosed"),
    ("missing effective_at", _set("effective_at", _DELETE), "effective_at: required key is missing"),
    ("local datetime", _set("effective_at", dt.datetime(2026, 11, 29, 23, 5)), "effective_at: expected a TOML offset date-time"),
    ("date string", _set("effective_at", "2026-11-29"), "effective_at: expected a TOML offset date-time"),
    ("unknown top-level key", _set("severity", "high"), "severity: unknown key"),
    ("follows as string", _set("follows", EID), "follows: expected a list of strings, got a string"),
    ("follows bad id", _set("follows", ["abc"]), "follows[0]: expected an event id"),
    ("supersedes self", _set("supersedes", [EID]), "supersedes: an event cannot name itself"),
    ("retracts bad id", _set("retracts", [42]), "retracts[0]: expected a string, got an integer"),
    ("retracts a stem with a space", _set("retracts", ["2026-01-01 note"]), "retracts[0]: expected an event id like 20261129T230500Z-7f3a9c1e, or the file name's stem"),
    ("retracts a stem of 101", _set("retracts", ["a" * 101]), "retracts[0]: expected an event id"),
    ("retracts a stem not ASCII", _set("retracts", ["oop\u0455"]), "retracts[0]: expected an event id"),
    ("retracts a stem with a newline", _set("retracts", ["oops\n"]), "retracts[0]: expected an event id"),
    ("retracts a path", _set("retracts", ["sub/oops"]), "retracts[0]: expected an event id"),
    ("retracts an empty stem", _set("retracts", [""]), "retracts[0]: expected an event id"),
    ("follows a stem", _set("follows", ["oops"]), "follows[0]: expected an event id like 20261129T230500Z-7f3a9c1e, got 'oops'"),
    ("supersedes a stem", _set("supersedes", ["oops"]), "supersedes[0]: expected an event id like 20261129T230500Z-7f3a9c1e, got 'oops'"),
    ("first event without title", _set("title", _DELETE), "title: required on an entity's first event"),
    ("first event without triggers", _set("triggers", _DELETE), "triggers: required on an entity's first event"),
    ("empty triggers", _set("triggers", []), "triggers: must not be empty"),
    ("triggers as string", _set("triggers", "push"), "triggers: expected a list of strings"),
    ("title not a string", _set("title", 5), "title: expected a string, got an integer"),
    ("unknown applies_to key", _set("applies_to.branch", "main"), "applies_to.branch: unknown key"),
    ("short since", _set("applies_to.since", "9f2a1c4"), "applies_to.since: expected a full commit id"),
    ("symbolic since", _set("applies_to.since", "HEAD~1"), "applies_to.since: expected a full commit id"),
    ("paths as string", _set("applies_to.paths", "deploy/**"), "applies_to.paths: expected a list of strings"),
    ("absolute path glob", _set("applies_to.paths", ["/etc/**"]), "applies_to.paths[0]: expected a relative path glob"),
    ("bad glob", _set("applies_to.refs", ["refs/heads/[main"]), "applies_to.refs[0]: not a valid wildmatch glob"),
    # A push names its destination in full: a short name matched none, and turned the gate off.
    ("short ref name", _set("applies_to.refs", ["main"]), "applies_to.refs[0]: expected a full ref name starting with refs/, got 'main': a short name matches no ref, so write refs/heads/main for branches, or refs/tags/main for tags"),
    ("short ref glob", _set("applies_to.refs", ["refs/heads/main", "release/*"]), "applies_to.refs[1]: expected a full ref name starting with refs/, got 'release/*': a short name matches no ref, so write refs/heads/release/* for branches"),
    ("ref without refs/", _set("applies_to.refs", ["heads/main"]), "applies_to.refs[0]: expected a full ref name starting with refs/, got 'heads/main': a short name matches no ref, so write refs/heads/main"),
    ("ref glob of stars", _set("applies_to.refs", ["**"]), "applies_to.refs[0]: expected a full ref name starting with refs/, got '**'"),
    ("ref with a leading slash", _set("applies_to.refs", ["/refs/heads/main"]), "applies_to.refs[0]: expected a full ref name starting with refs/"),
    ("glob too long", _set("applies_to.paths", ["a/" * 512 + "b"]), "applies_to.paths[0]: a glob may be at most 1024 characters, got 1025"),
    ("glob with too many stars", _set("verification.inputs", ["*a" * 17]), "verification.inputs[0]: a glob may hold at most 16 `*`, got 17"),
    ("applies_to not a table", _set("applies_to", "everywhere"), "applies_to: expected a table"),
    ("command as string", _set("verification.command", "python check.py"), "verification.command: expected an argv list"),
    ("empty command", _set("verification.command", []), "verification.command: expected a non-empty argv list"),
    ("missing command", _set("verification.command", _DELETE), "verification.command: required in [verification]"),
    ("dotdot pinned file", _set("verification.files", ["../secret.py"]), "verification.files[0]: expected a relative, normalised path"),
    ("absolute pinned file", _set("verification.files", ["/bin/true"]), "verification.files[0]: expected a relative, normalised path"),
    ("pinned file in .git", _set("verification.files", [".git/hooks/x"]), "verification.files[0]: expected a relative, normalised path"),
    ("unnormalised pinned file", _set("verification.files", ["checks/./x.py"]), "verification.files[0]: expected a relative, normalised path"),
    ("zero timeout", _set("verification.timeout_s", 0), "verification.timeout_s: expected a positive integer"),
    ("float timeout", _set("verification.timeout_s", 1.5), "verification.timeout_s: expected a positive integer"),
    ("timeout over a day", _set("verification.timeout_s", 86_401), "verification.timeout_s: expected at most 86400 seconds (a day), got 86401"),
    ("400-digit timeout", _set("verification.timeout_s", 10**400), "verification.timeout_s: expected at most 86400 seconds (a day), got 10000000000000000000… (381 more characters)"),
    ("bad workdir", _set("verification.workdir", "tmp"), "verification.workdir: expected checkout or inplace"),
    ("bad env_pass", _set("verification.env_pass", ["A B"]), "verification.env_pass[0]: expected a variable name"),
    ("unknown verification key", _set("verification.shell", True), "verification.shell: unknown key"),
    ("unknown evidence kind", _set("evidence.kind", "ci"), "evidence.kind: expected command, human or note"),
    ("short evidence commit", _set("evidence.commit", "4d1e0b2"), "evidence.commit: expected a full commit id"),
    ("exit code as string", _set("evidence.exit_code", "1"), "evidence.exit_code: expected an integer"),
    ("confirmed_by on command evidence", _set("evidence.confirmed_by", "Ada"), "evidence.confirmed_by: only human evidence"),
    # A regex's `$` also matches before a final newline: each name must end where it ends.
    ("entity key ending in a newline", _set("entity_key", KEY + "\n"), "entity_key: expected segments of"),
    ("trigger ending in a newline", _set("triggers", ["push\n"]), "triggers[0]: expected a name like push"),
    ("follows id ending in a newline", _set("follows", [EID[:-1] + "0\n"]), "follows[0]: expected an event id"),
    ("since ending in a newline", _set("applies_to.since", C40 + "\n"), "applies_to.since: expected a full commit id"),
    ("environment ending in a newline", _set("applies_to.environments", ["mainnet\n"]), "applies_to.environments[0]: expected a name like mainnet"),
    ("env_pass ending in a newline", _set("verification.env_pass", ["PATH\n"]), "verification.env_pass[0]: expected a variable name"),
    ("schema zero", _set("schema", 0), "schema: expected 1, got 0"),
    ("schema as boolean", _set("schema", True), "schema: expected the integer 1, got a boolean"),
    ("status as list", _set("status", ["observed"]), "status: expected a string, got a list"),
    ("follows self", _set("follows", [EID]), "follows: an event cannot name itself"),
    ("retracts self", _set("retracts", [EID]), "retracts: an event cannot name itself"),
    ("follows one id twice", _set("follows", [OTHER_ID, OTHER_ID]), "follows: lists the same id twice"),
    ("blank title", _set("title", " \u2028"), "title: must not be empty"),
    ("recorded_by not a string", _set("recorded_by", 7), "recorded_by: expected a string, got an integer"),
    ("NUL in a note", _set("note", "a\0b"), "note: must not contain a NUL character"),
    ("NUL in a trigger", _set("triggers", ["pu\0sh"]), "triggers[0]: must not contain a NUL character"),
    ("NUL in a path glob", _set("applies_to.paths", ["a\0"]), "applies_to.paths[0]: must not contain a NUL character"),
    ("dotdot path glob", _set("applies_to.paths", ["../x"]), "applies_to.paths[0]: expected a relative path glob"),
    ("uppercase environment", _set("applies_to.environments", ["Main"]), "applies_to.environments[0]: expected a name like mainnet"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("mutate", "expected"), [b[1:] for b in BROKEN], ids=[b[0] for b in BROKEN]
)
def test_each_rule_broken_once_names_its_error(mutate: Any, expected: str) -> None:
    doc = valid_doc()
    mutate(doc)
    event, problems = parse(doc)
    assert event is None
    assert any(p.startswith(expected) for p in problems), problems


def test_retracts_may_name_a_misnamed_files_portable_stem() -> None:
    """A misnamed file has no id: `retracts` names it by its stem, when that is 1 to 100
    of A-Z a-z 0-9 . _ - (an id is one too). Nothing else may name it."""
    doc = valid_doc()
    stems = ["oops", "Notes.v2_draft-1", "a" * 100, f"{OTHER_ID}.old", "-x", OTHER_ID]
    doc["retracts"] = stems
    event, problems = parse(doc)
    assert problems == []
    assert event is not None and event.retracts == tuple(stems)


def test_a_glob_at_the_length_and_star_bounds_is_valid() -> None:
    doc = valid_doc()
    doc["applies_to"]["paths"] = ["a/" * 511 + "bc", "*a" * 16]
    event, problems = parse(doc)
    assert problems == []
    assert event is not None


def test_an_id_ending_in_a_newline_is_no_id_even_in_a_file_named_so() -> None:
    doc = valid_doc()
    doc["id"] = EID + "\n"
    event, problems = parse(doc, f"ledger/deploy/mainnet/gas-budget/{EID}\n.toml")
    assert event is None
    assert any(p.startswith("id: expected <YYYYMMDDTHHMMSSZ>") for p in problems), problems


# Python's `\d` also matches Arabic-Indic and other Unicode digits; an id is ASCII.
ARABIC_INDIC_ID = "\u0662\u0660\u0662\u0666\u0661\u0661\u0662\u0669T230500Z-7f3a9c1e"


def test_an_id_in_arabic_indic_digits_is_no_id_even_in_a_file_named_so() -> None:
    doc = valid_doc()
    doc["id"] = ARABIC_INDIC_ID
    event, problems = parse(doc, f"ledger/deploy/mainnet/gas-budget/{ARABIC_INDIC_ID}.toml")
    assert event is None
    assert any(p.startswith("id: expected <YYYYMMDDTHHMMSSZ>") for p in problems), problems


def test_follows_naming_an_id_in_arabic_indic_digits_is_refused() -> None:
    doc = valid_doc()
    doc["follows"] = [ARABIC_INDIC_ID]
    event, problems = parse(doc)
    assert event is None
    assert any(p.startswith("follows[0]: expected an event id") for p in problems), problems


def test_every_problem_of_a_file_is_listed_not_only_the_first() -> None:
    doc = valid_doc()
    doc["status"] = "fixed"
    doc["verification"]["command"] = "make check"
    doc["applies_to"]["since"] = "abc"
    _, problems = parse(doc)
    assert len(problems) == 3


def test_human_evidence_needs_a_commit_and_who_confirmed() -> None:
    doc = valid_doc()
    doc["evidence"] = {"kind": "human"}
    _, problems = parse(doc)
    assert "evidence.commit: human evidence must name the commit it confirms" in problems
    assert "evidence.confirmed_by: human evidence must say who confirmed it" in problems


def test_a_later_event_may_omit_title_and_triggers() -> None:
    doc = valid_doc()
    del doc["title"], doc["triggers"]
    doc["follows"] = ["20261128T100000Z-00000001"]
    event, problems = parse(doc)
    assert problems == []
    assert event is not None and event.title is None and event.triggers is None


@pytest.mark.parametrize(
    "raw",
    [
        b"\xff\xfe not utf8",
        b"schema = 1\nschema = 1\n",
        b"[[[",
        b"schema = 1\x00",
        b"schema = " + b"1" * 5000 + b"\n",  # tomllib lets int() raise ValueError
    ],
    ids=["invalid-utf8", "duplicate-key", "broken-toml", "nul-byte", "huge-integer"],
)
def test_unreadable_bytes_are_a_named_error_not_a_crash(raw: bytes) -> None:
    event, problems = parse_event(raw, PATH, entity_key=KEY)
    assert event is None
    assert problems and problems[0].code == "unreadable"
    assert problems[0].path == PATH


def test_deep_nesting_is_an_error_not_a_crash() -> None:
    raw = b"x = " + b"[" * 100_000 + b"]" * 100_000
    event, problems = parse_event(raw, PATH, entity_key=KEY)
    assert event is None and problems


def test_the_id_a_file_holds_is_read_with_it_whether_or_not_it_validates() -> None:
    """`record --retracts` takes the id a file holds under another name: the one reading
    of the file gives it, never a second parse."""
    doc = valid_doc()
    assert read_event(tomli_w.dumps(doc).encode(), PATH, entity_key=KEY).written_id == EID
    elsewhere = f"ledger/deploy/mainnet/gas-budget/{OTHER_ID}.toml"
    read = read_event(tomli_w.dumps(doc).encode(), elsewhere, entity_key=KEY)
    assert read.event is None and read.written_id == EID, read  # the id is not its stem
    doc["refs"] = "main"  # and an unknown key: invalid, and still holding its id
    assert read_event(tomli_w.dumps(doc).encode(), PATH, entity_key=KEY).written_id == EID
    for held in ("not-an-id", 7, f"{EID}\n"):
        doc["id"] = held
        assert read_event(tomli_w.dumps(doc).encode(), PATH, entity_key=KEY).written_id is None
    for raw in (b"[[[", b"id = " + b"[" * 100_000 + b"]" * 100_000):
        read = read_event(raw, PATH, entity_key=KEY)
        assert (read.event, read.problems) == parse_event(raw, PATH, entity_key=KEY)
        assert read.problems and read.written_id is None
