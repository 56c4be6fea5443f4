"""Gitleaks TOML loading (all 222 upstream rules with RE2), packs from configuration, build-time refusals."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from lcm_scrub_gitleaks.loader import load_gitleaks_file, load_gitleaks_toml

from lcm_framework.config import Config
from lcm_framework.errors import ScrubberError
from lcm_framework.kernel.extensions import Allowlist, Rule, RulePack
from lcm_framework.kernel.plugins import Plugins
from lcm_framework.scrub import (
    PIPELINE_VERSION,
    Scrubber,
    app_scrubber,
    build_scrubber,
    format_samples,
    scrubber_from_packs,
)
from tests.conftest import CLAUDE_SESSIONS, GITLEAKS_TOML, shared_testdata

from .corpus import B62, HEX, Gen


@pytest.fixture(scope="module")
def upstream() -> Scrubber:
    return scrubber_from_packs([load_gitleaks_file(shared_testdata(GITLEAKS_TOML), "upstream")])


def test_all_222_upstream_rules_load_and_compile(upstream: Scrubber) -> None:
    import tomllib

    declared = tomllib.loads(GITLEAKS_TOML.read_text())["rules"]
    pack = load_gitleaks_file(GITLEAKS_TOML, "upstream")
    assert len(declared) == len(pack.rules) == 222
    path_only = [r.id for r in pack.rules if not r.regex]
    assert path_only == ["pkcs12-file"]
    assert len(upstream.rules) == 221  # every regex rule compiled with RE2
    assert upstream.path_findings("certs/client.p12") == ["pkcs12-file"]
    assert upstream.path_findings("notes.txt") == []


@pytest.mark.parametrize(
    ("rule_id", "make"),
    [
        ("github-pat", lambda g: "token ghp_" + g.of(B62, 36)),
        ("aws-access-token", lambda g: "AKIA" + g.upper32(16)),
        ("slack-bot-token", lambda g: f"xoxb-{g.of('0123456789', 12)}-{g.of('0123456789', 12)}-{g.of(B62, 24)}"),
        ("stripe-access-token", lambda g: "sk_live_" + g.of(B62, 30)),
        ("gcp-api-key", lambda g: "key=AIza" + g.of(B62 + "_-", 35) + " "),
        ("private-key", lambda g: "-----BEGIN PRIVATE KEY-----\n" + g.of(B62, 80) + "\n-----END PRIVATE KEY-----"),
        ("generic-api-key", lambda g: "api_key = '" + g.of(HEX, 32) + "'"),
        ("anthropic-api-key", lambda g: "sk-ant-api03-" + g.of(B62 + "_-", 93) + "AA"),
    ],
)
def test_upstream_spot_checks(upstream: Scrubber, rule_id: str, make: Callable[[Gen], str]) -> None:
    text = make(Gen(11))
    assert rule_id in {f.rule_id for f in upstream.findings(text)}
    scrubbed, counts = upstream.scrub_text(text)
    assert f"[REDACTED:{rule_id}]" in scrubbed or counts


def test_upstream_allowlists_and_entropy_apply(upstream: Scrubber) -> None:
    # global allowlist regex: a shell variable is not a secret; generic rule stopwords; low entropy
    assert not upstream.findings("api_key = $API_KEY_VALUE")
    assert not upstream.findings("password = 'aaaaaaaaaaaaaaaa'")
    assert not upstream.findings("api_key = 'abcdefghijklmnopqrstuvwxyz1'")  # global stopword
    # keyword gating: the regex would match but no keyword is present
    assert not upstream.findings("sk-proj-" + "x" * 10)


def test_upstream_rules_on_real_sessions_do_not_refuse_records(upstream: Scrubber) -> None:
    from lcm_framework.transcripts.reader import ParsedRecord, read_records

    seen = 0
    for path in sorted(shared_testdata(CLAUDE_SESSIONS).glob("*.jsonl")):
        with path.open("rb") as fp:
            for record in read_records(fp):
                assert isinstance(record, ParsedRecord)
                upstream.scrub_record(record.value)
                seen += 1
    assert seen > 500


def test_real_sessions_pass_the_builtin_pack_untouched(builtin_scrubber: Scrubber) -> None:
    from lcm_framework.transcripts.reader import ParsedRecord, read_records

    for path in sorted(shared_testdata(CLAUDE_SESSIONS).glob("*.jsonl")):
        with path.open("rb") as fp:
            for record in read_records(fp):
                assert isinstance(record, ParsedRecord)
                out = builtin_scrubber.scrub_record(record.value)
                assert out.redactions == {}, (path.name, record.ordinal, out.redactions)


def test_loader_reads_legacy_and_list_allowlists_and_secret_group() -> None:
    pack = load_gitleaks_toml(
        """
