"""Ref names and globs that look right and name nothing are refused where they are written."""

from __future__ import annotations

import pytest

from failgate_hooks.core.refnames import ref_pattern_problem


@pytest.mark.parametrize(
    "name",
    ["refs/heads/main", "refs/heads/release/*", "refs/heads/release/**", "refs/tags/**",
     "refs/**", "refs/remotes/origin/main", "refs/pull/12/merge"],
)  # fmt: skip
def test_a_full_name_that_can_match_a_branch_or_tag_stands(name: str) -> None:
    assert ref_pattern_problem(name) is None


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("main", "a short name matches no ref"),
        ("refs/heads/ma\u0456n", "non-ASCII"),  # a Cyrillic і
        ("refs/heads/main\u200b", "invisible"),  # a zero-width space
        ("refs/heads/main ", "a space"),
        ("refs/heads/main\t", "a space"),
        ("refs/", "matches no branch or tag"),
        ("refs/*", "matches no branch or tag"),  # * stops at /
        ("refs/heads/", "matches no branch or tag"),
        ("refs/heads//main", "matches no branch or tag"),
    ],
)  # fmt: skip
def test_a_name_that_looks_right_and_names_nothing_is_refused(name: str, why: str) -> None:
    problem = ref_pattern_problem(name)
    assert problem is not None and why in problem, problem
    assert problem.isascii(), problem  # a look-alike is shown escaped, never as itself


def test_an_event_scoped_to_a_look_alike_ref_is_invalid_where_it_says() -> None:
    import datetime as dt

    import tomli_w

    from failgate_hooks.core.validate import parse_event

    key, eid = "deploy:x", "20261203T180000Z-00000001"
    doc = {
        "schema": 1, "id": eid, "entity_key": key, "status": "observed", "title": "t",
        "triggers": ["push"], "effective_at": dt.datetime(2026, 12, 3, 18, tzinfo=dt.UTC),
        "applies_to": {"refs": ["refs/heads/main", "refs/heads/ma\u0456n"]},
    }  # fmt: skip
    event, problems = parse_event(tomli_w.dumps(doc).encode(), f"ledger/deploy/x/{eid}.toml",
                                  entity_key=key)  # fmt: skip
    assert event is None, event
    assert [p.key for p in problems] == ["applies_to.refs[1]"], problems
