"""The sanitizer's table (issue 10 §2): realistic secrets and the look-alikes around them.

SECRETS holds `Secret(kind, text, values)`: `text` is how the secret shows up in a note (a shell line,
a config line, a header, a sentence), `values` the parts that must never reach disk — a leak is any
substring of one of them, 8 characters or longer, found in the stored bytes. Every value is made up
here, from a fixed seed, in the shape the real issuer uses (alphabet, length, prefix): no real key is
pasted anywhere. LOOKALIKES are texts that carry no secret and must be stored unchanged: prose that
names credentials, ids, hashes, paths, UUIDs, versions, git SHAs, base64 of plain words, sizes.

`measure(function)` runs a filter over the whole table and returns a `Report` (per-kind counts, leaks,
false positives) whose `table()` is the failure message of every corpus test.
"""

import base64
import collections
import json
import random
import string
from dataclasses import dataclass

SEED = 20260110
LOWER, UPPER, DIGITS = string.ascii_lowercase, string.ascii_uppercase, string.digits
ALNUM = LOWER + UPPER + DIGITS
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"
PW = ALNUM + "!#%^*_-+@"
MIN_LEAK = 8


@dataclass(frozen=True)
class Secret:
    kind: str
    text: str
    values: tuple


class _Gen:
    """Random strings in an issuer's alphabet, reproducible from SEED."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def s(self, alphabet: str, n: int) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    def mixed(self, alphabet: str, n: int) -> str:
        """n characters holding at least one upper, one lower and one digit (as real keys do)."""
        while True:
            out = self.s(alphabet, n)
            if any(c.isupper() for c in out) and any(c.islower() for c in out) and any(c.isdigit() for c in out):
                return out

    def password(self) -> str:
        return self.rng.choice(UPPER) + self.mixed(PW, self.rng.randint(11, 15)) + self.rng.choice(DIGITS)

    def digits(self, n: int, first: str = "123456789") -> str:
        return self.rng.choice(first) + self.s(DIGITS, n - 1)

    def uuid(self) -> str:
        h = self.s(HEX, 32)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"

    def b64(self, n_bytes: int) -> str:
        return base64.b64encode(self.rng.randbytes(n_bytes)).decode()

    def b64url(self, raw: bytes) -> str:
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    def pem(self, lines: int) -> str:
        body = base64.b64encode(self.rng.randbytes(48 * lines)).decode()
        return "\n".join(body[i:i + 64] for i in range(0, len(body), 64))


def _kinds(g: _Gen):
    """kind -> list of (text, values) makers; each maker is called once per variant."""
    def pw_kind(*templates):
        return [lambda t=t: (lambda p: (t.format(p), (p,)))(g.password()) for t in templates]

    def token_kind(make, *templates):
        return [lambda t=t: (lambda v: (t.format(v), (v,)))(make()) for t in templates]

    def basic():
        user = g.s(LOWER, 6)
        return base64.b64encode(f"{user}:{g.password()}".encode()).decode()

    def jwt():
        head = g.b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
        body = g.b64url(json.dumps({"sub": g.digits(10), "iat": 1700000000 + g.rng.randint(0, 10 ** 6)}).encode())
        return f"{head}.{body}.{g.b64url(g.rng.randbytes(32))}"

    def aws_id():
        return "AKIA" + g.s(UPPER + "234567", 16)

    def aws_pair():
        return (lambda i, s: (i, s))(aws_id(), g.mixed(B64, 40))

    def ppk():
        pub, priv = g.pem(2), g.pem(1)
        text = (f"PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: eddsa-key-2024\n"
                f"Public-Lines: 2\n{pub}\nPrivate-Lines: 1\n{priv}\nPrivate-MAC: {g.s(HEX, 64)}")
        return text, tuple(line for line in priv.splitlines() if len(line) >= MIN_LEAK)

    def pem(header):
        body = g.pem(6)
        return (f"-----BEGIN {header}-----\n{body}\n-----END {header}-----",
                tuple(line for line in body.splitlines() if len(line) >= MIN_LEAK))

    def azure_key():
        return g.b64(64)

    def sas():
        return g.b64(32).replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")

    def discord():
        return f"{g.b64url(g.digits(18).encode())}.{g.s(URLSAFE, 6)}.{g.mixed(URLSAFE, 38)}"

    def id_number():
        year, month, day = g.rng.randint(1950, 2005), g.rng.randint(1, 12), g.rng.randint(1, 28)
        return f"{g.digits(6)}{year}{month:02d}{day:02d}{g.s(DIGITS, 3)}{g.rng.choice(DIGITS + 'X')}"

    def phone():
        while True:
            number = g.rng.choice("3456789") + g.s(DIGITS, 9)
            value = int("1" + number)
            if value & (value - 1):  # a power of two is a size (2^34 = 17179869184), not a phone number
                return "1" + number

    return {
        "OpenAI key": token_kind(lambda: "sk-proj-" + g.mixed(URLSAFE, 48),
                                 "export OPENAI_API_KEY={}", "the key {} was revoked on friday",
                                 'client = OpenAI(api_key="{}")'),
        "Anthropic key": token_kind(lambda: "sk-ant-api03-" + g.mixed(URLSAFE, 93) + "AA",
                                    "ANTHROPIC_API_KEY={}", "use {} for the eval runs"),
        "api_key pair": token_kind(lambda: g.mixed(ALNUM, 32), "API_KEY={}", '"apiKey": "{}"',
                                   "X-Api-Key: {}", "DATADOG_API_KEY = {}", "HEROKU_API_KEY={}"),
        "password pair": pw_kind("DB_PASSWORD={}", '"password": "{}"', "password: {}", "REDIS_PASSWD={}"),
        "PGPASSWORD": pw_kind("PGPASSWORD={} psql -h db.internal -U app", "export PGPASSWORD='{}'",
                              "PGPASSWORD={}"),
        "SMTP_PASS": pw_kind("SMTP_PASS={}", 'MAIL_PASS="{}" in .env', "EMAIL_HOST_PASS={}"),
        "camelCase password": pw_kind('dbPassword: "{}"', "adminPassword={}", "{{ rootPassword: '{}' }}"),
        "camelCase refreshToken": token_kind(lambda: g.mixed(URLSAFE, 40), 'refreshToken: "{}"',
                                             "refreshToken={}", "const refreshToken = '{}';"),
        "camelCase clientSecret": token_kind(lambda: g.mixed(URLSAFE, 34), 'clientSecret: "{}"',
                                             "clientSecret={}", "oauth.clientSecret = \"{}\""),
        "--password flag": pw_kind("mytool login --username admin --password {}", "--db-password '{}'",
                                   "run ./deploy.sh --password {} --yes"),
        "mysql -p": pw_kind("mysql -u root -p{} app", "mysqldump -uadmin -p{} shop > dump.sql",
                            "mariadb -h db -u app -p{}"),
        "password in prose": pw_kind("the admin password is {}", "The password for grafana is {}.",
                                     "staging password is `{}`"),
        "Bearer token": token_kind(lambda: g.mixed(URLSAFE, 40), "Authorization: Bearer {}",
                                   'curl -H "Authorization: Bearer {}" https://api.example.com',
                                   "send Bearer {} with each call"),
        "Basic auth": token_kind(basic, "Authorization: Basic {}", "curl -H 'Authorization: Basic {}' localhost",
                                 "the header was Basic {}"),
        "Proxy Basic auth": token_kind(basic, "Proxy-Authorization: Basic {}", "proxy sends Proxy-Authorization: basic {}"),
        "GitHub classic token": token_kind(lambda: g.rng.choice(["ghp_", "gho_", "ghs_"]) + g.mixed(ALNUM, 36),
                                           "GH_TOKEN={}", "git remote uses {}", "token {} has repo scope"),
        "GitHub fine-grained": token_kind(lambda: f"github_pat_{g.mixed(ALNUM, 22)}_{g.mixed(ALNUM, 59)}",
                                          "gh auth login --with-token <<< {}", "PAT {} expires in May"),
        "AWS key id": token_kind(aws_id, "aws_access_key_id = {}", "key {} belongs to ci"),
        "AWS secret pair": token_kind(lambda: g.mixed(B64, 40), "aws_secret_access_key = {}",
                                      'AWS_SECRET_ACCESS_KEY="{}"', "aws_secret_key: {}"),
        "aws configure set": token_kind(lambda: g.mixed(B64, 40), "aws configure set aws_secret_access_key {}",
                                        "ran `aws configure set aws_secret_access_key {} --profile ci`"),
        "AWS id + bare secret": [
            lambda: (lambda i, s: (f"{i} / {s}", (i, s)))(*aws_pair()),
            lambda: (lambda i, s: (f"creds for ci: {i} {s}", (i, s)))(*aws_pair()),
            lambda: (lambda i, s: (f"id {i}\nsecret {s}", (i, s)))(*aws_pair()),
        ],
        "Slack bot token": token_kind(lambda: f"xoxb-{g.digits(12)}-{g.digits(13)}-{g.mixed(ALNUM, 24)}",
                                      "SLACK_BOT={}", "the bot posts with {}"),
        "Slack refresh token": token_kind(lambda: f"xoxe-1-{g.mixed(ALNUM, 146)}", "{} refreshes the bot",
                                          "rotation gave xoxe.xoxp-1-{}"),
        "Slack webhook": token_kind(lambda: f"T{g.s(UPPER, 8)}/B{g.s(UPPER, 10)}/{g.mixed(ALNUM, 24)}",
                                    "alerts go to https://hooks.slack.com/services/{}",
                                    "WEBHOOK=https://hooks.slack.com/services/{}"),
        "JWT": [lambda t=t: (lambda v: (t.format(v), tuple(v.split(".")[1:])))(jwt())  # the header is public
                for t in ("session cookie {}", "id_token={}", "decoded {} on jwt.io")],
        "RSA private key": [lambda: pem("RSA PRIVATE KEY"), lambda: pem("RSA PRIVATE KEY")],
        "OpenSSH private key": [lambda: pem("OPENSSH PRIVATE KEY"), lambda: pem("OPENSSH PRIVATE KEY")],
        "service-account private_key": [
            lambda: (lambda t, v: ('"private_key": "' + t.replace("\n", "\\n") + '\\n"', v))(*pem("PRIVATE KEY")),
            lambda: (lambda t, v: ('{"type": "service_account", "private_key": "' + t.replace("\n", "\\n") + '"}',
                                   v))(*pem("PRIVATE KEY")),
        ],
        "PuTTY .ppk key": [ppk, ppk, lambda: (lambda t, v: (f"saved deploy.ppk:\n{t}\nend", v))(*ppk())],
        "Stripe secret key": token_kind(lambda: g.rng.choice(["sk_live_", "rk_live_", "sk_test_"]) + g.mixed(ALNUM, 24),
                                        "STRIPE_KEY={}", "stripe.api_key = '{}'", "charge with {}"),
        "Stripe webhook secret": token_kind(lambda: "whsec_" + g.mixed(ALNUM, 32),
                                            "the webhook signing secret {} lives in 1password",
                                            "verify with {} before parsing"),
        "Google API key": token_kind(lambda: "AIza" + g.mixed(URLSAFE, 35), "maps key {}", "GOOGLE_MAPS={}"),
        "Google OAuth client secret": token_kind(lambda: "GOCSPX-" + g.mixed(URLSAFE, 28),
                                                 "GOOGLE_CLIENT_SECRET={}", "oauth client secret {} for web"),
        "Google access token": token_kind(lambda: "ya29." + g.mixed(URLSAFE, 120), "gcloud printed {}",
                                          "curl -H 'x-goog-token: {}'"),
        "Google refresh token": token_kind(lambda: "1//0" + g.mixed(URLSAFE, 60), "refresh with {} daily"),
        "GitLab token": token_kind(lambda: "glpat-" + g.mixed(URLSAFE, 20), "CI_TOKEN uses {}", "gitlab {} (api scope)"),
        "npm token": token_kind(lambda: "npm_" + g.mixed(ALNUM, 36), "publish with {}", "NPM={}"),
        "npm _authToken": token_kind(g.uuid, "//registry.npmjs.org/:_authToken={}",
                                     "add `//npm.pkg.github.com/:_authToken={}` to .npmrc"),
        "Hugging Face token": token_kind(lambda: "hf_" + g.mixed(ALNUM, 34), "HF={}", "huggingface-cli login {}"),
        "PyPI token": token_kind(lambda: g.mixed(URLSAFE, 70), "twine upload -p pypi-AgEIcHlwaS5vcmc{}",
                                 "PYPI=pypi-AgEIcHlwaS5vcmc{}"),
        "URL credentials": [
            lambda: (lambda p: (f"postgres://app:{p}@db.internal:5432/app", (p,)))(g.mixed(ALNUM, 16)),
            lambda: (lambda p: (f"MONGO=mongodb+srv://admin:{p}@cluster0.abcde.mongodb.net/db", (p,)))(g.mixed(ALNUM, 20)),
            lambda: (lambda p: (f"redis://:{p}@cache:6379/0", (p,)))(g.mixed(ALNUM, 24)),
        ],
        "Sentry DSN": token_kind(lambda: g.s(HEX, 32), "SENTRY_DSN=https://{}@o123456.ingest.sentry.io/4501234",
                                 "dsn https://{}@sentry.example.com/7"),
        "Azure storage AccountKey": token_kind(
            azure_key, "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={};EndpointSuffix=core.windows.net",
            "AccountKey={}"),
        "Azure quoted connection string": token_kind(
            azure_key,
            'AZURE_STORAGE_CONNECTION_STRING="DefaultEndpointsProtocol=https;AccountName=logs;AccountKey={};'
            'EndpointSuffix=core.windows.net"',
            "export AZURE_STORAGE_CONNECTION_STRING='AccountName=x;AccountKey={}'"),
        "Azure SharedAccessKey": token_kind(
            lambda: g.b64(32),
            "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={}",
            "SharedAccessKey={};EntityPath=orders"),
        "Azure SAS sig": token_kind(
            sas, "https://acct.blob.core.windows.net/c/f.txt?sv=2022-11-02&ss=b&srt=co&sp=r&se=2025-01-01&sig={}",
            "SAS token sv=2021-06-08&sig={}&spr=https"),
        "Rails SECRET_KEY_BASE": token_kind(lambda: g.s(HEX, 128), "SECRET_KEY_BASE={}", "secret_key_base: {}"),
        "Django SECRET_KEY": token_kind(lambda: "django-insecure-" + g.mixed(PW, 50), "SECRET_KEY='{}'"),
        "SendGrid key": token_kind(lambda: f"SG.{g.mixed(URLSAFE, 22)}.{g.mixed(URLSAFE, 43)}", "SENDGRID={}",
                                   "mail goes through {}"),
        "Mailgun key": token_kind(lambda: "key-" + g.s(LOWER + DIGITS, 31) + g.rng.choice(DIGITS),
                                   "mailgun {}", "MAILGUN_KEY {}"),
        "Discord bot token": token_kind(discord, "DISCORD={}", "the bot logs in with {}"),
        "Telegram bot token": token_kind(lambda: f"{g.digits(10)}:AA{g.mixed(URLSAFE, 33)}",
                                         "https://api.telegram.org/bot{}/sendMessage", "BOT_TOKEN {}"),
        "Shopify token": token_kind(lambda: "shpat_" + g.s(HEX, 32), "X-Shopify-Access {}", "admin {}"),
        "DigitalOcean token": token_kind(lambda: "dop_v1_" + g.s(HEX, 64), "doctl auth init -t {}", "DO={}"),
        "Vault token": token_kind(lambda: "hvs." + g.mixed(URLSAFE, 90), "VAULT={}", "vault login {}"),
        "Linear key": token_kind(lambda: "lin_api_" + g.mixed(ALNUM, 40), "linear {}"),
        "Postman key": token_kind(lambda: f"PMAK-{g.s(HEX, 24)}-{g.s(HEX, 34)}", "postman {}"),
        "Databricks token": token_kind(lambda: "dapi" + g.s(HEX, 32), "databricks {}"),
        "age secret key": token_kind(lambda: g.s("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58),
                                     "age key AGE-SECRET-KEY-1{}"),
        "Atlassian token": token_kind(lambda: g.mixed(URLSAFE, 180), "jira ATATT3xFfGF0{}"),
        "Grafana token": token_kind(lambda: f"glsa_{g.mixed(ALNUM, 32)}_{g.s(HEX, 8)}", "grafana {}"),
        "curl -u": [lambda: (lambda p: (f"curl -u admin:{p} https://ci.example.com/api", (p,)))(g.password()),
                    lambda: (lambda p: (f"curl -s --user 'deploy:{p}' -X POST $URL", (p,)))(g.password())],
        "sshpass": pw_kind("sshpass -p '{}' ssh deploy@web1", "sshpass -p {} scp a b"),
        "Chinese ID number": token_kind(id_number, "身份证 {}", "id {} on file"),
        "Chinese phone number": token_kind(phone, "call {} today", "电话{}"),
        "密码": pw_kind("密码：{}", "密码是 {}"),
        "token pair": token_kind(lambda: g.mixed(URLSAFE, 32), "GITHUB_TOKEN={}", 'token: "{}"',
                                 "SESSION_TOKEN={}"),
        "secret pair": token_kind(lambda: g.mixed(URLSAFE, 32), "JWT_SECRET={}", "client_secret={}",
                                  "signing_key: {}"),
    }


def _secrets():
    g = _Gen(SEED)
    out = []
    for kind, makers in _kinds(g).items():
        for make in makers:
            text, values = make()
            out.append(Secret(kind, text, tuple(values)))
    return out


SECRETS = _secrets()

LOOKALIKES = [
    # credentials named in prose
    "Bearer authentication is required for /v1", "use Bearer tokens, not Basic auth",
    "Basic authentication is disabled on the proxy", "Bearer token lifetime is 3600s",
    "Authorization header format: Basic base64(user:pass)",
    "the header is Basic aGVsbG8gd29ybGQ= (hello world, no colon)", "Proxy-Authorization is stripped by the proxy",
    "the password field must be 12+ characters", "reset your password via /account/reset", "password is required",
    "the password is stored in Vault", "the --password flag is deprecated",
    "pass --password-file instead of --password", "mysql -p prompts for the password",
    "mysql --port 3306 -h db.internal -u app", "passwordless login via magic links",
    "SMTP_PASS is read from the environment", "PGPASSWORD must never be committed",
    "the refreshToken field is optional", "clientSecret: string (required)", "dbPassword?: string;",
    "max_tokens=4096 and token_count=12", "The secret: small modules", "tokens are cheap, the secretary said",
    "api keys live in the vault", "set OPENAI_API_KEY in your shell, never in code",
    "AccountKey is shown in the portal", "sig=SIGTERM stops the worker", "AKIA keys rotate every 90 days",
    "ghp_ tokens are classic PATs", "xoxb- tokens belong to bots", "SG. prefix marks SendGrid keys",
    "the key-rotation policy is monthly", "a key-value store is enough", "dop_v1_ tokens are DigitalOcean's",
    "whsec_ secrets are per endpoint", "GOCSPX is the prefix Google uses", "ya29 tokens expire after an hour",
    "shpat_ is the Shopify admin prefix", "--token-file ~/.config/gh/token", "the 密码 field is required; 密码很重要",
    # environment and paths
    "PWD=/home/dev/src/app", "OLDPWD=/tmp/build and PWD=~/work", "pwd: /srv/app",
    "/home/dev/.ssh/id_rsa is the key path", "~/.aws/credentials holds the profile",
    "C:\\Users\\dev\\AppData\\Roaming\\npm", "src/auth/password_reset.py and tests/test_token.py",
    "~/.npmrc sets the registry only",
    # numbers: sizes, ids, counts
    "memory limit 17179869184", "the VM got 17179869184 bytes", "uploaded 13907654321 bytes in total",
    "snowflake id 175928847299117063", "message 802345678912345678 was pinned", "discord user 396715892346718209",
    "the snowflake 1145141919810893312", "order 12345678901 shipped", "epoch ms 1700000000000",
    "PID 4193821 on port 6379", "ISBN 978-3-16-148410-0", "phone +1 (555) 010-0199",
    # hashes, ids, versions
    "fixed in 3f2c1a9e8b7d6c5f4e3a2b1c0d9e8f7a6b5c4d3e",
    "sha1 da39a3ee5e6b4b0d3255bfef95601890afd80709 is the empty file", "commit 0f3a9c2 fixed it",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "md5 d41d8cd98f00b204e9800998ecf8427e", "request id 123e4567-e89b-12d3-a456-426614174000",
    "tenant 550e8400-e29b-41d4-a716-446655440000 owns the bucket", "trace_id=4bf92f3577b34da6a3ce929d0e0e4736",
    "released v1.2.3 and 2024.05.01", "Python 3.11.4, node v20.11.1, v2.14.0-rc.1", "version 10.0.19045.3803",
    "CVE-2024-3094 in xz", "#ff00ff and #00ff00 are the accents",
    # base64 and encodings of plain words
    "base64 'U29tZSBwbGFpbiB0ZXh0' is 'Some plain text'", "aGVsbG8gd29ybGQ= decodes to hello world",
    "eyJ is the base64 of {\"", "the header eyJhbGciOiJIUzI1NiJ9 alone is not a token",
    # urls and hosts
    "git@github.com:org/repo.git", "ssh://git@host.example/repo", "https://example.com/path@v2?q=a:b",
    "http://localhost:3000/callback?code_challenge_method=S256", "mailto:user@example.com",
    "10.0.0.1:8080 and localhost:5432", "https://acct.blob.core.windows.net/container/file.txt",
    # keys that are not secret
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBg\n-----END PUBLIC KEY-----", "-----BEGIN CERTIFICATE-----",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGk2 dev@laptop", "pk_test_ keys are publishable",
    "[Filtered:password] already clean", "task-management-system and risk-assessment-report",
    "sk-learn is not a package name",
]


@dataclass
class Report:
    kinds: dict  # kind -> [secrets, leaked]
    leaks: list  # (kind, text, output, fragment)
    false_positives: list  # (text, output)
    lookalikes: int

    @property
    def secrets(self) -> int:
        return sum(count for count, _ in self.kinds.values())

    def table(self) -> str:
        rows = [f"{'kind':32} secrets leaked"]
        rows += [f"{kind:32} {count:7} {leaked:6}" for kind, (count, leaked) in sorted(self.kinds.items())]
        rows.append(f"TOTAL: {self.secrets} secrets of {len(self.kinds)} kinds, {len(self.leaks)} leaked; "
                    f"{self.lookalikes} look-alikes, {len(self.false_positives)} false positives")
        rows += [f"LEAK [{kind}] {text!r} -> {out!r} (kept {fragment!r})" for kind, text, out, fragment in self.leaks]
        rows += [f"FALSE POSITIVE {text!r} -> {out!r}" for text, out in self.false_positives]
        return "\n".join(rows)


def leaked_fragment(secret: Secret, stored: str):
    """The first substring (>= 8 characters) of one of the secret's values found in `stored`, or None."""
    for value in secret.values:
        for start in range(0, len(value) - MIN_LEAK + 1):
            fragment = value[start:start + MIN_LEAK]
            if fragment in stored:
                return fragment
    return None


