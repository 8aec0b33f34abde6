"""Tests for failgate_hooks.credentials: every rule finds its shape and spares prose."""

from __future__ import annotations

import dataclasses

import pytest

from failgate_hooks import credentials

# Fake secrets are assembled at run time, so that this file does not itself
# look like a leak to a forge's push protection or another secret scanner.
ALNUM36 = "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3gH5"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY"
GITHUB_CLASSIC = "gh" + "p_" + ALNUM36
GITHUB_FINE = "github" + "_pat_" + "11ABCDEFG0123456789_abcdefghijklmnop"
GITLAB = "gl" + "pat-" + "xY1z-AbCdEfGhIjKlMnOp"
SLACK = "xo" + "xb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
GOOGLE = "AI" + "za" + "SyA1bC2dE3fG4hI5jK6lM7nO8pQ9rS0tU1v"
STRIPE = "sk" + "_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
STRIPE_RESTRICTED = "rk" + "_live_" + "4eC39HqLyjWDarjtT1zdp7dcXX"
JWT = (
    "ey" + "JhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkFkYSJ9"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
NPM = "np" + "m_" + ALNUM36
PYPI = "py" + "pi-AgEIcHlwaS5vcmc" + "CJGI3ZmQ1MmM4LTg1NzctNDJkZS1iMjM2LTk0ZjA5ZjdlZDE0ZAACKlsz"
PEM_BODY = "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM2Lqs\nQ1F0fTnbTzXxp2kS4u7wq1\n"


def _pem(label: str) -> str:
    """A private-key block with `label` (e.g. "RSA PRIVATE KEY")."""
    return f"-----BEGIN {label}-----\n{PEM_BODY}-----END {label}-----\n"


# (rule, text, secret): the text holds `secret`, which the rule must find.
POSITIVE = [
    ("private-key-block", _pem("PRIVATE KEY"), PEM_BODY),
    ("private-key-block", _pem("RSA PRIVATE KEY"), PEM_BODY),
    ("private-key-block", _pem("EC PRIVATE KEY"), PEM_BODY),
    ("private-key-block", _pem("DSA PRIVATE KEY"), PEM_BODY),
    ("private-key-block", _pem("OPENSSH PRIVATE KEY"), PEM_BODY),
    ("private-key-block", _pem("ENCRYPTED PRIVATE KEY"), PEM_BODY),
    ("private-key-block", _pem("PGP PRIVATE KEY BLOCK"), PEM_BODY),
    ("private-key-block", "note: -----BEGIN RSA PRIVATE KEY-----\n" + PEM_BODY, "BEGIN RSA"),
    ("aws-access-key-id", "key AKIAIOSFODNN7EXAMPLE in the log", "AKIAIOSFODNN7EXAMPLE"),
    ("aws-access-key-id", "ASIAY34FZKBOKMUTVV7A", "ASIAY34FZKBOKMUTVV7A"),
    ("aws-access-key-id", "role=AROAJQABLZS4A3QDU576", "AROAJQABLZS4A3QDU576"),
    ("aws-secret-access-key", f"aws_secret_access_key = {AWS_SECRET}", AWS_SECRET),
    ("aws-secret-access-key", f'AWS_SECRET_ACCESS_KEY="{AWS_SECRET}"', AWS_SECRET),
    ("aws-secret-access-key", f'"aws_secret_access_key": "{AWS_SECRET}"', AWS_SECRET),
    ("github-token", f"token {GITHUB_CLASSIC}", GITHUB_CLASSIC),
    ("github-token", "gh" + "s_" + ALNUM36, "gh" + "s_" + ALNUM36),
    ("github-token", GITHUB_FINE, GITHUB_FINE),
    ("gitlab-token", f"push with {GITLAB}", GITLAB),
    ("slack-token", SLACK, SLACK),
    ("google-api-key", f"key={GOOGLE}", GOOGLE),
    ("stripe-key", STRIPE, STRIPE),
    ("stripe-key", STRIPE_RESTRICTED, STRIPE_RESTRICTED),
    ("jwt", f"Authorization: Bearer {JWT}", JWT),
    ("npm-token", f"//registry.npmjs.org/:_authToken={NPM}", NPM),
    ("pypi-token", f"password = {PYPI}", PYPI),
    ("secret-assignment", "password = changeme", "changeme"),
    ("secret-assignment", 'db_password: "hunter22!"', "hunter22!"),
    ("secret-assignment", "PASSWD=s3cr3t-value", "s3cr3t-value"),
    ("secret-assignment", "pwd: Tr0ub4dor&3", "Tr0ub4dor&3"),
    ("secret-assignment", "client_secret=9f8e7d6c5b4a", "9f8e7d6c5b4a"),
    ("secret-assignment", "SECRET_KEY = 'django-insecure-abc123'", "django-insecure-abc123"),
    ("secret-assignment", "GITHUB_TOKEN=abcdef123456", "abcdef123456"),
    ("secret-assignment", "api_key: k-9a8b7c6d", "k-9a8b7c6d"),
    ("secret-assignment", "apiKey=0123456789", "0123456789"),
    ("secret-assignment", "x-api-key: qwerty123", "qwerty123"),
    ("secret-assignment", "access_key => 'Zm9vYmFyYmF6'", "Zm9vYmFyYmF6"),
    ("secret-assignment", "private_key=abcdefgh", "abcdefgh"),
    ("secret-assignment", '{"token": "t0k3n-value"}', "t0k3n-value"),
    ("secret-assignment", "password=$ecret!!x", "$ecret!!x"),
]

# (rule, text): the rule must not fire on this text.
NEGATIVE = [
    ("private-key-block", "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkq\n-----END PUBLIC KEY-----"),
    ("private-key-block", "-----BEGIN CERTIFICATE-----\nMIIBIjANBgkq\n"),
    ("private-key-block", "rotate the private key every quarter"),
    ("aws-access-key-id", "AKIA1234"),
    ("aws-access-key-id", "XAKIAIOSFODNN7EXAMPLE"),
    ("aws-access-key-id", "AKIAIOSFODNN7EXAMPLEX"),
    ("aws-access-key-id", "akiaiosfodnn7example"),
    ("aws-secret-access-key", "aws_secret_access_key = tooshort"),
    ("aws-secret-access-key", "set aws_secret_access_key in your profile"),
    ("github-token", "gh" + "p_" + "short"),
    ("github-token", "the ghp_ prefix marks a classic token"),
    ("gitlab-token", "glpat-short"),
    ("slack-token", "xoxb-"),
    ("slack-token", "xoxz-123456789012-abcdefghijk"),
    ("google-api-key", "AIzaShort"),
    ("stripe-key", "sk" + "_test_" + "4eC39HqLyjWDarjtT1zdp7dc"),
    ("stripe-key", "sk" + "_live_" + "short"),
    ("jwt", "eyJhbGciOiJIUzI1NiJ9 alone is only a header"),
    ("npm-token", "npm_config_registry=https://registry.npmjs.org"),
    ("pypi-token", "pypi-AgEIcHlwaS5vcmc"),
    ("pypi-token", "see https://pypi.org/project/failgate-hooks"),
    ("secret-assignment", "the password policy needs review"),
    ("secret-assignment", "token budget 50M"),
    ("secret-assignment", "max_tokens=4096"),
    ("secret-assignment", "password_hash = bcrypt-digest-stored"),
    ("secret-assignment", "password = ..."),
    ("secret-assignment", "password = <redacted>"),
    ("secret-assignment", "password: <your-password-here>"),
    ("secret-assignment", "password = ***"),
    ("secret-assignment", "password = ********"),
    ("secret-assignment", "password = xxxxxxxx"),
    ("secret-assignment", "password = ${DB_PASSWORD}"),
    ("secret-assignment", "password=$DB_PASSWORD"),
    ("secret-assignment", "token: {{ secrets.TOKEN }}"),
    ("secret-assignment", "password = %(password)s"),
    ("secret-assignment", "secret: [REDACTED]"),
    ("secret-assignment", "password = abc"),
    ("secret-assignment", "password =\nthe next line is prose"),
    ("secret-assignment", "PWD=/home/ada/src/project"),
    ("secret-assignment", "OLDPWD=hunter22hunter"),
    ("secret-assignment", "mypassword=hunter22"),
]


def _rules_found(text: str) -> set[str]:
    """The names of the rules that fire on `text`."""
    return {finding.rule for finding in credentials.find_credentials(text)}


def test_every_rule_has_a_positive_and_a_negative_example() -> None:
    names = {rule.name for rule in credentials.RULES}
    assert len(names) == len(credentials.RULES)
    assert {rule for rule, _, _ in POSITIVE} == names
    assert {rule for rule, _ in NEGATIVE} == names


@pytest.mark.parametrize(("rule", "text", "secret"), POSITIVE)
def test_rule_finds_its_shape(rule: str, text: str, secret: str) -> None:
    findings = [f for f in credentials.find_credentials(text) if f.rule == rule]
    assert findings, f"{rule} missed its example"
    assert any(secret in text[f.start : f.end] for f in findings)
    assert all(f.rules_version == credentials.RULES_VERSION == 1 for f in findings)


@pytest.mark.parametrize(("rule", "text"), NEGATIVE)
def test_rule_spares_lookalikes(rule: str, text: str) -> None:
    assert rule not in _rules_found(text)


@pytest.mark.parametrize(
    "text",
    [
        "the password policy needs review",
        "token budget 50M",
        "Gas budget must scale with module count",
        "budget 50M < required 120M",
        "rotate the API key and the secret every quarter; tokens expire hourly",
        "deploy:mainnet:gas-budget failed at 9f2a1c4e0b1d2c3e4f5a6b7c8d9e0f1a2b3c4d5e",
        "ghost_writer = alice",
        "",
    ],
)
def test_ordinary_prose_has_no_findings(text: str) -> None:
    assert credentials.find_credentials(text) == []


@pytest.mark.parametrize(("rule", "text", "secret"), POSITIVE)
def test_a_finding_never_carries_the_secret(rule: str, text: str, secret: str) -> None:
    for finding in credentials.find_credentials(text):
        shown = repr(finding) + credentials.describe(finding) + str(dataclasses.asdict(finding))
        assert secret not in shown
        assert text[finding.start : finding.end] not in shown


def test_describe_names_rule_and_version() -> None:
    (finding,) = credentials.find_credentials("AKIAIOSFODNN7EXAMPLE")
    assert credentials.describe(finding) == (
        "credential-shaped text (rule aws-access-key-id, rules v1)"
    )
    assert finding == credentials.Finding("aws-access-key-id", 1, 0, 20)


def test_findings_are_in_order_of_position_with_offsets_into_the_text() -> None:
    text = f"first {GITHUB_CLASSIC}\nthen AKIAIOSFODNN7EXAMPLE\nlast password=hunter22"
    findings = credentials.find_credentials(text)
    assert [f.rule for f in findings] == ["github-token", "aws-access-key-id", "secret-assignment"]
    assert text[findings[0].start : findings[0].end] == GITHUB_CLASSIC
    assert text[findings[1].start : findings[1].end] == "AKIAIOSFODNN7EXAMPLE"
    assert text[findings[2].start : findings[2].end] == "password=hunter22"


def test_a_specific_rule_hides_the_generic_one_on_the_same_text() -> None:
    assert _rules_found(f"token = {GITHUB_CLASSIC}") == {"github-token"}
    assert _rules_found(f"aws_secret_access_key={AWS_SECRET}") == {"aws-secret-access-key"}


def test_a_placeholder_does_not_hide_a_real_secret_after_it() -> None:
    found = credentials.find_credentials("password=<redacted> token=realvalue123")
    assert [f.rule for f in found] == ["secret-assignment"]


def test_the_private_key_span_covers_the_whole_block() -> None:
    text = "before\n" + _pem("OPENSSH PRIVATE KEY") + "after"
    (finding,) = credentials.find_credentials(text)
    assert text[finding.start :].startswith("-----BEGIN OPENSSH")
    assert text[: finding.end].endswith("-----END OPENSSH PRIVATE KEY-----")


def test_rules_and_findings_are_frozen() -> None:
    finding = credentials.Finding("jwt", 1, 0, 3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        finding.start = 1  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        credentials.RULES[0].name = "x"  # type: ignore[misc]
