"""Reading one event file: its TOML, then every rule of the event format.

Pure: bytes and a path in, never a file system or git. Validation is strict and
exhaustive: every problem of a file is reported, each naming the file, the key
and what was expected. Nothing is silently defaulted.
"""

from __future__ import annotations

import datetime as dt
import enum
import re
import tomllib
from collections.abc import Mapping
from typing import Any, NamedTuple, TypeVar

from failgate_hooks.core import wildmatch
from failgate_hooks.core.events import (
    ID_RE,
    RETRACTABLE_STEM_RE,
    SCHEMA_VERSION,
    SEGMENT_RE,
    AppliesTo,
    Event,
    Evidence,
    EvidenceKind,
    Problem,
    Status,
    Verification,
    Workdir,
    entity_folder,
    is_safe_relative_path,
    is_valid_entity_key,
)
from failgate_hooks.core.refnames import ref_pattern_problem
from failgate_hooks.core.sanitize import clip

FULL_COMMIT_RE = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})\Z")
TOP_KEYS = {
    "schema", "id", "entity_key", "status", "follows", "effective_at", "title", "triggers",
    "supersedes", "retracts", "recorded_by", "note", "applies_to", "verification", "evidence",
}  # fmt: skip
APPLIES_KEYS = {"since", "paths", "refs", "environments"}
VERIFICATION_KEYS = {"command", "files", "timeout_s", "inputs", "env_pass", "workdir"}
EVIDENCE_KEYS = {"kind", "commit", "exit_code", "output_tail", "confirmed_by"}
ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")
# A day. tomllib reads integers of any size, and a clock cannot hold one of 400 digits.
MAX_TIMEOUT_S = 86_400
# A glob's matching work grows with its length and its `*` times the path's
# length: these bounds keep a pusher's glob from making every hook slow.
MAX_GLOB_CHARS = 1024
MAX_GLOB_STARS = 16

_E = TypeVar("_E", bound=enum.Enum)


class EventRead(NamedTuple):
    """One event file read: the event, or every problem found, and the id it holds."""

    event: Event | None
    problems: tuple[Problem, ...]
    # the `id` the file holds when it is shaped as one, whether or not the file
    # validates: a file copied by hand keeps an id that is not its file name's stem
    written_id: str | None = None


def parse_event(
    raw: bytes, path: str, *, entity_key: str | None = None
) -> tuple[Event | None, tuple[Problem, ...]]:
    """Parse and validate one event file; return the event or every problem found.

    `path` is used for messages and for the id == file stem rule; `entity_key`,
    when given, is the key the file's folder names and must match.
    """
    found = read_event(raw, path, entity_key=entity_key)
    return found.event, found.problems


