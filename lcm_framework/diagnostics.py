"""Checks and snapshots behind ``lcm doctor``, ``lcm status`` and ``lcm stats`` (the core never prints).

Every check is observational: it reads configuration, plugin load results,
storage health, agent configuration files, the daemon's ``/health`` and the
outbox backlog. Secrets are never returned: a credential check says only
which variable is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import LcmError

if TYPE_CHECKING:
    from .agents.contracts import AgentIntegration
    from .app import App
    from .transcripts.contracts import TranscriptFormat

OK, WARN, FAIL, SKIP = "ok", "warn", "fail", "skip"


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    status: str  # ok | warn | fail | skip
    detail: str
    fix: str | None = None
    data: Mapping[str, Any] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return self.status == FAIL


def run_checks(app: App, env: Mapping[str, str]) -> list[Check]:
    checks: list[Callable[[App, Mapping[str, str]], Check | list[Check]]] = [
        check_config, check_plugins, check_scrubber, check_storage, check_integrity, check_scrub_audit,
        check_summarizer,
        check_agents, check_daemon, check_outbox, check_sync, check_free_space,
    ]
    results: list[Check] = []
    for fn in checks:
        try:
            found = fn(app, env)
        except LcmError as exc:
            found = Check(fn.__name__.removeprefix("check_"), FAIL, str(exc))
        except Exception as exc:  # a diagnostic must report, not crash
            found = Check(fn.__name__.removeprefix("check_"), FAIL, f"check crashed: {type(exc).__name__}: {exc}")
        results.extend(found if isinstance(found, list) else [found])
    return results


def check_config(app: App, env: Mapping[str, str]) -> Check:
    config = app.config
    files = [str(p) for p in (config.global_file, config.project_file) if p.is_file()]
    detail = "valid" + (f" ({', '.join(files)})" if files else " (defaults; no config file)")
    return Check("config", OK, detail, data={"files": files, "project_root": str(config.project_root)})


def check_plugins(app: App, env: Mapping[str, str]) -> Check:
    failures = app.plugins.failures
    loaded = sorted(app.plugins.infos)
    if failures:
        names = ", ".join(f"{f.name} ({f.error})" for f in failures)
        disable = ",".join(f.name for f in failures)
        return Check("plugins", FAIL, f"failed to load: {names}",
                     fix=f"reinstall the distribution(s), or disable them: export LCM_DISABLE_PLUGINS={disable}",
                     data={"loaded": loaded, "failed": [f.name for f in failures]})
    return Check("plugins", OK, f"{len(loaded)} loaded", data={"loaded": loaded})


def check_storage(app: App, env: Mapping[str, str]) -> Check:
    backend = str(app.config.get("storage.backend"))
    fix = "check storage.backend and its backend plugin's settings: lcm config list (the owner column)"
    try:
        factory_health = app.storage.health()
        with app.existing_project() as project:
            project_health = project.health() if project is not None else None
    except LcmError as exc:
        return Check("storage", FAIL, f"{backend}: {exc}", fix=fix)
    if project_health is None and factory_health.ok:
        return Check("storage", OK, f"{backend}: reachable; nothing stored for this project yet",
                     data={"backend": backend, "state": "absent"})
    if not (factory_health.ok and project_health and project_health.ok):
        bad = project_health if factory_health.ok and project_health else factory_health
        return Check("storage", FAIL, f"{backend}: {bad.state}" + (f" ({bad.detail})" if bad.detail else ""),
                     fix=fix)
    return Check("storage", OK, f"{backend}: reachable, project opened and migrated",
                 data={"backend": backend, "state": project_health.state})


INTEGRITY_FIXES = {
    "project": "move the damaged database aside (the path above) and run `lcm import`: the agents' transcripts "
               "are the source of truth and are re-imported exactly",
    "outbox": "move outbox.db aside; hooks create a new one, and `lcm import` picks up what undelivered events "
              "had pointed to",
    "quarantine": "delete the damaged quarantine file; the next `lcm import` records what it rejects again",
}


def integrity_report(app: App) -> list[dict[str, Any]]:
    """``quick_check`` of every store: project databases (through the backend), the outbox, the quarantines."""
    from .ingest.quarantine import quarantine_root
    from .outbox import outbox_path
    from .sqlite_files import quick_check

    found: list[dict[str, Any]] = [
        {"store": "project", "project_id": h.project, "state": h.state, "detail": h.detail}
        for h in app.storage.check_integrity()]
    home = app.config.home
    local = [("outbox", outbox_path(home))] + [("quarantine", p) for p in sorted(quarantine_root(home).glob("*/*.db"))]
    for store, path in local:
        if path.is_file():
            state, detail = quick_check(path, 2.0)
            found.append({"store": store, "path": str(path), "state": state, "detail": f"{detail} ({path})"})
    return found


def check_integrity(app: App, env: Mapping[str, str]) -> list[Check]:
    report = integrity_report(app)
    bad = [r for r in report if r["state"] != "ok"]
    if not bad:
        return [Check("integrity", OK, f"{len(report)} database(s) pass quick_check", data={"checked": len(report)})]
    return [Check("integrity", FAIL if r["state"] == "corrupt" else WARN, f"{r['store']}: {r['detail']}",
                  fix=INTEGRITY_FIXES[r["store"]], data=r) for r in bad]


def check_scrubber(app: App, env: Mapping[str, str]) -> Check:
    """FAIL when the rule set cannot be built: then every write refuses (import, hooks, memories)."""
    from .errors import ScrubberError
    from .scrub.gate import project_scrubber

    try:
        scrubber = project_scrubber(app)
    except ScrubberError as exc:
        return Check("scrubber", FAIL, f"{exc}; nothing is stored (hook events wait in the outbox)",
                     fix="fix the file, rule or plugin the error names (`lcm sensitive list` shows the rule set)")
    packs = sorted({rule.pack for rule in scrubber.rules})
    return Check("scrubber", OK, f"{len(scrubber.rules)} rules ({', '.join(packs)})",
                 data={"version": scrubber.version, "packs": packs})


def check_scrub_audit(app: App, env: Mapping[str, str]) -> Check:
    """WARN when this project holds data and no ``lcm sensitive audit`` with today's rules found it clean."""
    from .errors import ScrubberError
    from .scrub.audit_marks import last_audit
    from .scrub.gate import project_scrubber

    try:
        digest = project_scrubber(app).digest
    except ScrubberError:
        return Check("sensitive_audit", SKIP, "the scrubber is unavailable (see the scrubber check)")
    with app.existing_project() as project:
        stats, project_id = (project.stats(), project.project_id) if project is not None else (None, "")
    data = {"rules_digest": digest}
    if stats is None or (not stats.messages and not sum(stats.summaries_by_depth.values())):
        return Check("sensitive_audit", OK, "nothing stored yet", data=data)
    mark = last_audit(app.config.home, project_id)
    if mark is not None and mark.digest == digest:
        detail = f"stored data audited with the current rules ({mark.audited_at})"
        if mark.findings:
            return Check("sensitive_audit", WARN, f"{detail}: {mark.findings} finding(s) still stored",
                         fix="lcm sensitive audit (see docs/scrubbing.md, Handling a finding)", data=data)
        return Check("sensitive_audit", OK, f"{detail}: no finding", data={**data, "audited_at": mark.audited_at})
    why = "no audit recorded" if mark is None else f"the rules changed since the audit of {mark.audited_at}"
    return Check("sensitive_audit", WARN, f"an audit of stored data is due: {why}", fix="lcm sensitive audit",
                 data=data)


