"""The configuration: reading its TOML, what it may say, and what counts as loosening it."""

from __future__ import annotations

import pytest

from failgate_hooks.core import wildmatch
from failgate_hooks.core.errors import UsageError
from failgate_hooks.ledger.config import DEFAULT_PROTECTED_REFS, Config, loosened, parse_config


def config(text: str, name: str = "failgate.toml") -> Config:
    return parse_config({name: text.encode()}, "test")


@pytest.mark.parametrize(
    "ref",
    ["refs/heads/main", "refs/tags/v1", "refs/tags/prod/v1", "refs/heads/release/2.0/hotfix"],
)
def test_the_default_protected_refs_include_nested_names(ref: str) -> None:
    assert wildmatch.match_any(DEFAULT_PROTECTED_REFS, ref)


@pytest.mark.parametrize("ref", ["refs/heads/feature/x", "refs/heads/releases", "refs/notes/x"])
def test_work_in_progress_refs_are_not_protected_by_default(ref: str) -> None:
    assert not wildmatch.match_any(DEFAULT_PROTECTED_REFS, ref)


@pytest.mark.parametrize(
    "name", ["GIT_DIR", "GIT_PUSH_OPTION_0", "LANG", "LANGUAGE", "LC_ALL", "TZ", "TERM",
             "SSH_ORIGINAL_COMMAND", "NOT A NAME", ""],
)  # fmt: skip
def test_identity_env_may_not_name_what_the_pusher_sets(name: str) -> None:
    with pytest.raises(UsageError, match="identity_env"):
        config(f'identity_env = "{name}"\n')


def test_identity_env_names_the_server_s_variable() -> None:
    assert config('identity_env = "GL_USERNAME"\n').identity_env == "GL_USERNAME"


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("0", "expected a positive integer, got 0"),
        ("86401", "expected at most 86400 seconds (a day), got 86401"),
        ("1" + "0" * 400, "expected at most 86400 seconds (a day), got 1000"),
    ],
)
def test_default_timeout_s_is_at_most_a_day(value: str, problem: str) -> None:
    with pytest.raises(UsageError, match=r"default_timeout_s: ") as raised:
        config(f"default_timeout_s = {value}\n")
    assert problem in str(raised.value)
    assert config("default_timeout_s = 86400\n").default_timeout_s == 86_400


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        ("", 'mode = "warn"', 'mode "enforce" -> "warn"'),
        ('block_on = "all"', "", 'block_on "all" -> "protected"'),
        ("", 'protected_refs = ["refs/heads/main"]', "no longer protects refs/heads/master"),
        ('relaxers = ["a"]', 'relaxers = ["a", "b"]', "relaxers adds b"),
        ("", 'identity_env = "REMOTE_USER"', "identity_env None -> 'REMOTE_USER'"),
        ("", 'ledger = "elsewhere"', "ledger 'ledger' -> 'elsewhere'"),
        ("", 'ledger_refs = ["refs/heads/x"]', "ledger_refs () -> ('refs/heads/x',)"),
        ('sandbox = "bwrap"', "", 'sandbox "bwrap" -> "none"'),
        ('sandbox = "bwrap"', 'sandbox = "none"', 'sandbox "bwrap" -> "none"'),
        ("", "sandbox_network = true", "sandbox_network false -> true"),
        # Signers let a gate clear without its verifier running: naming or changing them is one.
        ("", 'evidence_signers = "signers"', "evidence_signers None -> 'signers'"),
        ('evidence_signers = "a"', 'evidence_signers = "b"', "evidence_signers 'a' -> 'b'"),
        ('evidence_signers = "a"', "", "require_evidence true -> false"),
        ('evidence_signers = "a"', 'evidence_signers = "a"\nrequire_evidence = false',
         "require_evidence true -> false"),
        ("require_evidence = true", "", "require_evidence true -> false"),
    ],
)  # fmt: skip
def test_each_loosening_key_is_found(before: str, after: str, expected: str) -> None:
    changes = loosened(config(before), config(after))
    assert any(expected in change for change in changes), changes


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ('mode = "warn"', ""),  # warn -> enforce tightens
        ("", 'block_on = "all"'),
        ("", 'protected_refs = ["refs/heads/main", "refs/heads/master", "refs/heads/release/**",'
             ' "refs/tags/**", "refs/heads/prod"]'),
        ('relaxers = ["a", "b"]', 'relaxers = ["a"]'),
        ("", "default_timeout_s = 60"),
        ("", 'sandbox = "bwrap"'),
        ("sandbox_network = true", ""),
        ('evidence_signers = "a"\nrequire_evidence = false', 'evidence_signers = "a"'),
    ],
)  # fmt: skip
def test_tightening_or_unrelated_changes_loosen_nothing(before: str, after: str) -> None:
    assert loosened(config(before), config(after)) == []