def read_event(raw: bytes, path: str, *, entity_key: str | None = None) -> EventRead:
    """`parse_event`, with the id the file holds: the one reading of an event file."""
    check = _Checker(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        check.fail(None, f"not UTF-8 text (byte {exc.start})", code="unreadable")
        return EventRead(None, tuple(check.problems))
    try:
        data = tomllib.loads(text)
    except RecursionError:
        check.fail(None, "not valid TOML: nested too deeply", code="unreadable")
        return EventRead(None, tuple(check.problems))
    except ValueError as exc:
        # TOMLDecodeError, or int() refusing more than 4,300 digits, as tomllib lets it
        check.fail(None, f"not valid TOML: {exc}", code="unreadable")
        return EventRead(None, tuple(check.problems))
    written = data.get("id")
    written_id = written if isinstance(written, str) and ID_RE.match(written) else None
    event = _validate(data, check, entity_key)
    if check.problems:
        return EventRead(None, tuple(check.problems), written_id)
    return EventRead(event, (), written_id)


def _validate(data: Mapping[str, Any], check: _Checker, folder_key: str | None) -> Event | None:
    schema = data.get("schema")
    if "schema" not in data:
        check.fail("schema", "required key is missing", code="missing-key")
    elif not isinstance(schema, int) or isinstance(schema, bool):
        check.fail("schema", f"expected the integer {SCHEMA_VERSION}, got {_type_name(schema)}")
    elif schema > SCHEMA_VERSION:
        check.fail(
            "schema",
            f"schema {schema} is newer than this failgate reads ({SCHEMA_VERSION}): "
            f"upgrade failgate to a version that reads schema {schema}",
            code="schema-too-new",
        )
        return None
    elif schema < 1:
        check.fail("schema", f"expected {SCHEMA_VERSION}, got {schema}")

    check.unknown_keys(data, TOP_KEYS, "")

    for required in ("id", "entity_key", "status", "effective_at"):
        if required not in data:
            check.fail(required, "required key is missing", code="missing-key")

    event_id = check.string(data, "id")
    stem = check.path.rsplit("/", 1)[-1].removesuffix(".toml")
    if event_id is not None:
        if not ID_RE.match(event_id):
            check.fail("id", f"expected <YYYYMMDDTHHMMSSZ>-<8 lowercase hex>, got {event_id!r}")
        elif event_id != stem:
            check.fail("id", f"must equal the file name's stem {stem!r}, got {event_id!r}")

    key = check.string(data, "entity_key")
    if key is not None:
        if not is_valid_entity_key(key):
            check.fail(
                "entity_key",
                f"expected segments of [a-z0-9][a-z0-9_-]* joined by ':', got {key!r}",
            )
        elif folder_key is not None and key != folder_key:
            check.fail(
                "entity_key",
                f"must match its folder ({entity_folder(folder_key)}/ is {folder_key!r}), "
                f"got {key!r}",
            )

    status = check.choice(data, "status", Status, f"one of {', '.join(s.value for s in Status)}")

    effective_at = data.get("effective_at")
    if "effective_at" in data and not (
        isinstance(effective_at, dt.datetime) and effective_at.tzinfo is not None
    ):
        check.fail(
            "effective_at",
            "expected a TOML offset date-time such as 2026-11-29T23:05:00Z, "
            f"got {_type_name(effective_at)}",
        )
        effective_at = None

    follows = check.id_list(data, "follows")
    supersedes = check.id_list(data, "supersedes")
    retracts = check.id_list(data, "retracts", stems=True)
    if event_id is not None:
        for name, ids in (("follows", follows), ("supersedes", supersedes), ("retracts", retracts)):
            if event_id in ids:
                check.fail(name, "an event cannot name itself")

    title = check.string(data, "title")
    if title is not None and not title.strip():
        check.fail("title", "must not be empty")
    triggers = check.string_list(data, "triggers")
    for i, trig in enumerate(triggers or ()):
        if not SEGMENT_RE.match(trig):
            check.fail(f"triggers[{i}]", f"expected a name like push or deploy, got {trig!r}")
    if triggers is not None and not triggers:
        check.fail("triggers", "must not be empty: name at least one trigger such as push")
    if not data.get("follows"):
        # The first event of an entity names it and says what must check it.
        if "title" not in data:
            check.fail("title", "required on an entity's first event (empty follows)")
        if "triggers" not in data:
            check.fail("triggers", "required on an entity's first event (empty follows)")

    recorded_by = check.string(data, "recorded_by")
    note = check.string(data, "note")
    applies_to = _applies_to(data, check)
    verification = _verification(data, check)
    evidence = _evidence(data, check)

    if check.problems:
        return None
    assert event_id is not None and key is not None and status is not None
    assert isinstance(effective_at, dt.datetime)
    return Event(
        id=event_id,
        entity_key=key,
        status=status,
        effective_at=effective_at,
        schema=int(data["schema"]),
        follows=follows,
        title=title,
        triggers=triggers,
        supersedes=supersedes,
        retracts=retracts,
        recorded_by=recorded_by,
        note=note,
        applies_to=applies_to,
        verification=verification,
        evidence=evidence,
    )


def _applies_to(data: Mapping[str, Any], check: _Checker) -> AppliesTo | None:
    table = check.table(data, "applies_to")
    if table is None:
        return None
    where = "applies_to."
    check.unknown_keys(table, APPLIES_KEYS, where)
    envs = check.string_list(table, "environments", where)
    for i, env in enumerate(envs or ()):
        if not SEGMENT_RE.match(env):
            check.fail(f"{where}environments[{i}]", f"expected a name like mainnet, got {env!r}")
    paths = check.globs(table, "paths", where)
    for i, pattern in enumerate(paths or ()):
        if pattern.startswith("/") or ".." in pattern.split("/"):
            check.fail(f"{where}paths[{i}]", "expected a relative path glob inside the repository")
    refs = check.globs(table, "refs", where)
    for i, pattern in enumerate(refs or ()):
        problem = ref_pattern_problem(pattern)
        if problem is not None:
            check.fail(f"{where}refs[{i}]", problem)
    return AppliesTo(
        since=check.commit(table, "since", where),
        paths=paths,
        refs=refs,
        environments=envs,
    )


def _verification(data: Mapping[str, Any], check: _Checker) -> Verification | None:
    table = check.table(data, "verification")
    if table is None:
        return None
    where = "verification."
    check.unknown_keys(table, VERIFICATION_KEYS, where)
    command: tuple[str, ...] | None = None
    if "command" not in table:
        check.fail(where + "command", "required in [verification]", code="missing-key")
    elif isinstance(table["command"], str):
        check.fail(
            where + "command",
            'expected an argv list such as ["python", "checks/check.py"], got a string '
            "(a shell string is never run)",
        )
    else:
        command = check.string_list(table, "command", where)
        if command is not None and (not command or not command[0]):
            check.fail(where + "command", "expected a non-empty argv list")
    files = check.string_list(table, "files", where) or ()
    for i, path in enumerate(files):
        if not is_safe_relative_path(path):
            check.fail(
                f"{where}files[{i}]",
                f"expected a relative, normalised path inside the repository, got {path!r}",
            )
    inputs = check.globs(table, "inputs", where)
    for i, pattern in enumerate(inputs or ()):
        if pattern.startswith("/") or ".." in pattern.split("/"):
            check.fail(f"{where}inputs[{i}]", "expected a relative path glob inside the repository")
    timeout = table.get("timeout_s")
    if "timeout_s" in table:
        problem = timeout_problem(timeout)
        if problem is not None:
            check.fail(where + "timeout_s", problem)
            timeout = None
    env_pass = check.string_list(table, "env_pass", where) or ()
    for i, name in enumerate(env_pass):
        if not ENV_NAME_RE.match(name):
            check.fail(f"{where}env_pass[{i}]", f"expected a variable name, got {name!r}")
    workdir = check.choice(table, "workdir", Workdir, "checkout or inplace", where)
    if command is None:
        return None
    return Verification(
        command=command,
        files=files,
        timeout_s=timeout if isinstance(timeout, int) else None,
        inputs=inputs,
        env_pass=env_pass,
        workdir=workdir or Workdir.CHECKOUT,
    )


def timeout_problem(value: object) -> str | None:
    """What is wrong with a timeout in seconds, or None: a whole number from 1 to a day."""
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        return f"expected a positive integer, got {clip(repr(value), 40)}"
    if value > MAX_TIMEOUT_S:
        return f"expected at most {MAX_TIMEOUT_S} seconds (a day), got {clip(str(value), 20)}"
    return None


def _evidence(data: Mapping[str, Any], check: _Checker) -> Evidence | None:
    table = check.table(data, "evidence")
    if table is None:
        return None
    where = "evidence."
    check.unknown_keys(table, EVIDENCE_KEYS, where)
    if "kind" not in table:
        check.fail(where + "kind", "required in [evidence]", code="missing-key")
    kind = check.choice(table, "kind", EvidenceKind, "command, human or note", where)
    exit_code = table.get("exit_code")
    if "exit_code" in table and (not isinstance(exit_code, int) or isinstance(exit_code, bool)):
        check.fail(where + "exit_code", f"expected an integer, got {_type_name(exit_code)}")
        exit_code = None
    commit = check.commit(table, "commit", where)
    confirmed_by = check.string(table, "confirmed_by", where)
    if kind is EvidenceKind.HUMAN:
        if commit is None and "commit" not in table:
            check.fail(where + "commit", "human evidence must name the commit it confirms")
        if confirmed_by is None and "confirmed_by" not in table:
            check.fail(where + "confirmed_by", "human evidence must say who confirmed it")
    elif confirmed_by is not None:
        check.fail(where + "confirmed_by", "only human evidence has confirmed_by")
    if kind is None:
        return None
    return Evidence(
        kind=kind,
        commit=commit,
        exit_code=exit_code if isinstance(exit_code, int) else None,
        output_tail=check.string(table, "output_tail", where),
        confirmed_by=confirmed_by,
    )


# --------------------------------------------------------------------------- one key


class _Checker:
    """Collects every problem of one file instead of stopping at the first."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.problems: list[Problem] = []

    def fail(self, key: str | None, message: str, code: str = "invalid-event") -> None:
        # Imported here, not at the top: a hook over a valid ledger never needs the scanner.
        from failgate_hooks.core.credentials import redact

        # A message may quote the bad value back: never a credential in it, and never so
        # much of it that one pushed file makes every hook print megabytes.
        message = redact(clip(message, 500))
        key = None if key is None else clip(key, 120)
        self.problems.append(Problem(code=code, message=message, path=self.path, key=key))

    def string(self, data: Mapping[str, Any], key: str, where: str = "") -> str | None:
        if key not in data:
            return None
        value = data[key]
        if not isinstance(value, str):
            self.fail(where + key, f"expected a string, got {_type_name(value)}")
            return None
        if "\0" in value:
            self.fail(where + key, "must not contain a NUL character")
            return None
        return value

    def choice(
        self, data: Mapping[str, Any], key: str, kind: type[_E], expected: str, where: str = ""
    ) -> _E | None:
        """A string that must be one of `kind`'s values; `expected` says which, for people."""
        value = self.string(data, key, where)
        if value is None:
            return None
        try:
            return kind(value)
        except ValueError:
            self.fail(where + key, f"expected {expected}, got {value!r}")
            return None

    def string_list(
        self, data: Mapping[str, Any], key: str, where: str = ""
    ) -> tuple[str, ...] | None:
        if key not in data:
            return None
        value = data[key]
        name = where + key
        if not isinstance(value, list):
            self.fail(name, f"expected a list of strings, got {_type_name(value)}")
            return None
        out: list[str] = []
        for i, item in enumerate(value):
            if not isinstance(item, str):
                self.fail(f"{name}[{i}]", f"expected a string, got {_type_name(item)}")
            elif "\0" in item:
                self.fail(f"{name}[{i}]", "must not contain a NUL character")
            else:
                out.append(item)
        return tuple(out) if len(out) == len(value) else None

    def id_list(self, data: Mapping[str, Any], key: str, *, stems: bool = False) -> tuple[str, ...]:
        """A list of event ids; with `stems`, a misnamed file's portable stem may stand
        for one (`retracts` alone: nothing can follow or carry forward such a file)."""
        ids = self.string_list(data, key) or ()
        pattern = RETRACTABLE_STEM_RE if stems else ID_RE
        expected = "an event id like 20261129T230500Z-7f3a9c1e"
        if stems:
            expected += (
                ", or the file name's stem of a misnamed file of the entity's folder "
                "(1 to 100 of A-Z a-z 0-9 . _ -)"
            )
        for i, ref in enumerate(ids):
            if not pattern.match(ref):
                self.fail(f"{key}[{i}]", f"expected {expected}, got {ref!r}")
        if len(set(ids)) != len(ids):
            self.fail(key, "lists the same id twice")
        return ids

    def commit(self, data: Mapping[str, Any], key: str, where: str) -> str | None:
        value = self.string(data, key, where)
        if value is not None and not FULL_COMMIT_RE.match(value):
            self.fail(
                where + key,
                f"expected a full commit id (40 or 64 lowercase hex), got {value!r}",
            )
            return None
        return value

    def globs(self, data: Mapping[str, Any], key: str, where: str) -> tuple[str, ...] | None:
        patterns = self.string_list(data, key, where)
        for i, pattern in enumerate(patterns or ()):
            error = wildmatch.pattern_error(pattern)
            if error:
                self.fail(f"{where}{key}[{i}]", f"not a valid wildmatch glob: {error}")
            elif len(pattern) > MAX_GLOB_CHARS:
                self.fail(
                    f"{where}{key}[{i}]",
                    f"a glob may be at most {MAX_GLOB_CHARS} characters, got {len(pattern)}",
                )
            elif pattern.count("*") > MAX_GLOB_STARS:
                self.fail(
                    f"{where}{key}[{i}]",
                    f"a glob may hold at most {MAX_GLOB_STARS} `*`, got {pattern.count('*')}",
                )
        return patterns

    def unknown_keys(self, data: Mapping[str, Any], allowed: set[str], where: str) -> None:
        for key in data:
            if key not in allowed:
                self.fail(
                    where + key,
                    f"unknown key; expected one of {', '.join(sorted(allowed))}",
                    code="unknown-key",
                )

    def table(self, data: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
        if key not in data:
            return None
        value = data[key]
        if not isinstance(value, dict):
            self.fail(key, f"expected a table [{key}], got {_type_name(value)}")
            return None
        return value


def _type_name(value: object) -> str:
    return {
        str: "a string", int: "an integer", float: "a float", bool: "a boolean",
        list: "a list", dict: "a table",
    }.get(type(value), type(value).__name__)  # fmt: skip
