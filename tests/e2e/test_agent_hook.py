"""The installed `failgate agent-hook`, fed each agent's payloads in a real gated repository.

Each answer is judged by `tests/agent_hosts.py`, which applies the agent's own
documented rules; the pushes that the hook lets through are then made for real,
through the installed git hook, to a real bare remote.
"""

from __future__ import annotations

import codecs
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agent_hosts import (
    AGENTS,
    SESSION_FIXTURE,
    SHELL_FIXTURE,
    Verdict,
    host_verdict,
    never_allows_or_asks,
    payload,
)
from tests.conftest import Repo, make_repo
from tests.worlds import KEY, budget_repo, record_failure, remote_ref, with_remote


class Answer:
    def __init__(self, proc: subprocess.CompletedProcess[bytes]) -> None:
        self.code = proc.returncode
        self.out = proc.stdout.decode()
        self.err = proc.stderr.decode()

    def verdict(self, agent: str, event: str = "tool") -> Verdict:
        return host_verdict(agent, event, self.code, self.out, self.err)

    def __repr__(self) -> str:
        return f"<exit {self.code}\n--- stdout\n{self.out}\n--- stderr\n{self.err}>"


def hook(
    cwd: Path, agent: str, body: bytes | dict[str, object], env: dict[str, str] | None = None
) -> Answer:
    """One call of the real hook command, as the agent makes it: JSON on stdin, in the
    agent's environment (this one, unless given)."""
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    proc = subprocess.run(
        [sys.executable, "-m", "failgate_hooks", "agent-hook", "--agent", agent],
        cwd=cwd, input=raw, capture_output=True, check=False, timeout=120, env=env,
    )  # fmt: skip
    return Answer(proc)


def shell(repo: Repo, agent: str, command: str) -> Answer:
    return hook(
        repo.path, agent, payload(SHELL_FIXTURE[agent], cwd=str(repo.path), command=command)
    )


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Repo, Path]:
    """A recorded failure with its verifier, the plain pre-push hook in, a bare remote."""
    base = tmp_path_factory.mktemp("gated")
    repo = budget_repo(base / "work")
    remote = with_remote(repo, base / "remote.git")
    record_failure(repo, "push")
    assert repo.failgate("install").code == 0
    return repo, remote


@pytest.mark.parametrize("agent", AGENTS)
def test_a_push_with_a_bypass_is_refused_with_the_gate_and_what_to_do(
    gated: tuple[Repo, Path], agent: str
) -> None:
    repo, remote = gated
    answer = shell(repo, agent, "git push --no-verify origin main")
    verdict = answer.verdict(agent)
    assert verdict.action == "block", answer
    assert KEY in verdict.reason
    assert f"failgate try {KEY}" in verdict.reason
    assert "--no-verify" in verdict.reason
    assert never_allows_or_asks(answer.out)
    assert remote_ref(remote, "refs/heads/main") != repo.head()


@pytest.mark.parametrize("agent", AGENTS)
def test_a_plain_push_proceeds_and_the_git_hook_refuses_it(
    gated: tuple[Repo, Path], agent: str
) -> None:
    repo, remote = gated
    answer = shell(repo, agent, "git push origin main")
    assert (answer.code, answer.out, answer.err) == (0, "", ""), answer
    assert answer.verdict(agent).action == "run"
    # what the agent would now run: the git hook decides, and says what to do
    pushed = subprocess.run(
        ["git", "push", "origin", "main"], cwd=repo.path, capture_output=True, text=True,
        check=False, timeout=300,
    )  # fmt: skip
    assert pushed.returncode != 0
    assert "BLOCKED" in pushed.stderr + pushed.stdout
    assert remote_ref(remote, "refs/heads/main") != repo.head()


