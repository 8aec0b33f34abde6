"""Parsed event files, kept by blob id under the git common dir (DESIGN §12, issue 11).

A blob id names its bytes forever, so the parse of an event file (its `Event`,
or every problem of it) never goes stale for the same path and entity folder:
a hook that reads 10,000 events parses only the ones it has never seen.

The cache is data another process can write, so nothing in it is trusted
blindly. It is JSON, never pickle: reading it runs no code. Each shard carries
a format version (failgate's version, the event schema, and a hash of the
sources of the rules that validate events) and a sha256 of its body; a shard of
another version, or one that fails its checksum or does not decode into the
expected types, is a miss, parsed again and written afresh. Writes are
write-then-rename. An unreadable or unwritable cache is no cache: parsing
never fails because of it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import hashlib
import json
import os
import sys
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from functools import cache
from typing import Any

from failgate_hooks.cachefile import sources_digest, write_whole
from failgate_hooks.collector import no_cycle_collection
from failgate_hooks.core.events import Event, Problem

FORMAT = 1
MAGIC = b"failgate-parsed-events"

# (blob id, repository path, entity key the folder names): the parse depends on all three
EntryKey = tuple[str, str, str | None]
Parsed = tuple[Event | None, list[Problem]]


class _Corrupt(ValueError):
    """A cache record that does not decode into the type it must be."""


# --------------------------------------------------------------------------- version


@cache
def format_version() -> str:
    """Changes whenever what a parse gives could change: a shard of another is rebuilt."""
    from failgate_hooks import __version__
    from failgate_hooks.core import events, validate, wildmatch

    rules = sources_digest(events.__file__, validate.__file__, wildmatch.__file__, __file__)
    # tomllib's messages are part of a parse (an unreadable file's problem quotes them)
    python = "{}.{}".format(*sys.version_info[:2])
    return f"{FORMAT}-{events.SCHEMA_VERSION}-{__version__}-py{python}-{rules}"


# --------------------------------------------------------------------------- codec

Codec = tuple[Callable[[Any], Any], Callable[[Any], Any]]


def _fail(what: str, value: object) -> typing.NoReturn:
    raise _Corrupt(f"expected {what}, got {type(value).__name__}")


@cache
def _codec(tp: Any) -> Codec:
    """Encoder and strict decoder for one annotated type; TypeError for one it cannot hold."""
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return _dataclass_codec(tp)
    namespace: dict[str, Any] = {"_fail": _fail}
    lines = _decode_lines("x", tp, namespace, "    ")
    decode = _compile("_decode", ["def _decode(x):", *lines, "    return x"], namespace)
    return _encoder(tp), decode


def _encoder(tp: Any) -> Callable[[Any], Any]:
    """Values as JSON holds them: enums by value, date-times in ISO form, tuples as lists."""
    origin = typing.get_origin(tp)
    if tp in (str, int, bool):
        return lambda value: value
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return lambda value: value.value
    if tp is dt.datetime:
        return lambda value: value.isoformat()
    if origin is tuple:
        item = _encoder(_tuple_item(tp))
        return lambda value: [item(v) for v in value]
    if origin is types.UnionType or origin is typing.Union:
        inner = _encoder(_optional_member(tp))
        return lambda value: None if value is None else inner(value)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return _codec(tp)[0]
    raise TypeError(f"cannot cache {tp!r}")


def _tuple_item(tp: Any) -> Any:
    args = typing.get_args(tp)
    if len(args) != 2 or args[1] is not Ellipsis:
        raise TypeError(f"cannot cache {tp!r}")
    return args[0]


def _optional_member(tp: Any) -> Any:
    args = typing.get_args(tp)
    members = [a for a in args if a is not type(None)]
    if len(members) != 1 or len(args) != 2:
        raise TypeError(f"cannot cache {tp!r}")
    return members[0]


def _decode_lines(var: str, tp: Any, namespace: dict[str, Any], indent: str) -> list[str]:
    """Statements that check `var` holds `tp` as JSON gave it, and turn it into one.

    Generated once per type, as dataclasses generate their methods: a warm run
    decodes 10,000 events, and a call per field would cost more than the rest."""
    origin = typing.get_origin(tp)
    name = f"_t{len(namespace)}"
    if tp in (str, int, bool):
        namespace[name] = tp
        return [f"{indent}if type({var}) is not {name}: _fail({tp.__name__!r}, {var})"]
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        namespace[name] = {member.value: member for member in tp}
        return [
            f"{indent}{var} = {name}.get({var}) if type({var}) is str else None",
            f"{indent}if {var} is None: _fail({tp.__name__!r}, {var})",
        ]
    if tp is dt.datetime:
        namespace[name] = _decode_datetime
        return [f"{indent}{var} = {name}({var})"]
    if origin is tuple:
        item = _tuple_item(tp)
        check = [f"{indent}if type({var}) is not list: _fail('a list', {var})"]
        if item in (str, int):
            namespace[name] = item
            return [
                *check,
                f"{indent}for _i in {var}:",
                f"{indent}    if type(_i) is not {name}: _fail({item.__name__!r}, _i)",
                f"{indent}{var} = tuple({var})",
            ]
        namespace[name] = _codec(item)[1]
        return [*check, f"{indent}{var} = tuple([{name}(_i) for _i in {var}])"]
    if origin is types.UnionType or origin is typing.Union:
        inner = _decode_lines(var, _optional_member(tp), namespace, indent + "    ")
        return [f"{indent}if {var} is not None:", *inner]
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        namespace[name] = _codec(tp)[1]
        return [f"{indent}{var} = {name}({var})"]
    raise TypeError(f"cannot cache {tp!r}")


def _decode_datetime(value: Any) -> dt.datetime:
    if type(value) is not str:
        _fail("a date-time", value)
    try:
        moment = dt.datetime.fromisoformat(value)
    except ValueError:
        _fail("a date-time", value)
    if moment.tzinfo is None:
        _fail("a date-time with an offset", value)  # the only kind an event holds
    return moment


def _compile(name: str, lines: list[str], namespace: dict[str, Any]) -> Callable[[Any], Any]:
    exec("\n".join(lines), namespace)  # our own source, from type hints: never cache data
    function: Callable[[Any], Any] = namespace[name]
    return function


def _dataclass_codec(cls: type) -> Codec:
    """A dataclass as the list of its fields in order: compact, and its length is checked."""
    hints = typing.get_type_hints(cls)
    fields = [f.name for f in dataclasses.fields(cls)]
    encoders = [_encoder(hints[name]) for name in fields]

    def encode(value: Any) -> Any:
        return [enc(getattr(value, name)) for enc, name in zip(encoders, fields, strict=True)]

    namespace: dict[str, Any] = {"_fail": _fail, "_cls": cls, "_new": object.__new__}
    count = len(fields)
    lines = [
        "def _decode(v):",
        f"    if type(v) is not list or len(v) != {count}:",
        f"        _fail({f'{count} fields of {cls.__name__}'!r}, v)",
    ]
    for i, field_name in enumerate(fields):
        lines.append(f"    x{i} = v[{i}]")
        lines += _decode_lines(f"x{i}", hints[field_name], namespace, "    ")
    values = ", ".join(f"x{i}" for i in range(count))
    if hasattr(cls, "__post_init__") or "__slots__" in cls.__dict__:
        lines.append(f"    return _cls({values})")
    else:
        # What the generated __init__ does, without a frozen class's setattr per field.
        items = ", ".join(f"{field_name!r}: x{i}" for i, field_name in enumerate(fields))
        lines += [
            "    made = _new(_cls)",
            f"    made.__dict__.update({{{items}}})",
            "    return made",
        ]
    return encode, _compile("_decode", lines, namespace)


def encode_parsed(parsed: Parsed) -> list[Any]:
    """One parse as JSON-ready data."""
    event, problems = parsed
    event_encode, _ = _codec(Event | None)
    problem_encode, _ = _codec(Problem)
    return [event_encode(event), [problem_encode(p) for p in problems]]


def decode_parsed(data: Any) -> Parsed:
    """The parse `encode_parsed` gave; `_Corrupt` when `data` is not one."""
    if type(data) is not list or len(data) != 2 or type(data[1]) is not list:
        _fail("an event and its problems", data)
    _, event_decode = _codec(Event | None)
    _, problem_decode = _codec(Problem)
    try:
        return event_decode(data[0]), [problem_decode(p) for p in data[1]]
    except TypeError as exc:  # a dataclass refusing its arguments
        raise _Corrupt(str(exc)) from None


# --------------------------------------------------------------------------- shards


def _shard_name(oid: str) -> str:
    return oid[:2] + ".json"


def _read_shard(path: str, version: bytes) -> dict[str, list[Any]] | None:
    """The entries of one shard, or None when it is missing, of another version, or corrupt."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError:
        return None
    header, _, rest = raw.partition(b"\n")
    checksum, _, body = rest.partition(b"\n")
    if header != MAGIC + b" " + version:
        return None
    if hashlib.sha256(body).hexdigest().encode("ascii") != checksum:
        return None
    try:
        entries = json.loads(body)
    except (ValueError, RecursionError):
        return None
    return entries if type(entries) is dict else None


