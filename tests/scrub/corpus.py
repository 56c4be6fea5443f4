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
LOWER = string.ascii_lowercase + string.digits
UPPER = string.ascii_uppercase + string.digits


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
case("npm-token", "//npm.internal.example/:_authToken={}", lambda g: "npm_" + g.of(B62, 36))
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
case("authorization-header", '{{"headers": {{"Authorization": "Basic {}"}}}}', lambda g: g.of(B64, 28) + "=")
case("bearer-token", "sent with bearer {} header", lambda g: g.of(B62 + ".-_", 48))
case("generic-credential-assignment", 'DB_PASSWORD="{}"', _password)
case("password-assignment", '{{"password": "{}"}}', lambda g: g.of(LOWER, 14))
case("env-dump-secret", "$ cat .env\nPOSTGRES_USER=app\nPOSTGRES_PASSWORD={}\nDEBUG=1", lambda g: g.of(LOWER, 12))
case("curl-auth-header", "curl -sS -H 'X-Api-Key: {}' https://api.example.com/v1", lambda g: g.of(B62, 32))
case("curl-auth-user", "curl -u deploy:{} https://ci.example.com/api", lambda g: g.of(B62, 16))
case("nuget-config-password", '<add key="ClearTextPassword" value="{}" />', _password)
case("jwt-base64", "token={}", lambda g: "ZXlKaGJHY2lPaUpJVXpJMU5pSjk" + g.of(B64, 60))
case("kubernetes-secret-yaml", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: {}\n",
     lambda g: base64.b64encode(g.of(B62, 18).encode()).decode())
CASES["jwt"] = _jwt
CASES["private-key"] = _pem
CASES["private-key-truncated"] = _pem_truncated


# --- every other token family: prefix tokens anywhere, service-named values in assignments ------------------
case("aws-bedrock-api-key", "AWS_BEARER_TOKEN_BEDROCK={}", lambda g: "ABSK" + g.of(B64, 132))
case("adobe-client-secret", "ADOBE_SECRET={}", lambda g: "p8e-" + g.of(B62, 32))
case("alibaba-access-key-id", "ALIYUN_AK={}", lambda g: "LTAI" + g.of(B62, 20))
case("cloudflare-origin-ca-key", "ORIGIN_CA={}", lambda g: f"v1.0-{g.of(HEX, 24)}-{g.of(HEX, 146)}")
case("flyio-access-token", "FLY_API_TOKEN={}", lambda g: "fo1_" + g.of(URLSAFE, 43))
case("hashicorp-tf-api-token", "token = {}", lambda g: f"{g.of(LOWER, 14)}.atlasv1.{g.of(URLSAFE, 66)}")
case("vault-token", "x {} y", lambda g: "hvs." + g.of(URLSAFE, 95))
case("vault-legacy-token", "VAULT_TOKEN={}", lambda g: "s." + g.of(B62, 24))
case("doppler-token", "DOPPLER_TOKEN={}", lambda g: "dp.pt." + g.of(B62, 43))
case("yandex-token", "yc iam token: {}", lambda g: "AQVN" + g.of(URLSAFE, 36))
case("scalingo-api-token", "SCALINGO={}", lambda g: "tk-us-" + g.of(URLSAFE, 48))
case("clickhouse-cloud-api-secret-key", "CH_SECRET={}", lambda g: "4b1d" + g.of(B62, 38))
case("planetscale-token", "PSCALE={}", lambda g: "pscale_tkn_" + g.of(URLSAFE, 43))
case("defined-networking-api-token", "DN={}", lambda g: f"dnkey-{g.of(URLSAFE, 26)}-{g.of(URLSAFE, 52)}")
case("openshift-user-token", "oc login --token={}", lambda g: "sha256~" + g.of(URLSAFE, 43))
case("gitlab-runner-registration-token", "--registration-token {}", lambda g: "GR1348941" + g.of(URLSAFE, 20))
case("gitlab-session-cookie", "Cookie: _gitlab_session={}", lambda g: g.of(LOWER, 32))
case("rubygems-api-token", "GEM_HOST_API_KEY={}", lambda g: "rubygems_" + g.of(HEX, 48))
case("clojars-api-token", "CLOJARS={}", lambda g: "CLOJARS_" + g.of(LOWER, 60))
case("artifactory-token", "X-JFrog-Art-Api: {}", lambda g: "AKCp" + g.of(B62, 69))
case("sourcegraph-token", "SRC_ACCESS_TOKEN={}", lambda g: "sgp_" + g.of(HEX, 16) + "_" + g.of(HEX, 40))
case("sonarqube-token", "-Dsonar.token={}", lambda g: "squ_" + g.of(HEX, 40))
case("octopus-deploy-api-key", "OCTOPUS={}", lambda g: "API-" + g.of(UPPER, 26))
case("harness-api-key", "x-api-key: {}", lambda g: f"pat.{g.of(URLSAFE, 22)}.{g.of(B62, 24)}.{g.of(B62, 20)}")
case("infracost-api-token", "INFRACOST_API_KEY={}", lambda g: "ico-" + g.of(B62, 32))
case("prefect-api-token", "PREFECT_API_KEY={}", lambda g: "pnu_" + g.of(B62, 36))
case("pulumi-api-token", "PULUMI_ACCESS_TOKEN={}", lambda g: "pul-" + g.of(HEX, 40))
case("readme-api-token", "README={}", lambda g: "rdme_" + g.of(LOWER, 70))
case("postman-api-token", "POSTMAN={}", lambda g: f"PMAK-{g.of(HEX, 24)}-{g.of(HEX, 34)}")
case("settlemint-token", "SM={}", lambda g: "sm_pat_" + g.of(B62, 16))
case("authress-service-client-access-key", "AUTHRESS={}",
     lambda g: f"sc_{g.of(LOWER, 12)}.{g.of(LOWER, 5)}.acc_{g.of(LOWER, 16)}.{g.of(B64, 48)}")
