"""The event record: ids, entity keys and folders, safe paths, and writing an event."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from failgate_hooks.core.events import (
    AppliesTo,
    Event,
    Evidence,
    EvidenceKind,
    Status,
    Verification,
    Workdir,
    entity_folder,
    entity_key_of_folder,
    event_to_toml,
    is_safe_relative_path,
    new_event_id,
)
from failgate_hooks.core.validate import parse_event

EID = "20261129T230500Z-7f3a9c1e"
PATH = f"ledger/deploy/mainnet/gas-budget/{EID}.toml"
KEY = "deploy:mainnet:gas-budget"
C40 = "9f2a1c4e" * 5
# Python's `\d` also matches Arabic-Indic and other Unicode digits; an id is ASCII.
ARABIC_INDIC_ID = "\u0662\u0660\u0662\u0666\u0661\u0661\u0662\u0669T230500Z-7f3a9c1e"


def test_ten_thousand_ids_made_in_one_second_almost_never_collide() -> None:
    # 32 random bits: among 10,000 ids of one second, one run in about 86 sees a
    # collision (n^2 / 2^33 pairs alike); four would take a broken generator (p < 1e-9).
    # (This test asked for none at all, and failed about once in 86 runs.)
    now = dt.datetime(2026, 11, 29, 23, 5, tzinfo=dt.UTC)
    ids = {new_event_id(now) for _ in range(10_000)}
    assert len(ids) > 10_000 - 4


def test_a_written_event_reads_back_equal() -> None:
    event = Event(
        id=EID,
        entity_key=KEY,
        status=Status.VERIFIED,
        effective_at=dt.datetime(2026, 11, 29, 23, 5, 7, 123456, tzinfo=dt.UTC),
        follows=("20261128T100000Z-00000001",),
        title="t",
        triggers=("deploy",),
        supersedes=("20261128T100000Z-00000002",),
        retracts=("20261128T100000Z-00000002",),
        recorded_by="Ada",
        note='multi\nline "quoted" note',
        applies_to=AppliesTo(since=C40, paths=("deploy/**",)),
        verification=Verification(
            command=("node", "demo/check.mjs"),
            files=("demo/check.mjs",),
            timeout_s=30,
            inputs=("deploy/*.json",),
            env_pass=("NODE_OPTIONS",),
            workdir=Workdir.INPLACE,
        ),
        evidence=Evidence(kind=EvidenceKind.HUMAN, commit=C40, confirmed_by="Ada"),
    )
    back, problems = parse_event(event_to_toml(event), PATH, entity_key=KEY)
    assert problems == ()
    assert back == event


texts = st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)))


@given(title=texts.filter(lambda t: t.strip() != ""), note=texts)
def test_any_text_round_trips(title: str, note: str) -> None:
    event = Event(
        id=EID,
        entity_key=KEY,
        status=Status.OBSERVED,
        effective_at=dt.datetime(2026, 11, 29, tzinfo=dt.UTC),
        title=title,
        triggers=("push",),
        note=note,
    )
    back, problems = parse_event(event_to_toml(event), PATH, entity_key=KEY)
    assert problems == () and back == event


def test_entity_keys_and_folders() -> None:
    assert entity_folder(KEY) == "deploy/mainnet/gas-budget"
    assert entity_key_of_folder("deploy/mainnet/gas-budget") == KEY
    assert entity_key_of_folder("Deploy/x") is None
    assert entity_key_of_folder("") is None
    assert entity_key_of_folder("deploy/mainnet\n") is None  # `$` would let this through


@given(st.text(alphabet="az09-_/A.\n", max_size=12))
def test_a_folder_names_the_entity_its_segments_name(folder: str) -> None:
    segments = [s for s in folder.split("/") if s]
    valid = segments and all(re.fullmatch(r"[a-z0-9][a-z0-9_-]*", s) for s in segments)
    assert entity_key_of_folder(folder) == (":".join(segments) if valid else None)


@given(st.text(alphabet="az09-_:A.\n", max_size=12))
def test_an_entity_key_is_valid_when_each_of_its_segments_is(key: str) -> None:
    from failgate_hooks.core.events import is_valid_entity_key

    segments = key.split(":")
    valid = all(re.fullmatch(r"[a-z0-9][a-z0-9_-]*", s) for s in segments)
    assert is_valid_entity_key(key) == valid


def test_a_file_name_ending_its_id_with_a_newline_is_no_event_name() -> None:
    from failgate_hooks.ledger.union import classify_path

    key, problem = classify_path(f"ledger/deploy/mainnet/gas-budget/{EID}\n.toml", "ledger")
    assert key == KEY and problem is not None and problem.code == "bad-file-name"


def test_a_file_named_by_an_id_in_arabic_indic_digits_is_no_event_name() -> None:
    from failgate_hooks.ledger.union import classify_path

    path = f"ledger/deploy/mainnet/gas-budget/{ARABIC_INDIC_ID}.toml"
    key, problem = classify_path(path, "ledger")
    assert key == KEY and problem is not None and problem.code == "bad-file-name"


@pytest.mark.parametrize(
    ("path", "safe"),
    [
        ("checks/x.py", True),
        ("x", True),
        ("../x", False),
        ("/x", False),
        ("a//b", False),
        ("a/./b", False),
        (".git/config", False),
        (".GIT/config", False),
        ("vendor/.git/hooks/pre-push", False),
        ("sub/.Git./config", False),
        ("x/.git", False),
        ("x/.github/workflows/ci.yml", True),
        (".gitignore", True),
        ("a\\b", False),
        ("", False),
    ],
)
def test_safe_relative_paths(path: str, safe: bool) -> None:
    assert is_safe_relative_path(path) is safe