@pytest.mark.parametrize("agent", AGENTS)
def test_everything_else_proceeds_with_no_output(gated: tuple[Repo, Path], agent: str) -> None:
    repo, _ = gated
    for command in ("ls -la", "git push -n origin main",
                    "git commit --allow-empty -m 'we never use --no-verify' && git push"):  # fmt: skip
        answer = shell(repo, agent, command)
        assert (answer.code, answer.out, answer.err) == (0, "", ""), (command, answer)


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini"])
def test_a_session_starts_with_the_held_gates_as_data(gated: tuple[Repo, Path], agent: str) -> None:
    repo, _ = gated
    answer = hook(repo.path, agent, payload(SESSION_FIXTURE[agent], cwd=str(repo.path)))
    verdict = answer.verdict(agent, "session")
    assert verdict.action == "context", answer
    assert len(verdict.reason) <= 8_000
    document = json.loads(verdict.reason.split("\n", 1)[1])
    assert document["kind"] == "failgate-agent-gates" and document["schema_version"] == 1
    (held,) = document["held"]
    assert held["entity_key"] == KEY
    assert held["verifier"]["try"] == f"failgate try {KEY}"
    assert held["data"]["title"]
    assert held["clears_when"] and held["evidence_missing"]


def test_copilots_session_hook_stays_silent(gated: tuple[Repo, Path]) -> None:
    repo, _ = gated
    answer = hook(repo.path, "copilot", payload(SESSION_FIXTURE["copilot"], cwd=str(repo.path)))
    assert (answer.code, answer.out) == (0, "")


@pytest.mark.parametrize(
    ("agent", "command"),
    [
        ("claude", "echo 'exit 0' > .git/hooks/pre-push"),
        ("codex", "rm -rf ledger"),
        ("gemini", "sed -i /agent-hook/d .gemini/settings.json"),
        ("cursor", "git config core.hooksPath /dev/null"),
        ("copilot", "failgate expire deploy:mainnet:gas-budget --note fixed"),
    ],
)
def test_a_command_around_the_gate_is_refused(
    gated: tuple[Repo, Path], agent: str, command: str
) -> None:
    repo, _ = gated
    assert shell(repo, agent, command).verdict(agent).action == "block"


@pytest.mark.parametrize(
    ("agent", "fixture"),
    [
        ("claude", "claude-pre-tool-use-write"),
        ("codex", "codex-pre-tool-use-apply-patch"),
        ("copilot", "copilot-pre-tool-use-edit"),
    ],
)
def test_a_file_tool_writing_the_hook_or_an_event_is_refused(
    gated: tuple[Repo, Path], agent: str, fixture: str
) -> None:
    repo, _ = gated
    cwd = str(repo.path)
    for path in (".git/hooks/pre-push", "ledger/deploy/x/20261201T000000Z-0000abcd.toml"):
        answer = hook(repo.path, agent, payload(fixture, cwd=cwd, path=path))
        assert answer.verdict(agent).action == "block", (path, answer)
    answer = hook(repo.path, agent, payload(fixture, cwd=cwd, path="src/app.py"))
    assert (answer.code, answer.out) == (0, ""), answer


