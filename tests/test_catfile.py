"""Reading many blobs through the one `cat-file`: all of them, in order, and a pipe
that stays in step whatever the reader does."""

from __future__ import annotations

import pytest

from failgate_hooks.core.errors import GitError
from failgate_hooks.git.repo import GitRepo
from tests.conftest import Repo

MANY = 400  # ids of 41 bytes: four times the 4 KiB written without the feeding thread


def blobs(repo: Repo, count: int) -> list[tuple[str, bytes]]:
    """`count` blobs written to the object database, with their contents."""
    contents = [f"blob {i}\n".encode() * (1 + i % 7) for i in range(count)]
    ids = repo.git("hash-object", "-w", "--stdin-paths", input="".join(
        f"{repo.write(f'b/{i}', c.decode())}\n" for i, c in enumerate(contents)
    )).split()  # fmt: skip
    return list(zip(ids, contents, strict=True))


@pytest.mark.parametrize("count", [1, 50, MANY])
def test_every_blob_comes_in_the_order_asked(any_repo: Repo, count: int) -> None:
    written = blobs(any_repo, count)
    with GitRepo.open(any_repo.path) as repo:
        assert list(repo.iter_blobs(oid for oid, _ in written)) == written


def test_a_reader_that_stops_early_leaves_the_next_question_answered_right(repo: Repo) -> None:
    written = blobs(repo, MANY)
    with GitRepo.open(repo.path) as git_repo:
        for _ in git_repo.iter_blobs(oid for oid, _ in written):
            break  # the other answers are still on their way
        last_id, last = written[-1]
        assert git_repo.read_object(last_id) == ("blob", last)
        assert git_repo.read_blobs([written[3][0]]) == dict([written[3]])


def test_a_missing_blob_fails_the_batch_and_not_the_next_one(repo: Repo) -> None:
    written = blobs(repo, MANY)
    absent = "0" * 40
    ids = [oid for oid, _ in written]
    with GitRepo.open(repo.path) as git_repo:
        with pytest.raises(GitError, match=f"blob {absent} is missing"):
            git_repo.read_blobs([*ids[:10], absent, *ids[10:]])
        assert git_repo.read_blobs(ids) == dict(written)
        found = git_repo.read_blobs([*ids[:10], absent, *ids[10:]], missing_ok=True)
        assert found == dict(written)


def test_a_blob_over_the_bound_is_read_past_and_never_held(repo: Repo) -> None:
    import tracemalloc

    huge = repo.git("hash-object", "-w", "--stdin", input="x" * (4 << 20))
    small = blobs(repo, 2)
    ids = [small[0][0], huge, small[1][0]]
    with GitRepo.open(repo.path) as git_repo:
        tracemalloc.start()
        try:
            found = list(git_repo.iter_bounded_blobs(ids, 64 * 1024))
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert [(b.oid, b.size, b.data) for b in found] == [
            (small[0][0], len(small[0][1]), small[0][1]),
            (huge, 4 << 20, None),
            (small[1][0], len(small[1][1]), small[1][1]),
        ]
        # four megabytes went through the pipe; never more than a piece of them was held
        assert peak < 1 << 20, peak
        # the pipe is still in step for the next question
        assert git_repo.read_object(small[1][0]) == ("blob", small[1][1])
