"""The command scan: every rewrite that carries a hook bypass is refused, plain work proceeds."""

from __future__ import annotations

import time

import pytest

from failgate_hooks.core.agent.command_rules import Risk
from failgate_hooks.core.agent.command_scan import scan_command
from failgate_hooks.core.agent.protected import Protected, protected_writes
from failgate_hooks.core.agent.shell_lexer import Unreadable, commands

ROOT = "/work/repo"
PROTECTED = Protected(root=ROOT, ledger="ledger", hooks_dirs=(f"{ROOT}/.git/hooks",))


def risks(command: str, cwd: str = ROOT, protected: Protected = PROTECTED) -> set[Risk]:
    scan = scan_command(command, cwd)
    found = [*scan.findings, *protected_writes(scan.writes, scan.code, protected, scan.unread)]
    return {f.risk for f in found}


# Each of these carries a bypass of the pre-push hook, written the way the issue lists
# rewrites that beat a command-string guard.
BYPASSES = [
    "git push --no-verify",
    "git push origin main --no-verify",
    "git push --no-veri origin HEAD",  # git takes an unambiguous prefix of a long option
    "git -c core.hooksPath=/dev/null push",
    "git -c CORE.HOOKSPATH=/dev/null push origin main",  # config keys ignore case
    "git --config-env=core.hooksPath=EMPTY push",
    "git -c include.path=/tmp/evil.cfg push",
    "g=git; $g push --no-verify",
    "g=git; $g push",
    "eval 'git push --no-verify'",
    'eval "git push $FLAGS"',
    "git $(echo push) --no-verify",
    "$(which git) push --no-verify",
    "echo $(git push --no-verify)",
    "echo `git push --no-verify`",
    "bash -c 'git push --no-verify'",
    'bash -c "git push \\"--no-verify\\""',
    "sh -lc 'cd /tmp && git push --no-verify'",
    "bash -c 'bash -c \"git push --no-verify\"'",
    "echo 'git push --no-verify' | bash",
    "bash <<<'git push --no-verify'",
    "bash <<'EOF'\ngit push --no-verify\nEOF",
    "cat <<EOF\n$(git push --no-verify origin main)\nEOF",  # an unquoted body is expanded
    "cat <<EOF\n`git push --no-verify origin main`\nEOF",
    "cat <<-EOF\n\t$(git push --no-verify origin main)\n\tEOF",
    "cat <<EOF\nsent: $(git push --no-verify\nEOF",  # never closed: unreadable
    "echo ${x:-$(git push --no-verify origin main)}",  # the default word is expanded
    'echo "${x:+`git push --no-verify`}"',
    "cat <<EOF\n${x:-${y:-$(git push --no-verify)}}\nEOF",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0=/dev/null git push",
    "GIT_CONFIG_PARAMETERS=\"'core.hooksPath'='/dev/null'\" git push",
    "export GIT_CONFIG_PARAMETERS=\"'core.hooksPath'='/dev/null'\"; git push",
    "env GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0=x git push",
    "SKIP=failgate git push",
    "FAILGATE_TRUST_LEDGER=1 git push",
    "HOME=/tmp/elsewhere git push",
    "GIT_EXEC_PATH=/tmp/helpers git push origin main",  # its git-remote-https runs first
    "git --exec-path=/tmp/helpers push origin main",
    "GIT_DIR=/tmp/other.git git push",
    "git --git-dir=/tmp/other.git push",
    "git pu\\\nsh --no-verify",  # a line continuation inside `push`
    "git push --no-\\\nverify",
    "git pu''sh --no-verify",
    'git "push" "--no-verify"',
    "git p$()ush --no-verify",
    "x=$'\\x2d-no-verify'; git push $x",
    "git push $'\\x2d\\x2dno-verify'",
    "git push --no-{verify,x}",
    "git push --no-verif?",
    "git push $(printf -- --no-verify)",
    "git push $FLAGS",
    "sudo -u me git push --no-verify",
    "time git push --no-verify",
    "nice -n 5 git push --no-verify",
    "timeout 30 git push --no-verify",
    "command git push --no-verify",
    "exec git push --no-verify",
    "env -S 'git push --no-verify'",
    "/usr/bin/git push --no-verify",
    "cd sub && git push --no-verify",
    "if true; then git push --no-verify; fi",
    "(git push --no-verify)",
    "{ git push --no-verify; }",
    "f() { git push --no-verify; }; f",
    "watch -n 1 'git push --no-verify'",
    "echo main | xargs git push",
    "xargs -n1 git push --no-verify < refs",
    "git -c alias.ship='push --no-verify' ship",
    "git -c alias.ship='!git push --no-verify' ship",
    "git config alias.yolo '!git push --no-verify'",
    "alias gp='git push --no-verify'",
    "git psuh --no-verify",  # help.autocorrect would run push
    "git submodule foreach 'git push --no-verify'",
    "git rebase -x 'git push --no-verify' main",
    "git --work-tree=/tmp/x rebase -x 'git push --no-verify' HEAD~1",  # its own write too
    "git --work-tree=src rebase --exec='git push --no-verify' HEAD~1",
    "python3 -c \"import os; os.system('git push --no-verify')\"",
    "node -e \"require('child_process').execSync('git push --no-verify')\"",
    "git push 'unterminated",
    "Git push --no-verify",  # a case-insensitive file system finds git
    "/usr/bin/git.exe push --no-verify",
    "script -q -c 'git push --no-verify' /dev/null",
    "git send-pack ../remote.git main",  # pushes without running any hook
    "git http-push https://example.org/repo.git main",
    "PATH=/tmp/fake-git:$PATH git push",  # another git, which may skip the hook
    # git daemon runs its access hook through the shell at each client's request
    "git daemon --access-hook='git push --no-verify origin main #' --export-all",
    "git daemon --export-all --access-hook='sh -c \"git push --no-verify\"' --base-path=.",
]


