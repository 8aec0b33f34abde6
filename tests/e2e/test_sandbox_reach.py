"""What a pushed commit can reach through the sandbox's own set-up: real bwrap, the real
`failgate check --sandbox` and a real server hook.

A commit chooses the interpreter its verifier's `#!` line names, and a file it
wrote into a work tree or a pool slot is where that line can point. Whatever
such a file is or says, the sandbox shows no more than it would without it.
The repository's other work trees are hidden too: a verifier that imports from
one judged code that is no commit's.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from failgate_hooks.verify import sandbox
from tests.conftest import Repo, make_repo
from tests.e2e.test_pre_receive import install_pre_receive, push
from tests.e2e.test_sandbox import KEY, gated, outcome, venv
from tests.worlds import remote_ref, with_remote

SECRET = "a private key\n"


def a_home_with_a_key(base: Path) -> Path:
    home = base / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(SECRET)
    return home


def fake_python(names: Path, secret: Path) -> str:
    """A `python3` that, asked for its prefixes, names `names` and its own folder (so it
    can start); run, it prints `secret`."""
    return (
        "#!/bin/sh\n"
        f'if [ "$1" = -I ]; then echo {names}; dirname "$0"; echo /bin/sh; exit 0; fi\n'
        f"cat {secret} && exit 0\n"
        "exit 1\n"
    )


def a_launcher(home: Path, python: str = sys.executable) -> Path:
    """A `python3` in the home folder that runs `python`, as a pyenv shim would."""
    launcher = home / "bin" / "python3"
    launcher.parent.mkdir()
    launcher.write_text(f'#!/bin/sh\nexec {python} "$@"\n')
    launcher.chmod(0o755)
    return launcher


def gated_by(repo: Repo, interpreter: str) -> None:
    """The gate runs ./run-tests, whose `#!` line names `interpreter`."""
    script = repo.write("run-tests", f"#!{interpreter}\n")
    script.chmod(0o755)
    repo.commit("a verifier whose interpreter is elsewhere")
    repo.record(
        KEY, "--status", "observed", "--title", "a chosen interpreter", "--trigger", "push",
        "--verify", "./run-tests", "--no-probe",
    )  # fmt: skip
    repo.commit("record the gate")


def test_an_interpreter_in_the_work_tree_never_decides_what_the_sandbox_shows(
    visible: Path,
) -> None:
    home = a_home_with_a_key(visible)
    ssh = home / ".ssh"
    repo = make_repo(visible / "repo")  # outside /tmp: only the work-tree rule hides it
    # Dressed as a virtualenv, over a real Python: still never one to show.
    base = os.path.dirname(os.path.realpath(sys._base_executable))
    repo.write("tools/pyvenv.cfg", f"home = {base}\n")
    fake = repo.write("tools/bin/python3", fake_python(ssh, ssh / "id_ed25519"))
    fake.chmod(0o755)
    gated_by(repo, str(fake))
    code, text = outcome(repo, "--sandbox", env={"HOME": str(home)})
    assert SECRET.strip() not in text, text
    assert code == 1, text
    assert f"{fake} is in a folder it hides" in text, text
    assert outcome(repo, env={"HOME": str(home)})[0] == 0  # unsandboxed, the key is in reach


def test_an_interpreter_in_another_push_s_checkout_never_decides_what_the_server_shows(
    tmp_path: Path, visible: Path
) -> None:
    """A pool slot holds the checkout of another push: its files are a pusher's too."""
    server_home = a_home_with_a_key(visible)
    ssh = server_home / ".ssh"
    cache = visible / "cache"
    repo = make_repo(tmp_path / "work")
    remote = with_remote(repo, tmp_path / "remote.git")
    install_pre_receive(remote, "--exec")
    hook = remote / "hooks" / "pre-receive"
    lines = hook.read_text().splitlines()
    exports = f"export HOME={server_home} XDG_CACHE_HOME={cache}"
    hook.write_text("\n".join([lines[0], exports, *lines[1:]]) + "\n")
    pools = cache / "failgate" / "checkouts"
    # A pushed interpreter, where a kept checkout of an earlier push lies.
    planted = pools / "some-repository" / "0" / "tree" / "tools" / "python3"
    planted.parent.mkdir(parents=True)
    planted.write_text(fake_python(ssh, ssh / "id_ed25519"))
    planted.chmod(0o755)
    gated_by(repo, str(planted))
    before = remote_ref(remote, "refs/heads/main")
    refused = push(repo, "main")
    assert SECRET.strip() not in refused.stderr, refused.stderr
    assert refused.returncode != 0, refused.stderr
    assert "is in a folder it hides" in refused.stderr, refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before


