"""cachefile: a cache file is written whole or not at all, and never raises."""

from __future__ import annotations

from pathlib import Path

from failgate_hooks.cachefile import write_whole


def test_a_cache_file_is_written_whole_and_leaves_no_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "cache.json"
    assert write_whole(str(path), b"one")
    assert write_whole(str(path), b"two")  # over the old one
    assert path.read_bytes() == b"two"
    assert [p.name for p in path.parent.iterdir()] == ["cache.json"]


def test_an_unwritable_place_is_no_cache_not_a_failure(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file where a folder should be")
    assert not write_whole(str(blocker / "cache.json"), b"data")
    assert [p.name for p in tmp_path.iterdir()] == ["file"]
