"""Deterministic labelled corpus for bench/detect_quality.py.

Positives are generated per credential / PII family from the public token formats (random values
of the right shape, valid checksums where a number has one) and embedded in realistic files:
.env, YAML, JSON, Python, JavaScript, Go, Dockerfile, Kubernetes manifests, INI, logs and shell
history. Negatives are the same kinds of files full of near-misses: git SHAs and sha256 digests,
UUIDs, base64 images, lorem ipsum, minified JS, lockfiles, public keys and certificates, test
fixtures with EXAMPLE / sk_test_ values, placeholders and environment-variable references.

The generator knows token SHAPES, not tcg's rules: it is written from the vendors' formats so
that the benchmark measures the rules instead of echoing them.

Everything is written under ``bench/.data/quality/files/`` (gitignored); ``labels.json`` sits
next to ``files/`` (never inside the scanned tree):
``[{"file", "line", "end_line", "category", "family"}]`` (1-based lines; a label covers
``line..end_line``). Labels never leave bench/.data.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

CHARSETS = {
    "A": string.ascii_letters + string.digits,
    "U": string.ascii_uppercase + string.digits,
    "L": string.ascii_lowercase + string.digits,
    "H": "0123456789abcdef",
    "X": "0123456789ABCDEF",
    "D": string.digits,
    "B": string.ascii_letters + string.digits + "+/",
    "W": string.ascii_letters + string.digits + "-_",
    "Z": string.ascii_uppercase + "234567",
    "M": string.ascii_letters,
    "a": string.ascii_lowercase,
    "C": "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
}
WORDS = (
    "alpha bravo cedar delta ember falcon garnet harbor iris jasper kepler lumen maple nova orbit "
    "pine quartz raven sierra tango umber velvet willow xenon yarrow zephyr copper meadow canyon"
).split()
LOREM = (
    "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut "
    "labore et dolore magna aliqua enim ad minim veniam quis nostrud exercitation ullamco laboris"
).split()


class Gen:
    """Seeded random helpers."""

    def __init__(self, seed: int):
        self.r = random.Random(seed)

    def s(self, cs: str, n: int) -> str:
        chars = CHARSETS[cs]
        while True:
            out = "".join(self.r.choice(chars) for _ in range(n))
            if n < 12 or cs not in "ABW" or (
                any(c.isdigit() for c in out) and any(c.isupper() for c in out)
                and any(c.islower() for c in out)):
                return out

    def tpl(self, t: str) -> str:
        """'ghp_{A36}' -> random value; '{{' is a literal brace."""
        out, i = [], 0
        while i < len(t):
            if t[i] == "{" and i + 1 < len(t) and t[i + 1] in CHARSETS:
                j = t.index("}", i)
                out.append(self.s(t[i + 1], int(t[i + 2:j])))
                i = j + 1
            else:
                out.append(t[i])
                i += 1
        return "".join(out)

    def choice(self, seq):  # type: ignore[no-untyped-def]
        return self.r.choice(seq)

    def uuid(self) -> str:
        h = self.s("H", 32)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"

    def aws_key_id(self, prefix: str = "AKIA") -> str:
        """A key id whose base32 body encodes a 12-digit account id, as real ones do."""
        account = self.r.randint(10**11, 10**12 - 1)
        head = (1 << 47) | (account << 7) | self.r.randrange(128)
        raw = head.to_bytes(6, "big") + bytes(self.r.randrange(256) for _ in range(4))
        return prefix + base64.b32encode(raw).decode()

    def word(self) -> str:
        return self.r.choice(WORDS)

    def password(self) -> str:
        k = self.r.random()
        if k < 0.6:
            chars = string.ascii_letters + string.digits + "!#%&*+-=?@^_"
            return "".join(self.r.choice(chars) for _ in range(self.r.randint(12, 24)))
        if k < 0.9:
            return (self.word().capitalize() + str(self.r.randint(10, 9999))
                    + self.r.choice("!#%&*?@") + self.s("A", 3))
        return "-".join(self.word() for _ in range(3)) + "-" + str(self.r.randint(10, 99))


# ---------------------------------------------------------------- checksummed numbers

def luhn_complete(g: Gen, prefix: str, n: int) -> str:
    body = prefix + g.s("D", n - len(prefix) - 1)
    for c in "0123456789":
        d = body + c
        tot = 0
        for i, ch in enumerate(reversed(d)):
            x = int(ch)
            if i % 2:
                x = x * 2 - 9 if x * 2 > 9 else x * 2
            tot += x
        if tot % 10 == 0:
            return d
    raise AssertionError


def inn(g: Gen, n: int) -> str:
    d = [int(c) for c in str(g.r.randint(1, 9)) + g.s("D", 8 if n == 10 else 9)]
    if n == 10:
        w = (2, 4, 10, 3, 5, 9, 4, 6, 8)
        return "".join(map(str, d)) + str(sum(a * b for a, b in zip(w, d, strict=False)) % 11 % 10)
    d.append(sum(a * b for a, b in zip((7, 2, 4, 10, 3, 5, 9, 4, 6, 8), d, strict=False)) % 11 % 10)
    d.append(sum(a * b for a, b in zip((3, 7, 2, 4, 10, 3, 5, 9, 4, 6, 8), d, strict=False)) % 11 % 10)
    return "".join(map(str, d))


def ogrn(g: Gen, n: int) -> str:
    s = str(g.r.choice((1, 5) if n == 13 else (3,))) + g.s("D", n - 2)
    return s + str(int(s) % (11 if n == 13 else 13) % 10)


def snils(g: Gen) -> str:
    while True:
        body = str(g.r.randint(100, 999)) + g.s("D", 6)
        if any(body[i] == body[i + 1] == body[i + 2] for i in range(7)):
            continue
        tot = sum(int(c) * w for c, w in zip(body, range(9, 0, -1), strict=False))
        chk = tot if tot < 100 else 0 if tot in (100, 101) else tot % 101
        chk = 0 if chk == 100 else chk
        return f"{body[:3]}-{body[3:6]}-{body[6:9]} {chk:02d}"


def iban(g: Gen) -> str:
    cc, n = g.choice((("DE", 18), ("FR", 23), ("NL", 14), ("ES", 20), ("IT", 23)))
    bban = g.s("D", n) if cc != "NL" else g.s("Z", 4).replace("2", "A")[:4] + g.s("D", 10)
    num = int("".join(str(int(c, 36)) for c in bban + cc + "00"))
    full = f"{cc}{98 - num % 97:02d}{bban}"
    return " ".join(full[i:i + 4] for i in range(0, len(full), 4))


def jwt(g: Gen) -> str:
    def b64u(obj: object) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()
    head = {"alg": g.choice(("HS256", "RS256", "ES256")), "typ": "JWT"}
    body = {"sub": g.uuid(), "iat": g.r.randint(1_700_000_000, 1_800_000_000), "scope": g.word()}
    return f"{b64u(head)}.{b64u(body)}.{g.s('W', g.choice((43, 86, 342)))}"


def pem(g: Gen, label: str, lines: int) -> list[str]:
    body = [g.s("B", 64) for _ in range(lines)] + [g.s("B", 24) + "=="]
    return [f"-----BEGIN {label}-----", *body, f"-----END {label}-----"]


# ---------------------------------------------------------------- positive families

@dataclass
class Family:
    name: str
    category: str
    value: Callable[[Gen], str]
    names: tuple[str, ...] = ("TOKEN",)
    raw_only: bool = False  # value is a whole line (e.g. a URL), not assigned to a name
    contextual: bool = False  # detection needs the key name: always render NAME = value


def T(t: str) -> Callable[[Gen], str]:  # noqa: N802 - tiny DSL
    return lambda g: g.tpl(t)


def _f(name: str, t: str | Callable[[Gen], str], *names: str, cat: str = "secret",
       raw: bool = False, ctx: bool = False) -> Family:
    return Family(name, cat, T(t) if isinstance(t, str) else t, names or ("TOKEN",), raw, ctx)


FAMILIES: list[Family] = [
    _f("aws-access-key-id", lambda g: g.aws_key_id(), "AWS_ACCESS_KEY_ID", "aws_access_key_id", "AccessKeyId"),
    _f("aws-temporary-key-id", lambda g: g.aws_key_id("ASIA"), "AWS_ACCESS_KEY_ID", "AccessKeyId"),
    _f("aws-secret-access-key", "{B40}", "AWS_SECRET_ACCESS_KEY", "aws_secret_access_key",
       "SecretAccessKey", ctx=True),
    _f("aws-session-token", "IQoJb3JpZ2luX2VjE{B280}", "AWS_SESSION_TOKEN", "aws_session_token"),
    _f("gcp-api-key", "AIza{W35}", "GOOGLE_API_KEY", "apiKey", "MAPS_KEY"),
    _f("gcp-oauth-client-secret", "GOCSPX-{W28}", "GOOGLE_CLIENT_SECRET", "client_secret"),
    _f("google-oauth-access-token", "ya29.a0{W150}", "access_token", "GOOGLE_TOKEN"),
    _f("azure-storage-connection-string",
       "DefaultEndpointsProtocol=https;AccountName={a12};AccountKey={B86}==;EndpointSuffix=core.windows.net",
       "AZURE_STORAGE_CONNECTION_STRING", "StorageConnection"),
    _f("azure-servicebus-connection-string",
       "Endpoint=sb://{a10}.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
       "SharedAccessKey={B43}=", "SERVICEBUS_CONNECTION", "ServiceBusConnection"),
    _f("azure-ad-client-secret", "{A3}8Q~{W34}", "AZURE_CLIENT_SECRET", "clientSecret"),
    _f("github-pat-classic", "ghp_{A36}", "GITHUB_TOKEN", "GH_TOKEN", "github_token"),
    _f("github-oauth-token", "gho_{A36}", "GITHUB_OAUTH_TOKEN", "oauth_token"),
    _f("github-app-token", "ghs_{A36}", "GITHUB_TOKEN", "installation_token"),
    _f("github-fine-grained-pat", "github_pat_11{A20}_{A59}", "GITHUB_TOKEN", "GH_PAT"),
    _f("gitlab-pat", "glpat-{W20}", "GITLAB_TOKEN", "CI_PUSH_TOKEN", "private_token"),
    _f("gitlab-deploy-token", "gldt-{W20}", "DEPLOY_TOKEN", "CI_DEPLOY_PASSWORD"),
    _f("gitlab-trigger-token", "glptt-{H40}", "TRIGGER_TOKEN"),
    _f("gitlab-runner-token", "glrt-{W20}", "RUNNER_TOKEN", "token"),
    _f("gitlab-runner-registration", "GR1348941{W20}", "REGISTRATION_TOKEN"),
    _f("bitbucket-app-password", "ATBB{A32}", "BITBUCKET_APP_PASSWORD"),
    _f("slack-bot-token", "xoxb-{D12}-{D13}-{A24}", "SLACK_BOT_TOKEN", "slack_token"),
    _f("slack-user-token", "xoxp-{D12}-{D12}-{D12}-{H32}", "SLACK_USER_TOKEN"),
    _f("slack-app-token", "xapp-1-A{U10}-{D13}-{H64}", "SLACK_APP_TOKEN"),
    _f("slack-webhook", "https://hooks.slack.com/services/T{U10}/B{U10}/{A24}", "SLACK_WEBHOOK_URL",
       "webhook_url"),
    _f("discord-webhook", "https://discord.com/api/webhooks/{D19}/{W68}", "DISCORD_WEBHOOK"),
    _f("discord-bot-token", "MT{W24}.{W6}.{W38}", "DISCORD_BOT_TOKEN", "discord_token", ctx=True),
    _f("telegram-bot-token", "{D10}:AA{W33}", "TELEGRAM_BOT_TOKEN", "BOT_TOKEN"),
    _f("stripe-live-secret", "sk_live_51{A97}", "STRIPE_SECRET_KEY", "stripe_api_key"),
    _f("stripe-restricted", "rk_live_51{A97}", "STRIPE_RESTRICTED_KEY"),
    _f("stripe-webhook-secret", "whsec_{A32}", "STRIPE_WEBHOOK_SECRET"),
    _f("square-access-token", "EAAA{W60}", "SQUARE_ACCESS_TOKEN"),
    _f("square-oauth-secret", "sq0csp-{W43}", "SQUARE_APP_SECRET"),
    _f("shopify-access-token", "shpat_{H32}", "SHOPIFY_ACCESS_TOKEN"),
    _f("shopify-shared-secret", "shpss_{H32}", "SHOPIFY_API_SECRET"),
    _f("braintree-token", "access_token$production${L16}${H32}", "BRAINTREE_ACCESS_TOKEN"),
    _f("twilio-auth-token", "{H32}", "TWILIO_AUTH_TOKEN", ctx=True),
    _f("twilio-api-key", "SK{H32}", "TWILIO_API_KEY", ctx=True),
    _f("sendgrid-api-key", "SG.{W22}.{W43}", "SENDGRID_API_KEY"),
    _f("mailgun-api-key", "key-{H32}", "MAILGUN_API_KEY", ctx=True),
    _f("mailchimp-api-key", lambda g: g.tpl("{H32}-us") + str(g.r.randint(1, 21)),
       "MAILCHIMP_API_KEY"),
    _f("npm-token", "npm_{A36}", "NPM_TOKEN"),
    _f("pypi-token", "pypi-AgEIcHlwaS5vcmc{W160}", "TWINE_PASSWORD", "PYPI_TOKEN"),
    _f("dockerhub-pat", "dckr_pat_{W27}", "DOCKERHUB_TOKEN"),
    _f("huggingface-token", "hf_{M34}", "HF_TOKEN", "HUGGINGFACE_TOKEN"),
    _f("openai-project-key", "sk-proj-{W74}T3BlbkFJ{W74}", "OPENAI_API_KEY"),
    _f("openai-service-account", "sk-svcacct-{W74}T3BlbkFJ{W74}", "OPENAI_API_KEY"),
    _f("openai-legacy-key", "sk-{A20}T3BlbkFJ{A20}", "OPENAI_API_KEY", "openai.api_key"),
    _f("anthropic-api-key", "sk-ant-api03-{W93}AA", "ANTHROPIC_API_KEY"),
    _f("anthropic-admin-key", "sk-ant-admin01-{W93}AA", "ANTHROPIC_ADMIN_KEY"),
    _f("groq-api-key", "gsk_{A52}", "GROQ_API_KEY"),
    _f("replicate-token", "r8_{A37}", "REPLICATE_API_TOKEN"),
    _f("openrouter-key", "sk-or-v1-{H64}", "OPENROUTER_API_KEY"),
    _f("langsmith-key", "lsv2_pt_{H32}_{H10}", "LANGSMITH_API_KEY"),
    _f("digitalocean-pat", "dop_v1_{H64}", "DIGITALOCEAN_TOKEN"),
    _f("digitalocean-oauth", "doo_v1_{H64}", "DO_OAUTH_TOKEN"),
    _f("heroku-api-key", "HRKU-AA{W58}", "HEROKU_API_KEY"),
    _f("heroku-legacy-key", lambda g: g.uuid(), "HEROKU_API_KEY", ctx=True),
    _f("linear-api-key", "lin_api_{A40}", "LINEAR_API_KEY"),
    _f("notion-token", "ntn_{D11}{A35}", "NOTION_TOKEN"),
    _f("vault-token", "hvs.{W24}", "VAULT_TOKEN"),
    _f("postman-key", "PMAK-{H24}-{H34}", "POSTMAN_API_KEY"),
    _f("databricks-token", "dapi{H32}", "DATABRICKS_TOKEN"),
    _f("grafana-cloud-token", "glc_eyJ{B120}", "GRAFANA_CLOUD_TOKEN"),
    _f("grafana-sa-token", "glsa_{A32}_{H8}", "GRAFANA_TOKEN"),
    _f("newrelic-user-key", "NRAK-{U27}", "NEW_RELIC_API_KEY"),
    _f("sentry-org-token", "sntrys_eyJ{B150}", "SENTRY_AUTH_TOKEN"),
    _f("doppler-token", "dp.pt.{A43}", "DOPPLER_TOKEN"),
    _f("pulumi-token", "pul-{H40}", "PULUMI_ACCESS_TOKEN"),
    _f("terraform-cloud-token", "{A14}.atlasv1.{W67}", "TF_TOKEN_app_terraform_io", "token"),
    _f("age-secret-key", "AGE-SECRET-KEY-1{C58}", "SOPS_AGE_KEY"),
    _f("cloudflare-api-token", "{W40}", "CLOUDFLARE_API_TOKEN", ctx=True),
    _f("okta-api-token", "00{W40}", "OKTA_API_TOKEN", ctx=True),
    _f("datadog-api-key", "{H32}", "DD_API_KEY", ctx=True),
    _f("atlassian-api-token", "ATATT3xFfGF0{W180}={X8}", "JIRA_API_TOKEN"),
    _f("jwt", jwt, "id_token", "ACCESS_TOKEN", "session_jwt"),
    # generic: names that say "secret", values without a vendor prefix
    _f("generic-api-key", "{A32}", "API_KEY", "api_key", "apiKey", "PAYMENT_API_KEY", ctx=True),
    _f("generic-secret", "{B44}", "SECRET_KEY", "client_secret", "JWT_SECRET", "app_secret", ctx=True),
    _f("generic-token", "{H40}", "AUTH_TOKEN", "access_token", "INTERNAL_SERVICE_TOKEN", ctx=True),
    _f("generic-password", lambda g: g.password(), "DB_PASSWORD", "password", "SMTP_PASSWORD",
       "redis_password", "ADMIN_PASS", ctx=True),
]
URL_FAMILIES = [
    ("url-postgres", "postgres://{u}:{p}@{h}:5432/{d}"), ("url-postgresql", "postgresql://{u}:{p}@{h}/{d}"),
    ("url-mysql", "mysql://{u}:{p}@{h}:3306/{d}"), ("url-mongodb", "mongodb+srv://{u}:{p}@{h}/{d}"),
    ("url-mongodb", "mongodb://{u}:{p}@{h}:27017/{d}?authSource=admin"),
    ("url-redis", "redis://:{p}@{h}:6379/0"), ("url-rediss", "rediss://default:{p}@{h}:6380"),
    ("url-amqp", "amqp://{u}:{p}@{h}:5672/{d}"), ("url-amqps", "amqps://{u}:{p}@{h}:5671"),
    ("url-https-basic", "https://{u}:{p}@{h}/{d}.git"),
]


def url_value(g: Gen, pattern: str) -> str:
    pw = g.password().replace("@", "%40").replace("#", "%23").replace("?", "%3F").replace("/", "")
    host = g.choice(("db", "cache", "mq", "git", "pg-primary")) + "." + g.choice(
        ("internal", "prod.acme.io", "svc.cluster.local", "eu-west-1.rds.amazonaws.com"))
    return pattern.format(u=g.choice(("app", "svc_api", "deploy", "etl", "ci")), p=pw, h=host,
                          d=g.word())


# ---------------------------------------------------------------- file builders

@dataclass
class Doc:
    name: str
    lines: list[str] = field(default_factory=list)
    labels: list[dict[str, object]] = field(default_factory=list)

    def add(self, line: str) -> None:
        self.lines.extend(line.split("\n"))

    def add_pos(self, text: str, category: str, family: str) -> None:
        start = len(self.lines) + 1
        self.add(text)
        self.labels.append({"file": self.name, "line": start, "end_line": len(self.lines),
                            "category": category, "family": family})


def render(g: Gen, style: str, name: str, value: str) -> str:
    """One assignment of ``value`` to ``name`` in a file style."""
    snake = name.lower().replace(".", "_")
    return {
        "env": f"{name.upper().replace('.', '_')}={value}",
        "sh": f"export {name.upper().replace('.', '_')}='{value}'",
        "yaml": f"  {snake}: \"{value}\"",
        "json": f"  \"{name}\": \"{value}\",",
        "py": f"{snake.upper()} = \"{value}\"",
        "js": f"const {snake} = '{value}';",
        "go": f"\t{snake} := \"{value}\"",
        "ini": f"{snake} = {value}",
        "docker": f"ENV {name.upper().replace('.', '_')}={value}",
        "k8s": f"            - name: {name.upper().replace('.', '_')}\n              value: \"{value}\"",
    }[style]


STYLE_EXT = {"env": ".env", "sh": ".sh", "yaml": ".yaml", "json": ".json", "py": ".py", "js": ".js",
             "go": ".go", "ini": ".ini", "docker": "Dockerfile", "k8s": ".k8s.yaml"}


def filler(g: Gen, style: str) -> str:
    """A harmless line in a given style (most hold a near-miss)."""
    k = g.r.randint(0, 13)
    sha, uid = g.s("H", 40), g.uuid()
    plain = {
        0: ("COMMIT_SHA", sha), 1: ("REQUEST_ID", uid), 2: ("IMAGE_DIGEST", "sha256:" + g.s("H", 64)),
        3: ("LOG_LEVEL", "info"), 4: ("PORT", str(g.r.randint(1024, 65000))),
        5: ("API_URL", f"https://api.{g.word()}.io/v{g.r.randint(1, 3)}"),
        6: ("VERSION", f"{g.r.randint(0, 9)}.{g.r.randint(0, 30)}.{g.r.randint(0, 99)}"),
        7: ("HOST_IP", f"10.{g.r.randint(0, 255)}.{g.r.randint(0, 255)}.{g.r.randint(1, 254)}"),
        8: ("CACHE_KEY", f"user:{g.r.randint(1, 99999)}:profile:{g.s('H', 32)}"),
        9: ("TRACE_ID", g.s("H", 32)), 10: ("FEATURE_FLAGS", "search,checkout,beta-ui"),
        11: ("TIMEOUT_SECONDS", str(g.r.randint(1, 300))), 12: ("REGION", "eu-central-1"),
        13: ("ETAG", g.s("H", 32)),
    }[k]
    return render(g, style, *plain)


def neg_reference_line(g: Gen, style: str) -> str:
    """Secret-named keys whose value is a reference, placeholder or test value (must not fire)."""
    name = g.choice(("API_KEY", "DB_PASSWORD", "SECRET_KEY", "AUTH_TOKEN", "STRIPE_SECRET_KEY",
                     "GITHUB_TOKEN", "client_secret", "password"))
    up = name.upper()
    if style == "py":
        return g.choice((f'{up} = os.environ["{up}"]', f'{up} = os.getenv("{up}", "")',
                         f'{up} = settings.{up}', f'{up} = ""', f'{up} = None'))
    if style == "js":
        return g.choice((f"const {name} = process.env.{up};", f"const {name} = '';",
                         f"const {name} = config.get('{name}');"))
    if style == "go":
        return g.choice((f'\t{name} := os.Getenv("{up}")', f'\t{name} := ""'))
    val = g.choice(("${" + up + "}", "$" + up, "<your-api-key>", "changeme", "", "xxxxxxxxxxxxxxxx",
                    "{{ .Values." + name + " }}", "REPLACE_ME", "sk_test_" + g.s("A", 24),
                    "${{ secrets." + up + " }}", "null", "********"))
    return render(g, style, name, val)


def positive_line(g: Gen, fam: Family, style: str) -> str:
    value = fam.value(g)
    name = g.choice(fam.names)
    if fam.raw_only:
        return value
    return render(g, style, name, value)


def build_positive_files(g: Gen, n_per_family: int) -> list[Doc]:
    docs: list[Doc] = []
    styles = list(STYLE_EXT)
    items: list[tuple[str, str, Callable[[str], str]]] = []
    for fam in FAMILIES:
        for _ in range(n_per_family):
            items.append((fam.category, fam.name, lambda st, f=fam: positive_line(g, f, st)))
    for fam_name, pat in URL_FAMILIES:
        for _ in range(max(2, n_per_family // 2)):
            items.append(("secret", fam_name,
                          lambda st, p=pat: render(g, st, g.choice(("DATABASE_URL", "BROKER_URL",
                                                                   "REDIS_URL", "REPO_URL")),
                                                   url_value(g, p))))
    g.r.shuffle(items)
    per_file = 12
    for i in range(0, len(items), per_file):
        style = styles[(i // per_file) % len(styles)]
        ext = STYLE_EXT[style]
        stem = f"pos/{style}_{i // per_file:03d}"
        doc = Doc(f"{stem}/Dockerfile" if ext == "Dockerfile" else stem + ext)
        header(g, doc, style)
        for cat, fam_name, mk in items[i:i + per_file]:
            for _ in range(g.r.randint(1, 4)):
                doc.add(filler(g, style))
            if g.r.random() < 0.3:
                doc.add(neg_reference_line(g, style))
            doc.add_pos(mk(style), cat, fam_name)
        doc.add(filler(g, style))
        docs.append(doc)
    return docs


def header(g: Gen, doc: Doc, style: str) -> None:
    doc.add({"env": "# service configuration", "sh": "#!/usr/bin/env bash\nset -euo pipefail",
             "yaml": "config:", "json": "{", "py": "import os\n", "js": "'use strict';",
             "go": "package config\n\nfunc load() {", "ini": "[default]",
             "docker": "FROM python:3.12-slim\nWORKDIR /app",
             "k8s": "apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n"
                    "      containers:\n        - name: app\n          env:"}[style])


def build_block_files(g: Gen, n: int) -> list[Doc]:
    """Private keys (PEM/OpenSSH/PGP/PuTTY), service-account JSON and WireGuard configs."""
    docs = []
    kinds = [("RSA PRIVATE KEY", "pem-rsa"), ("EC PRIVATE KEY", "pem-ec"), ("PRIVATE KEY", "pem-pkcs8"),
             ("OPENSSH PRIVATE KEY", "pem-openssh"), ("ENCRYPTED PRIVATE KEY", "pem-encrypted"),
             ("DSA PRIVATE KEY", "pem-dsa"), ("PGP PRIVATE KEY BLOCK", "pem-pgp")]
    for i in range(n):
        label, fam = kinds[i % len(kinds)]
        doc = Doc(f"pos/keys/key_{i:03d}.{('pem', 'yaml', 'txt')[i % 3]}")
        if i % 3 == 1:
            doc.add("apiVersion: v1\nkind: Secret\nmetadata:\n  name: tls\nstringData:\n  tls.key: |")
            block = pem(g, label, g.r.randint(3, 20))
            doc.add_pos("\n".join("    " + ln for ln in block), "secret", fam)
        else:
            doc.add_pos("\n".join(pem(g, label, g.r.randint(3, 25))), "secret", fam)
        docs.append(doc)
    for i in range(n // 2):
        cred = Doc(f"pos/aws/credentials_{i:02d}")
        for profile in ("default", g.word()):
            cred.add(f"[{profile}]")
            # one credential on two lines: one label, so a tool reporting the pair once is credited
            cred.add_pos(f"aws_access_key_id = {g.aws_key_id()}\n"
                         f"aws_secret_access_key = {g.s('B', 40)}", "secret", "aws-credential-pair")
            cred.add("region = eu-west-1\n")
        docs.append(cred)
        doc = Doc(f"pos/keys/sa_{i:03d}.json")
        key = "\\n".join(pem(g, "PRIVATE KEY", 20))
        doc.add("{\n  \"type\": \"service_account\",\n  \"project_id\": \"" + g.word() + "-prod\",")
        doc.add(f"  \"private_key_id\": \"{g.s('H', 40)}\",")
        doc.add_pos(f"  \"private_key\": \"{key}\\n\",", "secret", "gcp-service-account-key")
        doc.add(f"  \"client_email\": \"deploy@{g.word()}-prod.iam.gserviceaccount.com\",\n"
                f"  \"client_id\": \"{g.s('D', 21)}\"\n}}")
        docs.append(doc)
        ppk = Doc(f"pos/keys/putty_{i:03d}.ppk")
        ppk.add(f"PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: {g.word()}\n"
                f"Public-Lines: 2\nAAAAC3NzaC1lZDI1NTE5AAAAI{g.s('B', 43)}\n{g.s('B', 20)}")
        ppk.add_pos(f"Private-Lines: 1\nAAAAI{g.s('B', 38)}=", "secret", "putty-private-key")
        ppk.add(f"Private-MAC: {g.s('H', 64)}")
        docs.append(ppk)
        wg = Doc(f"pos/keys/wg{i}.conf")
        wg.add("[Interface]")
        wg.add_pos(f"PrivateKey = {g.s('B', 42)}{g.choice('AEIMQUYcgkosw048')}=", "secret",
                   "wireguard-private-key")
        wg.add(f"Address = 10.8.0.{i + 2}/24\n\n[Peer]\nPublicKey = {g.s('B', 43)}=\n"
               f"Endpoint = vpn.acme.io:51820")
        docs.append(wg)
    return docs


def build_log_and_history(g: Gen, n: int) -> list[Doc]:
    """Shell history and application logs with credentials on the command line / in headers."""
    docs = []
    for i in range(n):
        doc = Doc(f"pos/history/bash_history_{i:02d}")
        for _ in range(30):
            k = g.r.randint(0, 24)
            if k == 0:
                doc.add_pos(f"curl -H 'Authorization: Bearer {g.s('A', 40)}' https://api.{g.word()}.io/v1/me",
                            "secret", "bearer-header")
            elif k == 1:
                doc.add_pos(f"curl -u admin:{g.password().replace(chr(39), '')} https://jenkins.acme.io/api/json",
                            "secret", "curl-user")
            elif k == 2:
                doc.add_pos(f"mysql -u root -p{g.s('A', 14)} -h db.internal app", "secret", "mysql-cli")
            elif k == 3:
                doc.add_pos(f"export GITHUB_TOKEN=ghp_{g.s('A', 36)}", "secret", "github-pat-classic")
            elif k == 4:
                doc.add_pos(f"psql postgresql://app:{g.s('A', 16)}@db.internal:5432/app", "secret",
                            "url-postgres")
            elif k == 5:
                doc.add_pos(f"docker login -u acme -p dckr_pat_{g.s('W', 27)} docker.io", "secret",
                            "dockerhub-pat")
            elif k == 6:
                doc.add_pos(f"vault login -method=token --token=hvs.{g.s('W', 90)}", "secret", "vault-token")
            elif k == 7:
                doc.add_pos(f"sshpass -p '{g.s('A', 12)}' ssh deploy@10.0.0.{g.r.randint(2, 250)}",
                            "secret", "sshpass")
            elif k == 8:
                doc.add_pos(f"PGPASSWORD={g.s('A', 14)} psql -h db.internal -U app app", "secret",
                            "inline-env-password")
            elif k == 9:
                pw = g.password().replace("'", "")
                if any(ch in pw for ch in "&!#*?^;|<>"):
                    pw = f"'{pw}'"  # as a shell user would quote it
                doc.add_pos(f"docker run -d -e POSTGRES_PASSWORD={pw} -p 5432:5432 postgres:16",
                            "secret", "docker-env-password")
            elif k == 10:
                doc.add_pos(f"helm upgrade --install api ./chart --set auth.password={g.s('A', 16)} "
                            "--set image.tag=1.4.2", "secret", "helm-set-password")
            else:
                doc.add(g.choice((
                    "git status", "git log --oneline -5", f"git checkout {g.s('H', 7)}",
                    "ls -la", "cd ~/src/app", "make test", "echo $AWS_SECRET_ACCESS_KEY | wc -c",
                    "cat .env | grep -v '^#'", "kubectl get pods -n prod",
                    f"docker pull ghcr.io/acme/api@sha256:{g.s('H', 64)}",
                    'curl -H "Authorization: Bearer $TOKEN" https://api.acme.io/v1/me',
                    "pip install -r requirements.txt", "ssh-keygen -lf ~/.ssh/id_ed25519.pub",
                    "gh auth login --with-token < token.txt", "export AWS_PROFILE=prod",
                    "docker login --password-stdin -u acme < ~/.docker-pass",
                    'PGPASSWORD="$PW" psql -h db -U app app', "docker run -e POSTGRES_PASSWORD app",
                    "helm upgrade api ./chart --set auth.existingSecret=api-auth --set replicas=3",
                    f"git commit -m 'rotate token handling' && git push origin {g.s('H', 7)}")))
        docs.append(doc)
    for i in range(n):
        doc = Doc(f"pos/logs/app_{i:02d}.log")
        for j in range(60):
            ts = f"2026-11-{(j % 28) + 1:02d}T{j % 24:02d}:{j % 60:02d}:{(j * 7) % 60:02d}Z"
            k = g.r.randint(0, 24)
            if k == 0:
                doc.add_pos(f"{ts} DEBUG http request headers={{'Authorization': 'Bearer {jwt(g)}'}}",
                            "secret", "jwt")
            elif k == 1:
                doc.add_pos(f"{ts} INFO connecting to postgres://svc:{g.s('A', 18)}@pg.internal:5432/app",
                            "secret", "url-postgres")
            elif k == 2:
                doc.add_pos(f"{ts} WARN user signup email={g.choice(('anna', 'ivan.petrov', 'j.smith'))}"
                            f"{g.r.randint(1, 99)}@{g.choice(('gmail.com', 'yandex.ru', 'mail.ru', 'outlook.com'))}",
                            "pii", "email")
            elif k == 3:
                doc.add_pos(f"{ts} INFO sms sent to +7 9{g.s('D', 2)} {g.s('D', 3)}-{g.s('D', 2)}-{g.s('D', 2)}",
                            "pii", "phone-ru")
            elif k == 4:
                doc.add_pos(f"{ts} ERROR charge failed card={luhn_complete(g, '4', 16)} code=card_declined",
                            "pii", "payment-card")
            elif k == 5:
                doc.add_pos(f"{ts} DEBUG GET /v1/export?format=csv&api_key={g.s('A', 32)} 200", "secret",
                            "url-query-secret")
            else:
                doc.add(f"{ts} {g.choice(('INFO', 'DEBUG', 'WARN'))} "
                        + g.choice((f"request_id={g.uuid()} status=200 latency_ms={g.r.randint(1, 900)}",
                                    f"trace_id={g.s('H', 32)} span_id={g.s('H', 16)}",
                                    f"cache hit key=sess:{g.s('H', 40)}",
                                    f"deployed commit {g.s('H', 40)} to prod",
                                    f"client ip=10.{g.r.randint(0, 255)}.{g.r.randint(0, 255)}.7 ua=Mozilla/5.0",
                                    "token refresh scheduled in 3600s",
                                    "password reset requested for user_id=" + str(g.r.randint(1, 10**6)),
                                    f"uploaded s3://acme-logs/{g.uuid()}.gz size={g.r.randint(1, 10**7)}")))
        docs.append(doc)
    return docs


def build_pii_files(g: Gen, n: int) -> list[Doc]:
    docs = []
    for i in range(n):
        doc = Doc(f"pos/pii/customers_{i:02d}.csv")
        doc.add("id,name,email,phone,card,created_at")
        for j in range(25):
            k = g.r.randint(0, 5)
            name = g.choice(("Ivan Petrov", "Anna Smirnova", "John Smith", "Maria Lopez", "Lee Wong"))
            ts = f"2026-0{g.r.randint(1, 9)}-1{g.r.randint(0, 9)}"
            if k == 0:
                local = name.lower().replace(" ", ".")
                dom = g.choice(("gmail.com", "yandex.ru", "acme-corp.de", "mail.ru", "proton.me"))
                doc.add_pos(f"{j},{name},{local}{g.r.randint(1, 99)}@{dom},,,{ts}", "pii", "email")
            elif k == 1:
                doc.add_pos(f"{j},{name},,+7 ({g.choice('9384')}{g.s('D', 2)}) {g.s('D', 3)}-{g.s('D', 2)}-"
                            f"{g.s('D', 2)},,{ts}", "pii", "phone-ru")
            elif k == 2:
                doc.add_pos(f"{j},{name},,+44 20 {g.r.randint(2000, 8999)} {g.s('D', 4)},,{ts}", "pii",
                            "phone-e164")
            elif k == 3:
                pref, ln = g.choice((("4", 16), ("5" + str(g.r.randint(1, 5)), 16), ("2200", 16),
                                     ("37", 15)))
                card = luhn_complete(g, pref, ln)
                if ln == 16 and g.r.random() < 0.5:
                    card = " ".join(card[x:x + 4] for x in range(0, 16, 4))
                doc.add_pos(f"{j},{name},,,{card},{ts}", "pii", "payment-card")
            else:
                doc.add(f"{j},{name},{name.split()[0].lower()}@example.com,,,{ts}")
        docs.append(doc)
        ru = Doc(f"pos/pii/dogovor_{i:02d}.txt")
        ru.add("ДОГОВОР ПОСТАВКИ № " + g.s("D", 4))
        ru.add("г. Москва, 1 ноября 2026 г.")
        ru.add_pos(f"ООО «{g.word().capitalize()}», ИНН {inn(g, 10)}, КПП 7701{g.s('D', 5)}", "pii", "ru-inn")
        ru.add_pos(f"ОГРН {ogrn(g, 13)}", "pii", "ru-ogrn")
        ru.add_pos(f"Индивидуальный предприниматель Иванов И.И., ИНН: {inn(g, 12)}", "pii", "ru-inn")
        ru.add_pos(f"ОГРНИП {ogrn(g, 15)}", "pii", "ru-ogrn")
        ru.add_pos(f"СНИЛС {snils(g)}", "pii", "ru-snils")
        region = g.choice(("45", "46", "40", "77", "50", "03"))
        ru.add_pos(f"Паспорт серии {region}{g.r.randint(10, 24):02d} {g.s('D', 6)}, выдан ОВД района",
                   "pii", "ru-passport")
        ru.add_pos(f"Расчётный счёт в EUR: IBAN {iban(g)}", "pii", "iban")
        ru.add("Сумма договора: 1 250 000,00 руб. Срок поставки: 30 дней. Номер заказа 2026110500123.")
        ru.add(f"Код по ОКПО {g.s('D', 8)}, ОКВЭД 62.01, БИК 04452{g.s('D', 4)}")
        docs.append(ru)
    return docs


# ---------------------------------------------------------------- negative files

def build_negative_files(g: Gen, scale: int) -> list[Doc]:
    docs: list[Doc] = []
    for i in range(4 * scale):
        d = Doc(f"neg/package-lock_{i}.json")
        d.add('{\n  "name": "web",\n  "lockfileVersion": 3,\n  "packages": {')
        for _ in range(60):
            pkg = g.word() + "-" + g.word()
            d.add(f'    "node_modules/{pkg}": {{\n      "version": "{g.r.randint(0, 9)}.{g.r.randint(0, 20)}.'
                  f'{g.r.randint(0, 9)}",\n      "resolved": "https://registry.npmjs.org/{pkg}/-/{pkg}-1.0.0.tgz",\n'
                  f'      "integrity": "sha512-{g.s("B", 86)}=="\n    }},')
        d.add("  }\n}")
        docs.append(d)
        p = Doc(f"neg/poetry_{i}.lock")
        for _ in range(40):
            p.add(f'[[package]]\nname = "{g.word()}"\nversion = "{g.r.randint(0, 9)}.{g.r.randint(0, 9)}"\n'
                  f'files = [\n    {{file = "{g.word()}-1.0-py3-none-any.whl", hash = "sha256:{g.s("H", 64)}"}},\n]\n')
        docs.append(p)
        s = Doc(f"neg/go_{i}.sum")
        for _ in range(60):
            s.add(f"github.com/{g.word()}/{g.word()} v1.{g.r.randint(0, 20)}.0 h1:{g.s('B', 43)}=")
        docs.append(s)
        m = Doc(f"neg/vendor_{i}.min.js")
        m.add("".join(f"var {g.s('M', 2)}=function(e,t){{return e.{g.s('M', 6)}(t,\"{g.s('A', 12)}\")}};"
                      for _ in range(200)))
        m.add(f"//# sourceMappingURL=data:application/json;base64,{g.s('B', 2000)}")
        docs.append(m)
        h = Doc(f"neg/page_{i}.html")
        h.add(f'<img alt="logo" src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA{g.s("B", 3000)}=">')
        h.add("<p>" + " ".join(g.choice(LOREM) for _ in range(300)) + "</p>")
        h.add(f'<link rel="stylesheet" href="/static/app.{g.s("H", 8)}.css" integrity="sha384-{g.s("B", 64)}">')
        docs.append(h)
        k = Doc(f"neg/k8s_{i}.yaml")
        k.add("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  template:\n"
              "    spec:\n      containers:\n        - name: api\n"
              f"          image: ghcr.io/acme/api@sha256:{g.s('H', 64)}\n          env:\n"
              "            - name: DB_PASSWORD\n              valueFrom:\n                secretKeyRef:\n"
              "                  name: db-credentials\n                  key: password\n"
              "            - name: API_TOKEN\n              valueFrom:\n                secretKeyRef:\n"
              "                  name: api-token-secret\n                  key: token\n"
              "      volumes:\n        - name: tls\n          secret:\n            secretName: api-tls-cert\n"
              f"      imagePullSecrets:\n        - name: regcred\n  # revision {g.s('H', 40)}")
        docs.append(k)
        t = Doc(f"neg/test_fixtures_{i}.py")
        t.add('"""Fixtures: documented fake credentials, never real."""\nimport os\n')
        t.add('AWS_KEY = "AKIAIOSFODNN7EXAMPLE"\nAWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"')
        t.add(f'STRIPE_KEY = "sk_test_{g.s("A", 24)}"\nSTRIPE_PK = "pk_live_{g.s("A", 24)}"')
        t.add(f'STRIPE_RESTRICTED = "rk_test_{g.s("A", 24)}"')
        t.add('GITHUB_TOKEN = "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"')
        t.add('SLACK_WEBHOOK = "https://hooks.slack.com/services/TXXXXXXXX/BXXXXXXXX/XXXXXXXXXXXXXXXXXXXXXXXX"')
        t.add('password = os.environ["DB_PASSWORD"]\napi_key = os.getenv("API_KEY")\ntoken = ""')
        t.add('DATABASE_URL = "postgres://user:password@localhost:5432/test"')
        t.add('REDIS_URL = "redis://localhost:6379/0"\nAMQP = "amqp://guest:guest@localhost:5672//"')
        t.add("USER_EMAIL = 'alice@example.com'\nSUPPORT = 'support@example.org'\n"
              "NOREPLY = 'noreply@test.invalid'")
        t.add('PHONE_PLACEHOLDER = "+1 (555) 000-0000"')
        t.add(f'SESSION_ID = "{g.uuid()}"\nCOMMIT = "{g.s("H", 40)}"\nCHECKSUM = "{g.s("H", 64)}"')
        t.add('def test_login(client):\n    resp = client.post("/login", json={"username": "bob", '
              '"password": ""})\n    assert resp.status_code == 401')
        t.add('API_KEY = "<YOUR_API_KEY>"\nSECRET = "${SECRET}"\nAUTH_TOKEN = "changeme"')
        t.add('JWT_ALG = "HS256"\nTOKEN_TYPE = "bearer"\nPASSWORD_MIN_LENGTH = 12')
        docs.append(t)
        c = Doc(f"neg/certs_{i}.pem")
        c.add("\n".join(pem(g, "CERTIFICATE", 12)))
        c.add("\n".join(pem(g, "PUBLIC KEY", 5)))
        c.add(f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{g.s('B', 43)} deploy@ci")
        c.add(f"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ{g.s('B', 300)} me@laptop")
        docs.append(c)
        e = Doc(f"neg/env_template_{i}.env.example")
        e.add("# copy to .env and fill in\nDATABASE_URL=postgres://user:${DB_PASSWORD}@db:5432/app\n"
              "SECRET_KEY=\nAPI_KEY=your-api-key-here\nGITHUB_TOKEN=\nSTRIPE_SECRET_KEY=sk_test_...\n"
              "OPENAI_API_KEY=sk-...\nAWS_SECRET_ACCESS_KEY=${AWS_SECRET_ACCESS_KEY}\nPASSWORD=changeme\n"
              "SMTP_PASSWORD=\nJWT_SECRET=<generate with openssl rand -hex 32>\nDEBUG=true\n"
              f"SENTRY_RELEASE={g.s('H', 40)}\nBUILD_ID={g.uuid()}")
        docs.append(e)
        gh = Doc(f"neg/workflow_{i}.yml")
        gh.add("name: ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    env:\n"
               "      GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}\n      NPM_TOKEN: ${{ secrets.NPM_TOKEN }}\n"
               "      PASSWORD: ${{ secrets.DB_PASSWORD }}\n    steps:\n"
               f"      - uses: actions/checkout@{g.s('H', 40)}\n"
               f"      - uses: actions/setup-node@{g.s('H', 40)} # v4\n"
               "      - run: echo \"$NPM_TOKEN\" | npm login --registry https://npm.pkg.github.com\n"
               "      - run: docker login -u \"$USER\" --password-stdin <<< \"$PASSWORD\"")
        docs.append(gh)
        tf = Doc(f"neg/main_{i}.tf")
        tf.add('variable "db_password" {\n  type      = string\n  sensitive = true\n}\n'
               'resource "aws_db_instance" "main" {\n  password = var.db_password\n'
               f'  kms_key_id = "arn:aws:kms:eu-west-1:{g.s("D", 12)}:key/{g.uuid()}"\n}}\n'
               'provider "github" {\n  token = var.github_token\n}')
        docs.append(tf)
        py = Doc(f"neg/app_{i}.py")
        py.add("import hashlib, os, uuid\n\n"
               "def make_token(user_id: int) -> str:\n    return hashlib.sha256(str(user_id).encode()).hexdigest()\n\n"
               "SECRET_KEY = os.environ.get('SECRET_KEY')\nAPI_TOKEN = os.environ['API_TOKEN']\n"
               "password = getpass.getpass('Password: ')\n"
               "token = request.headers.get('Authorization', '').removeprefix('Bearer ')\n"
               "auth_header = f'Bearer {token}'\n"
               f"DEFAULT_NAMESPACE = uuid.UUID('{g.uuid()}')\n"
               f"EMPTY_SHA1 = '{g.s('H', 40)}'\n"
               "secret_name = 'prod/db/credentials'\n"
               "token_url = 'https://oauth2.googleapis.com/token'\n"
               "password_field = form.fields['password']\n"
               "api_key_header = 'X-API-Key'\n"
               f"ISBN = '978-3-16-148410-0'\nORDER_NO = '{g.s('D', 16)}'\n"
               f"BUILD = 'v{g.r.randint(1, 9)}.{g.r.randint(0, 9)}.{g.r.randint(0, 99)}+{g.s('H', 7)}'\n"
               "PHONE_RE = r'\\+?[0-9 ()-]{7,20}'\n"
               f"TIMESTAMP_MS = {g.r.randint(1700000000000, 1800000000000)}\n"
               "TZ_OFFSET = '+0300'\n"
               f"card_last4 = '{g.s('D', 4)}'\n"
               "git_remote = 'git@github.com:acme/api.git'\n"
               "contact = 'Maintainers <dev@example.com>'\n")
        docs.append(py)
        lo = Doc(f"neg/README_{i}.md")
        lo.add("# Project\n\n" + " ".join(g.choice(LOREM) for _ in range(200)) + "\n\n"
               "Set `API_KEY` in your environment, e.g. `export API_KEY=<your key>`.\n"
               "Tokens look like `ghp_...` or `glpat-...`; never commit them.\n"
               "Example: `curl -H \"Authorization: Bearer $API_TOKEN\" https://api.example.com`.\n"
               f"Release {g.r.randint(1, 9)}.{g.r.randint(0, 9)}.0 (commit {g.s('H', 40)}).\n"
               "Contact us at hello@example.com or +1 (555) 010-0000 (fictional).\n"
               "Test cards: 4111 1111 1111 1111, 4242 4242 4242 4242, 5555 5555 5555 4444.\n"
               "Docker: `docker run -e PASSWORD=$PASSWORD app`.\n"
               f"UUID: {g.uuid()}, SHA256: {g.s('H', 64)}, base64: {g.s('B', 60)}==\n")
        docs.append(lo)
        lg = Doc(f"neg/access_{i}.log")
        for j in range(200):
            lg.add(f"10.{g.r.randint(0, 255)}.{g.r.randint(0, 255)}.{g.r.randint(1, 254)} - - "
                   f"[29/Nov/2026:{j % 24:02d}:{j % 60:02d}:00 +0000] \"GET /api/v1/items/{g.uuid()}?"
                   f"page={g.r.randint(1, 50)}&sort=desc HTTP/1.1\" 200 {g.r.randint(100, 99999)} "
                   f"\"-\" \"Mozilla/5.0\" rt={g.r.random():.3f} req={g.s('H', 32)}")
        docs.append(lg)
        nums = Doc(f"neg/numbers_{i}.csv")
        nums.add("order_id,amount,created_ms,sku,ean")
        for _ in range(100):
            nums.add(f"{g.s('D', 16)},{g.r.randint(1, 99999)}.{g.r.randint(0, 99):02d},"
                     f"{g.r.randint(1700000000000, 1800000000000)},SKU-{g.s('U', 8)},{g.s('D', 13)}")
        docs.append(nums)
    return docs


def build_mixed_syntax(g: Gen, n: int) -> list[Doc]:
    """Secrets in less common syntaxes, and secret-named keys holding harmless values."""
    docs = []
    for i in range(n):
        d = Doc(f"pos/mixed/settings_{i:02d}.xml")
        d.add('<?xml version="1.0"?>\n<configuration>\n  <appSettings>')
        d.add(f'    <add key="BuildId" value="{g.uuid()}" />')
        d.add_pos(f"    <password>{g.password().replace('&', 'x').replace('<', 'y')}</password>", "secret",
                  "xml-password")
        d.add_pos(f'    <add key="ApiKey" value="{g.s("A", 32)}" />', "secret", "xml-api-key")
        d.add_pos(f'    <add name="Main" connectionString="Server=tcp:{g.word()}.database.windows.net,1433;'
                  f'Database=app;User ID=api;Password={g.s("A", 16)};Encrypt=True" />', "secret",
                  "connection-string")
        d.add(f'    <add key="Checksum" value="{g.s("H", 64)}" />\n  </appSettings>\n</configuration>')
        docs.append(d)
        j = Doc(f"pos/mixed/application_{i:02d}.properties")
        j.add(f"spring.application.name={g.word()}\nserver.port=8080")
        j.add_pos(f"spring.datasource.password={g.password()}", "secret", "properties-password")
        j.add("spring.datasource.username=app\nspring.datasource.url=jdbc:postgresql://db:5432/app")
        j.add_pos(f"app.jwt.secret={g.s('B', 48)}", "secret", "properties-secret")
        j.add("spring.mail.password=${MAIL_PASSWORD}\nmanagement.endpoints.web.exposure.include=health")
        j.add_pos(f"aws.secretKey={g.s('B', 40)}", "secret", "properties-aws-secret")
        docs.append(j)
        r = Doc(f"pos/mixed/config_{i:02d}.rb")
        r.add("Rails.application.configure do")
        r.add_pos(f"  config.stripe = {{ publishable_key: 'pk_live_{g.s('A', 24)}', "
                  f"secret_key: 'sk_live_{g.s('A', 24)}' }}", "secret", "stripe-live-secret")
        r.add_pos(f"  config.x.api = {{ 'api_key' => '{g.s('H', 40)}' }}", "secret", "ruby-hash-api-key")
        r.add("  config.x.api_timeout = 30\nend")
        docs.append(r)
        t = Doc(f"pos/mixed/pyproject_{i:02d}.toml")
        t.add('[tool.poetry]\nname = "svc"\nversion = "0.1.0"')
        t.add_pos(f'[tool.secrets]\ntoken = "{g.s("W", 40)}"', "secret", "toml-token")
        t.add(f'checksum = "{g.s("H", 64)}"\nmodule = "svc.main:app"')
        docs.append(t)
        ks = Doc(f"pos/mixed/secret_{i:02d}.yaml")
        ks.add("apiVersion: v1\nkind: Secret\nmetadata:\n  name: api\ntype: Opaque\ndata:")
        gh = "ghp_" + g.s("A", 36)
        ks.add_pos("  GITHUB_TOKEN: " + base64.b64encode(gh.encode()).decode(), "secret", "k8s-secret-b64")
        sk = "sk_live_" + g.s("A", 32)
        ks.add_pos("  STRIPE_KEY: " + base64.b64encode(sk.encode()).decode(), "secret", "k8s-secret-b64")
        ks.add("  LOG_LEVEL: " + base64.b64encode(b"info").decode())
        docs.append(ks)
        h = Doc(f"pos/mixed/http_{i:02d}.txt")
        h.add(f"GET /api/v2/orders HTTP/1.1\nHost: api.{g.word()}.io\nAccept: application/json")
        creds = base64.b64encode(f"svc:{g.s('A', 18)}".encode()).decode()
        h.add_pos(f"Authorization: Basic {creds}", "secret", "basic-auth-header")
        h.add(f"X-Request-Id: {g.uuid()}\nIf-None-Match: \"{g.s('H', 32)}\"")
        h.add_pos(f"X-API-Key: {g.s('A', 40)}", "secret", "api-key-header")
        h.add("Content-Length: 0\n")
        docs.append(h)
        js = Doc(f"pos/mixed/escaped_{i:02d}.json")
        js.add('{"event": "deploy", "payload": {')
        js.add_pos(f'  "env": "DATABASE_URL=postgres://app:{g.s("A", 16)}@db:5432/app\\nDEBUG=0",', "secret",
                   "url-postgres")
        js.add_pos(f'  "headers": {{"Authorization": "Bearer {g.s("A", 48)}"}},', "secret", "bearer-json")
        js.add(f'  "sha": "{g.s("H", 40)}", "ts": {g.r.randint(1700000000, 1800000000)}}}}}')
        docs.append(js)
    return docs


def build_hard_negatives(g: Gen, scale: int) -> list[Doc]:
    """Secret-named keys holding harmless values, in many syntaxes."""
    docs = []
    for i in range(3 * scale):
        d = Doc(f"neg/hard/settings_{i}.yaml")
        d.add("app:")
        for line in (
            "  auth_provider: keycloak", "  token_expiry_seconds: 3600", "  secret_rotation_days: 30",
            "  password_policy: strong", "  api_key_header: X-API-Key", "  token_type: Bearer",
            f"  ssl_key_file: /etc/ssl/private/{g.word()}.key",
            "  credentials_file: /var/run/secrets/gcp/sa.json",
            "  db_password: \"{{ vault_db_password }}\"", "  api_token: !vault |",
            "  smtp_password: ${SMTP_PASSWORD:-}", "  jwt_secret: ${JWT_SECRET:changeme}",
            "  postgres_password: ${POSTGRES_PASSWORD:-postgres}", "  secret_key_ref: app-secrets",
            f"  token_endpoint: https://login.{g.word()}.io/oauth2/token",
            "  auth: true", "  password: null", "  client_secret: ''", "  private_key: ~",
            f"  checksum: sha256:{g.s('H', 64)}", f"  etag: \"{g.s('H', 32)}\"",
            f"  nonce_length: {g.r.randint(8, 64)}", f"  public_key: \"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{g.s('B', 43)}\"",
            "  secret_name: projects/acme/secrets/db-password/versions/latest",
            "  password_hash_algorithm: argon2id", f"  api_version: 2026-0{g.r.randint(1, 9)}-01",
        ):
            d.add(line)
        docs.append(d)
        py = Doc(f"neg/hard/views_{i}.py")
        py.add("def login(request, password=None, token=None):\n"
               "    password = request.POST.get('password')\n"
               "    token = generate_token(user, expires=3600)\n"
               "    secret = secrets.token_hex(32)\n"
               "    api_key = ApiKey.objects.get(prefix=key[:8])\n"
               "    auth_token = f'{prefix}.{body}'\n"
               "    client.login(username=user.name, password=password)\n"
               "    headers = {'Authorization': f'Bearer {token}'}\n"
               "    secret_key = settings.SECRET_KEY\n"
               "    key = 'user-profile-card'\n"
               f"    cache_token = '{g.s('H', 32)}'  # content hash, not a credential\n"
               "    return render(request, 'login.html', {'password_reset_url': reverse('reset')})\n")
        docs.append(py)
        js = Doc(f"neg/hard/client_{i}.ts")
        js.add("export const config = {\n"
               "  apiKey: process.env.NEXT_PUBLIC_API_KEY ?? '',\n"
               "  authToken: localStorage.getItem('auth_token'),\n"
               "  password: form.values.password,\n"
               "  tokenStorageKey: 'app.session.token',\n"
               "  secretHeader: 'X-Secret-Header',\n"
               f"  buildHash: '{g.s('H', 40)}',\n"
               f"  sentryDsn: 'https://{g.s('H', 32)}@o{g.s('D', 6)}.ingest.sentry.io/{g.s('D', 7)}',\n"
               "};\n")
        docs.append(js)
        sh = Doc(f"neg/hard/deploy_{i}.sh")
        sh.add("#!/bin/sh\nset -eu\n"
               'docker login -u "$REGISTRY_USER" -p "$REGISTRY_PASSWORD" registry.acme.io\n'
               'curl -fsS -H "Authorization: token ${GITHUB_TOKEN}" https://api.github.com/user\n'
               'mysql -u"$DB_USER" -p"$DB_PASSWORD" -h db app < schema.sql\n'
               'psql "postgresql://$PGUSER:$PGPASSWORD@$PGHOST/app" -c "select 1"\n'
               'export VAULT_TOKEN=$(vault print token)\n'
               'kubectl create secret generic api --from-literal=token="$API_TOKEN"\n'
               f'git push https://github.com/acme/app.git {g.s("H", 40)}:refs/heads/main\n'
               'openssl rand -base64 32 > /run/secrets/session_key\n')
        docs.append(sh)
        i18n = Doc(f"neg/hard/locale_{i}.json")
        i18n.add('{\n  "login": {\n    "password": "Passwort",\n    "password_confirm": "Passwort wiederholen",\n'
                 '    "token": "Zugangstoken",\n    "secret": "Geheimnis",\n    "api_key": "API-Schluessel",\n'
                 '    "auth": "Anmeldung",\n    "token_expired": "Sitzung abgelaufen"\n  }\n}')
        docs.append(i18n)
        misc = Doc(f"neg/hard/misc_{i}.txt")
        misc.add('private static final String TOKEN_HEADER = "X-Auth-Token";\n'
                 'const tokenPrefix = "Bearer ";\n'
                 'token = "test-token-123"\n'
                 'mock_api_key = "fake-key-for-tests"\n'
                 '| API_KEY | your API key from the dashboard |\n'
                 "INSERT INTO users (email, password) VALUES ('a@example.com', "
                 f"'$2b$12${g.s('B', 53).replace('+', '.')}');\n"
                 "ansible_become_pass: \"{{ vault_become_pass }}\"\n"
                 "ssl_certificate_key /etc/nginx/ssl/server.key;\n"
                 f"password: ENC[AES256_GCM,data:{g.s('B', 24)},iv:{g.s('B', 43)}=,tag:{g.s('B', 22)}==,type:str]\n"
                 f"$ANSIBLE_VAULT;1.1;AES256\n{g.s('H', 80)}\n{g.s('H', 80)}\n"
                 "securitySchemes:\n  bearerAuth:\n    type: http\n    scheme: bearer\n    bearerFormat: JWT\n"
                 "  apiKeyAuth:\n    type: apiKey\n    in: header\n    name: X-API-Key\n"
                 f"<script src=\"/static/js/main.{g.s('H', 8)}.chunk.js\"></script>\n"
                 f".btn-primary {{ color: #{g.s('H', 6)}; background: #{g.s('H', 6)}; }}\n"
                 f"encryptedData:\n  password: Ag{g.s('B', 600)}\n")
        docs.append(misc)
    return docs


def generate(out: Path, seed: int = 20261129, scale: int = 1) -> list[dict[str, object]]:
    """Write the corpus under ``out`` and return the labels (also written to labels.json)."""
    g = Gen(seed)
    docs = (build_positive_files(g, 6 * scale) + build_block_files(g, 14 * scale)
            + build_log_and_history(g, 4 * scale) + build_pii_files(g, 4 * scale)
            + build_mixed_syntax(g, 4 * scale) + build_negative_files(g, scale)
            + build_hard_negatives(g, scale))
    labels: list[dict[str, object]] = []
    for d in docs:
        p = out / "files" / d.name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("\n".join(d.lines) + "\n", encoding="utf-8")
        labels.extend(d.labels)
    (out / "labels.json").write_text(json.dumps(labels, indent=1), encoding="utf-8")
    return labels


if __name__ == "__main__":
    import sys

    root = Path(__file__).resolve().parent / ".data" / "quality"
    labs = generate(root, scale=int(sys.argv[1]) if len(sys.argv) > 1 else 1)
    print(f"{len(labs)} labels under {root}")