def test_another_work_tree_of_the_repository_is_hidden(tmp_path: Path, visible: Path) -> None:
    """An editable install from the main work tree, run from a linked one: not C's code."""
    python = venv(visible / "venv")
    (site,) = (visible / "venv" / "lib").glob("python3*/site-packages")
    main = visible / "main"
    (site / "_pkg_editable.pth").write_text(f"{main}\n")
    repo = make_repo(main)
    repo.write(".gitignore", "notes/\n")
    repo.write("pkg/__init__.py", "FIXED = False\n")
    repo.write(
        "checks/check.py",
        textwrap.dedent("""\
            import sys, pkg
            print("pkg from", pkg.__file__)
            sys.exit(0 if pkg.FIXED else 1)
            """),
    )
    repo.commit("the package and its check")
    repo.record(
        KEY, "--status", "observed", "--title", "the package is broken", "--trigger", "push",
        "--verify", f"{python} checks/check.py", "--verify-file", "checks/check.py",
        "--no-probe",
    )  # fmt: skip
    repo.commit("record the gate")
    linked = Repo(visible / "feature")
    repo.git("worktree", "add", "-q", "--detach", str(linked.path), "HEAD")
    repo.write("pkg/__init__.py", "FIXED = True  # never committed\n")
    env = {"PATH": os.environ["PATH"]}
    code, text = outcome(linked, "--sandbox", env=env)
    assert code == 1, text
    assert "CLEARED" not in text, text
    assert f"pkg from {main}" not in text, text
    # The control: unsandboxed, the load watcher says where it came from.
    code, text = outcome(linked, env=env)
    assert code == 1, text
    assert str(main) in text, text


def test_a_launcher_in_the_home_folder_runs_the_python_it_names(visible: Path) -> None:
    """A pyenv shim is the user's own program: asked, the Python it runs is run instead."""
    home = a_home_with_a_key(visible)
    launcher = a_launcher(home)
    verifier = f"import os, sys\nsys.exit(1 if os.path.exists({str(home / '.ssh')!r}) else 0)\n"
    repo = gated(visible / "repo", verifier, python="python3")
    env = {"HOME": str(home), "PATH": f"{launcher.parent}{os.pathsep}{os.environ['PATH']}"}
    code, text = outcome(repo, "--sandbox", env=env)
    assert code == 0, text
    assert outcome(repo, env=env)[0] == 1  # unsandboxed, the home folder is in sight


def asked(launcher: Path, home: Path, stale: Path, *, every_time: bool) -> tuple[object, int]:
    """What the sandbox learns from `launcher` when the listing of the folders to hide names
    `stale`, a checkout of another run that went before bwrap mounted over it; and how many
    listings were made."""
    listings: list[list[str]] = []
    commit_writable = sandbox.commit_writable

    def listed_before_it_went(hidden: Sequence[str], env: Mapping[str, str]) -> list[str]:
        listing = commit_writable(hidden, env)
        listings.append([*listing, str(stale)] if every_time or not listings else listing)
        return listings[-1]

    bwrap = shutil.which("bwrap")
    assert bwrap is not None
    box = sandbox.Sandbox(network=False, hidden=[], asked_by="a test")
    env = {"HOME": str(home), "PATH": os.environ["PATH"]}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sandbox, "commit_writable", listed_before_it_went)
        answer = box._launched_python(bwrap, str(launcher), [str(home)], env)
    return answer, len(listings)


def test_a_checkout_in_tmpdir_that_goes_while_the_launcher_is_asked_is_no_failure(
    visible: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Concurrent pushes on a server: another run's checkout can go between the listing
    and bwrap's mounting over it, where bwrap cannot make the mount point. TMPDIR is
    hidden whole instead, for a launcher that does not live in it."""
    temporary = visible / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    home = a_home_with_a_key(visible)
    answer, _ = asked(a_launcher(home), home, temporary / "failgate-gone", every_time=True)
    assert answer == (sys.executable, "")


def test_a_launcher_in_tmpdir_is_asked_again_over_a_fresh_listing(
    visible: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """TMPDIR stays in sight for a launcher that lives there (a CI job's tools): each
    checkout in it is hidden, as listed; one that went in between is listed again."""
    temporary = visible / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    home = a_home_with_a_key(visible)
    (temporary / "tools").mkdir()
    launcher = a_launcher(temporary / "tools")
    answer, listings = asked(launcher, home, temporary / "failgate-finished", every_time=False)
    assert answer == (sys.executable, "")
    assert listings == 2


def test_a_launcher_that_cannot_answer_says_why_it_was_not_run(visible: Path) -> None:
    home = a_home_with_a_key(visible)
    launcher = a_launcher(home)
    launcher.write_text("#!/bin/sh\necho 'no python version is set' >&2\nexit 3\n")
    repo = gated(visible / "repo", "import sys\n", python="python3")
    env = {"HOME": str(home), "PATH": f"{launcher.parent}{os.pathsep}{os.environ['PATH']}"}
    code, text = outcome(repo, "--sandbox", env=env)
    assert code == 1, text
    assert "asked which Python it runs, it exited 3 (no python version is set)" in text, text


def test_a_launcher_in_the_work_tree_is_never_asked(visible: Path) -> None:
    """Asked, it could read what it likes, and say so: here, by naming a program that passes."""
    home = a_home_with_a_key(visible)
    key = home / ".ssh" / "id_ed25519"
    repo = make_repo(visible / "repo")
    fake = repo.write(
        "tools/python3",
        f'#!/bin/sh\nif [ "$1" = -I ]; then test -e {key} && echo /bin/true; exit 0; fi\nexit 1\n',
    )
    fake.chmod(0o755)
    repo.commit("a python that is not one")
    repo.record(
        KEY, "--status", "observed", "--title", "a chosen interpreter", "--trigger", "push",
        "--verify", str(fake), "--no-probe",
    )  # fmt: skip
    repo.commit("record the gate")
    code, text = outcome(repo, "--sandbox", env={"HOME": str(home)})
    assert SECRET.strip() not in text, text
    assert code == 1, text
    assert f"{fake} is in a folder it hides" in text, text
