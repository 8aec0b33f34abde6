"""The evidence statement as a value: its signed bytes, its line, and what it covers."""

from __future__ import annotations

import pytest

from failgate_hooks.core.evidence import (
    EvidenceFormatError,
    Statement,
    Subject,
    encode_line,
    evidence_path,
    merge_lines,
    parse_payload,
    payload,
    split_line,
    why_not_covered,
)

CONTENT = "ck1:" + "ab" * 32
DIGEST = "vd3:" + "cd" * 32


def statement(**changes: object) -> Statement:
    base = Statement(
        content=CONTENT,
        environment=None,
        verifier=DIGEST,
        entity="budget",
        result="pass",
        time="2026-12-02T01:00:00Z",
        repository="example/project",
        ref="refs/heads/main",
        run_url="https://ci.example/run/1",
        sandboxed=True,
        commit="1" * 40,
        tree="2" * 40,
    )
    return base._replace(**changes)


def subject(**changes: object) -> Subject:
    base = Subject(content=CONTENT, environment=None, verifier=DIGEST, entity="budget")
    return base._replace(**changes)


def test_a_payload_is_one_sorted_json_object_that_parses_back() -> None:
    data = payload(statement())
    assert data.startswith(b'{"commit":') and b" " not in data
    assert parse_payload(data) == statement()


@pytest.mark.parametrize(
    "data",
    [
        b"not json",
        b"[]",
        b'{"format":"failgate-evidence/1"}',
        payload(statement()).replace(b'"pass"', b'"pass", "x": 1'),
        payload(statement()).replace(b"failgate-evidence/1", b"failgate-evidence/9"),
        payload(statement()).replace(b'"sandboxed":true', b'"sandboxed":"yes"'),
        payload(statement()).replace(CONTENT.encode(), b"ck1:../../etc"),
        payload(statement()).replace(b"2026-12-02T01:00:00Z", b"yesterday"),
        payload(statement()).replace(b'{"commit"', b'{ "commit"'),  # not canonical
        b"{" + b" " * 5000 + b"}",
    ],
)
def test_anything_but_a_canonical_statement_is_refused(data: bytes) -> None:
    with pytest.raises(EvidenceFormatError):
        parse_payload(data)


def test_a_statement_out_of_bounds_cannot_be_made() -> None:
    with pytest.raises(EvidenceFormatError, match="run_url"):
        payload(statement(run_url="https://x/" + "a" * 3000))


def test_a_line_carries_payload_and_signature_unchanged() -> None:
    line = encode_line(b"payload bytes", b"-----BEGIN SSH SIGNATURE-----\nabc\n")
    assert "\n" not in line
    assert split_line(line) == (b"payload bytes", b"-----BEGIN SSH SIGNATURE-----\nabc\n")


@pytest.mark.parametrize("line", ["", "fge1 abc", "fge2 YQ== YQ==", "fge1 !!! YQ==", "x" * 20000])
def test_a_line_that_does_not_parse_is_refused(line: str) -> None:
    with pytest.raises(EvidenceFormatError):
        split_line(line)


def test_the_path_fans_out_by_content_key_and_refuses_anything_else() -> None:
    assert evidence_path(CONTENT) == f"ck1/ab/{'ab' * 31}"
    assert evidence_path("ik1:" + "0f" * 32).startswith("ik1/0f/")
    with pytest.raises(EvidenceFormatError):
        evidence_path("ck1:../../x")


def test_merging_keeps_every_line_of_both_once() -> None:
    assert merge_lines(b"b\na\n", b"c\nb\n\n") == b"a\nb\nc\n"


def test_a_statement_covers_only_the_same_verifier_entity_content_and_environment() -> None:
    assert why_not_covered(statement(), subject()) is None
    other = "vd3:" + "ee" * 32
    assert "digest" in str(why_not_covered(statement(verifier=other), subject()))
    assert "content" in str(why_not_covered(statement(), subject(content="ik1:" + "00" * 32)))
    assert "environment" in str(why_not_covered(statement(), subject(environment="prod")))
    assert "entity" in str(why_not_covered(statement(entity="other"), subject()))
    assert "not a pass" in str(why_not_covered(statement(result="fail"), subject()))
