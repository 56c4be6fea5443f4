"""What gitleaks' defaults miss on agent transcripts, and what must stay untouched (false positives)."""

from __future__ import annotations

import base64
import json
import random
import uuid
from typing import Any

import pytest

from lcm_framework.scrub import Scrubber, ScrubRejected
from lcm_framework.transcripts.reader import Reason

from .corpus import B62, HEX, Gen

G = Gen(2024)
WORD = G.of("abcdefghijklmnopqrstuvwxyz", 14)
"""A letters-only password: no digit, so gitleaks' generic rule ignores it."""


def _stored(scrubber: Scrubber, record: dict[str, Any]) -> str:
    """The canonical JSON that would be stored, or "" when the record is refused (nothing stored)."""
    try:
        return scrubber.scrub_record(record).canonical_json
    except ScrubRejected as exc:
        assert exc.reason is Reason.RESIDUAL_SECRET
        return ""


@pytest.mark.parametrize(
    "text",
    [
        f'password="{WORD}"',
        f"password='{WORD}'",
        f"password=`{WORD}`",
        f'PASSWORD = "{WORD}"',
        f"passwd: {WORD}9",
        f'secret: "{WORD}"',
        f"db_password => '{WORD}'",
        f'{{"password": "{WORD}", "user": "app"}}',
        f'{{\\"password\\": \\"{WORD}\\"}}',
        f"the password is {WORD}42",
        f"mysql -u root --password={WORD} app",
    ],
)
def test_password_assignments_in_any_quoting(builtin_scrubber: Scrubber, text: str) -> None:
    scrubbed, counts = builtin_scrubber.scrub_text(text)
    assert WORD not in scrubbed, scrubbed
    assert counts


@pytest.mark.parametrize(
    "record",
    [
        {"type": "user", "toolUseResult": {"stdout": json.dumps({"config": {"password": WORD}})}},
        {"type": "user", "toolUseResult": {f'password="{WORD}"': True}},
        {"type": "user", "toolUseResult": {"password": WORD}},
        {"type": "user", "toolUseResult": {"db": {"passwd": WORD, "host": "localhost"}}},
        {"type": "assistant", "input": {"env": ["POSTGRES_USER=app", f"POSTGRES_PASSWORD={WORD}"]}},
    ],
)
def test_passwords_inside_json_strings_and_keys_are_never_stored(builtin_scrubber: Scrubber, record: dict) -> None:
    assert WORD not in _stored(builtin_scrubber, record)


@pytest.mark.parametrize(
    "url",
    [
        "postgres://app:{}@db.internal:5432/app",
        "mongodb+srv://admin:{}@cluster0.example.net/test",
        "redis://default:{}@cache:6379/0",
        "amqp://guest:{}@rabbit/",
        "https://deploy:{}@git.example.com/org/repo.git",
        "ftp://backup:{}@10.0.0.5/dumps",
        "smb://svc:{}@fileserver/share",
        "git+ssh://ci:{}@host/x",
    ],
)
def test_credentialed_urls_of_any_scheme(builtin_scrubber: Scrubber, url: str) -> None:
    password = G.of(B62, 16)
    scrubbed, _ = builtin_scrubber.scrub_text(f"connecting to {url.format(password)} now")
    assert password not in scrubbed
    assert "[REDACTED:credentialed-url]" in scrubbed


def test_key_material_used_as_an_object_key(builtin_scrubber: Scrubber) -> None:
    token = "ghp_" + G.of(B62, 36)
    pem = "-----BEGIN PRIVATE KEY-----\n" + G.of(B62, 64) + "\n-----END PRIVATE KEY-----"
    vault = "hvs." + G.of(B62, 95)
    record = {"type": "user", "toolUseResult": {token: 1, pem: 2, vault: {"nested": True}}}
    stored = _stored(builtin_scrubber, record)
    assert stored
    for secret in (token, pem, vault):
        assert secret not in stored
    assert stored.count("[REDACTED:") == 3


def test_aws_secret_next_to_its_key_id(builtin_scrubber: Scrubber) -> None:
    key_id = "AKIA" + G.upper32(16)
    secret = G.of(B62 + "+/", 40)
    for text in (f"{key_id} {secret}", f"{key_id}:{secret}", f'"{key_id}", "{secret}"', f"{key_id}\t{secret}\n"):
        scrubbed, _ = builtin_scrubber.scrub_text(text)
        assert secret not in scrubbed and key_id not in scrubbed, text
    as_value = {"type": "user", "toolUseResult": {"credentials": {key_id: secret}}}
    stored = _stored(builtin_scrubber, as_value)
    assert secret not in stored and key_id not in stored


