"""The evidence layout: the folders and plain files evidence_path makes, and nothing else."""

from __future__ import annotations

import pytest

from failgate_hooks.core.evidence_layout import FILE_MODE, FOLDER_MODE, layout_problem

NAME = "ab" * 31


@pytest.mark.parametrize(
    ("path", "mode"),
    [("ck1", FOLDER_MODE), ("ik1/0f", FOLDER_MODE), (f"ck2/ab/{NAME}", FILE_MODE)],
)
def test_what_evidence_path_makes_has_its_place(path: str, mode: str) -> None:
    assert layout_problem(path, mode) is None


@pytest.mark.parametrize(
    ("path", "mode", "why"),
    [
        (f"ck1/ab/{NAME}", "120000", "a symbolic link"),
        (f"ck1/ab/{NAME}", "160000", "a submodule"),
        (f"ck1/ab/{NAME}", "100755", "an executable file"),
        (f"ck1/ab/{NAME}", FOLDER_MODE, "a folder where no evidence folder belongs"),
        ("ck9", FOLDER_MODE, "a folder where no evidence folder belongs"),
        ("ck1/AB", FOLDER_MODE, "a folder where no evidence folder belongs"),
        ("ck1/abc", FOLDER_MODE, "a folder where no evidence folder belongs"),
        ("README", FILE_MODE, "a file no content key names"),
        ("ck1/ab", FILE_MODE, "a file no content key names"),
        (f"ck1/ab/{NAME}0", FILE_MODE, "a file no content key names"),
        (f"ck1/abc/{NAME[1:]}", FILE_MODE, "a file no content key names"),
    ],
)
def test_anything_else_is_named_for_what_it_is(path: str, mode: str, why: str) -> None:
    assert layout_problem(path, mode) == why