@pytest.mark.parametrize("command", BYPASSES)
def test_a_push_that_carries_a_bypass_is_refused(command: str) -> None:
    found = risks(command)
    assert found & {Risk.PUSH_BYPASS, Risk.PUSH_UNREADABLE}, command


PROCEEDS = [
    "git push",
    "git push origin main",
    "git push -n",  # --dry-run, not --no-verify
    "git push --dry-run origin HEAD:refs/heads/main",
    "git push -u origin feature",
    "git push --force-with-lease origin feature",
    "git push # --no-verify is only a comment",
    "git commit -m 'never use --no-verify' && git push",
    'git commit -m "do not run git push --no-verify" && git push origin main',
    "git commit -F- <<'EOF'\nWhy we never git push --no-verify\nEOF\ngit push",
    # a quoted delimiter: the body is text, its substitutions are never run
    "cat <<'EOF'\n$(git push --no-verify origin main)\nEOF",
    'cat <<"EOF"\n`git push --no-verify origin main`\nEOF',
    "cat <<\\EOF\n$(git push --no-verify origin main)\nEOF",
    "cat <<EOF\n\\$(git push --no-verify origin main) costs $5\nEOF",  # escaped
    "echo ${x:-$(git rev-parse HEAD)} ${HOME} ${#x} ${x/a/b}",
    "git daemon --access-hook=/usr/local/bin/allow-read --export-all --base-path=/srv",
    "git commit --no-verify -m wip",  # a commit hook is not failgate's gate
    "git log --grep=--no-verify",
    "grep -rn 'no-verify' docs/",
    "echo 'git push --no-verify' > notes.txt",
    "ls -la",
    "pytest -q 2>&1 | tail -n 20",
    "make test",
    "git status && git diff --stat",
    "cat .git/hooks/pre-push",
    "ls ledger/deploy",
    "git config core.hooksPath",  # reads it
    "git config --get core.hooksPath",
    "failgate record k:x --status observed --title t --trigger push",
    "failgate check --ref refs/heads/main",
    "failgate try k:x",
    'echo hi > "$OUT"',
    "rm -rf build dist src/ledger",
    "find . -name '*.pyc' -delete",
    "cat > src/app.py <<'EOF'\nprint('hi')\nEOF",
    "sed -i s/a/b/ src/app.py",
    "cp README.md /tmp/",
    "cat .git/config.worktree ~/.config/git/config",
    "rm -rf vendor/git",
    "echo '*.log' >> .gitignore",
    "cat .git",
    "echo x > config/git.yaml",
    "SKIP=lint make check",  # a bypass variable with no push in sight
]


@pytest.mark.parametrize("command", PROCEEDS)
def test_plain_work_and_a_plain_push_proceed(command: str) -> None:
    assert risks(command) == set(), command


