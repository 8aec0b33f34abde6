"""The server's accepted tips on real files, with real concurrent writers."""

from __future__ import annotations

import stat
import subprocess
import sys
import textwrap
from pathlib import Path

from failgate_hooks.app.accepted_tips import KEPT_PER_REF, AcceptedTips, shared_modes

REF = "refs/heads/staging"


def test_a_tip_is_held_for_its_ref_only(tmp_path: Path) -> None:
    tips = AcceptedTips(str(tmp_path))
    assert tips.record([(REF, "a" * 40)]) is None
    fresh = AcceptedTips(str(tmp_path))
    assert fresh.holds(REF, "a" * 40)
    assert not fresh.holds("refs/heads/main", "a" * 40)
    assert not fresh.holds(REF, "b" * 40)


def test_the_last_tips_are_kept_and_a_damaged_file_holds_none(tmp_path: Path) -> None:
    tips = AcceptedTips(str(tmp_path))
    commits = [f"{n:040x}" for n in range(KEPT_PER_REF + 3)]
    for commit in commits:
        assert tips.record([(REF, commit)]) is None
    assert [tips.holds(REF, c) for c in commits] == [False] * 3 + [True] * KEPT_PER_REF
    (file,) = [p for p in (tmp_path / "failgate/accepted").iterdir() if p.suffix == ".json"]
    file.write_text('{"ref": "refs/heads/other", "tips": ["' + commits[-1] + '"]}')
    assert not tips.holds(REF, commits[-1])  # a file under another ref's name proves nothing
    file.write_bytes(b"\xff garbage")
    assert not tips.holds(REF, commits[-1])


def test_concurrent_pushes_to_one_ref_lose_no_tip(tmp_path: Path) -> None:
    writer = textwrap.dedent(
        """\
        import sys
        from failgate_hooks.app.accepted_tips import AcceptedTips
        tips = AcceptedTips(sys.argv[1])
        for i in range(2):
            assert tips.record([("refs/heads/staging", f"{sys.argv[2]}{i}" * 20)]) is None
        """
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", writer, str(tmp_path), str(n)]) for n in range(8)
    ]
    assert [p.wait(timeout=120) for p in procs] == [0] * 8
    tips = AcceptedTips(str(tmp_path))
    assert all(tips.holds(REF, f"{n}{i}" * 20) for n in range(8) for i in range(2))


def test_a_shared_repository_shares_the_folder_and_files_as_git_does(tmp_path: Path) -> None:
    """Where each pusher is their own Unix user in one group, the next pusher must be able
    to rewrite what the last one wrote: else every push warns and nothing is remembered."""
    assert shared_modes(None) is None and shared_modes("umask") is None
    assert shared_modes("group") == shared_modes("true") == (0o660, 0o2770)
    assert shared_modes("all") == (0o664, 0o2775)
    assert shared_modes("0640") == (0o640, 0o2750)
    tips = AcceptedTips(str(tmp_path), "group")
    assert tips.record([(REF, "a" * 40)]) is None
    folder = tmp_path / "failgate/accepted"
    (file,) = [p for p in folder.iterdir() if p.suffix == ".json"]
    assert stat.S_IMODE(folder.stat().st_mode) == 0o2770
    assert stat.S_IMODE((tmp_path / "failgate").stat().st_mode) == 0o2770
    assert stat.S_IMODE(file.stat().st_mode) == 0o660
