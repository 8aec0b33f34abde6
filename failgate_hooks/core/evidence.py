"""Evidence that travels: a signed statement that a reviewed verifier passed on some content.

Pure. A statement is one JSON object (sorted keys, bounded sizes) whose exact
bytes are signed; it is stored beside its signature as one line of the
evidence ref, in the file its content key names. The bytes are parsed only
after the signature over them verifies, and a statement counts for a gate only
when it says what the gate under check would have to run: the same verifier
digest, entity, content (or inputs) key and environment, and a pass. Anything
else is "not covered", with the reason, never an error that allows.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import NamedTuple

STATEMENT_FORMAT = "failgate-evidence/1"
LINE_TAG = "fge1"  # the first word of an evidence line: the line format's version
RESULT_PASS = "pass"

# A statement is a few hundred bytes; a line holds it and an SSH signature (~300 bytes).
MAX_PAYLOAD_BYTES = 4096
MAX_SIGNATURE_BYTES = 4096
MAX_LINE_BYTES = 12 * 1024
# One gate's evidence file, a line per pass: hundreds of passes, and a push cannot fill
# a server's memory with one.
MAX_FILE_BYTES = 8 * 1024 * 1024
_MAX_TEXT = {"entity": 200, "environment": 200, "repository": 500, "ref": 500, "run_url": 2000}
_MAX_TIME = 40

# What a content key or an input key looks like (verify/keys.py): a version, a sha256.
_CONTENT = re.compile(r"(ck1|ck2|ik1):([0-9a-f]{64})\Z")
# Every version reads as a digest, so an old statement (vd2 to vd5) is "another
# verifier digest", not junk; which version counts is decided where it is compared
# (verify/subject.DIGEST_VERSION), and a bump there needs nothing here.
_DIGEST = re.compile(r"vd[1-9][0-9]?:[0-9a-f]{64}\Z")
_OBJECT_ID = re.compile(r"(?:[0-9a-f]{40}|[0-9a-f]{64})\Z")
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\Z")
_B64 = re.compile(r"[A-Za-z0-9+/]+={0,2}\Z")


class EvidenceFormatError(ValueError):
    """A line or a payload that is not evidence: the message says what is wrong with it."""


class Statement(NamedTuple):
    """One verifier pass, as its signer states it. `commit` and `tree` are for people only."""

    content: str  # the content key, or with `inputs` the input key, it passed on
    environment: str | None
    verifier: str  # the verifier digest: argv, pinned (path, blob) pairs, run settings
    entity: str
    result: str
    time: str  # when the signer says it ran: shown, never trusted for validity
    repository: str
    ref: str | None
    run_url: str | None
    sandboxed: bool
    commit: str
    tree: str
    format: str = STATEMENT_FORMAT


class Subject(NamedTuple):
    """What a statement must say to stand for a gate's run on the commit under check."""

    content: str
    environment: str | None
    verifier: str
    entity: str


