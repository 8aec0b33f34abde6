"""A line with a part the scan cannot read: its protected names are judged, whatever it runs.

What a pipe into a shell, `ssh HOST CMD`, `tmux`, `xargs` or a computed command
run is not in the text the scan reads, so the whole line is judged as inline code
is: a name of the hooks, the ledger or an agent's configuration anywhere in it
refuses it. A line the scan reads to the end is judged as it always was.
"""

from __future__ import annotations

import pytest

from failgate_hooks.core.agent.command_rules import Risk
from failgate_hooks.core.agent.command_scan import scan_command
from failgate_hooks.core.agent.protected import Protected, protected_writes
from failgate_hooks.render.agent import short_refusal
from tests.test_command_scan import PROTECTED, ROOT, risks

UNREAD_NAMING = [
    ("echo 'rm -rf .git/hooks' | bash", ".git/hooks"),
    ("tmux new 'cp x .git/hooks/pre-push'", ".git/hooks"),
    ("ssh localhost 'rm -rf repo/.git/hooks'", ".git/hooks"),
    ("ls | xargs -I{} cp {} .git/hooks/pre-push", ".git/hooks"),
    ("find . -name x | xargs sed -i s/a/b/ ledger/k/20261129T230500Z-7f3a9c1e.toml", "ledger"),
    ("screen -dm sh -c 'echo {} > .codex/hooks.json'", ".codex/hooks.json"),
    ("bash <(echo 'rm -rf .git/hooks')", ".git/hooks"),
    ("echo 'vim .claude/settings.json' | bash", ".claude/settings.json"),  # no writer in sight
    ("cat x | sh -s && echo > /dev/null '[core] hookspath'", "hookspath"),
    ("rm -rf .git/hooks 'unterminated", ".git/hooks"),  # text it cannot parse at all
    ("g=git; $g log -- ledger/", "ledger"),  # the price of failing closed: $g could be rm
]


@pytest.mark.parametrize(("command", "name"), UNREAD_NAMING)
def test_a_protected_name_in_a_line_with_an_unreadable_part_is_refused(
    command: str, name: str
) -> None:
    scan = scan_command(command, ROOT)
    found = protected_writes(scan.writes, scan.code, PROTECTED, unread=scan.unread)
    unread = [f for f in found if f.risk is Risk.PROTECTED_UNREADABLE]
    assert unread, (command, found)
    assert unread[0].detail.startswith(name), unread


def test_the_refusal_names_the_place_and_what_could_not_be_read() -> None:
    scan = scan_command("echo 'rm -rf .git/hooks' | bash", ROOT)
    found = protected_writes(scan.writes, scan.code, PROTECTED, unread=scan.unread)
    message = short_refusal(found)
    assert ".git/hooks" in message
    assert "cannot read" in message
    assert "a shell reads its commands from a pipe" in message


def test_the_ledger_named_in_the_config_is_the_name_judged() -> None:
    renamed = Protected(root=ROOT, ledger="risks")
    assert Risk.PROTECTED_UNREADABLE in risks("echo 'rm -r risks/' | sh", protected=renamed)
    assert risks("echo 'rm -r ledger/' | sh", protected=renamed) == set()


# Nothing in them is unreadable: they are judged as they were, and proceed.
READ_TO_THE_END = [
    "git log -- ledger/",
    "cat .git/hooks/pre-push | grep exit",  # a pipe into grep, not into a shell
    "vim .claude/settings.json",
    "ls ledger/ | wc -l",
    "grep -rn hooksPath docs/ | head",
    "bash scripts/check.sh ledger/",  # a script file, given a name as data
    "sh -c 'ls ledger/'",
    "cat data | sh -c 'wc -l' > ledger.txt",  # -c: the pipe is its data
    "ssh -T git@github.com && cat .git/config",  # ssh without a command of its own
]


@pytest.mark.parametrize("command", READ_TO_THE_END)
def test_a_line_read_to_the_end_is_judged_as_before(command: str) -> None:
    assert scan_command(command, ROOT).unread is None, command
    assert risks(command) == set(), command


def test_an_unreadable_line_naming_nothing_protected_proceeds() -> None:
    command = "echo 'make test' | bash > build.log"
    assert scan_command(command, ROOT).unread is not None
    assert risks(command) == set()


@pytest.mark.parametrize(
    "command",
    [
        "echo 'push --no-verify' | xargs git",  # xargs supplies the subcommand
        "printf git | xargs -I{} {} push --no-verify",  # and even the program
        "git ls-files | xargs wc -l && git push",  # the price of failing closed
    ],
)
def test_a_push_on_a_line_where_xargs_runs_a_command_is_refused(command: str) -> None:
    assert risks(command) & {Risk.PUSH_BYPASS, Risk.PUSH_UNREADABLE}, command


def test_xargs_with_no_command_of_its_own_is_read() -> None:
    assert risks("git ls-files | xargs && git push") == set()