def test_a_ledger_renamed_in_the_config_is_the_one_protected(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    repo.write("failgate.toml", 'ledger = "risks"\n')
    repo.commit("the ledger lives in risks/")
    assert shell(repo, "claude", "rm -rf risks").verdict("claude").action == "block"
    assert shell(repo, "claude", "rm -rf ledger").verdict("claude").action == "run"


def test_a_configuration_that_does_not_parse_leaves_the_default_ledger_guarded(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo")
    repo.write("failgate.toml", 'mode = "sideways"\n')
    repo.commit("a configuration failgate refuses")
    assert shell(repo, "claude", "rm -rf ledger").verdict("claude").action == "block"


@pytest.mark.parametrize("agent", AGENTS)
def test_an_input_it_cannot_read_refuses_a_push_and_is_silent_otherwise(
    gated: tuple[Repo, Path], agent: str
) -> None:
    repo, _ = gated
    pushing = hook(repo.path, agent, b'{"tool_input": {"command": "git push --no-verify')
    assert pushing.verdict(agent).action == "block", pushing
    assert "could not check" in pushing.verdict(agent).reason
    quiet = hook(repo.path, agent, b'{"tool_input": {"command": "ls')
    assert (quiet.code, quiet.out, quiet.err) == (0, "", ""), quiet


@pytest.mark.parametrize(
    "encode",
    [
        lambda text: codecs.BOM_UTF8 + text.encode(),
        lambda text: codecs.BOM_UTF16_LE + text.encode("utf-16-le"),
        lambda text: text.encode("utf-16-le"),
    ],
    ids=["utf-8-bom", "utf-16-bom", "utf-16"],
)
def test_a_payload_in_another_encoding_is_read(gated: tuple[Repo, Path], encode: object) -> None:
    repo, _ = gated
    body = payload(SHELL_FIXTURE["claude"], cwd=str(repo.path), command="git push --no-verify")
    answer = hook(repo.path, "claude", encode(json.dumps(body)))  # type: ignore[operator]
    assert answer.verdict("claude").action == "block", answer


def test_a_refusal_outside_a_repository_still_refuses(tmp_path: Path) -> None:
    answer = hook(tmp_path, "claude", payload(SHELL_FIXTURE["claude"], cwd=str(tmp_path),
                                              command="git push --no-verify"))  # fmt: skip
    verdict = answer.verdict("claude")
    assert verdict.action == "block"
    assert "could not read the gates" in verdict.reason


def test_a_megabyte_command_is_answered(gated: tuple[Repo, Path]) -> None:
    repo, _ = gated
    command = "git commit -m '" + "word " * 200_000 + "' && git push --no-verify"
    assert shell(repo, "claude", command).verdict("claude").action == "block"
    assert shell(repo, "claude", "echo " + "a" * 1_000_000).out == ""


# ------------------------------------------------------------------ install, doctor, uninstall


def agent_cli(repo: Repo, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "failgate_hooks", "agent", *args], cwd=repo.path,
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip


def test_install_doctor_and_uninstall_keep_every_other_hook(tmp_path: Path) -> None:
    repo = budget_repo(tmp_path / "work")
    record_failure(repo, "push")
    theirs = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "./lint.sh"}]}]}, "model": "opus"}  # fmt: skip
    repo.write(".claude/settings.json", json.dumps(theirs))
    command = f"{sys.executable} -m failgate_hooks"
    installed = agent_cli(repo, "install", "--command", command)
    assert installed.returncode == 0, installed.stderr
    assert "approve them with /hooks" in installed.stdout  # Codex's trust step
    doctor = agent_cli(repo, "doctor")
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "FAIL" not in doctor.stdout
    assert doctor.stdout.count("git push --no-verify is refused") == len(AGENTS)
    assert "codex exec" in doctor.stdout
    removed = agent_cli(repo, "uninstall")
    assert removed.returncode == 0, removed.stderr
    assert json.loads((repo.path / ".claude/settings.json").read_text()) == theirs
    for agent in ("codex", "gemini", "cursor"):
        assert not (repo.path / f".{agent}").exists()
    assert not (repo.path / ".github").exists()