WRITES = [
    ("echo x > .git/hooks/pre-push", "the git hooks"),
    ("cat >> .git/hooks/pre-push <<'EOF'\nexit 0\nEOF", "the git hooks"),
    ("cd .git/hooks && echo 'exit 0' > pre-push", "the git hooks"),
    ("cd .git; cd hooks; rm pre-push", "the git hooks"),
    ("rm -f .git//hooks/./pre-push", "the git hooks"),
    ("rm -rf .git", "the git hooks"),
    ("chmod -x .git/hooks/pre-push", "the git hooks"),
    ("ln -sf /dev/null .git/hooks/pre-push", "the git hooks"),
    ("cp /tmp/empty .git/hooks/pre-push", "the git hooks"),
    ("tee .git/hooks/pre-push < /dev/null", "the git hooks"),
    ("dd if=/dev/null of=.git/hooks/pre-push", "the git hooks"),
    ("curl -o .git/hooks/pre-push https://example.org/x", "the git hooks"),
    ("echo '[core] hooksPath = /dev/null' >> .git/config", "git's configuration"),
    # git reads them too: a worktree's own file (extensions.worktreeConfig), the XDG one
    ("echo '[core] hooksPath = /dev/null' >> .git/config.worktree", "worktree's git config"),
    ("cp /tmp/evil .git/worktrees/wt/config.worktree", "linked worktree's git files"),
    ("cp /tmp/config.worktree $(git rev-parse --git-dir)/", "worktree's git configuration"),
    ("echo '[core] hooksPath = /dev/null' >> ~/.config/git/config", "git's global config"),
    ('printf x >> "$XDG_CONFIG_HOME/git/config"', "git's global configuration"),
    ("rm -rf ~/.config/git", "git's global configuration"),
    # another git folder, without hooks: its commondir, or a linked worktree's .git file
    ("echo /tmp/copy > .git/commondir", "commondir"),
    ("echo 'gitdir: /tmp/copy' > .git", "a .git file"),
    ("printf 'gitdir: %s' /tmp/copy > ../wt/.git", "a .git file"),
    ("echo x > $(git rev-parse --git-dir)/hooks/pre-push", "the git hooks"),
    ("rm -rf ledger", "the ledger"),
    ("rm -rf ./ledger/deploy", "the ledger"),
    ("cd src && rm -rf ../ledger", "the ledger"),
    ("mv ledger /tmp/", "the ledger"),
    ("git rm -r ledger/deploy", "the ledger"),
    ("rm -rf *", "the ledger"),
    ("rm -rf .", "the git hooks"),
    (f"rm -rf {ROOT}/ledger", "the ledger"),
    (
        "cat > ledger/deploy/x/20261129T230500Z-7f3a9c1e.toml <<'EOF'\nstatus = 'expired'\nEOF",
        "a ledger event file",
    ),
    ("find ledger -name '*.toml' -delete", "the ledger"),
    ("find ledger -name '*.toml' -exec rm {} +", "the ledger"),
    ("sed -i 's/observed/expired/' ledger/a/20261129T230500Z-7f3a9c1e.toml", "a ledger event file"),
    ("cp /tmp/s.json .claude/settings.json", "Claude Code"),
    ("echo '{}' > .claude/settings.local.json", "Claude Code"),
    ("rm -rf .claude", "Claude Code"),
    ("sed -i /failgate/d .codex/hooks.json", "Codex"),
    ("echo '{}' > .gemini/settings.json", "Gemini"),
    ("rm .cursor/hooks.json", "Cursor"),
    ("rm .github/hooks/failgate.json", "Copilot"),
    ("python3 -c \"open('.git/hooks/pre-push', 'w').write('')\"", "code naming .git/hooks"),
    ("python3 - <<'EOF'\nimport shutil; shutil.rmtree('ledger')\nEOF", "code naming ledger"),
    ("perl -i -pe 's/a/b/' .cursor/hooks.json", "Cursor"),
    ("tar -xf /tmp/hooks.tar -C .git/hooks", "the git hooks"),
    ("unzip -o /tmp/cfg.zip -d .claude/settings.json", "Claude Code"),
    ("exec 3>.git/hooks/pre-push; echo 'exit 0' >&3", "the git hooks"),
    ("echo x | tee >(cat > .git/hooks/pre-push)", "the git hooks"),
]


@pytest.mark.parametrize(("command", "what"), WRITES)
def test_a_write_into_what_decides_a_push_is_refused(command: str, what: str) -> None:
    scan = scan_command(command, ROOT)
    found = protected_writes(scan.writes, scan.code, PROTECTED)
    assert [f.risk for f in found] == [Risk.PROTECTED_WRITE] or len(found) > 1, command
    assert any(what in f.detail for f in found), (command, found)


def test_hooks_moved_by_core_hooks_path_are_protected_where_they_are() -> None:
    moved = Protected(root=ROOT, hooks_dirs=(f"{ROOT}/tools/githooks",))
    assert risks("echo 'exit 0' > tools/githooks/pre-push", protected=moved) == {
        Risk.PROTECTED_WRITE
    }
    assert risks("echo 'exit 0' > tools/other/pre-push", protected=moved) == set()


def test_a_global_configuration_where_the_environment_puts_it_is_protected() -> None:
    # `$XDG_CONFIG_HOME/git/config`, with the variable pointing outside `~/.config`
    xdg = Protected(root=ROOT, config_files=("/srv/conf/git/config",))
    assert risks("echo x >> /srv/conf/git/config", protected=xdg) == {Risk.PROTECTED_WRITE}
    assert risks("rm -rf /srv/conf", protected=xdg) == {Risk.PROTECTED_WRITE}
    assert risks("ls | xargs cp -t /srv/conf/git/config", protected=xdg)
    assert risks("echo x >> /srv/conf/git/ignore", protected=xdg) == set()
    assert risks("echo x >> /srv/conf/git/config") == set()


def test_a_ledger_folder_named_in_the_config_is_the_one_protected() -> None:
    renamed = Protected(root=ROOT, ledger="risks")
    assert risks("rm -rf risks", protected=renamed) == {Risk.PROTECTED_WRITE}
    assert risks("rm -rf ledger", protected=renamed) == set()


