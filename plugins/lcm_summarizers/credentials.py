"""Keep provider credentials out of every message we raise or show."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from lcm_framework.plugin_api.summarize import Readiness

_SECRET_NAME = re.compile(r"(?:API_?KEY|TOKEN|SECRET|PASSWORD|ACCESS_KEY|CREDENTIALS?)$", re.IGNORECASE)
_KEY_SHAPES = re.compile(
    r"\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{8,}|AIza[0-9A-Za-z_-]{20,}|gsk_[A-Za-z0-9]{20,}|hf_[A-Za-z0-9]{20,}"
    r"|xai-[A-Za-z0-9]{20,})"
    r"|(?i:bearer)\s+[A-Za-z0-9._~+/=-]{8,}"
    r"|(?P<pre>(?i:(?:api[_-]?key|x-api-key)[\"']?\s*[:=]\s*[\"']?))[^\s\"',}]{6,}"
    r"|(?<=://)[^/\s:@]+:[^/\s@]+(?=@)"
)
MASK = "***"

# litellm model prefixes and the environment variable holding their key.
PROVIDER_KEYS: dict[str, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_API_KEY",),
    "openai": ("OPENAI_API_KEY",),
    "azure": ("AZURE_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "mistral": ("MISTRAL_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "together_ai": ("TOGETHERAI_API_KEY", "TOGETHER_API_KEY"),
    "cohere": ("COHERE_API_KEY",),
}
KEYLESS_PROVIDERS = frozenset({"ollama", "ollama_chat", "lm_studio", "vllm", "hosted_vllm"})


def readiness(model: str, api_base: str | None, env: Mapping[str, str]) -> Readiness:
    """Whether the credential ``model``'s provider needs is set (never shows its value)."""
    provider = model.split("/", 1)[0] if "/" in model else "openai"
    data = {"provider": provider}
    if provider in KEYLESS_PROVIDERS or api_base:
        return Readiness("ok", f"litellm model {model} (no key needed)", data=data)
    names = PROVIDER_KEYS.get(provider)
    if names is None:
        return Readiness("warn", f"litellm model {model}: cannot tell which credential it needs", data=data)
    if any(env.get(n) for n in names):
        return Readiness("ok", f"litellm model {model}: credentials present", data=data)
    return Readiness("fail", f"litellm model {model}: {' or '.join(names)} is not set",
                     fix=f"export {names[0]}=... (or lcm config set summarizer.provider extractive)", data=data)


def secret_values(env: Mapping[str, str], extra: Iterable[str | None] = ()) -> list[str]:
    """Values of environment variables whose names say they hold credentials (plus ``extra``)."""
    values = {v for k, v in env.items() if _SECRET_NAME.search(k) and len(v) >= 6}
    values.update(v for v in extra if v and len(v) >= 6)
    return sorted(values, key=len, reverse=True)


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every known secret value and every credential-shaped string masked."""
    for value in secrets:
        if value in text:
            text = text.replace(value, MASK)
    return _KEY_SHAPES.sub(lambda m: (m.group("pre") or "") + MASK, text)