case("1password-secret-key", "secret key {}",
     lambda g: f"A3-{g.of(UPPER, 6)}-{g.of(UPPER, 11)}-{g.of(UPPER, 5)}-{g.of(UPPER, 5)}-{g.of(UPPER, 5)}")
case("1password-service-account-token", "OP_SERVICE_ACCOUNT_TOKEN={}", lambda g: "ops_eyJ" + g.of(B64, 260))
case("age-secret-key", "# created\n{}", lambda g: "AGE-SECRET-KEY-1" + g.of(UPPER, 58))
case("microsoft-teams-webhook", "TEAMS={}", lambda g: (
    f"https://acme.webhook.office.com/webhookb2/{g.of(HEX, 8)}-{g.of(HEX, 4)}-{g.of(HEX, 4)}-{g.of(HEX, 4)}-"
    f"{g.of(HEX, 12)}@{g.of(HEX, 8)}/IncomingWebhook/{g.of(HEX, 32)}/{g.of(HEX, 8)}"))
case("notion-api-token", "NOTION_TOKEN={}", lambda g: "ntn_" + g.of(B62, 46))
case("airtable-personal-access-token", "AIRTABLE={}", lambda g: f"pat{g.of(B62, 14)}.{g.of(HEX, 64)}")
case("atlassian-api-token-v2", "JIRA={}", lambda g: "ATATT3" + g.of(URLSAFE, 186))
case("sentry-token", "SENTRY_AUTH_TOKEN={}", lambda g: "sntryu_" + g.of(HEX, 64))
case("grafana-token", "GRAFANA={}", lambda g: "glsa_" + g.of(B62, 32) + "_" + g.of(HEX, 8))
case("dynatrace-api-token", "DT={}", lambda g: f"dt0c01.{g.of(UPPER, 24)}.{g.of(B62, 64)}")
case("frameio-api-token", "FRAMEIO={}", lambda g: "fio-u-" + g.of(URLSAFE, 64))
case("typeform-api-token", "TF={}", lambda g: "tfp_" + g.of(URLSAFE, 59))
case("intra42-client-secret", "FT={}", lambda g: "s-s4t2ud-" + g.of(HEX, 64))
case("maxmind-license-key", "MAXMIND={}", lambda g: f"{g.of(B62, 6)}_{g.of(B62, 29)}_mmk")
case("heroku-api-key-v2", "HEROKU={}", lambda g: "HRKU-AA" + g.of(URLSAFE, 58))
case("shippo-api-token", "SHIPPO={}", lambda g: "shippo_live_" + g.of(HEX, 40))
case("plaid-access-token", "PLAID={}", lambda g: f"access-sandbox-{g.of(HEX, 8)}-{g.of(HEX, 4)}-{g.of(HEX, 4)}-"
     f"{g.of(HEX, 4)}-{g.of(HEX, 12)}")