@pytest.mark.parametrize(
    "command",
    [
        "git config core.hooksPath /dev/null",
        "git config --global core.hooksPath /dev/null",
        "git config --unset core.hooksPath",
        "git config set core.hooksPath .nothing",
        "git config --local include.path ../evil.cfg",
        "git config core.worktree .git/hooks",  # a commit's files checked out into the hooks
        # git 2.46's subcommands are its first word: these set the key to `list`, `get`
        "git config core.hooksPath list",
        "git config --global core.hooksPath get",
        # the editor writes the file, and the line may choose it
        "GIT_EDITOR='sed -i 1i[core]hooksPath=/dev/null' git config --edit",
        "git -c core.editor='sed -i s/a/b/' config -e",
        "git config edit --global",
    ],
)
def test_moving_the_hooks_in_git_config_is_refused(command: str) -> None:
    assert Risk.HOOKS_CONFIG in risks(command)


# git init copies a template's files into an existing repository where none is there
# yet: a template's `commondir` moves the hooks (git 2.39)
@pytest.mark.parametrize(
    "command",
    [
        "git init --template=/tmp/t",
        "git init --temp /tmp/t",  # git takes a prefix of its long option
        "GIT_TEMPLATE_DIR=/tmp/t git init",
        "export GIT_TEMPLATE_DIR=/tmp/t; git init",
        "git -c init.templateDir=/tmp/t init",
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=init.templateDir GIT_CONFIG_VALUE_0=/t git init",
        "git config --global init.templateDir /tmp/t",  # for a later plain `git init`
    ],
)
def test_a_git_init_given_a_template_is_refused(command: str) -> None:
    assert Risk.HOOKS_CONFIG in risks(command)


@pytest.mark.parametrize(
    "command",
    ["git init", "git init -b main --bare x.git", "git config init.templateDir",
     "git clone --template=/tmp/t ../remote.git copy", "GIT_TEMPLATE_DIR=/tmp/t git status"],
)  # fmt: skip
def test_git_init_with_no_template_and_a_clone_with_one_proceed(command: str) -> None:
    # a clone makes a repository of its own: the template's hooks are not ours
    assert risks(command) == set()


# Config keys whose value git runs as a command, at the push or at a later git command
# (git-config(1)): one of each kind. `core.fsmonitor` runs at `git status`, a pager at
# `git log`, a filter at `git add`, a textconv at `git diff`, a trailer at `git commit`.
COMMAND_KEYS = [
    "remote.origin.receivepack", "remote.origin.uploadpack", "core.sshCommand",
    "core.gitProxy", "credential.helper", "credential.https://example.org.helper",
    "core.fsmonitor", "core.editor", "core.pager", "pager.log", "sequence.editor",
    "core.askPass", "core.alternateRefsCommand", "interactive.diffFilter",
    "gc.recentObjectsHook", "diff.external", "diff.pdf.textconv", "diff.pdf.command",
    "merge.ours.driver", "filter.lfs.clean", "filter.lfs.smudge", "filter.lfs.process",
    "difftool.meld.cmd", "difftool.meld.path", "mergetool.meld.cmd", "mergetool.meld.path",
    "gpg.program", "gpg.ssh.program", "gpg.x509.program", "gpg.ssh.defaultKeyCommand",
    "uploadpack.packObjectsHook", "submodule.lib.update", "trailer.sign.cmd",
    "trailer.sign.command", "hook.lint.command", "imap.tunnel", "sendemail.sendmailCmd",
    "sendemail.smtpServer", "sendemail.toCmd", "sendemail.ccCmd", "sendemail.headerCmd",
    "sendemail.work.sendmailCmd", "man.woman.cmd", "man.woman.path", "browser.lynx.cmd",
    "browser.lynx.path", "guitool.ship.cmd", "instaweb.httpd",
]  # fmt: skip
# Each way of setting a key that the scan follows.
SETTINGS = [
    "git config {key} '{value}'",
    "git config --global {key} '{value}'",
    "git config --add {key} '{value}'",
    "git config --replace-all {key} '{value}'",
    "git config set {key} '{value}'",
    "git config --file .git/config {key} '{value}'",
    "git -c {key}='{value}' status",
    "git -c '{key}={value}' log",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0={key} GIT_CONFIG_VALUE_0='{value}' git status",
    "export GIT_CONFIG_VALUE_0='{value}' GIT_CONFIG_KEY_0={key}; git status",
    "GIT_CONFIG_PARAMETERS=\"'core.editor'='vim' '{key}'='{value}'\" git status",
]


@pytest.mark.parametrize("setting", SETTINGS)
@pytest.mark.parametrize("key", COMMAND_KEYS)
def test_a_config_key_whose_command_pushes_with_a_bypass_is_refused(key: str, setting: str) -> None:
    command = setting.format(key=key, value="git push --no-verify origin main")
    assert Risk.PUSH_BYPASS in risks(command), command


