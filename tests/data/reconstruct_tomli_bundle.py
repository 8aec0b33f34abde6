"""Rebuild tests/data/tomli.bundle from tomli's two PyPI sdists; see tests/data/README.md.

Run from the repository root, on a machine that reaches PyPI:

    python tests/data/reconstruct_tomli_bundle.py

It downloads tomli 1.2.2 and 1.2.3 as sdists with pip, checks their sha256
against PyPI's published hashes, and commits the files the package needs to
import (and its licence, which must travel with every copy) as two commits
on `main`, tagged `1.2.2` and `1.2.3`. Dates and identities are fixed here,
so the commit ids come out the same on every run.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
BUNDLE = HERE / "tomli.bundle"

# Every file committed, relative to the sdist's top folder. The rest of the sdist
# (README.md, pyproject.toml, PKG-INFO) is not needed to import the package.
FILES = (
    "LICENSE",
    "tomli/__init__.py",
    "tomli/_parser.py",
    "tomli/_re.py",
    "tomli/_types.py",
    "tomli/py.typed",
)
# PKG-INFO's Author-email, the same in both sdists.
AUTHOR = ("Taneli Hukkinen", "hukkin@users.noreply.github.com")
# Whoever rebuilt the history: not the author of the code.
COMMITTER = ("failgate test data", "failgate-tests@example.invalid")
RECONSTRUCTED_AT = "2026-11-30T00:00:00+00:00"


@dataclass(frozen=True)
class Release:
    version: str
    sha256: str  # as PyPI publishes it for the sdist
    uploaded: str  # the sdist's upload time on PyPI: the release date
    message: str


PROVENANCE = (
    "Reconstructed by failgate's tests from the sdist tomli-{version}.tar.gz,\n"
    "sha256 {sha256},\n"
    "downloaded from PyPI with\n"
    "`pip download --no-deps --no-binary :all: tomli=={version}`. This is not a\n"
    "commit of tomli's own git history: the files are the sdist's LICENSE and\n"
    "tomli/ package, byte for byte; the author is the sdist's PKG-INFO\n"
    "Author-email; the author date is the sdist's upload time on PyPI.\n"
)

RELEASES = (
    Release(
        "1.2.2",
        "c6ce0015eb38820eaf32b5db832dbc26deb3dd427bd5f6556cf0acac2c214fee",
        "2021-10-25T09:51:03+00:00",
        "tomli 1.2.2, reconstructed from its PyPI sdist\n",
    ),
    Release(
        "1.2.3",
        "05b6166bff487dc068d322585c7ea4ef78deed501cc124060e0f238e89a9231f",
        "2021-12-13T22:25:06+00:00",
        'tomli 1.2.3 from its PyPI sdist: allow lower case "t" and "z" in datetimes\n\n'
        "tomli 1.2.3's one change, in its release notes' words (as Fedora's\n"
        'python-tomli changelog quotes them): Allow lower case "t" and "z" in\n'
        "datetimes. TOML 1.0 follows RFC 3339, which allows both; 1.2.2 rejects\n"
        "`1979-05-27t07:32:00z`. The diff is that fix and the version number.\n",
    ),
)


def git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """Run git in `repo` with no user or system config."""
    base = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    proc = subprocess.run(
        ["git", *args], cwd=repo, env={**base, **(env or {})}, capture_output=True, text=True
    )
    if proc.returncode != 0:
        sys.exit(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout.strip()


def download(release: Release, into: Path) -> Path:
    """The sdist from PyPI, refused unless its sha256 is the published one."""
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary",
         ":all:", f"tomli=={release.version}", "-d", str(into)],
        check=True,
    )  # fmt: skip
    sdist = into / f"tomli-{release.version}.tar.gz"
    digest = hashlib.sha256(sdist.read_bytes()).hexdigest()
    if digest != release.sha256:
        sys.exit(f"{sdist.name}: sha256 {digest}, expected {release.sha256}")
    return sdist


def lay_out(sdist: Path, version: str, repo: Path) -> None:
    """Write FILES from the sdist over the work tree."""
    with tarfile.open(sdist) as tar:
        for rel in FILES:
            member = tar.extractfile(f"tomli-{version}/{rel}")
            if member is None:
                sys.exit(f"{sdist.name} has no {rel}")
            target = repo / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(member.read())


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        repo = work / "tomli"
        repo.mkdir()
        git(repo, "init", "-q", "-b", "main", "--object-format=sha1")
        for release in RELEASES:
            lay_out(download(release, work / release.version), release.version, repo)
            git(repo, "add", "-A")
            message = release.message + "\n" + PROVENANCE.format(**release.__dict__)
            identity = {
                "GIT_AUTHOR_NAME": AUTHOR[0],
                "GIT_AUTHOR_EMAIL": AUTHOR[1],
                "GIT_AUTHOR_DATE": release.uploaded,
                "GIT_COMMITTER_NAME": COMMITTER[0],
                "GIT_COMMITTER_EMAIL": COMMITTER[1],
                "GIT_COMMITTER_DATE": RECONSTRUCTED_AT,
            }
            git(repo, "commit", "-q", "--no-verify", "-m", message, env=identity)
            git(repo, "tag", release.version)
        git(repo, "bundle", "create", str(BUNDLE), "--all")
        print(f"wrote {BUNDLE}")
        print(git(repo, "log", "--format=%H %an %aI %s"))


if __name__ == "__main__":
    main()