def check_summarizer(app: App, env: Mapping[str, str]) -> Check:
    """The chosen summarizer starts; one with a ``readiness(env)`` method (``summarize.contracts.Readiness``)
    also says whether its credentials are in place."""
    try:
        name = app.summarizer_name
        summarizer = app.summarizer()
    except LcmError as exc:
        return Check("summarizer", FAIL, str(exc), fix="lcm config set summarizer.provider extractive")
    readiness = getattr(summarizer, "readiness", None)
    if readiness is None:
        return Check("summarizer", OK, f"{name} (offline, needs no credentials)", data={"provider": name})
    found = readiness(env)
    return Check("summarizer", found.status, found.detail, fix=found.fix, data=dict(found.data))


def check_agents(app: App, env: Mapping[str, str]) -> list[Check]:
    """One check per registered agent integration (skipped when the agent is not set up here)."""
    from .agents.registry import registered

    formats = app.plugins.formats()
    return [_agent_check(name, agent, formats, env) for name, agent in registered(app.plugins).items()]


def _agent_check(name: str, agent: AgentIntegration, formats: Mapping[str, TranscriptFormat],
                 env: Mapping[str, str]) -> Check:
    check, label = f"{name}_hooks", agent.display_name
    if not agent.present(env):
        return Check(check, SKIP, f"{label} not installed (no {agent.config_dir(env)}, not on PATH)")
    status = agent.status(env)
    missing = sorted(e.agent_event for e in agent.events if e.event not in status.hooks)
    problems = [f"hooks missing: {', '.join(missing)}"] if missing else []
    problems += [] if status.mcp else ["MCP missing"]
    if not missing:
        problems += status.problems  # e.g. hooks the agent does not trust
    readable = [formats[f] for f in agent.transcript_formats if f in formats]
    data = {"config_dir": str(agent.config_dir(env)),
            "transcript_roots": sorted({str(root) for fmt in readable for root in fmt.default_roots(env)})}
    if problems:
        return Check(check, FAIL, f"{label}: {'; '.join(problems)}", fix=f"lcm install {name}", data=data)
    if len(readable) < len(agent.transcript_formats):
        unread = ", ".join(f for f in agent.transcript_formats if f not in formats)
        return Check(check, FAIL, f"{label}: no plugin reads its transcripts ({unread})",
                     fix="install the plugin of that format where lcm and its daemon run", data=data)
    return Check(check, OK, f"{label}: hooks and MCP server installed", data=data)


