"""The sanitizer measured on the table of realistic secrets and look-alikes (issue 10 §2; the table is
tests/testing/secrets.py): 0 leaks, 0 false positives, and each named defect of the issue by itself."""

import random

import pytest

from maestro.memory.store import compose
from maestro.memory.store.sanitize import filter_text, sanitize, summary_text
from testing.secrets import LOOKALIKES, SECRETS, leaked_fragment, measure

pytestmark = pytest.mark.in_process  # never runs the archive (tests/testing/in_process.py)


def test_the_table_is_as_large_as_the_issue_asks():
    report = measure(sanitize)
    assert report.secrets >= 150 and len(report.kinds) >= 40 and report.lookalikes >= 80, report.table()


def test_no_secret_of_the_table_survives_and_no_look_alike_is_touched():
    report = measure(sanitize)
    assert not report.leaks and not report.false_positives, report.table()


def test_filter_text_alone_keeps_no_secret_and_changes_no_look_alike():
    """filter_text is what messages, codemaps, outcomes and handoffs use: the same table holds for it."""
    report = measure(filter_text)
    assert not report.leaks and not report.false_positives, report.table()


def test_secrets_mixed_with_look_alikes_are_filtered_once_and_leave_nothing():
    rng = random.Random(20260110)
    separators = [" ", "\n", ", ", "; ", " and ", "\n\n", " | ", "\t"]
    for _ in range(400):
        chosen = [rng.choice(SECRETS) for _ in range(rng.randint(1, 4))]
        parts = [s.text for s in chosen] + [rng.choice(LOOKALIKES) for _ in range(rng.randint(0, 2))]
        rng.shuffle(parts)
        text = "".join(part + rng.choice(separators) for part in parts)
        once = filter_text(text)
        assert filter_text(once) == once, text
        in_summary = summary_text(text)  # a queued `[summary:…]` is sanitized once more with its entry
        assert filter_text(in_summary) == in_summary, text
        for secret in chosen:
            assert leaked_fragment(secret, once) is None, (secret.kind, text, once)


# -- each leak the issue names, by itself ------------------------------------------------------------------------

AZURE_KEY = "Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmE9PQ=="
NAMED_LEAKS = [
    (f"AccountKey={AZURE_KEY};EndpointSuffix=core.windows.net", "Zm9vYmFyYmF6"),
    ("SharedAccessKeyName=Root;SharedAccessKey=c2VjcmV0LXNoYXJlZC1hY2Nlc3Mta2V5LTAxMjM0NTY3=", "c2VjcmV0LXNo"),
    ("https://a.blob.core.windows.net/c?sv=2022-11-02&sig=Q2hBbmdFbWUlMkZwbGVhc2UlM0Q%3D&se=x", "Q2hBbmdFbWUl"),
    (f'AZURE_STORAGE_CONNECTION_STRING="DefaultEndpointsProtocol=https;AccountName=a;AccountKey={AZURE_KEY}"',
     "Zm9vYmFyYmF6"),
    ("PGPASSWORD=Xk82!qpL0vM psql -h db", "Xk82!qpL0vM"),
    ("SMTP_PASS=Hq7#mW2pZr9", "Hq7#mW2pZr9"),
    ('dbPassword: "Vt5%nQ8xLk2"', "Vt5%nQ8xLk2"),
    ("refreshToken=R3fr3sh-T0ken-AbCdEfGh12", "R3fr3sh-T0ken"),
    ('clientSecret: "Cl13ntS3cr3t-XyZ"', "Cl13ntS3cr3t"),
    ("deploy --password Pa55w0rd!xyz --yes", "Pa55w0rd!xyz"),
    ("mysql -u root -pMyS3cretPw app", "MyS3cretPw"),
    ("the admin password is Adm1n!Pass77", "Adm1n!Pass77"),
    ("Authorization: Basic YWRtaW46czNjcjN0LXBhc3N3b3Jk", "YWRtaW46czNj"),
    ("Proxy-Authorization: Basic cHJveHk6cHIweHktcGFzcw==", "cHJveHk6cHIw"),
    ("aws configure set aws_secret_access_key wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY12", "wJalrXUtnFEMI"),
    ("AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI"),
    ("GOCSPX-1a2B3c4D5e6F7g8H9i0JkLmNoPq", "1a2B3c4D5e6F"),
    ("ya29.a0AfH6SMBx7Yq2LkPz9Rt4Vw8Nc3Df6Gh1Jk5Lm", "a0AfH6SMBx7Y"),
    ("xoxe-1-My0xLTEyMzQ1Njc4OTAxMi0xMjM0NTY3ODkw", "My0xLTEyMzQ1"),
    ("the signing secret whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw lives in the vault", "MfKQ9r8GKYqr"),
    ("SECRET_KEY_BASE=" + "9f3a" * 32, "9f3a9f3a9f3a"),
    ("//registry.npmjs.org/:_authToken=7c9e6679-7425-40de-944b-e07fc1f90ae7", "7c9e6679-7425"),
    ("PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: k\nPublic-Lines: 1\nAAAAC3NzaC1lZDI1NTE5\n"
     "Private-Lines: 1\nAAAAIPrivAtEkEyMaTeRiAl0123456789\nPrivate-MAC: 0a1b2c3d", "PrivAtEkEyMa"),
    ("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", "TwL2iGABf9DH"),
    ("mailgun key-3ax6xnjp29jd6fds4gc373sgvjxteol0", "3ax6xnjp29jd"),
    ("DISCORD=MTA5ODc2NTQzMjEwOTg3NjU0.GhIjKl.abcdefghijklmnopqrstuvwxyz0123456789AB", "abcdefghijkl"),
    ("https://api.telegram.org/bot1234567890:AAEhBOweik6ad9r_QXMZ3Ch6Tr_AbCdEfGh/getMe", "AAEhBOweik6a"),
    ("shpat_0123456789abcdef0123456789abcdef", "0123456789abcdef"),
    ("dop_v1_" + "ab12" * 16, "ab12ab12ab12"),
]


