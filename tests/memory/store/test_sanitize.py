"""The sanitizer: a table of secret shapes that must be filtered and look-alikes that must not be."""

import random

import pytest

from maestro.memory.store.sanitize import filter_text, sanitize

pytestmark = pytest.mark.in_process  # never runs the archive (tests/testing/in_process.py)

GH36 = "aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5"  # 36 alphanumerics
JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
PEM_BODY = "MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB\naIjbOBTnXWgBE3i9M3mnVfUaG0XtGHNAXEZ5"

# (text, label, secret fragment that must not survive)
SECRETS = [
    # the original seven
    ("sk-abcdefgh12345678", "API key", "abcdefgh1234"),
    ("key sk-proj-AbC123_xyZ-98765 here", "API key", "AbC123_xyZ"),
    ("anthropic sk-ant-api03-QWERTYUIOP0987", "API key", "QWERTYUIOP"),
    ("(sk-12345678)", "API key", "12345678"),
    ("api_key=X", "API key", "=X"),
    ("API_KEY: abcd1234", "API key", "abcd1234"),
    ("api-key = zzz999", "API key", "zzz999"),
    ("apikey:qq11", "API key", "qq11"),
    ("access_token=ya29.a0AfH6SMB", "API key", "ya29"),
    ("Access-Token: tok_4455", "API key", "tok_4455"),
    ("OPENAI_API_KEY=not-an-sk-value-77", "API key", "not-an-sk"),
    ("X-Api-Key: 9f8e7d6c", "API key", "9f8e7d6c"),
    ('{"api_key": "abc def ghi"}', "API key", "abc def ghi"),
    ("password: hunter2", "password", "hunter2"),
    ("PASSWORD=Tr0ub4dor&3", "password", "Tr0ub4dor"),
    ("passwd=letmein", "password", "letmein"),
    ("pwd: s3cr3t", "password", "s3cr3t"),
    ("DB_PASSWORD=pg-pass-1", "password", "pg-pass-1"),
    ('"password": "correct horse battery staple"', "password", "horse battery"),
    ("password => 'p4ss'", "password", "p4ss"),
    ("login with password：qwerty12", "password", "qwerty12"),
    ("Bearer eyJhbGciOiJIUzI1NiJ9", "token", "eyJhbGciOiJIUzI1NiJ9"),
    ("Authorization: bearer abcdefgh.ijk/lmn+op=", "token", "abcdefgh.ijk"),
    ("Bearer\tAAAAAAAAAAAA", "token", "AAAAAAAAAAAA"),
    ("密码：abc123", "password", "abc123"),
    ("密码是 Passw0rd!", "password", "Passw0rd"),
    ("密码: hunter22", "password", "hunter22"),
    ("11010119900307789X", "ID number", "11010119900307789"),
    ("id 110101199003077891 on file", "ID number", "110101199003077891"),
    ("身份证11010119900307789x", "ID number", "11010119900307789"),
    ("13800138000", "phone number", "13800138000"),
    ("call 19912345678 today", "phone number", "19912345678"),
    ("电话13912345678", "phone number", "13912345678"),
    # what the original misses
    (f"ghp_{GH36}", "GitHub token", GH36),
    (f"gho_{GH36}", "GitHub token", GH36),
    (f"ghs_{GH36} app", "GitHub token", GH36),
    (f"ghu_{GH36}", "GitHub token", GH36),
    (f"ghr_{GH36}", "GitHub token", GH36),
    (f"github_pat_11ABCDEFG0_{GH36}", "GitHub token", GH36),
    ("AKIAIOSFODNN7EXAMPLE", "AWS key", "IOSFODNN7EXAMPLE"),
    ("ASIAY34FZKBOKMUTVV7A session", "AWS key", "Y34FZKBOKMUTVV7A"),
    ("aws_access_key_id=AKIAZZZZZZZZZZZZZZZZ", "AWS key", "ZZZZZZZZZZZZZZZZ"),
    ("aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "AWS secret", "wJalrXUtnFEMI"),
    ("AWS_SECRET_ACCESS_KEY: \"wJalrXUtnFEMI/K7MDENG\"", "AWS secret", "wJalrXUtnFEMI"),
    ("aws_secret_key = abc/DEF+123", "AWS secret", "abc/DEF+123"),
    ("xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOp", "Slack token", "AbCdEfGhIjKl"),
    ("xoxp-1111111111-2222222222", "Slack token", "1111111111"),
    ("xapp-1-A0123-456789-abcdef", "Slack token", "456789"),
    ("https://hooks.slack.com/services/T000/B000/XXXXXXXX", "Slack webhook", "XXXXXXXX"),
    (JWT, "JWT", "SflKxwRJSMeKKF2QT4fw"),
    (f"cookie {JWT};", "JWT", "eyJzdWIiOiIxMjM0NTY3ODkwIn0"),
    (f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----", "private key", "MIIEowIBAAK"),
    (f"-----BEGIN PRIVATE KEY-----\n{PEM_BODY}\n-----END PRIVATE KEY-----", "private key", "aIjbOBTnXWgB"),
    (f"-----BEGIN OPENSSH PRIVATE KEY-----\n{PEM_BODY}\n-----END OPENSSH PRIVATE KEY-----", "private key", "MIIE"),
    (f"-----BEGIN EC PRIVATE KEY-----\n{PEM_BODY}", "private key", "MIIEowIBAAK"),  # truncated paste
    (f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n{PEM_BODY}\n-----END PGP PRIVATE KEY BLOCK-----", "private key",
     "MIIEowIBAAK"),
    ("token=abc123", "token", "abc123"),
    ("GITHUB_TOKEN=plainvalue", "token", "plainvalue"),
    ("refresh_token: 1//0gAbC", "token", "1//0gAbC"),
    ("auth-token = 'quoted value'", "token", "quoted value"),
    ("secret=s3cr3t", "secret", "s3cr3t"),
    ("client_secret=GOCSPX-abcdef", "secret", "GOCSPX"),
    ("JWT_SECRET: 9a8b7c6d5e", "secret", "9a8b7c6d5e"),
    ("secret_key=django-insecure-xyz", "secret", "django-insecure"),
    ("private_key: \"-abc-\"", "secret", "-abc-"),
    ("postgres://admin:hunter2@db.internal:5432/app", "credentials", "hunter2"),
    ("https://user:p@ss@github.com/org/repo.git", "credentials", "p@ss"),
    ("redis://:onlypassword@cache:6379", "credentials", "onlypassword"),
    ("https://x-access-token:tok3n@github.com/o/r", "credentials", "tok3n"),
    ("https://0123456789abcdefABCDEF0123@github.com/o/r", "credentials", "0123456789abcdef"),
    ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "API key", "4eC39HqLyjWDarjtT1zdp7dc"),
    ("rk_test_51HabcdefGHIJ", "API key", "51HabcdefGHIJ"),
    ("AIzaSyA-1234567890abcdefghijklmnopqrstu", "API key", "SyA-1234567890"),
    ("glpat-xxxxxxxxxxxxxxxxxxxx", "API key", "xxxxxxxxxxxxxxxxxxxx"),
    (f"npm_{GH36}", "API key", GH36),
    ("hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "API key", "abcdefghijklmnopqrstuvwxyz"),
]

# text that carries no secret and must come back unchanged
LOOKALIKES = [
    "the sk- prefix marks OpenAI keys",
    "task-management-system and risk-assessment-report",
    "desk-reference-manual",
    "sk-short",
    "reset your password before friday",
    "password policy: at least 12 characters",
    "the password field is required",
    "passwords must rotate",
    "pwd prints the working directory",
    "use a Bearer token in the header",
    "Bearer short",
    "密码很重要",
    "密码是什么",
    "commit 0f3a9c2 fixed it",
    "hash deadbeefcafebabe",
    "released v1.2.3 and 2024.05.01",
    "version 10.0.19045.3803",
    "uuid 123e4567-e89b-12d3-a456-426614174000",
    "order 12345678901 shipped",  # 11 digits, but not 1[3-9]
    "call 1380013800 now",  # 10 digits
    "ref 138001380001 now",  # 12 digits
    "+8613800138000",  # glued to the country code: not a standalone word
    "13800138000x9",  # glued to letters
    "id 1101011990030778 only",  # 16 digits
    "eyJ is the base64 of {\"",
    "AKIA prefix marks long-term AWS keys",
    "AKIAEXAMPLE",
    "ghp_ tokens are classic PATs",
    "ghp_tooShort123",
    "xoxb- tokens belong to bots",
    "max_tokens=4096 and token_count=12",
    "The secret: small modules",
    "tokens are cheap",
    "the secretary signed it",
    "git@github.com:org/repo.git",
    "ssh://git@host.example/repo",
    "https://example.com/path@v2?q=a:b",
    "mailto:user@example.com",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBg\n-----END PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----",
    "api keys live in the vault",
    "access tokens expire hourly",
    "[Filtered:password] already clean",
]


def test_the_tables_are_large_enough():
    assert len(SECRETS) >= 60 and len(LOOKALIKES) >= 30


@pytest.mark.parametrize("text,label,fragment", SECRETS)
def test_secret_shapes_are_filtered(text, label, fragment):
    out = filter_text(text)
    assert f"[Filtered:{label}]" in out, out
    assert fragment not in out, out


@pytest.mark.parametrize("text", LOOKALIKES)
def test_look_alikes_are_untouched(text):
    assert filter_text(text) == text
    assert sanitize(text) == text


@pytest.mark.parametrize("text", ["sk-abcdefgh12345678", "  api_key=X  ", "13800138000 11010119900307789X",
                                  f"ghp_{GH36}\n", "password=a, token=b1"])
def test_a_text_that_is_only_secrets_is_refused(text):
    assert sanitize(text) is None


def test_the_original_labels_win_where_rules_overlap():
    assert filter_text("Authorization: Bearer " + JWT) == "Authorization: [Filtered:token]"
    assert filter_text("api_key=sk-abcdefgh123 rest") == "api_key=[Filtered:API key] rest"
    assert filter_text("password: hunter2 and ship friday") == "[Filtered:password] and ship friday"


def test_filtering_is_idempotent_and_no_secret_survives_a_mix():
    rng = random.Random(1234)
    separators = [" ", "\n", ", ", "; ", " and "]
    for _ in range(500):
        chosen = [rng.choice(SECRETS) for _ in range(rng.randint(1, 5))]
        text = "".join(item[0] + rng.choice(separators) for item in chosen)
        once = filter_text(text)
        assert filter_text(once) == once
        for _, _, fragment in chosen:
            assert fragment not in once, (text, once)
