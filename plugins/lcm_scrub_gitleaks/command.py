"""``lcm sensitive list | add | remove | test | scan | purge``: manage and try the secret scrubber."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lcm_framework.plugin_api import CommandSpec, LcmError, ScrubberError

if TYPE_CHECKING:
    from lcm_framework.plugin_api.app import Host, Plugins
    from lcm_framework.plugin_api.scrub import Scrubber

DESCRIPTION = """\
Every record LCM stores is scrubbed first: secrets matched by the built-in
gitleaks-format rules, the file named by security.gitleaks_config and your
sensitive patterns (RE2 regexes) are replaced by [REDACTED:<rule id>].

Patterns live in <project>/.lcm/sensitive-patterns.txt (one per line) or, with
--global, in the configuration key security.sensitive_patterns. A pattern that
does not compile, or that would redact transcript structure (keys such as
type/role/content or values such as user/assistant), is refused.

  lcm sensitive add 'acme_[0-9a-f]{32}'     redact ACME tokens in this project
  lcm sensitive test 'token acme_0123...'    show what would be redacted
  lcm sensitive scan ~/notes --json          find secrets in files (stores nothing)
  lcm sensitive audit                        find secrets already stored, with today's rules
"""


def configure(parser: argparse.ArgumentParser, plugins: Plugins) -> None:
    from lcm_framework.plugin_api.output import add_json

    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    ls = sub.add_parser("list", help="show custom patterns and the active rule packs")
    add_json(ls)
    add = sub.add_parser("add", help="validate a pattern (RE2) and add it")
    add.add_argument("pattern", help="an RE2 regular expression matching the secret")
    add.add_argument("--global", dest="is_global", action="store_true",
                     help="write security.sensitive_patterns in $LCM_HOME/config.toml")
    rm = sub.add_parser("remove", help="remove a custom pattern (from the project file, or with --global the "
                       "configuration)")
    rm.add_argument("pattern", help="the pattern as `lcm sensitive list` shows it")
    rm.add_argument("--global", dest="is_global", action="store_true", help="remove it from the global config")
    test = sub.add_parser("test", help="show TEXT with every secret redacted and the rules that matched")
    test.add_argument("text", help="the text to scrub (nothing is stored)")
    add_json(test)
    scan = sub.add_parser(
        "scan",
        help="report secrets in files or directories (rule, file, line, column; never the secret)",
        description="Scan files like `gitleaks dir`: nothing is stored; exit status 1 when anything is found. "
        "JSONL files are scanned record by record, other files in chunks of about 100 KB.",
    )
    scan.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="files or directories to scan")
    scan.add_argument("--gitleaks-config", type=Path, metavar="FILE",
                      help="scan with this gitleaks TOML's rules only (like gitleaks --config)")
    add_json(scan)
    audit = sub.add_parser(
        "audit",
        help="scan every stored text (messages, parts, summaries, large-file references, memories, surfacing "
             "queries, native records) with the current rules",
        description="Report rule, record kind, record id, field, line and column of every match in what this "
        "project stores (never the secret); exit status 1 when anything is found. The rules digest is "
        "recorded so `lcm doctor` can say when the rules changed since. With --all-projects every project of "
        "the backend is audited with the rules in effect here.",
    )
    audit.add_argument("--all-projects", action="store_true", help="audit every project of the storage backend")
    add_json(audit)
    purge = sub.add_parser("purge", help="delete the project's custom patterns and its redaction counters")
    purge.add_argument("--yes", action="store_true", help="really delete")


def _scrubber(app: Host) -> Scrubber:
    from lcm_framework.plugin_api.scrub import app_scrubber

    return app_scrubber(app.config, app.plugins)


def _list(args: argparse.Namespace, app: Host) -> int:
    from lcm_framework.plugin_api.output import print_json, print_table

    from .custom import project_patterns_file, read_patterns, rule_id

    project_file = project_patterns_file(app.config.project_root)
    rows = [(rule_id(p), "global", p) for p in app.config.get("security.sensitive_patterns") or []]
    rows += [(rule_id(p), "project", p) for p in read_patterns(project_file)]
    pack_rows: list[tuple[str, int, str]] = []
    try:  # listing must work even when the rule set is refused: that is how one finds out why
        packs = app.plugins.rule_packs(app.config)
        pack_rows = [(name, len(packs[name].rules), packs[name].source) for name in sorted(packs)]
        version, problem = _scrubber(app).version, None
    except ScrubberError as exc:
        version, problem = None, str(exc)
    if args.json:
        print_json({
            "patterns": [{"rule_id": r, "scope": s, "pattern": p} for r, s, p in rows],
            "project_file": str(project_file),
            "rule_packs": [{"name": n, "rules": c, "source": s} for n, c, s in pack_rows],
            "scrubber_version": version,
            "error": problem,
        })
        return 0
    if rows:
        print_table(rows, ["rule", "scope", "pattern"])
    else:
        print(f"no custom patterns (project file: {project_file})")
    print()
    if pack_rows:
        print_table(pack_rows, ["rule pack", "rules", "source"])
        print()
    print(f"scrubber: {version}" if version else f"refused: {problem}\nLCM stores nothing until this is fixed.")
    return 0


def _validate(app: Host, pattern: str) -> str:
    """Refuse a pattern that does not compile or would redact transcript structure; return its rule id."""
    from lcm_framework.plugin_api import Rule, RulePack
    from lcm_framework.plugin_api.scrub import format_samples, scrubber_from_packs

    from .custom import CATEGORY, PACK_NAME, rule_id

    if not pattern.strip():
        raise LcmError("the pattern is empty")
    rule = Rule(id=rule_id(pattern), regex=pattern, description="the new pattern", category=CATEGORY)
    scrubber_from_packs([RulePack(PACK_NAME, (rule,))], protected_samples=format_samples(app.plugins))
    return rule.id


def _global_patterns(app: Host) -> list[str]:
    from lcm_framework.plugin_api.app import read_config_file

    return list(read_config_file(app.config.global_file, app.config.settings).get("security.sensitive_patterns") or [])


def _add(args: argparse.Namespace, app: Host) -> int:
    from .custom import project_patterns_file, read_patterns, write_patterns

    rid = _validate(app, args.pattern)
    if args.is_global:
        from lcm_framework.plugin_api.app import set_config_key as set_key

        current = _global_patterns(app)
        if args.pattern not in current:
            set_key(app.config.global_file, "security.sensitive_patterns", [*current, args.pattern])
        print(f"added {rid} to security.sensitive_patterns in {app.config.global_file}")
        return 0
    path = project_patterns_file(app.config.project_root)
    current = read_patterns(path)
    if args.pattern not in current:
        write_patterns(path, [*current, args.pattern])
    print(f"added {rid} to {path}")
    return 0


def _remove(args: argparse.Namespace, app: Host) -> int:
    from .custom import project_patterns_file, read_patterns, rule_id, write_patterns

    rid = rule_id(args.pattern)
    if args.is_global:
        from lcm_framework.plugin_api.app import set_config_key as set_key

        current = _global_patterns(app)
        if args.pattern not in current:
            raise LcmError(f"pattern {rid} is not in security.sensitive_patterns of {app.config.global_file}")
        remaining = [p for p in current if p != args.pattern]
        set_key(app.config.global_file, "security.sensitive_patterns", remaining or None)
        print(f"removed {rid} from {app.config.global_file}")
        return 0
    path = project_patterns_file(app.config.project_root)
    current = read_patterns(path)
    if args.pattern not in current:
        raise LcmError(f"pattern {rid} is not in {path} (use --global for the global configuration)")
    write_patterns(path, [p for p in current if p != args.pattern])
    print(f"removed {rid} from {path}")
    return 0


def _test(args: argparse.Namespace, app: Host) -> int:
    from lcm_framework.plugin_api.output import print_json

    scrubber = _scrubber(app)
    redacted, counts = scrubber.scrub_text(args.text)
    matched = sorted({f.rule_id for f in scrubber.findings(args.text)})
    if args.json:
        print_json({"redacted": redacted, "rules": matched, "redactions": counts})
        return 0
    print(redacted)
    if matched:
        print("matched: " + ", ".join(matched))
    else:
        print("no rule matched")
    return 0


def _scan(args: argparse.Namespace, app: Host) -> int:
    from lcm_framework.plugin_api.output import print_json, print_table

    from .scan import scan_paths

    if args.gitleaks_config is not None:
        from lcm_framework.plugin_api.scrub import scrubber_from_packs

        from .loader import load_gitleaks_file

        scrubber = scrubber_from_packs([load_gitleaks_file(args.gitleaks_config, "gitleaks-config")])
    else:
        scrubber = _scrubber(app)
    report = scan_paths(scrubber, args.paths)
    rows: list[dict[str, Any]] = [
        {"rule_id": f.rule_id, "file": str(f.file), "line": f.line, "column": f.column} for f in report.findings
    ]
    if args.json:
        print_json({"findings": rows, "files_scanned": report.files, "bytes_scanned": report.bytes,
                    "skipped_binary": report.skipped})
    elif rows:
        print_table([(r["rule_id"], r["file"], r["line"], r["column"]) for r in rows],
                    ["rule", "file", "line", "column"])
    if not args.json:
        print(f"{len(rows)} finding(s) in {report.files} file(s), {report.bytes} bytes scanned"
              + (f", {report.skipped} binary file(s) skipped" if report.skipped else ""))
    return 1 if rows else 0


def _audit(args: argparse.Namespace, app: Host) -> int:
    from lcm_framework.plugin_api.output import print_json, print_table
    from lcm_framework.plugin_api.scrub import record_audit

    from .audit import audit_project

    scrubber = _scrubber(app)
    refs = app.storage.list_projects() if args.all_projects else [app.project_ref()]
    projects: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    for ref in refs:
        storage = app.storage.open_existing_project(ref)  # an audit only reads: it creates no project
        if storage is None:
            projects.append({"project_id": ref.project_id, "root": ref.root, "findings": 0, "scanned": {}})
            continue
        try:
            report = audit_project(storage, scrubber)
        finally:
            storage.close()
        record_audit(app.config.home, ref.project_id, scrubber.digest, len(report.findings))
        projects.append({"project_id": ref.project_id, "root": ref.root, "findings": len(report.findings),
                         "scanned": dict(sorted(report.scanned.items()))})
        rows += [{"project_id": ref.project_id, "rule_id": f.rule_id, "kind": f.kind, "record_id": f.record_id,
                  "field": f.field, "line": f.line, "column": f.column} for f in report.findings]
    if args.json:
        print_json({"rules_digest": scrubber.digest, "projects": projects, "findings": rows})
    else:
        if rows:
            print_table([(r["rule_id"], r["kind"], r["record_id"], r["field"], f"{r['line']}:{r['column']}")
                         + ((r["project_id"][:12],) if args.all_projects else ()) for r in rows],
                        ["rule", "kind", "record", "field", "line:col"] + (["project"] if args.all_projects else []))
        for p in projects:
            scanned = ", ".join(f"{n} {kind}(s)" for kind, n in p["scanned"].items()) or "nothing stored"
            print(f"{p['findings']} finding(s) in {p['root']} ({scanned})")
        if rows:
            print("see docs/scrubbing.md (Handling a finding): rotate the credential first")
    return 1 if rows else 0


def _purge(args: argparse.Namespace, app: Host) -> int:
    from .custom import project_patterns_file

    path = project_patterns_file(app.config.project_root)
    if not args.yes:
        raise LcmError(
            f"purge deletes {path} and this project's redaction counters and repository-owned state "
            "(promoted memory, recall); run again with --yes"
        )
    with app.project() as storage:
        storage.redaction_admin.purge()
    removed = path.is_file()
    path.unlink(missing_ok=True)
    print(("removed " + str(path)) if removed else "no project patterns file")
    print("purged the project's redaction counters and repository-owned state")
    return 0


ACTIONS = {
    "list": _list, "add": _add, "remove": _remove, "test": _test, "scan": _scan, "audit": _audit, "purge": _purge,
}


def run(args: argparse.Namespace, app: Host) -> int:
    return ACTIONS[args.action](args, app)


COMMAND = CommandSpec(
    name="sensitive",
    help="manage sensitive patterns; test, scan and audit for secrets",
    description=DESCRIPTION,
    configure=configure,
    run=run,
)
