"""Fake but well-formed secrets of every kind the built-in pack covers, built at run time.

Nothing secret-looking is committed literally: each secret is a known prefix
plus random characters of the right alphabet and length. ``CASES`` maps a
built-in rule id to a generator of (text with its usual context, the secret).
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable

B62 = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B64 = B62 + "+/"
URLSAFE = B62 + "_-"


class Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def of(self, alphabet: str, n: int) -> str:
        # always mix in a digit and a letter so entropy/digit checks see a realistic secret
        body = [self.rng.choice(alphabet) for _ in range(n)]
        if n >= 4:
            digits = [c for c in alphabet if c.isdigit()]
            letters = [c for c in alphabet if c.isalpha()]
            if digits:
                body[self.rng.randrange(n)] = self.rng.choice(digits)
            if letters:
                body[self.rng.randrange(n)] = self.rng.choice(letters)
        return "".join(body)

    def upper32(self, n: int) -> str:
        return self.of(string.ascii_uppercase + "234567", n)


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _jwt(g: Gen) -> tuple[str, str]:
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = _b64url(json.dumps({"sub": g.of(B62, 12), "iat": 1700000000}).encode())
    token = f"{header}.{payload}.{g.of(URLSAFE, 43)}"
    return f"Cookie: session={token}", token


def _pem(g: Gen) -> tuple[str, str]:
    body = "\n".join(g.of(B64, 64) for _ in range(6))
    block = f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----"
    return f"key file:\n{block}\n", block


def _pem_truncated(g: Gen) -> tuple[str, str]:
    body = "\n".join(g.of(B64, 64) for _ in range(3))
    return f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}", body


def _password(g: Gen) -> str:
    return g.of(B62 + "!#%^&*", 18)


CASES: dict[str, Callable[[Gen], tuple[str, str]]] = {}


def case(rule_id: str, context: str, secret: Callable[[Gen], str]) -> None:
    def make(g: Gen) -> tuple[str, str]:
        value = secret(g)
        return context.format(value), value

    CASES[rule_id] = make


case("aws-access-key-id", "export AWS_ACCESS_KEY_ID={}", lambda g: "AKIA" + g.upper32(16))
case("aws-secret-access-key", "aws_secret_access_key = {}", lambda g: g.of(B64, 40))
case("gcp-api-key", "GEMINI_API_KEY={} ", lambda g: "AIza" + g.of(URLSAFE, 35))
case("gcp-oauth-client-secret", 'client_secret: "{}"', lambda g: "GOCSPX-" + g.of(URLSAFE, 28))
case("gcp-service-account-key-id", '{{"private_key_id": "{}"}}', lambda g: g.of(HEX, 40))
case("azure-storage-account-key", "DefaultEndpointsProtocol=https;AccountKey={};EndpointSuffix=x",
     lambda g: g.of(B64, 86) + "==")
case("azure-ad-client-secret", "AZURE_CLIENT_SECRET={}",
     lambda g: g.of(B62, 3) + "8Q~" + g.of(B62 + "_~.-", 32))
case("azure-sas-signature", "https://acct.blob.core.windows.net/c/b?sv=2022-11-02&sig={}",
     lambda g: g.of(B62, 43) + "%3D")
case("digitalocean-token", "DIGITALOCEAN_TOKEN={}", lambda g: "dop_v1_" + g.of(HEX, 64))
case("github-pat", "git clone https://{}@github.com/o/r", lambda g: "ghp_" + g.of(B62, 36))
case("github-fine-grained-pat", "GH_TOKEN={}", lambda g: "github_pat_" + g.of(B62 + "_", 82))
case("github-oauth", "token {}", lambda g: "gho_" + g.of(B62, 36))
case("github-app-token", "installation token {}", lambda g: "ghs_" + g.of(B62, 36))
case("github-refresh-token", "refresh {}", lambda g: "ghr_" + g.of(B62, 36))
case("gitlab-token", "GITLAB_TOKEN={}", lambda g: "glpat-" + g.of(URLSAFE, 20))
case("npm-token", "//registry.npmjs.org/:_authToken={}", lambda g: "npm_" + g.of(B62, 36))
case("pypi-token", "password = {}", lambda g: "pypi-AgEIcHlwaS5vcmc" + g.of(URLSAFE, 60))
case("docker-hub-pat", "docker login -p {}", lambda g: "dckr_pat_" + g.of(URLSAFE, 27))
case("slack-token", "SLACK_BOT_TOKEN={}",
     lambda g: f"xoxb-{g.of(string.digits, 12)}-{g.of(string.digits, 13)}-{g.of(B62, 24)}")
case("slack-webhook", "curl -X POST https://{}",
     lambda g: f"hooks.slack.com/services/T{g.upper32(8)}/B{g.upper32(10)}/{g.of(B62, 24)}")
case("discord-webhook", "webhook: https://{}",
     lambda g: f"discord.com/api/webhooks/{g.of(string.digits, 18)}/{g.of(URLSAFE, 68)}")
case("discord-bot-token", "discord bot token: {}",
     lambda g: f"M{g.of(URLSAFE, 25)}.{g.of(URLSAFE, 6)}.{g.of(URLSAFE, 30)}")
case("telegram-bot-token", "TELEGRAM_TOKEN={}", lambda g: f"{g.of(string.digits, 9)}:AA{g.of(URLSAFE, 33)}")
case("stripe-key", "stripe.api_key = '{}'", lambda g: "sk_live_" + g.of(B62, 24))
case("stripe-webhook-secret", "STRIPE_WEBHOOK_SECRET={}", lambda g: "whsec_" + g.of(B62, 32))
case("square-token", "SQUARE_SECRET={}", lambda g: "sq0csp-" + g.of(URLSAFE, 43))
case("braintree-access-token", "BT={}",
     lambda g: f"access_token$production${g.of(string.ascii_lowercase + string.digits, 16)}${g.of(HEX, 32)}")
case("paypal-client-secret", "PAYPAL_CLIENT_SECRET={}", lambda g: g.of(URLSAFE, 80))
case("openai-api-key", "OPENAI_API_KEY={}", lambda g: "sk-proj-" + g.of(URLSAFE, 100))
case("anthropic-api-key", "ANTHROPIC_API_KEY={}", lambda g: "sk-ant-api03-" + g.of(URLSAFE, 93) + "AA")
case("huggingface-token", "HF_TOKEN={}", lambda g: "hf_" + g.of(string.ascii_letters, 34))
case("groq-api-key", "GROQ_API_KEY={}", lambda g: "gsk_" + g.of(B62, 52))
case("xai-api-key", "XAI_API_KEY={}", lambda g: "xai-" + g.of(B62, 80))
case("perplexity-api-key", "PPLX={}", lambda g: "pplx-" + g.of(B62, 48))
case("replicate-api-token", "REPLICATE_API_TOKEN={}", lambda g: "r8_" + g.of(B62, 37))
case("cohere-api-key", "COHERE_API_KEY={}", lambda g: g.of(B62, 40))
case("sendgrid-api-key", "SENDGRID={}", lambda g: f"SG.{g.of(URLSAFE, 22)}.{g.of(URLSAFE, 43)}")
case("shopify-token", "SHOPIFY={}", lambda g: "shpat_" + g.of(HEX, 32))
case("linear-api-key", "LINEAR={}", lambda g: "lin_api_" + g.of(B62, 40))
case("databricks-token", "DATABRICKS_TOKEN={}", lambda g: "dapi" + g.of(HEX, 32))
case("credentialed-url", "DATABASE_URL=postgres://admin:{}@db.internal:5432/app", _password)
case("generic-authorization-header", "curl -H 'Authorization: Token {}' https://api", lambda g: g.of(B62, 40))
case("generic-bearer-token", "sent with bearer {} header", lambda g: g.of(B62 + ".-_", 48))
case("generic-credential-assignment", 'DB_PASSWORD="{}"', _password)
CASES["jwt"] = _jwt
CASES["private-key"] = _pem
CASES["private-key-truncated"] = _pem_truncated


def corpus(seed: int = 7) -> list[tuple[str, str, str]]:
    """(rule id, text with context, secret) for every covered rule."""
    g = Gen(seed)
    return [(rule_id, *make(g)) for rule_id, make in CASES.items()]