case("flutterwave-key", "FLW={}", lambda g: f"FLWSECK_TEST-{g.of(HEX, 32)}-X")
case("flutterwave-encryption-key", "FLW_ENCRYPTION_KEY={}", lambda g: f"FLWSECK_TEST-{g.of(HEX, 12)}")
case("easypost-api-token", "EASYPOST={}", lambda g: "EZAK" + g.of(B62, 54))
case("duffel-api-token", "DUFFEL={}", lambda g: "duffel_test_" + g.of(URLSAFE, 43))
case("lob-api-key", "LOB={}", lambda g: "live_" + g.of(HEX, 35))
case("freemius-secret-key", "'secret_key' => '{}',", lambda g: "sk_" + g.of(B62 + "!#%&", 29))
case("sendinblue-api-token", "BREVO={}", lambda g: f"xkeysib-{g.of(HEX, 64)}-{g.of(B62, 16)}")
case("mailgun-api-key", "MAILGUN={}", lambda g: "key-" + g.of(HEX, 32))
case("mailchimp-api-key", "MC={}", lambda g: g.of(HEX, 32) + "-us21")
case("mapbox-api-token", "MAPBOX={}", lambda g: f"pk.{g.of(B62, 60)}.{g.of(B62, 22)}")
case("new-relic-key", "NEW_RELIC={}", lambda g: "NRAK-" + g.of(UPPER, 27))
case("twilio-api-key", "TWILIO_API_KEY={}", lambda g: "SK" + g.of(HEX, 32))
case("facebook-page-access-token", "FB={}", lambda g: "EAAG" + g.of(B62, 120))
case("facebook-app-access-token", "access_token={}", lambda g: g.of(string.digits, 15) + "|" + g.of(URLSAFE, 27))
case("aws-secret-next-to-key-id", "AKIAQWERTYUIOPASDF23 {}", lambda g: g.of(B64, 40))
case("sidekiq-sensitive-url", "source 'https://{}@gems.contribsys.com/'", lambda g: f"{g.of(HEX, 8)}:{g.of(HEX, 8)}")


def _named(rule_id: str, name: str, secret: Callable[[Gen], str]) -> None:
    case(rule_id, name + ' = "{}"', secret)


def _uuid(g: Gen) -> str:
    return f"{g.of(HEX, 8)}-{g.of(HEX, 4)}-{g.of(HEX, 4)}-{g.of(HEX, 4)}-{g.of(HEX, 12)}"


_named("adafruit-api-key", "ADAFRUIT_IO_KEY", lambda g: g.of(LOWER + "_-", 32))
_named("adobe-client-id", "adobe_client_id", lambda g: g.of(HEX, 32))
_named("airtable-api-key", "airtable_api_key", lambda g: g.of(LOWER, 17))
_named("algolia-api-key", "ALGOLIA_ADMIN_KEY", lambda g: g.of(LOWER, 32))
_named("alibaba-secret-key", "alibaba_secret", lambda g: g.of(LOWER, 30))
_named("asana-credential", "ASANA_CLIENT_SECRET", lambda g: g.of(LOWER, 32))
_named("atlassian-api-token", "JIRA_API_TOKEN", lambda g: g.of(LOWER, 24))
_named("beamer-api-token", "beamer_api_key", lambda g: "b_" + g.of(LOWER + "=_-", 44))
_named("bitbucket-credential", "BITBUCKET_CLIENT_SECRET", lambda g: g.of(LOWER + "_-", 64))
_named("bittrex-credential", "bittrex_secret", lambda g: g.of(LOWER, 32))
_named("cisco-meraki-api-key", "MERAKI_DASHBOARD_API_KEY", lambda g: g.of(HEX, 40))
_named("cloudflare-api-key", "CLOUDFLARE_API_TOKEN", lambda g: g.of(LOWER + "_-", 40))
_named("codecov-access-token", "CODECOV_TOKEN", lambda g: g.of(LOWER, 32))
_named("coinbase-access-token", "coinbase_token", lambda g: g.of(LOWER + "_-", 64))
_named("confluent-credential", "CONFLUENT_CLOUD_API_SECRET", lambda g: g.of(LOWER, 64))
_named("contentful-delivery-api-token", "CONTENTFUL_DELIVERY_TOKEN", lambda g: g.of(LOWER + "_-", 43))
_named("datadog-access-token", "DATADOG_APP_KEY", lambda g: g.of(LOWER, 40))
_named("discord-credential", "DISCORD_CLIENT_SECRET", lambda g: g.of(LOWER + "_-", 32))
_named("droneci-access-token", "DRONECI_TOKEN", lambda g: g.of(LOWER, 32))
_named("dropbox-api-token", "DROPBOX_TOKEN", lambda g: "sl." + g.of(LOWER + "_-", 135))
_named("etsy-access-token", "ETSY_KEYSTRING", lambda g: g.of(LOWER, 24))
_named("facebook-secret", "FACEBOOK_APP_SECRET", lambda g: g.of(HEX, 32))
_named("fastly-api-token", "FASTLY_API_TOKEN", lambda g: g.of(LOWER + "_-", 32))
_named("finicity-credential", "finicity_app_key", lambda g: g.of(HEX, 32))
_named("finnhub-access-token", "FINNHUB_KEY", lambda g: g.of(LOWER, 20))
_named("flickr-access-token", "flickr_api_key", lambda g: g.of(LOWER, 32))
_named("freshbooks-access-token", "freshbooks_token", lambda g: g.of(LOWER, 64))
_named("gitter-access-token", "GITTER_TOKEN", lambda g: g.of(LOWER + "_-", 40))
_named("gocardless-api-token", "GOCARDLESS_ACCESS_TOKEN", lambda g: "live_" + g.of(LOWER + "_-", 40))
_named("heroku-api-key", "HEROKU_API_KEY", _uuid)
_named("hubspot-api-key", "hubspot_api_key", lambda g: _uuid(g).upper())
_named("intercom-api-key", "INTERCOM_ACCESS_TOKEN", lambda g: g.of(LOWER + "_-", 60))
_named("jfrog-credential", "ARTIFACTORY_API_KEY", lambda g: g.of(LOWER, 73))
_named("kraken-access-token", "KRAKEN_PRIVATE_KEY", lambda g: g.of(B64, 88))
_named("kucoin-credential", "KUCOIN_API_SECRET", _uuid)
_named("launchdarkly-access-token", "LAUNCHDARKLY_ACCESS_TOKEN", lambda g: g.of(LOWER + "_-", 40))
_named("linear-client-secret", "LINEAR_CLIENT_SECRET", lambda g: g.of(HEX, 32))
_named("linkedin-credential", "LINKEDIN_CLIENT_SECRET", lambda g: g.of(LOWER, 16))
_named("looker-credential", "LOOKERSDK_CLIENT_SECRET", lambda g: g.of(LOWER, 24))
_named("mailgun-signing-key", "MAILGUN_SIGNING_KEY",
       lambda g: f"{g.of('abcdefgh0123456789', 32)}-{g.of('abcdefgh0123456789', 8)}-{g.of('abcdefgh0123456789', 8)}")