@pytest.mark.parametrize(
    "command",
    [
        "git config CORE.FSMONITOR 'git push --no-verify origin main'",  # keys ignore case
        "git config submodule.lib.update '!git push --no-verify origin main'",
        "git -c core.fsmonitor='git push --no-verify origin main #' status",
        # the ext transport runs its command at the next fetch
        "git config remote.origin.url 'ext::sh -c git% push% --no-verify% origin% main'",
        # a URL rewritten to an ext:: one: the command is in the key
        "git config 'url.ext::sh -c git% push% --no-verify% origin% main #.insteadOf' "
        "https://example.org/",
        "git -c 'url.ext::sh -c git% push% --no-verify% origin% main #.pushInsteadOf="
        "https://example.org/' push origin main",
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0='url.ext::sh -c git% push% --no-verify% origin% "
        "main #.insteadOf' GIT_CONFIG_VALUE_0=https://example.org/ git fetch",
        "GIT_PAGER='git push --no-verify origin main' git log",
        "GIT_EDITOR='git push --no-verify origin main' git commit",
        "EDITOR='git push --no-verify origin main' git commit",
        "VISUAL='git push --no-verify origin main' git commit",
        "GIT_SEQUENCE_EDITOR='git push --no-verify origin main' git rebase -i HEAD~2",
        "PAGER='git push --no-verify origin main' git log",
        "GIT_EXTERNAL_DIFF='git push --no-verify origin main' git diff",
        "GIT_ASKPASS='git push --no-verify origin main' git fetch",
        "SSH_ASKPASS='git push --no-verify origin main' git fetch",
        "GIT_SSH='git push --no-verify origin main' git fetch",
        "export GIT_PAGER='git push --no-verify origin main'; git log",
    ],
)
def test_a_command_git_runs_later_that_pushes_with_a_bypass_is_refused(command: str) -> None:
    assert Risk.PUSH_BYPASS in risks(command), command


# The ext transport runs its URL's command, and once it is allowed git runs that of any
# ext:: URL it meets, a submodule's from `.gitmodules` among them: none a line shows.
@pytest.mark.parametrize(
    "command",
    [
        "git -c protocol.ext.allow=always submodule update --init",
        "git config protocol.ext.allow always",
        "git config --global protocol.allow user",  # the default of every protocol
        "git -c PROTOCOL.EXT.ALLOW=Always fetch",
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=protocol.ext.allow GIT_CONFIG_VALUE_0=user git pull",
        "git clone -c protocol.ext.allow=always ../lib lib",
        "P=always git --config-env=protocol.ext.allow=P submodule update",
        'git config protocol.ext.allow "$POLICY"',
        "GIT_ALLOW_PROTOCOL=file:ext git submodule update --init",
        "export GIT_ALLOW_PROTOCOL=EXT",
    ],
)
def test_allowing_the_ext_transport_is_refused(command: str) -> None:
    assert Risk.PUSH_UNREADABLE in risks(command), command


@pytest.mark.parametrize(
    "command",
    [
        "git config protocol.ext.allow never",
        "git config protocol.ext.allow",
        "git -c protocol.file.allow=always submodule update --init",
        "GIT_ALLOW_PROTOCOL=https:ssh git submodule update --init",
    ],
)
def test_forbidding_or_reading_the_ext_transport_proceeds(command: str) -> None:
    assert risks(command) == set(), command


@pytest.mark.parametrize(
    "command",
    [
        # the value is $X's, which git reads: unseen, and the line pushes
        "X='git push --no-verify origin main' git --config-env=core.fsmonitor=X status",
        "X='!git push --no-verify' git --config-env=alias.ship=X ship",
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=$K GIT_CONFIG_VALUE_0='git push --no-verify' git log",
        'git config core.pager "$(echo git push --no-verify)"',
        'GIT_CONFIG_PARAMETERS="$PAIRS" git status',  # which keys, git reads from the shell
    ],
)
def test_a_command_git_runs_later_that_the_scan_cannot_read_is_refused(command: str) -> None:
    assert Risk.PUSH_UNREADABLE in risks(command), command


@pytest.mark.parametrize(
    "command",
    [
        "git config core.editor vim",
        "git config --global core.editor 'code --wait'",
        "git config core.pager less",
        "git config core.pager 'less -FRX'",
        "git config pager.log false",
        "git config core.fsmonitor true",
        "git -c core.fsmonitor=true status",
        "git -c core.fsmonitor=false status",
        "git -c core.pager=cat log --oneline",
        "git -c core.editor=true commit --amend",
        "git --config-env=core.editor=EDITOR commit",
        "git config diff.pdf.textconv pdftotext",
        "git config filter.lfs.clean 'git-lfs clean -- %f'",
        "git config filter.lfs.process 'git-lfs filter-process'",
        "git config merge.ours.driver true",
        "git config gpg.ssh.program ssh-keygen",
        "git config sendemail.smtpServer smtp.example.org",
        "git config credential.helper 'cache --timeout=3600'",
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.editor GIT_CONFIG_VALUE_0=vim git commit",
        "GIT_CONFIG_PARAMETERS=\"'core.editor'='vim' 'core.pager'='less'\" git commit",
        "GIT_EDITOR=vim git commit",
        "GIT_PAGER='less -R' git log -p",
        "EDITOR=nano git rebase -i HEAD~3",
        "git config --get core.fsmonitor",
        "git config get core.hooksPath",
        "git config list --show-origin",
        "git config --get-all core.hooksPath",
        "git config user.name list",
        "git config user.email 'me@example.org'",
        "git config remote.origin.url https://example.org/repo.git",
        "git config --global url.git@github.com:.insteadOf https://github.com/",
        "git -c url.https://mirror.example.org/.insteadOf=https://example.org/ fetch",
    ],
)
def test_a_harmless_command_for_git_to_run_proceeds(command: str) -> None:
    assert risks(command) == set(), command


