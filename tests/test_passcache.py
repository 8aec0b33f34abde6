"""The pass cache on real files: versioned keys over every part, and misses, never errors."""

from __future__ import annotations

import json
from pathlib import Path

from failgate_hooks.verify.passcache import PassCache, pass_key

ARGV = ("python", "checks/check.py")
PINS = [("checks/check.py", "a" * 40), ("checks/lib.py", "b" * 40)]


def test_pass_keys_are_versioned_and_cover_every_part() -> None:
    base = pass_key(ARGV, PINS, "deploy:gas", "mainnet", "ck1:00")
    assert base.startswith("pc1-")
    assert pass_key(ARGV, list(reversed(PINS)), "deploy:gas", "mainnet", "ck1:00") == base
    others = [
        pass_key(("python",), PINS, "deploy:gas", "mainnet", "ck1:00"),
        pass_key(ARGV, PINS[:1], "deploy:gas", "mainnet", "ck1:00"),
        pass_key(ARGV, PINS, "deploy:other", "mainnet", "ck1:00"),
        pass_key(ARGV, PINS, "deploy:gas", None, "ck1:00"),
        pass_key(ARGV, PINS, "deploy:gas", "", "ck1:00"),
        pass_key(ARGV, PINS, "deploy:gas", "mainnet", "ck1:01"),
        pass_key(ARGV, PINS, "deploy:gas", "mainnet", "ik1:00"),
    ]
    assert len({base, *others}) == 1 + len(others)


def test_a_recorded_pass_is_found_and_a_damaged_one_is_a_miss(tmp_path: Path) -> None:
    cache = PassCache(str(tmp_path))
    key = pass_key(ARGV, PINS, "deploy:gas", None, "ck1:00")
    assert cache.lookup(key) is None
    assert cache.record(key, commit="c" * 40, duration_s=0.5) is None
    hit = cache.lookup(key)
    assert hit is not None and (hit.commit, hit.duration_s) == ("c" * 40, 0.5)
    entry = tmp_path / "failgate/cache" / key
    entry.write_text("garbage")
    assert cache.lookup(key) is None
    other = pass_key(ARGV, PINS, "deploy:gas", None, "ck1:01")
    entry.write_text(json.dumps({"key": other, "commit": "c" * 40}))
    assert cache.lookup(key) is None  # a file under the wrong name proves nothing


def test_an_unwritable_cache_reports_instead_of_raising(tmp_path: Path) -> None:
    (tmp_path / "failgate").mkdir()
    (tmp_path / "failgate/cache").write_text("not a folder")
    cache = PassCache(str(tmp_path))
    why = cache.record("pc1-x", commit="c" * 40, duration_s=None)
    assert why is not None and "the pass cache could not be used" in why
    assert cache.lookup("pc1-x") is None