def test_the_evidence_keys_are_read_and_checked() -> None:
    assert not Config().requires_evidence
    assert config('evidence_signers = ".ci/signers"\n').requires_evidence
    assert not config('evidence_signers = "s"\nrequire_evidence = false\n').requires_evidence
    with pytest.raises(UsageError, match="evidence_signers must be the path of a file"):
        config('evidence_signers = "../outside"\n')
    with pytest.raises(UsageError, match="require_evidence must be true or false"):
        config('require_evidence = "yes"\n')


def test_the_sandbox_keys_are_read_and_checked() -> None:
    chosen = config('sandbox = "bwrap"\nsandbox_network = true\n')
    assert (chosen.sandbox, chosen.sandbox_network) == ("bwrap", True)
    assert (Config().sandbox, Config().sandbox_network) == ("none", False)
    with pytest.raises(UsageError, match='sandbox must be "none" or "bwrap"'):
        config('sandbox = "docker"\n')
    with pytest.raises(UsageError, match="sandbox_network must be true or false"):
        config('sandbox_network = "yes"\n')


def test_an_added_failgate_toml_is_judged_by_what_it_makes_the_config() -> None:
    pyproject = parse_config({"pyproject.toml": b'[tool.failgate]\nblock_on = "all"\n'}, "before")
    both = parse_config(
        {"pyproject.toml": b'[tool.failgate]\nblock_on = "all"\n', "failgate.toml": b""}, "after"
    )
    assert loosened(pyproject, both) == ['block_on "all" -> "protected"']


def test_failgate_toml_wins_over_pyproject() -> None:
    files = {
        "failgate.toml": b'mode = "warn"\n',
        "pyproject.toml": b'[tool.failgate]\nmode = "enforce"\n',
    }
    config = parse_config(files, "HEAD")
    assert config.mode == "warn" and config.source == "HEAD"


@pytest.mark.parametrize("tool", [b"1", b'"x"', b"[1]"])
def test_a_pyproject_whose_tool_is_not_a_table_is_named_as_the_fault(tool: bytes) -> None:
    with pytest.raises(UsageError, match=r"pyproject.toml \(HEAD\): tool must be a table"):
        parse_config({"pyproject.toml": b"tool = " + tool + b"\n"}, "HEAD")


def test_a_pyproject_without_failgate_settings_means_defaults() -> None:
    assert parse_config({"pyproject.toml": b'[project]\nname = "x"\n'}, "HEAD") == Config(
        source="HEAD"
    )


@pytest.mark.parametrize(
    "raw",
    [
        b"mode = \n",
        b"\xff\xfe",
        b"x = " + b"[" * 100_000 + b"]" * 100_000,
        b"default_timeout_s = " + b"1" * 5000 + b"\n",  # int() refuses, tomllib lets it raise
    ],
    ids=["broken-toml", "invalid-utf8", "deep-nesting", "huge-integer"],
)
def test_an_unreadable_file_is_a_usage_error_naming_it(raw: bytes) -> None:
    with pytest.raises(UsageError, match=r"^failgate\.toml \(HEAD\): not valid TOML: "):
        parse_config({"failgate.toml": raw}, "HEAD")


def test_strictest_keeps_what_the_default_branch_enforces() -> None:
    from failgate_hooks.ledger.config import strictest

    tip = Config(protected_refs=("refs/heads/main",), mode="warn", source="tip")
    main = Config(
        protected_refs=("refs/heads/main", "refs/heads/staging"),
        evidence_signers="signers",
        sandbox="bwrap",
        source="main",
    )
    merged = strictest(tip, main)
    assert merged.protected_refs == ("refs/heads/main", "refs/heads/staging")
    assert (merged.mode, merged.sandbox, merged.requires_evidence) == ("enforce", "bwrap", True)
    assert merged.source != tip.source
    assert strictest(main, main._replace(source="again")) is main