@pytest.mark.parametrize(
    ("command", "found"),
    [
        # after `git config evil.hooksPath /dev/null`, the rename sets core.hooksPath
        ("git config --rename-section evil core", Risk.HOOKS_CONFIG),
        ("git config --rename-section evil CORE", Risk.HOOKS_CONFIG),  # sections ignore case
        ("git config --global --rename-section evil core", Risk.HOOKS_CONFIG),
        ("git config rename-section evil core", Risk.HOOKS_CONFIG),  # git 2.46's subcommand
        ("git config --rename-section evil include", Risk.HOOKS_CONFIG),
        ("git config --rename-section evil includeIf.gitdir:~/work/", Risk.HOOKS_CONFIG),
        ('git config --rename-section evil "$TO"', Risk.HOOKS_CONFIG),  # could be core
        ("git config --rename-section core old", Risk.HOOKS_CONFIG),  # as --unset hooksPath
        ("git config --remove-section core", Risk.HOOKS_CONFIG),
        ("git config remove-section include", Risk.HOOKS_CONFIG),
        # the keys' values were set earlier: what git would run of them is unread here
        ("git config --rename-section evil pager", Risk.PUSH_UNREADABLE),
        ("git config --rename-section evil diff.pdf", Risk.PUSH_UNREADABLE),
        ("git config --rename-section evil remote.origin", Risk.PUSH_UNREADABLE),
        ("git config --rename-section evil credential", Risk.PUSH_UNREADABLE),
        ("git config --rename-section evil sendemail.work", Risk.PUSH_UNREADABLE),
        ("git config --rename-section evil alias", Risk.PUSH_UNREADABLE),
        # a template for git init, an allowed ext transport, from keys set earlier
        ("git config --rename-section evil init", Risk.PUSH_UNREADABLE),
        ("git config --rename-section evil protocol.ext", Risk.PUSH_UNREADABLE),
        ("git config --rename-section evil Protocol", Risk.PUSH_UNREADABLE),
        # its insteadOf keys now rewrite a remote's URL to the ext:: command
        (
            "git config --rename-section evil 'url.ext::sh -c git% push% --no-verify% x'",
            Risk.PUSH_BYPASS,
        ),
    ],
)
def test_a_section_renamed_into_the_hooks_or_a_command_key_is_refused(
    command: str, found: Risk
) -> None:
    assert risks(command) == {found}, command


@pytest.mark.parametrize(
    "command",
    [
        "git config --rename-section branch.old branch.new",
        "git config --rename-section user work",
        "git config --rename-section alias oldalias",  # the aliases go, and run nothing
        "git config --remove-section diff.pdf",
        "git config --remove-section remote.origin",
        "git config rename-section branch.a branch.b",
        "git config --rename-section url.old url.https://mirror.example.org/",
    ],
)
def test_a_section_renamed_elsewhere_proceeds(command: str) -> None:
    assert risks(command) == set(), command


@pytest.mark.parametrize(
    "command",
    [
        "failgate expire deploy:gas --note fixed",
        "failgate confirm deploy:gas --commit HEAD --note looked",
        "failgate trust --yes",
        "failgate uninstall",
        "failgate record deploy:gas --status expired --note gone",
        "failgate record deploy:gas --status observed --supersedes 20261129T230500Z-7f3a9c1e",
        "python -m failgate_hooks expire deploy:gas --note x",
        "failgate -C . expire deploy:gas --note x",
    ],
)
def test_relaxing_a_gate_is_left_to_a_person(command: str) -> None:
    assert Risk.RELAXING in risks(command)


@pytest.mark.parametrize(
    "command",
    ["failgate agent uninstall", "failgate agent install --agent claude --command true"],
)
def test_rewriting_the_agents_hook_config_is_left_to_a_person(command: str) -> None:
    assert risks(command) == {Risk.PROTECTED_WRITE}


@pytest.mark.parametrize(
    "command",
    [
        "echo " + "a" * 1_000_000,
        "git commit -m '" + "word " * 200_000 + "' && git push",
        "cat > data.txt <<'EOF'\n" + "git push --no-verify\n" * 50_000 + "EOF\n",
        "git push" + ";" * 1_000_000,
        "git push " + "$a" * 500_000,
        "echo " + "x " * 500_000,
    ],
    ids=["one-word", "long-message", "long-heredoc", "operators", "expansions", "words"],
)
def test_a_megabyte_command_is_decided_in_well_under_a_second(command: str) -> None:
    # this process's CPU time: other tests loading the machine do not count against it
    started = time.process_time()
    scan_command(command, ROOT)
    assert time.process_time() - started < 1.0


