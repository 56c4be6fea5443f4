"""Fuzzing the configuration loader (bounded, seeded): whatever a config file, an ``LCM_*`` variable or a
``--set`` flag holds, ``load_config`` gives a Config of well-typed values or a ConfigError, never another error,
and the error never echoes a value that looks like a secret."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import Any

import tomli_w
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from lcm_framework.config import Config, load_config
from lcm_framework.config.registry import collect_settings
from lcm_framework.config.schema import INT64_MAX, INT64_MIN
from lcm_framework.errors import ConfigError
from lcm_framework.kernel.plugins import build_plugins

PLUGINS = build_plugins()
REGISTRY = collect_settings(PLUGINS)
KNOWN = sorted(REGISTRY)
SECTIONS = sorted({key.split(".")[0] for key in KNOWN})
TOKEN = "ghp_Zx8Qp2Lr7Vt4Nk9Ws3Hd6Jf1Ab5Cd7Ef9Gh"
"""A secret-shaped value planted among the fuzzed ones: no error may print it."""

TEXT = st.text(st.characters(codec="utf-8"), max_size=30) | st.just(TOKEN)
NAMES = st.sampled_from([key.split(".")[1] for key in KNOWN]) | st.from_regex(r"[a-z_]{1,12}", fullmatch=True)
SCALARS = (st.booleans() | st.integers() | st.integers(min_value=2**63 - 2, max_value=10**300)
           | st.integers(min_value=-(10**300), max_value=-(2**63) + 2)
           | st.floats(allow_nan=True, allow_infinity=True) | TEXT
           | st.dates() | st.times() | st.datetimes(timezones=st.just(UTC)))
ARRAYS = st.lists(SCALARS, max_size=3)
VALUES = SCALARS | ARRAYS | st.dictionaries(NAMES, SCALARS | ARRAYS, max_size=3)  # a table nested in a key
KNOWN_KEYS = st.dictionaries(st.sampled_from(KNOWN), VALUES, max_size=5).map(
    lambda flat: _nested({key.split(".")[0]: {} for key in flat}, flat))
ANY_KEYS = st.dictionaries(st.sampled_from(SECTIONS) | NAMES, st.dictionaries(NAMES, VALUES, max_size=3) | VALUES,
                           max_size=3)
DOCUMENTS = KNOWN_KEYS | ANY_KEYS
FUZZ = settings(max_examples=100, derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _nested(sections: dict[str, dict[str, Any]], flat: dict[str, Any]) -> dict[str, Any]:
    for key, value in flat.items():
        section, name = key.split(".")
        sections[section][name] = value
    return sections


def well_typed(config: Config) -> None:
    for key, setting in REGISTRY.items():
        value = config.get(key)
        if value is None:
            assert setting.nullable, key
        elif setting.kind is float:
            assert isinstance(value, float) and math.isfinite(value), (key, value)
        elif setting.kind is int:
            assert isinstance(value, int) and not isinstance(value, bool), (key, value)
            assert INT64_MIN <= value <= INT64_MAX, (key, value)
        elif setting.kind is list:
            assert isinstance(value, list) and all(isinstance(v, str) for v in value), (key, value)
        else:
            assert isinstance(value, setting.kind), (key, value)


def outcome(home: Path, **kwargs: Any) -> None:
    env = {"LCM_HOME": str(home), **kwargs.pop("env", {})}
    try:
        config = load_config(project=home.parent, env=env, plugins=PLUGINS, **kwargs)
    except ConfigError as error:
        assert TOKEN not in str(error) and TOKEN[:12] not in str(error), str(error)
        assert "\x1b" not in str(error)
        return
    well_typed(config)


def _home(tmp_path_factory: Any) -> Path:
    """One home for every example of the session (each example writes its own config file over the last)."""
    home: Path = tmp_path_factory.getbasetemp() / "config-fuzz" / "home"
    home.mkdir(parents=True, exist_ok=True)
    return home


def _write(home: Path, text: bytes) -> None:
    (home / "config.toml").write_bytes(text)


@FUZZ
@given(DOCUMENTS)
@example({"compaction": {"context_threshold": math.nan}})
@example({"memory": {"recall_min_score": math.inf}})
@example({"summarizer": {"temperature": -math.inf}})
@example({"compaction": {"fresh_tail_count": 10**300}})
@example({"compaction": {"fresh_tail_count": 2.5}})
@example({"compaction": {"context_threshold": {"nested": {"deeper": [1, "x"]}}}})
@example({"storage": {"backend": TOKEN}})
@example({"daemon": {"port": TOKEN}})
@example({"compaction": {TOKEN: 1}})
@example({TOKEN: 1})
@example({"daemon": {"autostart": datetime(2020, 1, 1, tzinfo=UTC)}, "import": {"workers": date(2020, 1, 1)},
          "memory": {"restore_count": time(1, 2)}})
def test_any_toml_document_gives_a_typed_config_or_config_error(tmp_path_factory: Any,
                                                                document: dict[str, Any]) -> None:
    home = _home(tmp_path_factory)
    _write(home, tomli_w.dumps(document).encode())
    outcome(home)


@FUZZ
@given(st.binary(max_size=120))
@example(b"[compaction]\nfresh_tail_count = " + b"1" * 5000)
@example(b"a = " + b"[" * 5000 + b"]" * 5000)
@example(b"a = " + b"{b=" * 5000 + b"1" + b"}" * 5000)
@example(b"[compaction]\ncontext_threshold = nan\n")
@example(b"\xff\xfe[a]")
@example(b'[prompts]\noverride_dir = "a\\u0000b"\n')
def test_any_bytes_give_a_typed_config_or_config_error(tmp_path_factory: Any, raw: bytes) -> None:
    home = _home(tmp_path_factory)
    _write(home, raw)
    outcome(home)


@FUZZ
@given(st.dictionaries(st.sampled_from(KNOWN) | st.text(max_size=20),
                       st.text(st.characters(codec="utf-8"), max_size=40)
                       | st.sampled_from(["nan", "inf", "-inf", "1e999", "9" * 400, TOKEN]),
                       max_size=4))
def test_any_flags_and_variables_give_a_typed_config_or_config_error(tmp_path_factory: Any,
                                                                     pairs: dict[str, str]) -> None:
    home = _home(tmp_path_factory)
    (home / "config.toml").unlink(missing_ok=True)
    outcome(home, overrides=pairs)
    variables = {REGISTRY.specs[key].env[-1]: value for key, value in pairs.items() if key in REGISTRY}
    outcome(home, env=variables)