def payload(statement: Statement) -> bytes:
    """The exact bytes that are signed: one JSON object, sorted keys, no spaces."""
    text = json.dumps(statement._asdict(), sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    data = text.encode("ascii")
    problem = _statement_problem(statement) or (
        f"statement is {len(data)} bytes, more than {MAX_PAYLOAD_BYTES}"
        if len(data) > MAX_PAYLOAD_BYTES
        else None
    )
    if problem is not None:
        raise EvidenceFormatError(problem)
    return data


def parse_payload(data: bytes) -> Statement:
    """The statement in signed bytes; EvidenceFormatError for anything that is not exactly one.

    Only the canonical form is accepted: bytes that re-encode differently are not
    what `payload` makes, so two spellings of one statement cannot both exist."""
    if len(data) > MAX_PAYLOAD_BYTES:
        raise EvidenceFormatError(f"statement is more than {MAX_PAYLOAD_BYTES} bytes")
    try:
        doc = json.loads(data.decode("ascii"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise EvidenceFormatError("statement is not JSON") from None
    if not isinstance(doc, dict):
        raise EvidenceFormatError("statement is not a JSON object")
    fields = set(Statement._fields)
    if set(doc) != fields:
        missing, extra = sorted(fields - set(doc)), sorted(set(doc) - fields)
        raise EvidenceFormatError(f"statement fields differ (missing {missing}, unknown {extra})")
    if doc["format"] != STATEMENT_FORMAT:
        raise EvidenceFormatError(f"statement format {str(doc['format'])[:40]!r} is not known")
    try:
        statement = Statement(**doc)
    except TypeError:
        raise EvidenceFormatError("statement fields have the wrong types") from None
    problem = _statement_problem(statement)
    if problem is not None:
        raise EvidenceFormatError(problem)
    if payload(statement) != data:
        raise EvidenceFormatError("statement is not in canonical form")
    return statement


def _statement_problem(s: Statement) -> str | None:
    """What makes `s` not a statement, or None."""
    texts = {"entity": s.entity, "repository": s.repository, "time": s.time, "result": s.result}
    optional = {"environment": s.environment, "ref": s.ref, "run_url": s.run_url}
    if not all(isinstance(v, str) for v in texts.values()):
        return "statement fields have the wrong types"
    if not all(v is None or isinstance(v, str) for v in optional.values()):
        return "statement fields have the wrong types"
    if not isinstance(s.sandboxed, bool):
        return "statement field sandboxed is not true or false"
    if not isinstance(s.content, str) or not _CONTENT.match(s.content):
        return "statement content is not a content key or an input key"
    if not isinstance(s.verifier, str) or not _DIGEST.match(s.verifier):
        return "statement verifier is not a verifier digest"
    for name in ("commit", "tree"):
        value = getattr(s, name)
        if not isinstance(value, str) or not _OBJECT_ID.match(value):
            return f"statement {name} is not an object id"
    if not _TIME.match(s.time) or len(s.time) > _MAX_TIME:
        return "statement time is not YYYY-MM-DDTHH:MM:SSZ"
    for name, limit in _MAX_TEXT.items():
        value = getattr(s, name)
        if value is not None and len(value) > limit:
            return f"statement {name} is longer than {limit} characters"
    if not s.entity:
        return "statement entity is empty"
    return None


def encode_line(data: bytes, signature: bytes) -> str:
    """One line of the evidence ref: the tag, the payload and the signature, base64 each."""
    if len(signature) > MAX_SIGNATURE_BYTES:
        raise EvidenceFormatError(f"signature is more than {MAX_SIGNATURE_BYTES} bytes")
    parts = (LINE_TAG, _b64(data), _b64(signature))
    return " ".join(parts)


def split_line(line: str) -> tuple[bytes, bytes]:
    """The payload and signature bytes of one evidence line; EvidenceFormatError otherwise.

    The payload is not parsed here: it is only bytes until its signature verifies."""
    if len(line) > MAX_LINE_BYTES:
        raise EvidenceFormatError(f"line is longer than {MAX_LINE_BYTES} bytes")
    parts = line.split(" ")
    if len(parts) != 3 or parts[0] != LINE_TAG:
        raise EvidenceFormatError(f"line is not '{LINE_TAG} <payload> <signature>'")
    data, signature = _unb64(parts[1]), _unb64(parts[2])
    if len(data) > MAX_PAYLOAD_BYTES or len(signature) > MAX_SIGNATURE_BYTES:
        raise EvidenceFormatError("line holds more than a statement and a signature")
    return data, signature


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: str) -> bytes:
    if not _B64.match(text):
        raise EvidenceFormatError("line is not base64")
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise EvidenceFormatError("line is not base64") from None


def evidence_path(content: str) -> str:
    """The file of the evidence ref that holds the statements about `content`.

    Fanned out by the key's first two hex digits, as git fans out objects."""
    found = _CONTENT.match(content)
    if found is None:
        raise EvidenceFormatError(f"{content[:80]!r} is not a content key or an input key")
    version, digest = found.groups()
    return f"{version}/{digest[:2]}/{digest[2:]}"


def evidence_lines(text: bytes) -> list[str]:
    """The lines of one evidence file, each once, in order; blank lines are no statements."""
    decoded = text.decode("utf-8", "replace")
    return list(dict.fromkeys(line.strip() for line in decoded.splitlines() if line.strip()))


def merge_lines(*files: bytes) -> bytes:
    """The line-wise union of evidence files: every line each holds, once, sorted."""
    lines = sorted({line for text in files for line in evidence_lines(text)})
    return "".join(line + "\n" for line in lines).encode("utf-8")


def why_not_covered(statement: Statement, subject: Subject) -> str | None:
    """None when `statement` stands for the gate's run on `subject`, else why not.

    The statement's time is not judged: it is the signer's word, and a signer
    is revoked in the protected signers file, never by what a statement claims."""
    if statement.result != RESULT_PASS:
        return f"its result is {statement.result!r}, not a pass"
    if statement.verifier != subject.verifier:
        return "another verifier digest (argv, pinned files or run settings differ from the gate's)"
    if statement.entity != subject.entity:
        return f"it is about entity {statement.entity!r}"
    if statement.content != subject.content:
        return "other content"
    if statement.environment != subject.environment:
        return f"environment {statement.environment!r}, not {subject.environment!r}"
    return None