def test_a_command_too_intricate_to_read_is_refused_when_it_pushes() -> None:
    assert risks("git push" + ";" * 1_000_000) == {Risk.PUSH_UNREADABLE}
    assert risks("true" + ";" * 1_000_000) == set()


def test_most_commands_never_reach_the_lexer() -> None:
    # the needles say there is nothing to read: not even an unterminated quote is looked at
    assert scan_command("ls 'unterminated").findings == ()
    assert scan_command("pytest -q 'unterminated", ROOT).writes == ()


def test_the_lexer_reads_quotes_substitutions_and_here_documents() -> None:
    found = commands("A=1 git 'pu'sh $(echo x) \"a $b\" <<'EOF' 2>&1 > out\nbody $x\nEOF\nls")
    first, inner, last = found[1], found[0], found[2]
    assert [w.text for w in inner.words] == ["echo", "x"]
    assert [w.text for w in first.words][:3] == ["A=1", "git", "push"]
    assert [w.dynamic for w in first.words] == [False, False, False, True, True]
    assert first.heredocs[0].body == "body $x\n" and first.heredocs[0].quoted
    assert [r.op for r in first.redirects] == [">&", ">"]
    assert [w.text for w in last.words] == ["ls"]


def test_an_unquoted_here_documents_substitutions_are_commands_of_their_own() -> None:
    found = commands("cat <<EOF\nhead: $(git rev-parse HEAD) `date`\nEOF\nls")
    expected = [["cat"], ["git", "rev-parse", "HEAD"], ["date"], ["ls"]]
    assert [[w.text for w in c.words] for c in found] == expected
    assert [c.nested for c in found] == [False, True, True, False]
    assert [[w.text for w in c.words] for c in commands("cat <<'EOF'\n$(date)\nEOF")] == [["cat"]]


@pytest.mark.parametrize("text", ["echo 'open", 'echo "open', "echo $(open", "echo ${open", "x >"])
def test_text_the_lexer_cannot_read_is_unreadable(text: str) -> None:
    with pytest.raises(Unreadable):
        commands(text)


# Forms that run their text as a command line, which the scan read as plain words.
UNREAD_CODE = [
    "bash -O extglob -c 'git push --no-verify'",  # -O takes an option name, as -o does
    "bash +O extglob -c 'git push --no-verify'",
    "env -S'git push --no-verify'",  # -S with its value attached
    "env --split-string='git push --no-verify'",
    "env -vS'git push --no-verify'",
    "flock /tmp/lock -c 'git push --no-verify'",  # flock runs -c's text in a shell
    "flock -w 1 /tmp/lock -c 'git push --no-verify'",
    "trap 'git push --no-verify' EXIT",  # the shell runs it when it exits
    "busybox sh -c 'git push --no-verify'",  # busybox runs its applet
    "unshare -r sh -c 'git push --no-verify'",
    "python3 -c \"import os; os.system('git push --no-' + 'verify')\"",  # inline code pushes
    "node -e \"require('child_process').execSync(['git', 'push', '-'+'-no-verify'].join(' '))\"",
]


@pytest.mark.parametrize("command", UNREAD_CODE)
def test_text_run_as_a_command_line_is_read_or_refused(command: str) -> None:
    found = risks(command)
    assert found & {Risk.PUSH_BYPASS, Risk.PUSH_UNREADABLE}, command


@pytest.mark.parametrize(
    "command",
    [
        "bash -O extglob -c 'git push'",
        "env -S'git push origin main'",
        "trap 'rm -f /tmp/x' EXIT",
        "flock /tmp/lock -c 'make test'",
        "busybox ls -la",
        "python3 -c \"print('push the button')\"",
    ],
)
def test_those_forms_proceed_when_their_text_is_plain(command: str) -> None:
    assert risks(command) == set(), command


PUSHES = "git push --no-verify origin main #"
EXT = "'ext::sh -c git% push% --no-verify% origin% main'"


@pytest.mark.parametrize(
    "command",
    [
        # git runs the remote side's program through the shell, for a local or ssh remote
        f"git fetch --upload-pack='{PUSHES}' origin",
        f"git fetch --upload-pack '{PUSHES}' origin",
        f"git fetch --upl='{PUSHES}' origin",  # a prefix git takes for it
        f"git pull --upload-pack='{PUSHES}' origin main",
        f"git clone --upload-pack='{PUSHES}' ../src copy",
        f"git clone -u '{PUSHES}' ../src copy",
        f"git clone -qu'{PUSHES}' ../src copy",  # in a cluster, its value attached
        f"git ls-remote --upload-pack='{PUSHES}' ../src",
        f"git ls-remote --exec='{PUSHES}' ../src",
        f"git fetch-pack --exec='{PUSHES}' ../src",
        f"git archive --remote=../src --exec='{PUSHES}' HEAD",
        f"git push --rece='{PUSHES}' origin main",
        f"nice git fetch --upload-pack='{PUSHES}' origin",
        # an ext:: URL's command runs at once, or at the next fetch of what it is added as
        f"git fetch {EXT}",
        f"git clone {EXT} copy",
        f"git ls-remote {EXT}",
        f"git pull {EXT} main",
        f"git remote add evil {EXT}",
        f"git remote set-url origin {EXT}",
        f"git submodule add {EXT} lib",
        f"git archive --remote={EXT} HEAD",
        # clone sets its -c keys before it fetches: core.sshCommand runs at once
        f"git clone -c core.sshCommand='{PUSHES}' ssh://example.org/repo.git",
        f"git clone --config=core.sshCommand='{PUSHES}' ssh://example.org/repo.git",
        f"git clone -qc remote.origin.uploadpack='{PUSHES}' ../src copy",
    ],
)
def test_a_command_a_transport_runs_that_pushes_with_a_bypass_is_refused(command: str) -> None:
    assert Risk.PUSH_BYPASS in risks(command), command