@pytest.mark.parametrize(
    "name", ["HTTP_X_REMOTE_USER", "HTTP_AUTHORIZATION", "QUERY_STRING", "PATH_INFO",
             "CONTENT_TYPE", "REMOTE_IDENT"],
)  # fmt: skip
def test_identity_env_may_not_name_what_an_http_pusher_sends(name: str) -> None:
    # Behind git-http-backend every request header reaches the hook as HTTP_*, and the
    # request's own parts as the other CGI variables: the pusher writes them.
    with pytest.raises(UsageError, match="identity_env"):
        config(f'identity_env = "{name}"\n')


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('protected_refs = ["main"]', "protected_refs[0]: expected a full ref name starting with "
         "refs/, got 'main': a short name matches no ref, so write refs/heads/main for branches, "
         "or refs/tags/main for tags"),
        ('protected_refs = ["refs/heads/main", "release/**"]', "protected_refs[1]: expected a "
         "full ref name starting with refs/, got 'release/**': a short name matches no ref, so "
         "write refs/heads/release/** for branches"),
        ('ledger_refs = ["origin/main"]', "ledger_refs[0]: expected a full ref name starting "
         "with refs/, got 'origin/main'"),
        ('ledger_refs = ["remotes/origin/main"]', "ledger_refs[0]: expected a full ref name "
         "starting with refs/, got 'remotes/origin/main': a short name matches no ref, so write "
         "refs/remotes/origin/main"),

        ('protected_refs = ["refs/heads/ma\u0456n"]', "protected_refs[0]: 'refs/heads/ma\\u0456n' "
         "holds a space, an invisible or a non-ASCII character"),
        ('protected_refs = ["refs/heads/main "]', "holds a space"),
        ('protected_refs = ["refs/*"]', "protected_refs[0]: 'refs/*' matches no branch or tag"),
    ],
)  # fmt: skip
def test_a_short_ref_name_in_the_configuration_is_refused(text: str, expected: str) -> None:
    """protected_refs = ["main"] protected nothing: pushes name refs/heads/main. A short
    name is a configuration error, which the hooks fail closed on, never a silent no-op."""
    for name, body in (("failgate.toml", text), ("pyproject.toml", f"[tool.failgate]\n{text}")):
        with pytest.raises(UsageError) as raised:
            config(body + "\n", name)
        assert f"{name} (test): " in raised.value.message
        assert expected in raised.value.message, raised.value.message


@pytest.mark.parametrize(
    "text",
    [
        f"{'k' * 100_000} = 1\n",
        f'ledger = "/{"x" * 100_000}"\n',
        f'protected_refs = ["{"x" * 100_000}", 1]\n',
        f'mode = "{"x" * 100_000}"\n',
    ],
)
def test_a_message_quotes_a_pushed_value_bounded(text: str) -> None:
    """A pushed configuration chooses its keys and values: a message quotes at most a
    bounded part of one, whatever reads it next."""
    with pytest.raises(UsageError) as raised:
        config(text)
    assert len(raised.value.message) < 1_000, raised.value.message[:200]
    assert "more characters" in raised.value.message


def test_a_tool_failgate_table_in_failgate_toml_is_named_with_the_fix() -> None:
    """The table pyproject.toml needs, copied into failgate.toml, blocks every push:
    the message says where its keys go instead."""
    with pytest.raises(UsageError) as raised:
        config('[tool.failgate]\nmode = "warn"\n')
    message = raised.value.message
    assert message.startswith("failgate.toml (test): unknown key tool; "), message
    assert "failgate.toml takes the keys at top level" in message, message
    assert "move them out of [tool.failgate]" in message, message


def test_every_unknown_key_is_named_in_one_message() -> None:
    with pytest.raises(UsageError) as raised:
        config('mdoe = "warn"\nblock = "all"\n')
    message = raised.value.message
    assert "unknown keys mdoe, block; expected one of block_on" in message, message
    assert "top level" not in message, message


def test_a_file_of_many_unknown_keys_names_a_few_and_counts_the_rest() -> None:
    with pytest.raises(UsageError) as raised:
        config("".join(f"k{n} = 1\n" for n in range(10_000)))
    message = raised.value.message
    assert "k0, k1, k2, k3, k4 and 9995 more;" in message, message[:300]
    assert len(message) < 1_000, message[:300]


def test_a_tool_failgate_table_in_pyproject_is_read() -> None:
    assert config('[tool.failgate]\nmode = "warn"\n', "pyproject.toml").mode == "warn"