@pytest.mark.parametrize(
    "text",
    [
        "Authorization: Bearer {}",
        "authorization: basic {}",
        "Proxy-Authorization: Basic {}",
        "curl -H 'Authorization: Bearer {}' https://api.example.com",
        "http --auth-type=bearer GET api 'Authorization:Token {}'",
        '{{"headers": {{"Authorization": "Bearer {}"}}}}',
        "requests.get(url, headers={{'Authorization': 'Basic {}'}})",
    ],
)
def test_authorization_headers(builtin_scrubber: Scrubber, text: str) -> None:
    credential = base64.b64encode(f"svc:{G.of(B62, 14)}".encode()).decode()
    scrubbed, _ = builtin_scrubber.scrub_text(text.format(credential))
    assert credential not in scrubbed


def test_header_split_across_json_key_and_value_is_never_stored(builtin_scrubber: Scrubber) -> None:
    credential = base64.b64encode(f"svc:{G.of(B62, 14)}".encode()).decode()
    record = {"type": "assistant", "input": {"headers": {"Authorization": f"Basic {credential}"}}}
    assert credential not in _stored(builtin_scrubber, record)


def test_env_dump_in_tool_output(builtin_scrubber: Scrubber) -> None:
    values = {name: G.of("abcdefghijklmnopqrstuvwxyz", 12) for name in
              ("DATABASE_PASSWORD", "STRIPE_SECRET", "GITHUB_TOKEN", "OPENAI_API_KEY", "SMTP_PASS", "SENTRY_DSN")}
    dump = "\n".join([
        "HOME=/home/dev", "SHELL=/bin/bash", "MAX_TOKENS=4096", "KEYBOARD=us", "AUTHOR=Jane",
        *(f"{k}={v}" for k, v in values.items()),
        "SSH_AUTH_SOCK=/tmp/ssh-abc/agent.1", "TOKENIZERS_PARALLELISM=false", "API_KEY_FILE=/run/secrets/key",
    ])
    record = {"type": "user", "toolUseResult": {"stdout": f"$ env\n{dump}\n", "stderr": ""}}
    out = builtin_scrubber.scrub_record(record)
    for value in values.values():
        assert value not in out.canonical_json
    for kept in ("HOME=/home/dev", "MAX_TOKENS=4096", "KEYBOARD=us", "AUTHOR=Jane", "TOKENIZERS_PARALLELISM=false",
                 "SSH_AUTH_SOCK=/tmp/ssh-abc/agent.1", "API_KEY_FILE=/run/secrets/key"):
        assert kept in out.canonical_json, kept


def _png_base64(rng: random.Random, size: int) -> str:
    return base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(rng.randrange(256) for _ in range(size))).decode()


ORDINARY = [
    "def login(user: str, password: str) -> Session:\n    return connect(user=user, password=password)",
    "password = os.environ['DB_PASSWORD']\nsecret_key = settings.SECRET_KEY",
    "const token = await getToken(req);\nconst apiKey = process.env.API_KEY;",
    "if not password:\n    raise ValueError('password is required')",
    "password_hash = bcrypt.hashpw(password.encode(), salt)",
    "export API_KEY=$(cat ~/.config/key)\necho \"$API_KEY\" | wc -c",
    "secret_name: my-app-secret\npassword_policy: strict",
    "the secret: understanding recursion",
    "=== 41 passed, 2 skipped in 3.20s ===",
    "token_count: 123456789\ninput_tokens: 4096",
    "SELECT id, password_hash FROM users WHERE email = %s",
    "kind: Deployment\nspec:\n  containers:\n  - name: web",
]


def test_ordinary_code_hashes_uuids_and_images_are_untouched(builtin_scrubber: Scrubber) -> None:
    rng = random.Random(77)
    commits = "\n".join(f"commit {G.of(HEX, 40)}\nAuthor: Dev <dev@example.com>" for _ in range(20))
    sums = "\n".join(f"{G.of(HEX, 64)}  dist/pkg-{i}.tar.gz" for i in range(20))
    records: list[dict[str, Any]] = [
        {"type": "assistant", "uuid": str(uuid.UUID(int=rng.getrandbits(128))),
         "parentUuid": str(uuid.UUID(int=rng.getrandbits(128))), "sessionId": str(uuid.UUID(int=rng.getrandbits(128))),
         "message": {"role": "assistant", "content": [{"type": "text", "text": text}]}}
        for text in ORDINARY
    ]
    records.append({"type": "user", "toolUseResult": {"stdout": commits + "\n" + sums, "stderr": ""}})
    records.append({"type": "user", "message": {"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": _png_base64(rng, 60_000)}}]}})
    records.append({"type": "user", "toolUseResult": {"sha256": G.of(HEX, 64), "integrity": "sha512-" + G.of(B62, 86),
                                                      "requestId": str(uuid.UUID(int=rng.getrandbits(128)))}})
    for record in records:
        out = builtin_scrubber.scrub_record(record)
        assert out.redactions == {}, (out.redactions, out.canonical_json[:200])