[allowlist]
regexes = ['''^ignored''']
[[allowlists]]
stopwords = ["sample"]
[[rules]]
id = "acme"
regex = '''acme_(key)_([0-9a-f]{8})'''
secretGroup = 2
keywords = ["acme_"]
[rules.allowlist]
regexTarget = "line"
regexes = ['''# test fixture''']
[[rules.allowlists]]
condition = "AND"
regexes = ['''^0''']
stopwords = ["0000"]
""",
        "acme",
    )
    assert [a.stopwords for a in pack.allowlists] == [(), ("sample",)]
    [rule] = pack.rules
    assert rule.secret_group == 2 and [a.regex_target for a in rule.allowlists] == ["line", "secret"]
    scrubber = scrubber_from_packs([pack])
    assert scrubber.scrub_text("x acme_key_deadbeef y")[0] == "x acme_key_[REDACTED:acme] y"
    assert scrubber.scrub_text("acme_key_deadbeef # test fixture")[1] == {}  # line allowlist
    assert scrubber.scrub_text("acme_key_00001234")[1] == {}  # AND: both criteria hold
    assert scrubber.scrub_text("acme_key_01234567")[1] == {"acme": 1}  # AND: only one holds


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("[[rules]]\nid = 'x'\nregex = '(unclosed'\n", "not a valid RE2"),
        ("[[rules]]\nid = 'x'\nregex = 'a*'\n", "matches the empty string"),
        ("[[rules]]\nid = 'x'\nregex = '(a)'\nsecretGroup = 3\n", "secretGroup 3"),
        ("[[rules]]\nid = 'bad id!'\nregex = 'abc'\n", "rule id"),
        ("[[rules]]\nid = 'x'\nregex = 'abc'\n[[rules.allowlists]]\nregexTarget = 'file'\n", "regexTarget"),
        ("[[rules]]\nid = 'x'\nregex = 'abc'\nentropy = 'high'\n", "entropy must be a number"),
        ("[[rules]\n", "not valid TOML"),
    ],
)
def test_invalid_gitleaks_files_are_refused(toml: str, message: str) -> None:
    with pytest.raises(ScrubberError, match=message):
        scrubber_from_packs([load_gitleaks_toml(toml, "bad")])


def test_packs_apply_in_sorted_name_order() -> None:
    first = RulePack("a-pack", (Rule(id="first", regex="secret-[0-9]{4}"),))
    second = RulePack("b-pack", (Rule(id="second", regex="secret-[0-9]{4}"),))
    assert scrubber_from_packs([second, first]).scrub_text("secret-1234")[0] == "[REDACTED:first]"


def test_pack_allowlist_applies_only_to_its_pack() -> None:
    allow = (Allowlist(regexes=("^secret-0",)),)
    a = RulePack("a", (Rule(id="a", regex="secret-[0-9]{4}"),), allowlists=allow)
    b = RulePack("b", (Rule(id="b", regex="secret-[0-9]{4}"),))
    assert scrubber_from_packs([a, b]).scrub_text("secret-0123") == ("[REDACTED:b]", {"b": 1})


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_config_patterns_project_file_and_gitleaks_config_become_packs(
    make_config: Callable[..., Config], fresh_plugins: Plugins, project: Path, tmp_path: Path
) -> None:
    _write(project / ".lcm" / "sensitive-patterns.txt", "# comment\n\nproj_[0-9]{6}\n")
    toml = _write(tmp_path / "extra.toml", "[[rules]]\nid = 'corp'\nregex = 'corp-[a-z]{8}'\nkeywords = ['corp-']\n")
    config = make_config(**{"security.sensitive_patterns": "glob_[0-9]{6}", "security.gitleaks_config": str(toml)})
    scrubber = app_scrubber(config, fresh_plugins)
    text, counts = scrubber.scrub_text("a proj_123456 b glob_654321 c corp-abcdefgh")
    assert "123456" not in text and "654321" not in text and "abcdefgh" not in text
    assert counts == {"sensitive-pattern": 2, "corp": 1}
    assert sorted(fresh_plugins.rule_packs(config)) == ["builtin", "gitleaks-config", "sensitive-patterns"]


def test_version_binds_the_effective_rules(
    make_config: Callable[..., Config], plugins: Plugins, project: Path
) -> None:
    from lcm_framework.kernel.plugins import build_plugins

    base = app_scrubber(make_config(), build_plugins(env={})).version
    assert base.startswith(f"lcm-scrub/{PIPELINE_VERSION}:") and len(base.split(":")[1]) == 64
    again = app_scrubber(make_config(), build_plugins(env={})).version
    changed = app_scrubber(make_config(**{"security.sensitive_patterns": "x_[0-9]{9}"}), build_plugins(env={}))
    assert again == base != changed.version


@pytest.mark.parametrize("pattern", ["type", "role", "(?i)assistant", "tool_result", "input_text", "content",
                                     "message", r'"role":"user"', "response_item", "(unclosed", "[z-a]"])
def test_invalid_or_structural_custom_patterns_are_refused_at_build(
    make_config: Callable[..., Config], fresh_plugins: Plugins, pattern: str
) -> None:
    config = make_config(**{"security.sensitive_patterns": pattern})
    with pytest.raises(ScrubberError) as info:
        build_scrubber(config, fresh_plugins, protected_samples=format_samples(fresh_plugins))
    assert "sensitive" in str(info.value) or "representative" in str(info.value)


def test_protected_samples_come_from_both_formats(plugins: Plugins) -> None:
    samples = format_samples(plugins)
    blob = json.dumps(samples)
    for discriminator in ["tool_result", "assistant", "response_item", "input_text"]:
        assert f'"{discriminator}"' in blob


def test_content_patterns_are_accepted(make_config: Callable[..., Config], fresh_plugins: Plugins) -> None:
    config = make_config(**{"security.sensitive_patterns": "internal-[0-9]{4}"})
    scrubber = build_scrubber(config, fresh_plugins, protected_samples=format_samples(fresh_plugins))
    assert scrubber.scrub_text("host internal-2024")[0] == "host [REDACTED:" + scrubber.rules[-1].id + "]"


def test_custom_pattern_never_redacts_inside_markers() -> None:
    pack = RulePack("zz", (Rule(id="red", regex="(?i)redacted|github"),))
    scrubber = scrubber_from_packs([load_gitleaks_file(Path(__file__).parents[2] / "plugins" / "lcm_scrub_gitleaks"
                                                       / "rules" / "builtin.toml", "builtin"), pack])
    text = "ghp_" + Gen(1).of(B62, 36) + " was REDACTED"
    scrubbed, _counts = scrubber.scrub_text(text)
    assert scrubbed == "[REDACTED:github-pat] was [REDACTED:red]"
    out = scrubber.scrub_record({"t": text})
    assert out.canonical_json == '{"t":"[REDACTED:github-pat] was [REDACTED:red]"}'


def test_one_plugin_manager_serves_each_project_its_own_patterns(
    make_config: Callable[..., Config], fresh_plugins: Plugins
) -> None:
    plain = app_scrubber(make_config(), fresh_plugins)
    custom = app_scrubber(make_config(**{"security.sensitive_patterns": "tok_[0-9]{6}"}), fresh_plugins)
    again = app_scrubber(make_config(), fresh_plugins)
    assert custom.scrub_text("tok_123456")[1] == {"sensitive-pattern": 1}
    assert plain.scrub_text("tok_123456")[1] == {} == again.scrub_text("tok_123456")[1]
    assert plain.version == again.version != custom.version


def test_scan_finds_secrets_across_chunks_and_counts_lines(builtin_scrubber: Scrubber, tmp_path: Path) -> None:
    from lcm_scrub_gitleaks.scan import CHUNK, scan_paths

    from .corpus import corpus

    [(_, text, secret)] = [c for c in corpus(8) if c[0] == "github-pat"]
    filler = "x" * 99 + "\n"
    lines = [filler] * (3 * CHUNK // len(filler)) + [text + "\n"] + [filler] * 10 + [text + "\n"]
    (tmp_path / "big.log").write_text("".join(lines))
    report = scan_paths(builtin_scrubber, [tmp_path])
    expected_lines = [3 * CHUNK // len(filler) + 1, 3 * CHUNK // len(filler) + 12]
    assert [(f.rule_id, f.line) for f in report.findings] == [("github-pat", n) for n in expected_lines]
    assert report.bytes == (tmp_path / "big.log").stat().st_size
    assert all(secret not in repr(f) for f in report.findings)
