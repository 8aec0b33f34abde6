"""A push inside a program that runs a command: read, or refused as unreadable.

A wrapper whose command runs here, as the shell would run it, is read: a bypass
in it is refused and a plain push in it proceeds (the git hook decides). One
whose command runs where this hook cannot follow (another machine, a terminal
multiplexer's own shell, a language that is not the shell's) is unreadable, so a
line that pushes through it is refused.
"""

from __future__ import annotations

import pytest

from failgate_hooks.core.agent.command_rules import Risk
from tests.test_command_scan import risks

# Each with the push written where the wrapper takes its command.
READ_WRAPPERS = [
    "script -c '{}'",
    "script -q -E never -c '{}' /dev/null",
    "watch {}",  # watch joins its operands and runs them with sh -c
    "watch -n 1 '{}'",
    "su -c '{}'",
    "su -s /bin/sh -c '{}'",  # -s names the shell, not the command
    "su root -c '{}'",
    "sudo sh -c '{}'",
    "nohup {}",
    "setsid {}",
    "stdbuf -o0 {}",
    "chronic {}",
    "timeout 5 {}",
    "env -S '{}'",
    "flock /tmp/l {}",
    "flock /tmp/l -c '{}'",
    "ionice {}",
    "nice -n 5 {}",
    "chronic sh -c '{}'",
    "at now <<'EOF'\n{}\nEOF",  # at runs its input with sh, later
    # the command's option in a cluster, as getopt reads it
    "script -qc '{}' /dev/null",
    "script -c'{}'",
    "script --command='{}'",
    "su -lc '{}'",
    "su - root -c '{}'",
    "flock -xc '{}' /tmp/l",
    "flock -n /tmp/l --command '{}'",
    "runuser -c '{}'",
    "runuser root -c '{}'",
    "runuser -u root -- {}",
    "runuser -l root -c '{}'",
    "sg wheel -c '{}'",
    "sg wheel '{}'",  # sg hands its command to sh -c
]


@pytest.mark.parametrize("wrapper", READ_WRAPPERS)
def test_a_bypass_inside_a_wrapper_that_runs_it_here_is_found(wrapper: str) -> None:
    assert Risk.PUSH_BYPASS in risks(wrapper.format("git push --no-verify")), wrapper


@pytest.mark.parametrize("wrapper", READ_WRAPPERS)
def test_a_plain_push_inside_such_a_wrapper_proceeds(wrapper: str) -> None:
    assert risks(wrapper.format("git push origin main")) == set(), wrapper


UNREAD_WRAPPERS = [
    "ssh host {}",  # runs on another machine: `ssh localhost 'cd repo && …'` reaches this one
    "ssh -p 22 host '{}'",
    "ssh host <<'EOF'\n{}\nEOF",  # the remote shell reads it
    "tmux new -d '{}'",
    "tmux send-keys '{}' Enter",
    "screen -dm sh -c '{}'",
    "echo '{}' | at now",
    "at now < job.sh; {}",
    "su -Zc '{}'",  # a letter the table does not know: the cluster may hide the command
    "expect -c 'spawn {}'",  # Tcl, not the shell
    "xargs -I{{}} {}",  # the arguments come from its input
    "systemd-run {}",  # a unit of the service manager runs it, in its own environment
    "systemd-run --user -p Nice=5 sh -c '{}'",
]


@pytest.mark.parametrize("wrapper", UNREAD_WRAPPERS)
def test_a_push_inside_a_wrapper_this_hook_cannot_follow_is_refused(wrapper: str) -> None:
    assert Risk.PUSH_UNREADABLE in risks(wrapper.format("git push origin main")), wrapper
    assert risks(wrapper.format("git push --no-verify")) & {Risk.PUSH_BYPASS, Risk.PUSH_UNREADABLE}


@pytest.mark.parametrize(
    "command",
    [
        "GIT_SSH_COMMAND='ssh -i ~/.ssh/deploy -o IdentitiesOnly=yes' git push origin main",
        "ssh -T git@github.com && git push",  # no command of its own
        "tmux ls",
        "ssh host uptime",
        "watch -n 5 git status",
        "su -c 'make install'",
        "runuser -u build -- make",
        "sg docker -c 'docker ps'",
        "systemd-run --user make",
    ],
)
def test_those_wrappers_proceed_when_nothing_pushes_through_them(command: str) -> None:
    assert risks(command) == set(), command