def check_daemon(app: App, env: Mapping[str, str]) -> Check:
    from .daemon_client.lifecycle import state

    port = int(app.config.get("daemon.port"))
    found = state(app.config.home, port)
    if found.healthy:
        return Check("daemon", OK, f"running on 127.0.0.1:{port}" + (f" (pid {found.pid})" if found.pid else ""),
                     data={"port": port, "pid": found.pid})
    status = WARN if app.config.get("daemon.autostart") else FAIL
    detail = f"not answering on 127.0.0.1:{port}" + (" (hooks will start it)" if status == WARN else "")
    return Check("daemon", status, detail, fix="lcm daemon start", data={"port": port})


def check_outbox(app: App, env: Mapping[str, str]) -> Check:
    from .outbox import read_backlog

    backlog = read_backlog(app.config.home)
    if backlog is None or backlog.pending == 0:
        return Check("outbox", OK, "empty", data={"pending": 0})
    data = {"pending": backlog.pending, "failing": backlog.failing, "last_error": backlog.last_error}
    if backlog.failing:
        return Check("outbox", FAIL, f"{backlog.pending} event(s) waiting, {backlog.failing} failing "
                     f"(last error: {backlog.last_error})", fix="lcm daemon start (then: lcm status)", data=data)
    return Check("outbox", WARN, f"{backlog.pending} event(s) waiting for the daemon", fix="lcm daemon start",
                 data=data)


def check_sync(app: App, env: Mapping[str, str]) -> Check:
    """Team sync (PostgreSQL inbox): a stuck or growing backlog, or quarantined events, is a warning."""
    from .sync.status import summary

    found = summary(app)
    verdict, detail = found["verdict"], found["detail"]
    if verdict == "solo":
        return Check("sync", OK, "local only (the backend has no inbox)", data=found)
    if verdict in ("stuck", "growing", "unavailable"):
        return Check("sync", WARN, f"backlog {verdict}: {detail}", fix="lcm sync status; lcm sync drain",
                     data=found)
    if found.get("quarantined"):
        return Check("sync", WARN, f"{found['quarantined']} event(s) quarantined; {detail}",
                     fix="lcm sync quarantine list, then lcm sync replay ID", data=found)
    return Check("sync", OK, detail, data=found)