@pytest.mark.parametrize(
    "command",
    [
        # an external diff, a history filter, a mailer, a pager, a web server: each a
        # command line git runs through the shell
        f"git difftool -x '{PUSHES}' HEAD~1",
        f"git difftool -yx '{PUSHES}' HEAD~1",
        f"git difftool --extcmd='{PUSHES}' HEAD~1",
        f"git filter-branch --tree-filter '{PUSHES}' HEAD",
        f"git filter-branch --env-filter '{PUSHES}' -- --all",
        f"git filter-branch --msg-filter '{PUSHES}' HEAD",
        f"git filter-branch --setup '{PUSHES}' --index-filter true HEAD",
        f"git send-email --sendmail-cmd='{PUSHES}' 0001.patch",
        f"git send-email --to-cmd '{PUSHES}' 0001.patch",
        f"git send-email --smtp-server='{PUSHES}' 0001.patch",
        f"git grep -O'{PUSHES}' main",
        f"git grep -iO'{PUSHES}' main",
        f"git grep --open-files-in-pager='{PUSHES}' main",
        f"git instaweb --httpd='{PUSHES}'",
    ],
)
def test_a_command_a_git_option_runs_that_pushes_with_a_bypass_is_refused(command: str) -> None:
    assert Risk.PUSH_BYPASS in risks(command), command


@pytest.mark.parametrize(
    "command",
    [
        "git fetch --upload-pack=/usr/lib/git-core/git-upload-pack origin",
        "git clone -u git-upload-pack ../src copy",
        "git clone -bu ../src copy",  # `u` is the branch's name: -b takes the rest
        "git clone -b main https://example.org/repo.git",
        "git ls-remote --exit-code origin",
        "git fetch origin -- --upload-pack=x",
        "git remote add upstream https://example.org/repo.git",
        "git clone 'ext::git-remote-helper %S' copy",
        "git submodule add https://example.org/lib.git lib",
        "git difftool -x 'meld --diff' HEAD~1",
        "git difftool -t meld -y",
        "git filter-branch --tree-filter 'rm -f secrets.txt' HEAD",
        "git filter-branch --msg-filter 'sed s/foo/bar/' HEAD",
        "git send-email --smtp-server=smtp.example.org 0001.patch",
        "git clone -c core.sshCommand='ssh -i ~/.ssh/deploy' ssh://example.org/repo.git",
        "git clone -c core.hooksPath=.githooks ../src copy",  # the new clone's hooks
        "git grep -O push",  # `-O` takes only an attached pager: `push` is the pattern
        "git grep -O 'git push --no-verify' docs",
        "git grep -Ovim TODO",
        "git grep -e x -O vim",
    ],
)
def test_a_plain_command_named_by_a_git_option_proceeds(command: str) -> None:
    assert risks(command) == set(), command


@pytest.mark.parametrize(
    "command",
    [
        "GIT_SSH_COMMAND='ssh -i ~/.ssh/deploy' git push origin main",
        'GIT_SSH_COMMAND="ssh -i $KEY" git push',
        "git push --receive-pack=/usr/lib/git-core/git-receive-pack origin main",
        "chmod -R u+w build",
        "perl -i.bak -pe 's/a/b/' src/x.c",
    ],
)
def test_a_push_with_a_plain_transport_command_proceeds(command: str) -> None:
    assert risks(command) == set(), command


@pytest.mark.parametrize(
    ("command", "found"),
    [
        ("pre-commit uninstall", {Risk.PROTECTED_WRITE}),
        ("pre-commit uninstall -t pre-push", {Risk.PROTECTED_WRITE}),
        ("pre-commit install -f -t pre-push", {Risk.PROTECTED_WRITE}),
        ("python3 -m pre_commit install --overwrite", {Risk.PROTECTED_WRITE}),
        ("echo 'repos: []' > .pre-commit-config.yaml", {Risk.PROTECTED_WRITE}),
        ("sed -i /failgate/d .pre-commit-config.yaml", {Risk.PROTECTED_WRITE}),
        ("pre-commit install -t pre-push", set()),
        ("pre-commit run --all-files", set()),
        ("cat .pre-commit-config.yaml", set()),
    ],
)
def test_pre_commit_taking_the_hook_out_is_left_to_a_person(command: str, found: set[Risk]) -> None:
    assert risks(command) == found, command