def test_doctor_says_when_the_installed_command_does_not_answer(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    assert (
        agent_cli(repo, "install", "--agent", "claude", "--command", "no-such-failgate").returncode
        == 0
    )
    doctor = agent_cli(repo, "doctor", "--agent", "claude", "--agent", "codex")
    assert doctor.returncode == 1
    assert "FAIL git push --no-verify is refused (error: exit 127" in doctor.stdout
    assert "FAIL .codex/hooks.json is missing" in doctor.stdout


def test_install_refuses_a_config_it_cannot_read(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    repo.write(".cursor/hooks.json", '{"version": 1, // a comment\n}')
    refused = agent_cli(repo, "install", "--agent", "cursor")
    assert refused.returncode == 2
    assert "nothing was changed" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert (repo.path / ".cursor/hooks.json").read_text() == '{"version": 1, // a comment\n}'


def test_agent_gates_prints_the_versioned_document(gated: tuple[Repo, Path]) -> None:
    repo, _ = gated
    shown = agent_cli(repo, "gates")
    document = json.loads(shown.stdout)
    assert (document["kind"], document["schema_version"]) == ("failgate-agent-gates", 1)
    assert document["ref"] == "refs/heads/main"
    assert [g["entity_key"] for g in document["held"]] == [KEY]
    assert document["held"][0]["blocks_push"] is True
    assert "never the agent" in document["who_may_relax"]["rule"]


@pytest.mark.parametrize(
    "command",
    [
        # git runs a push's receive-pack command before the pre-push hook
        "git push --receive-pack='chmod -x .git/hooks/pre-push; git-receive-pack' origin main",
        "git push --exec='chmod -x .git/hooks/pre-push; git-receive-pack' origin main",
        "git -c remote.origin.receivepack='chmod -x .git/hooks/pre-push; git-receive-pack' "
        "push origin main",
        # git skips a hook that is not executable
        "chmod -R a-x .git && git push origin main",
        "perl -pi -e 's/^exec /exit 0; exec /' .git/hooks/pre-push && git push origin main",
    ],
)
def test_a_push_that_disarms_the_hook_on_its_way_is_refused(tmp_path: Path, command: str) -> None:
    repo = budget_repo(tmp_path / "work")
    remote = with_remote(repo, tmp_path / "remote.git")
    record_failure(repo, "push")
    assert repo.failgate("install").code == 0
    before = remote_ref(remote, "refs/heads/main")
    answer = shell(repo, "claude", command)
    if answer.verdict("claude").action == "run":
        # what the agent would now run, as its shell tool runs it
        subprocess.run(["sh", "-c", command], cwd=repo.path, capture_output=True, check=False,
                       timeout=300)  # fmt: skip
    assert remote_ref(remote, "refs/heads/main") == before, answer


@pytest.mark.parametrize("where", ["relative", "absolute"])
def test_a_file_tool_writing_a_hook_core_hooks_path_moved_is_refused(
    tmp_path: Path, where: str
) -> None:
    repo = budget_repo(tmp_path / "work")
    remote = with_remote(repo, tmp_path / "remote.git")
    record_failure(repo, "push")
    repo.git("config", "core.hooksPath", "githooks")
    assert repo.failgate("install").code == 0
    before = remote_ref(remote, "refs/heads/main")
    target = repo.path / "githooks" / "pre-push"
    path = str(target) if where == "absolute" else "githooks/pre-push"
    fixture = payload("claude-pre-tool-use-write", cwd=str(repo.path), path=path)
    answer = hook(repo.path, "claude", fixture)
    if answer.verdict("claude").action == "run":
        target.write_text("#!/bin/sh\nexit 0\n")  # what the agent's Write tool would do
        subprocess.run(["git", "push", "origin", "main"], cwd=repo.path, capture_output=True,
                       check=False, timeout=300)  # fmt: skip
    assert remote_ref(remote, "refs/heads/main") == before, answer


@pytest.mark.parametrize(
    "command",
    [
        # git's commands by their own program names, found in git's exec path
        '"$(git --exec-path)/git-push" --no-verify origin main',
        '"$(git --exec-path)/git-send-pack" ../remote.git main',
        "<EXEC>/git-push --no-verify origin main",
        "<EXEC>/git-send-pack ../remote.git main",
        # the ext transport runs its command before the pre-push hook
        "git -c protocol.ext.allow=always push "
        "'ext::sh -c chmod% -x% .git/hooks/pre-push;git% receive-pack% ../remote.git' main",
    ],
)
def test_a_push_by_another_name_is_refused(tmp_path: Path, command: str) -> None:
    repo = budget_repo(tmp_path / "work")
    remote = with_remote(repo, tmp_path / "remote.git")
    record_failure(repo, "push")
    assert repo.failgate("install").code == 0
    before = remote_ref(remote, "refs/heads/main")
    command = command.replace("<EXEC>", repo.git("--exec-path"))
    answer = shell(repo, "claude", command)
    if answer.verdict("claude").action == "run":
        subprocess.run(["sh", "-c", command], cwd=repo.path, capture_output=True, check=False,
                       timeout=300)  # fmt: skip
    assert remote_ref(remote, "refs/heads/main") == before, answer


def _held_with_the_hook(tmp_path: Path) -> tuple[Repo, Path, str | None, str]:
    """A held push gate, failgate's hook installed, and a plain push refused by it:
    (repo, remote, the remote's main, the commit a push would send)."""
    repo = budget_repo(tmp_path / "work")
    remote = with_remote(repo, tmp_path / "remote.git")
    record_failure(repo, "push")
    assert repo.failgate("install").code == 0
    before, head = remote_ref(remote, "refs/heads/main"), repo.git("rev-parse", "HEAD")
    plain = subprocess.run(["git", "push", "origin", "main"], cwd=repo.path,
                           capture_output=True, check=False, timeout=300)  # fmt: skip
    assert plain.returncode != 0 and remote_ref(remote, "refs/heads/main") == before
    return repo, remote, before, head


def test_a_command_git_runs_at_a_later_command_is_read_as_the_push_it_is(tmp_path: Path) -> None:
    # `git status` runs core.fsmonitor through the shell (its own arguments after it, here
    # a comment): a push from there skips the hook, though the line holds no `git push`
    repo, remote, before, head = _held_with_the_hook(tmp_path)
    command = "git -c core.fsmonitor='git push --no-verify origin main #' status"
    answer = shell(repo, "claude", command)
    verdict = answer.verdict("claude")
    assert verdict.action == "block", answer
    assert "--no-verify" in verdict.reason and KEY in verdict.reason
    # what the agent would have run, had the hook let it
    subprocess.run(["sh", "-c", command], cwd=repo.path, capture_output=True, check=True,
                   timeout=300)  # fmt: skip
    assert remote_ref(remote, "refs/heads/main") == head != before


HOOKS_OFF = "printf '[core]\\n\\thooksPath = /dev/null\\n' >> "


@pytest.mark.parametrize(
    ("where", "path"),
    [("worktree", ".git/config.worktree"), ("xdg", "<XDG>/git/config"),
     ("home", "~/.config/git/config")],
)  # fmt: skip
def test_a_config_file_that_moves_the_hooks_is_refused_however_git_finds_it(
    tmp_path: Path, where: str, path: str
) -> None:
    # git reads core.hooksPath from a worktree's own file once extensions.worktreeConfig
    # is set, and from the global file where XDG puts it: either switches the hook off
    repo = budget_repo(tmp_path / "work")
    remote = with_remote(repo, tmp_path / "remote.git")
    record_failure(repo, "push")
    assert repo.failgate("install").code == 0
    repo.git("config", "extensions.worktreeConfig", "true")
    home, xdg = tmp_path / "home", tmp_path / "xdg"
    (home / ".config" / "git").mkdir(parents=True)
    (xdg / "git").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if k != "GIT_CONFIG_GLOBAL"}
    env |= {"HOME": str(home), "XDG_CONFIG_HOME": str(xdg if where == "xdg" else home / ".config")}
    before, head = remote_ref(remote, "refs/heads/main"), repo.git("rev-parse", "HEAD")
    push = ["git", "push", "origin", "main"]
    plain = subprocess.run(push, cwd=repo.path, env=env, capture_output=True, check=False,
                           timeout=300)  # fmt: skip
    assert plain.returncode != 0 and remote_ref(remote, "refs/heads/main") == before
    command = HOOKS_OFF + path.replace("<XDG>", '"$XDG_CONFIG_HOME"')
    answer = shell(repo, "claude", command)
    verdict = answer.verdict("claude")
    assert verdict.action == "block", answer
    assert "configuration" in verdict.reason, answer
    # a file tool is given the path itself, and a line may spell it out: the hook runs in
    # the agent's environment, which says where XDG_CONFIG_HOME is
    target = {"worktree": path, "home": str(home / ".config" / "git" / "config"),
              "xdg": str(xdg / "git" / "config")}[where]  # fmt: skip
    fixture = payload("claude-pre-tool-use-write", cwd=str(repo.path), path=target)
    assert hook(repo.path, "claude", fixture, env).verdict("claude").action == "block", target
    spelled = payload(SHELL_FIXTURE["claude"], cwd=str(repo.path), command=HOOKS_OFF + target)
    assert hook(repo.path, "claude", spelled, env).verdict("claude").action == "block", target
    # what the agent would have run, had the hook let it: the plain push now skips the hook
    subprocess.run(["sh", "-c", command], cwd=repo.path, env=env, capture_output=True,
                   check=True, timeout=300)  # fmt: skip
    subprocess.run(push, cwd=repo.path, env=env, capture_output=True, check=True, timeout=300)
    assert remote_ref(remote, "refs/heads/main") == head != before


def test_a_commondir_that_moves_the_repository_is_refused(tmp_path: Path) -> None:
    # git reads `.git/commondir` as where the repository's hooks, config and refs are: a
    # copy without hooks, named there, lets a plain push through
    repo, remote, before, head = _held_with_the_hook(tmp_path)
    command = 'cp -r .git ../copy && rm -rf ../copy/hooks && echo "$PWD/../copy" > .git/commondir'
    answer = shell(repo, "claude", command)
    verdict = answer.verdict("claude")
    assert verdict.action == "block", answer
    assert "commondir" in verdict.reason, answer
    # what the agent would have run, had the hook let it
    subprocess.run(["sh", "-c", command], cwd=repo.path, capture_output=True, check=True,
                   timeout=300)  # fmt: skip
    subprocess.run(["git", "push", "origin", "main"], cwd=repo.path, capture_output=True,
                   check=True, timeout=300)  # fmt: skip
    assert remote_ref(remote, "refs/heads/main") == head != before


def test_a_substitution_in_an_unquoted_here_document_is_read_as_the_push_it_runs(
    tmp_path: Path,
) -> None:
    # the shell expands an unquoted here-document's body before `cat` reads it: its
    # `$(…)` runs; behind a quoted delimiter the same text is only text
    repo, remote, before, head = _held_with_the_hook(tmp_path)
    quoted = "cat <<'EOF'\n$(git push --no-verify origin main)\nEOF"
    answer = shell(repo, "claude", quoted)
    assert (answer.code, answer.out, answer.err) == (0, "", ""), answer
    subprocess.run(["sh", "-c", quoted], cwd=repo.path, capture_output=True, check=True,
                   timeout=300)  # fmt: skip
    assert remote_ref(remote, "refs/heads/main") == before
    command = quoted.replace("'EOF'", "EOF")
    verdict = shell(repo, "claude", command).verdict("claude")
    assert verdict.action == "block" and "--no-verify" in verdict.reason, verdict
    # what the agent would have run, had the hook let it
    subprocess.run(["sh", "-c", command], cwd=repo.path, capture_output=True, check=True,
                   timeout=300)  # fmt: skip
    assert remote_ref(remote, "refs/heads/main") == head != before


def test_a_substitution_in_a_parameters_default_is_read_as_the_push_it_runs(
    tmp_path: Path,
) -> None:
    # `${x:-WORD}` expands WORD when x is unset, and a `$(…)` there runs
    repo, remote, before, head = _held_with_the_hook(tmp_path)
    command = "echo ${unset_here:-$(git push --no-verify origin main)}"
    verdict = shell(repo, "claude", command).verdict("claude")
    assert verdict.action == "block" and "--no-verify" in verdict.reason, verdict
    # what the agent would have run, had the hook let it
    subprocess.run(["sh", "-c", command], cwd=repo.path, capture_output=True, check=True,
                   timeout=300)  # fmt: skip
    assert remote_ref(remote, "refs/heads/main") == head != before


def test_git_daemons_access_hook_is_read_as_the_push_it_runs(tmp_path: Path) -> None:
    # git daemon runs --access-hook through the shell when a client asks for a repository:
    # a fetch from it, made by the same line, pushes from here without the hook
    repo, remote, before, head = _held_with_the_hook(tmp_path)
    with socket.socket() as probe:  # a port free now, for the daemon to listen on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    pid = tmp_path / "daemon.pid"
    hook_line = f"unset GIT_DIR; cd {repo.path} && git push --no-verify origin main #"
    command = (
        f"git daemon --access-hook='{hook_line}' --export-all --base-path={tmp_path} "
        f"--listen=127.0.0.1 --port={port} --detach --pid-file={pid} && sleep 1 && "
        f"git ls-remote git://127.0.0.1:{port}/{remote.name}"
    )
    verdict = shell(repo, "claude", command).verdict("claude")
    assert verdict.action == "block" and "--no-verify" in verdict.reason, verdict
    # what the agent would have run, had the hook let it
    try:
        subprocess.run(["sh", "-c", command], cwd=repo.path, capture_output=True, check=True,
                       timeout=300)  # fmt: skip
    finally:
        if pid.exists():
            os.kill(int(pid.read_text()), 15)
    assert remote_ref(remote, "refs/heads/main") == head != before


def test_a_git_init_given_a_template_is_refused(tmp_path: Path) -> None:
    # `git init` in an existing repository copies each of a template's files not there
    # yet: a `commondir` among them points the repository at a copy without the hooks
    repo, remote, before, head = _held_with_the_hook(tmp_path)
    copy, template = tmp_path / "copy", tmp_path / "tpl"
    shutil.copytree(repo.path / ".git", copy)
    shutil.rmtree(copy / "hooks")
    template.mkdir()
    # a file tool may write the template's file: it is none of this repository's
    fixture = payload(
        "claude-pre-tool-use-write", cwd=str(repo.path), path=str(template / "commondir")
    )
    answer = hook(repo.path, "claude", fixture)
    assert (answer.code, answer.out) == (0, ""), answer
    (template / "commondir").write_text(f"{copy}\n")
    command = f"git init --template={template}"
    verdict = shell(repo, "claude", command).verdict("claude")
    assert verdict.action == "block" and "template" in verdict.reason, verdict
    # what the agent would have run, had the hook let it: the plain push skips the hook
    subprocess.run(["sh", "-c", command], cwd=repo.path, capture_output=True, check=True,
                   timeout=300)  # fmt: skip
    subprocess.run(["git", "push", "origin", "main"], cwd=repo.path, capture_output=True,
                   check=True, timeout=300)  # fmt: skip
    assert remote_ref(remote, "refs/heads/main") == head != before


def test_allowing_the_ext_transport_is_refused_its_submodule_url_runs_unseen(
    tmp_path: Path,
) -> None:
    # with ext allowed, `submodule update --init` runs the command of the ext:: URL that
    # `.gitmodules` names: a file tool writes it, and no line shows it
    repo, remote, before, head = _held_with_the_hook(tmp_path)
    url = (f"ext::sh -c git% -c% protocol.file.allow=always% -C% {repo.path}% "
           "--git-dir=.git% push% --no-verify% origin% main% 1>&2")  # fmt: skip
    fixture = payload("claude-pre-tool-use-write", cwd=str(repo.path), path=".gitmodules")
    answer = hook(repo.path, "claude", fixture)
    assert (answer.code, answer.out) == (0, ""), answer
    (repo.path / ".gitmodules").write_text(f'[submodule "sub"]\n\tpath = sub\n\turl = {url}\n')
    gitlink = f"git update-index --add --cacheinfo 160000,{head},sub"
    answer = shell(repo, "claude", gitlink)
    assert (answer.code, answer.out, answer.err) == (0, "", ""), answer
    subprocess.run(["sh", "-c", gitlink], cwd=repo.path, capture_output=True, check=True,
                   timeout=300)  # fmt: skip
    command = "git -c protocol.ext.allow=always submodule update --init"
    verdict = shell(repo, "claude", command).verdict("claude")
    assert verdict.action == "block" and "protocol.ext.allow" in verdict.reason, verdict
    # what the agent would have run, had the hook let it (the clone itself then fails)
    subprocess.run(["sh", "-c", command], cwd=repo.path, capture_output=True, check=False,
                   timeout=300)  # fmt: skip
    assert remote_ref(remote, "refs/heads/main") == head != before


def test_install_writes_through_no_link_the_repository_holds(tmp_path: Path) -> None:
    # a cloned repository can hold any symlink, beside the file install rewrites too
    repo = make_repo(tmp_path / "repo")
    victim = tmp_path / "outside.txt"
    victim.write_text("the user's own file\n")
    (repo.path / ".claude").mkdir()
    (repo.path / ".claude" / "settings.json.failgate-tmp").symlink_to(victim)
    repo.git("add", ".claude")
    repo.commit("a link beside the settings")
    installed = agent_cli(repo, "install", "--agent", "claude")
    assert installed.returncode == 0, installed.stderr
    assert victim.read_text() == "the user's own file\n"
    assert "agent-hook" in (repo.path / ".claude" / "settings.json").read_text()


PRE_COMMIT_FAILGATE = """\
repos:
  - repo: local
    hooks:
      - id: failgate
        name: failgate
        entry: {entry}
        language: system
        stages: [pre-push]
        always_run: true
        pass_filenames: false
"""


@pytest.mark.parametrize(
    ("setup", "command"),
    [
        # pre-commit's own hook, running failgate, taken out
        ("pre-commit", "pre-commit uninstall -t pre-push && git push origin main"),
        # pre-commit reads the work tree's configuration, not the pushed commit's
        (
            "pre-commit",
            "echo 'repos: []' > .pre-commit-config.yaml && git add -A && git push origin main",
        ),
        # failgate's plain hook overwritten by a pre-commit hook that runs nothing
        ("failgate", "pre-commit install -t pre-push --overwrite && git push origin main"),
        ("failgate", "python3 -m pre_commit install -t pre-push -f && git push origin main"),
    ],
)
def test_pre_commit_cannot_take_the_hook_out_on_the_way_to_a_push(
    tmp_path: Path, setup: str, command: str
) -> None:
    repo = budget_repo(tmp_path / "work")
    remote = with_remote(repo, tmp_path / "remote.git")
    pre_commit = [sys.executable, "-m", "pre_commit"]
    if setup == "pre-commit":  # failgate as a local hook: pre-commit builds no environment
        entry = Path(sys.executable).parent / "failgate-pre-push"
        repo.write(".pre-commit-config.yaml", PRE_COMMIT_FAILGATE.format(entry=entry))
        record_failure(repo, "push")
        subprocess.run([*pre_commit, "install", "-t", "pre-push"], cwd=repo.path, check=True,
                       capture_output=True)  # fmt: skip
    else:
        repo.write(".pre-commit-config.yaml", "repos: []\n")
        record_failure(repo, "push")
        assert repo.failgate("install").code == 0
    before = remote_ref(remote, "refs/heads/main")
    plain = subprocess.run(["git", "push", "origin", "main"], cwd=repo.path, check=False,
                           capture_output=True, timeout=300)  # fmt: skip
    assert plain.returncode != 0 and remote_ref(remote, "refs/heads/main") == before
    answer = shell(repo, "claude", command)
    if answer.verdict("claude").action == "run":
        runnable = command.replace("pre-commit ", " ".join(pre_commit) + " ", 1).replace(
            "python3 -m pre_commit", " ".join(pre_commit)
        )
        subprocess.run(["sh", "-c", runnable], cwd=repo.path, capture_output=True, check=False,
                       timeout=300)  # fmt: skip
    assert remote_ref(remote, "refs/heads/main") == before, answer