def project_stats(app: App) -> list[dict[str, Any]]:
    """Per project: counts, summaries by depth, compression ratio, size, redactions."""
    rows = []
    for ref in app.storage.list_projects():
        project = app.storage.open_project(ref)
        try:
            stats = project.stats()
        finally:
            project.close()
        ratio = round(stats.message_tokens / stats.context_tokens, 2) if stats.context_tokens else None
        rows.append({
            "project_id": ref.project_id,
            "root": ref.root,
            "conversations": stats.conversations,
            "subagent_conversations": stats.subagent_conversations,
            "messages": stats.messages,
            "summaries_by_depth": {str(k): v for k, v in sorted(stats.summaries_by_depth.items())},
            "message_tokens": stats.message_tokens,
            "context_tokens": stats.context_tokens,
            "compression_ratio": ratio,
            "large_files": stats.large_files,
            "storage_bytes": stats.storage_bytes,
            "redactions": dict(sorted(stats.redactions.items())),
        })
    return rows


def storage_report(app: App, current_only: bool = False, payloads: bool = True) -> list[dict[str, Any]]:
    """Per project: bytes per table and index, per stored message and per transcript byte, compression
    (``payloads``: read every payload for the compression figures)."""
    rows = []
    refs = [app.project_ref()] if current_only else app.storage.list_projects()
    for ref in refs:
        project = app.storage.open_existing_project(ref)
        if project is None:  # the current project, when nothing is stored for it yet
            continue
        try:
            usage = project.storage_usage(payloads=payloads)
        finally:
            project.close()
        rows.append({
            "project_id": ref.project_id, "root": ref.root, "total_bytes": usage.total_bytes,
            "free_bytes": usage.free_bytes, "objects": dict(usage.objects), "shared_objects": usage.shared,
            "messages": usage.messages, "transcript_bytes": usage.transcript_bytes,
            "bytes_per_message": round(usage.total_bytes / usage.messages) if usage.messages else None,
            "bytes_per_transcript_byte": (round(usage.total_bytes / usage.transcript_bytes, 3)
                                          if usage.transcript_bytes and not usage.shared else None),
            "payload_bytes": usage.payload_bytes, "stored_payload_bytes": usage.stored_payload_bytes,
            "compression_saved_bytes": usage.payload_bytes - usage.stored_payload_bytes,
        })
    return rows


FREE_SPACE_SHARE = 0.25
FREE_SPACE_MIN_BYTES = 16 * 2**20


def check_free_space(app: App, env: Mapping[str, str]) -> Check:
    """WARN when a project database holds much reclaimable space."""
    wasteful = [r for r in storage_report(app, payloads=False)
                if r["free_bytes"] >= FREE_SPACE_MIN_BYTES and r["free_bytes"] >= FREE_SPACE_SHARE * r["total_bytes"]]
    if not wasteful:
        return Check("free_space", OK, "no database holds much reclaimable space")
    names = ", ".join(f"{r['root']} ({r['free_bytes'] // 2**20} MiB free)" for r in wasteful)
    return Check("free_space", WARN, f"reclaimable space in {names}", fix="lcm vacuum --all-projects",
                 data={"projects": [r["project_id"] for r in wasteful]})


def status_snapshot(app: App) -> dict[str, Any]:
    """One screen: daemon, backend, projects, outbox backlog."""
    from .daemon_client.lifecycle import state
    from .outbox import backlog_report
    from .sync.status import summary as sync_summary

    port = int(app.config.get("daemon.port"))
    daemon = state(app.config.home, port)
    backend: dict[str, Any] = {"name": str(app.config.get("storage.backend"))}
    projects: list[dict[str, str]] = []
    try:
        health = app.storage.health()
        backend.update(ok=health.ok, state=health.state)
        projects = [{"project_id": p.project_id, "root": p.root} for p in app.storage.list_projects()]
    except LcmError as exc:
        backend.update(ok=False, state="unavailable", detail=str(exc))
    outbox = backlog_report(app.config.home) or {"pending": 0, "failing": 0, "processed": 0}
    try:
        checked = integrity_report(app)
        integrity: dict[str, Any] = {"ok": all(r["state"] == "ok" for r in checked), "checked": len(checked),
                                     "damaged": [r for r in checked if r["state"] != "ok"]}
    except LcmError as exc:
        integrity = {"ok": False, "error": str(exc)}
    return {
        "daemon": {"running": daemon.healthy, "pid": daemon.pid, "port": port},
        "backend": backend,
        "projects": projects,
        "current_project": str(app.config.project_root),
        "outbox": outbox,
        "sync": sync_summary(app),
        "integrity": integrity,
    }
