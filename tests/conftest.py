"""Real git repositories in temporary folders, isolated from the developer's git config."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# A developer's own git config (signing, hooks, templates, default branch) never leaks in.
ISOLATED_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "Ada Tester",
    "GIT_AUTHOR_EMAIL": "ada@example.org",
    "GIT_COMMITTER_NAME": "Ada Tester",
    "GIT_COMMITTER_EMAIL": "ada@example.org",
    "GIT_TERMINAL_PROMPT": "0",
}


def pytest_configure(config: pytest.Config) -> None:
    os.environ.update(ISOLATED_ENV)
    # GITHUB_ACTIONS too: inside a real Actions step every run would print as it does there.
    for name in (
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "FAILGATE_TRUST_LEDGER",
        "GITHUB_ACTIONS",
    ):
        os.environ.pop(name, None)


@pytest.fixture(autouse=True)
def _checkouts_in_a_cache_of_the_tests_own(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Verifier checkouts persist in the user's cache: here one per test, never the developer's."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture
def immutable_files(tmp_path: Path) -> Iterator[None]:
    """For a test that makes files immutable (`chattr +i`, as a verifier run as root can):
    it needs root, and whatever it made immutable under its folders is removable after."""
    if os.geteuid() != 0:
        pytest.fail("making a file immutable needs root (chattr +i): run these tests as root")
    yield
    for folder in (tmp_path, Path(os.environ["XDG_CACHE_HOME"])):
        subprocess.run(["chattr", "-R", "-i", str(folder)], capture_output=True, check=False)


def make_immutable(path: Path) -> None:
    """Nobody may change or remove the file (with the `immutable_files` fixture)."""
    subprocess.run(["chattr", "+i", str(path)], check=True)


def git(cwd: Path | str, *args: str, check: bool = True, input: str | None = None) -> str:
    """Run git in `cwd` and return stdout (stripped)."""
    proc = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, input=input, check=False
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}")
    return proc.stdout.strip()


class Result:
    def __init__(self, proc: subprocess.CompletedProcess[str]) -> None:
        self.code = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr

    @property
    def output(self) -> str:
        return self.out + self.err

    def __repr__(self) -> str:
        return f"<exit {self.code}\n--- stdout\n{self.out}\n--- stderr\n{self.err}>"


def failgate(
    cwd: Path | str, *args: str, env: dict[str, str] | None = None, input: str | None = None
) -> Result:
    """Run the real `failgate` command (a fresh interpreter) in `cwd`."""
    proc = subprocess.run(
        [sys.executable, "-m", "failgate_hooks", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        input=input,
        check=False,
        env={**os.environ, **(env or {})},
        timeout=300,
    )
    return Result(proc)


class Repo:
    """A real repository with a one-line way to write, commit and ask."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def git(self, *args: str, check: bool = True, input: str | None = None) -> str:
        return git(self.path, *args, check=check, input=input)

    def write(self, relpath: str, text: str) -> Path:
        target = self.path / relpath
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        return target

    def commit(self, message: str = "change", *paths: str) -> str:
        self.git("add", "-A", *paths)
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.head()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD")

    def failgate(self, *args: str, **kw: object) -> Result:
        return failgate(self.path, *args, **kw)  # type: ignore[arg-type]

    def record(self, *args: str) -> str:
        """`failgate record ARGS`, asserting success; the new file's repo path."""
        result = self.failgate("record", *args)
        assert result.code == 0, result
        return result.out.strip().splitlines()[-1]


def make_repo(path: Path, object_format: str = "sha1") -> Repo:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main", f"--object-format={object_format}")
    repo = Repo(path)
    repo.write("README", "a project\n")
    repo.commit("initial")
    return repo


@pytest.fixture(params=["sha1", "sha256"])
def any_repo(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Repo]:
    """A repository with one commit, once in SHA-1 and once in SHA-256."""
    yield make_repo(tmp_path / "repo", request.param)


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    """A SHA-1 repository with one commit."""
    return make_repo(tmp_path / "repo")