_named("mattermost-access-token", "MATTERMOST_TOKEN", lambda g: g.of(LOWER, 26))
_named("messagebird-credential", "MESSAGEBIRD_API_KEY", lambda g: g.of(LOWER, 25))
_named("netlify-access-token", "NETLIFY_AUTH_TOKEN", lambda g: g.of(LOWER + "_-", 43))
_named("new-relic-user-api-id", "NEW_RELIC_API_ID", lambda g: g.of(LOWER, 64))
_named("nytimes-access-token", "NYTIMES_API_KEY", lambda g: g.of(LOWER + "_-", 32))
_named("okta-access-token", "OKTA_API_TOKEN", lambda g: "00" + g.of(URLSAFE, 40))
_named("plaid-credential", "PLAID_SECRET", lambda g: g.of(LOWER, 30))
_named("privateai-api-token", "PRIVATE_AI_API_KEY", lambda g: g.of(LOWER, 32))
_named("rapidapi-access-token", "X_RAPIDAPI_KEY", lambda g: g.of(LOWER + "_-", 50))
_named("sendbird-credential", "SENDBIRD_API_TOKEN", lambda g: g.of(HEX, 40))
_named("sentry-access-token", "SENTRY_TOKEN", lambda g: g.of(HEX, 64))
_named("sidekiq-secret", "BUNDLE_GEMS__CONTRIBSYS__COM", lambda g: f"{g.of(HEX, 8)}:{g.of(HEX, 8)}")
_named("snyk-api-token", "SNYK_TOKEN", _uuid)
_named("sonar-api-token", "SONAR_LOGIN", lambda g: g.of(LOWER + "_-", 40))
_named("sourcegraph-access-token", "SOURCEGRAPH_TOKEN", lambda g: g.of(HEX, 40))
_named("squarespace-access-token", "SQUARESPACE_API_KEY", _uuid)
_named("sumologic-credential", "SUMO_ACCESS_ID", lambda g: "su" + g.of(B62, 12))
_named("travisci-access-token", "TRAVIS_TOKEN", lambda g: g.of(LOWER, 22))
_named("twilio-auth-token", "TWILIO_AUTH_TOKEN", lambda g: g.of(HEX, 32))
_named("twitch-api-token", "TWITCH_CLIENT_SECRET", lambda g: g.of(LOWER, 30))
_named("twitter-credential", "TWITTER_ACCESS_TOKEN", lambda g: g.of(string.digits, 19) + "-" + g.of(B62, 40))
_named("yandex-credential", "YANDEX_ACCESS_KEY", lambda g: "YC" + g.of(URLSAFE, 38))
_named("zendesk-secret-key", "ZENDESK_API_TOKEN", lambda g: g.of(LOWER, 40))


def corpus(seed: int = 7) -> list[tuple[str, str, str]]:
    """(rule id, text with context, secret) for every covered rule."""
    g = Gen(seed)
    return [(rule_id, *make(g)) for rule_id, make in CASES.items()]