def _write_shard(path: str, version: bytes, entries: Mapping[str, list[Any]]) -> None:
    body = json.dumps(entries, separators=(",", ":"), sort_keys=True).encode("utf-8")
    data = b"%s %s\n%s\n%s" % (MAGIC, version, hashlib.sha256(body).hexdigest().encode(), body)
    # Readers see the old shard or the new one; a torn file is caught by the checksum.
    write_whole(path, data)


class ParseCache:
    """`<git-common-dir>/failgate/parsed/`: parses by blob id, in shards by the id's first byte."""

    def __init__(self, common_dir: str | None) -> None:
        self.folder = None if common_dir is None else os.path.join(common_dir, "failgate", "parsed")
        try:
            check_codec()
        except TypeError:
            self.folder = None  # an event field the codec cannot hold: parse, never guess
        self._shards: dict[str, dict[str, Any]] = {}
        self._dirty: set[str] = set()
        self.hits = 0  # parses answered from the cache
        self.stored = 0  # parses written to it

    def lookup(self, keys: Iterable[EntryKey]) -> dict[EntryKey, Parsed]:
        """The cached parses among `keys`; a record that does not decode is a miss."""
        found: dict[EntryKey, Parsed] = {}
        if self.folder is None or not os.path.isdir(self.folder):
            return found  # nothing kept (a fresh clone): not one shard to try to open
        with no_cycle_collection():  # thousands of small objects, built and kept
            for key in keys:
                name = _shard_name(key[0])
                record = _find(self._shard(name).get(key[0]), key)
                if record is None:
                    continue
                try:
                    found[key] = decode_parsed(record)
                except _Corrupt:
                    self._dirty.add(name)  # written afresh with the new parse on store
        self.hits += len(found)
        return found

    def store(self, parsed: Mapping[EntryKey, Parsed]) -> None:
        """Remember new parses; an unwritable folder is silently no cache."""
        if self.folder is None or not parsed:
            return
        for key, result in parsed.items():
            oid, path, entity_key = key
            try:
                record = [path, entity_key, encode_parsed(result)]
            except (TypeError, AttributeError, ValueError):
                continue  # a value the codec cannot hold: parsed again next time
            name = _shard_name(oid)
            shard = self._shard(name)
            known = shard.get(oid)
            others = [v for v in known if not _is_for(v, key)] if type(known) is list else []
            shard[oid] = [*others, record]
            self._dirty.add(name)
            self.stored += 1
        try:
            os.makedirs(self.folder, exist_ok=True)
            for name in sorted(self._dirty):
                _write_shard(os.path.join(self.folder, name), self._version(), self._shards[name])
        except OSError:
            pass  # read-only, full or someone else's: the next run parses again
        self._dirty.clear()

    def _shard(self, name: str) -> dict[str, Any]:
        if name not in self._shards:
            found = None
            if self.folder is not None:
                found = _read_shard(os.path.join(self.folder, name), self._version())
            self._shards[name] = found if found is not None else {}
        return self._shards[name]

    def _version(self) -> bytes:
        return format_version().encode("ascii")


def _find(variants: Any, key: EntryKey) -> Any:
    """The record stored for `key` among one blob's variants (one per path and folder)."""
    if type(variants) is list:
        for variant in variants:
            if _is_for(variant, key):
                return variant[2]
    return None


def _is_for(variant: Any, key: EntryKey) -> bool:
    """Whether one stored variant, `[path, entity key, record]`, is the parse of `key`."""
    return type(variant) is list and len(variant) == 3 and variant[:2] == [key[1], key[2]]


def check_codec() -> None:
    """Build every codec now: a field type the cache cannot hold fails here, in tests."""
    _codec(Event | None)
    _codec(Problem)