@pytest.mark.parametrize("text,fragment", NAMED_LEAKS)
def test_each_leak_the_issue_names_is_filtered(text, fragment):
    out = filter_text(text)
    assert fragment not in out and "[Filtered:" in out, out


@pytest.mark.parametrize("text", [
    "Bearer authentication is required",
    "PWD=/home/dev/project",
    "the disk holds 17179869184",
    "snowflake 175928847299117063",
])
def test_each_false_positive_the_issue_names_is_gone(text):
    assert filter_text(text) == text and sanitize(text) == text


def test_a_path_valued_pwd_stays_but_a_pwd_password_does_not():
    assert filter_text("pwd: s3cr3t") == "[Filtered:password]"
    assert filter_text("PWD=C:\\Users\\dev") == "PWD=C:\\Users\\dev"


def test_an_id_number_still_needs_a_real_birth_date_and_a_phone_number_is_not_a_size():
    assert filter_text("id 110101199003077891") == "id [Filtered:ID number]"
    assert filter_text("id 110101199013377891") == "id 110101199013377891"  # month 13
    assert filter_text("call 13912345678") == "call [Filtered:phone number]"
    assert filter_text("13912345678 bytes") == "13912345678 bytes"


# -- the summary: a placeholder is never cut, no fragment of a secret is left -------------------------------------


@pytest.mark.parametrize("pad", range(60, 90))
def test_the_auto_summary_never_cuts_a_placeholder(pad):
    body = "x" * pad + " password=Hunter2Hunter2 and more words after it to pass eighty characters"
    entry = compose.ensure_summary(f"[2024-05-01 10:07] {filter_text(body)}")
    summary = entry.split("[summary:", 1)[1].split("]", 1)[0]
    assert "Hunter2" not in entry
    assert "(Filtered:" not in summary or "(Filtered:password)" in summary, summary
    assert "Filtered" not in summary.replace("(Filtered:password)", ""), summary


def test_a_summary_keeps_its_placeholders_whole_in_a_form_the_header_can_hold():
    assert compose.clean_summary("deploy with [Filtered:password] on fridays") == \
        "deploy with (Filtered:password) on fridays"
    assert compose.clean_summary("key sk-abcdefgh12345678 here") == "key (Filtered:API key) here"
    cut = compose.clean_summary("y" * 110 + " [Filtered:password] tail")
    assert cut == "y" * 110, cut


def test_joining_the_lines_of_a_summary_cannot_make_a_secret():
    assert "Zz9" not in compose.clean_summary("password\n=Zz9x8c7v6b5n")


# -- unlucky and hostile spellings: each once left a fragment behind -----------------------------------------------

@pytest.mark.parametrize("text,fragment", [
    ("-----BEGIN RSA PRIVATE KEY-----\r\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn\r\n-----END RSA PRIVATE KEY-----\r\n", "MIIEowIBAAK"),
    ("PuTTY-User-Key-File-2: ssh-rsa\r\nPrivate-Lines: 1\r\nAAAAgQDabcdefSECRET123\r\nPrivate-MAC: ab12", "SECRET123"),
    ("Private-Lines: 2\nAAAAgQDabcdefSECRET123\nAAAAgQDabcdefSECRET456", "SECRET456"),
    ('{"password":"p\\"ss0rdX12"}', "ss0rdX12"),  # an escaped quote inside a JSON value
    ("mysql -uroot -p'Hunter 2x9' db", "2x9"),  # a quoted password with a space
    ("sshpass -p 'a b c123' ssh host", "c123"),
    ("deploy --password --db-password 'Zq81!mmKx' --yes", "Zq81!mmKx"),  # the next option is not the value
    ('--password AWS_SECRET_ACCESS_KEY="C9UCRy1KAkJHealWlEAimIXY+u0qm5e2mzsogSBx"', "C9UCRy1KAkJH"),
    ('--password refreshToken: "usP3B_WbCBpLvJ8AXAZ_BJKI"', "usP3B_WbCBpL"),
    ("--password (Filtered:x)hunter2xyz", "hunter2xyz"),  # a fake placeholder does not shield a value
    ("password=[Filtered:password]Hunter2xyz", "Hunter2xyz"),
])
def test_hostile_spellings_leave_no_fragment(text, fragment):
    out = filter_text(text)
    assert fragment not in out and filter_text(out) == out, out