def measure_stored(stored: str, normalise=lambda text: text) -> Report:
    """The table against what a write path stored after every secret and every look-alike was written
    through it: a leak is a secret fragment anywhere in `stored`, a false positive a look-alike that is
    not in it verbatim (as `normalise` says the path writes it: one line, a summary's form)."""
    kinds = collections.defaultdict(lambda: [0, 0])
    leaks = []
    for secret in SECRETS:
        kinds[secret.kind][0] += 1
        fragment = leaked_fragment(secret, stored)
        if fragment:
            kinds[secret.kind][1] += 1
            leaks.append((secret.kind, secret.text, "(stored)", fragment))
    false_positives = [(text, "(not stored as written)") for text in LOOKALIKES if normalise(text) not in stored]
    return Report(dict(kinds), leaks, false_positives, len(LOOKALIKES))


def measure(store_secret, store_lookalike=None) -> Report:
    """Run the table through a write path. `store_secret(text)` returns the bytes that reached disk
    (as text; None when the write was refused: nothing stored, nothing leaked); `store_lookalike(text)`
    returns True when the look-alike was stored unchanged, or what was stored instead (default:
    `store_secret(text)`, which must equal `text`)."""
    kinds = collections.defaultdict(lambda: [0, 0])
    leaks, false_positives = [], []
    for secret in SECRETS:
        stored = store_secret(secret.text)
        kinds[secret.kind][0] += 1
        fragment = leaked_fragment(secret, stored or "")
        if fragment:
            kinds[secret.kind][1] += 1
            leaks.append((secret.kind, secret.text, stored, fragment))
    for text in LOOKALIKES:
        stored = store_lookalike(text) if store_lookalike else store_secret(text)
        if stored is not True and stored != text:
            false_positives.append((text, stored))
    return Report(dict(kinds), leaks, false_positives, len(LOOKALIKES))
