"""Sub-agent runs become conversations of their own, linked to the session and tool call that started them."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from lcm_framework.daemon import operations
from lcm_framework.ingest import import_sources, ingest_file
from lcm_framework.recall import grep, verify
from lcm_framework.storage.contracts import ProjectStorage
from lcm_framework.storage.models import SearchMode, SubagentLink
from tests.conftest import CLAUDE_SESSIONS, run_lcm, shared_testdata

from .subagent_layouts import (
    CWD,
    SESSION,
    Chain,
    codex_pair,
    current_layout,
    in_file_sidechains,
    older_layout,
    parent_session,
    project_dir,
    run_records,
    write_jsonl,
)
from .support import make_app

FINDINGS = {"a1b2c3d": "reading the lexer tables", "e4f5a6b": "tracing the checkout flow"}


def _links(st: ProjectStorage) -> dict[str, SubagentLink]:
    """Each link by its run's session id."""
    found = {}
    for link in st.conversations.list_subagent_links():
        child = st.conversations.get_conversation(link.child_conversation_id)
        assert child is not None
        found[child.session_id] = link
    return found


def _calls(st: ProjectStorage, link: SubagentLink) -> set[str]:
    assert link.parent_message_id is not None
    parts = st.conversations.list_parts([link.parent_message_id]).get(link.parent_message_id, [])
    return {p.tool_call_id for p in parts if p.tool_call_id}


def _texts(st: ProjectStorage, conversation_id: int) -> list[str]:
    return [m.content for m in st.conversations.list_messages(conversation_id)]


def test_current_layout_imports_every_run_linked_and_reimports_idempotently(tmp_path: Path) -> None:
    current_layout(tmp_path / "claude", FINDINGS)
    app = make_app(tmp_path / "here")
    try:
        report = import_sources(app, [project_dir(tmp_path / "claude")])
        assert report.errors == [] and report.files == 3
        with app.project(CWD) as st:
            links = _links(st)
            assert set(links) == {f"{SESSION}/agent-{aid}" for aid in FINDINGS}
            (parent,) = st.conversations.find_conversations(SESSION)
            for aid, finding in FINDINGS.items():
                link = links[f"{SESSION}/agent-{aid}"]
                assert (link.parent_session_id, link.agent_id, link.agent_type) == (SESSION, aid, "Explore")
                assert (link.parent_conversation_id, link.tool_call_id) == (parent.conversation_id, f"toolu_task_{aid}")
                assert link.tool_call_id in _calls(st, link)  # the parent message holding the call
                texts = _texts(st, link.child_conversation_id)
                assert texts[0] == f"Survey part {aid} of the repository" and len(texts) == 4
                assert any(finding in t for t in texts)
            assert [m.seq for m in st.conversations.list_messages(parent.conversation_id)] == list(range(6))
            assert verify(st).ok and st.stats().subagent_conversations == 2
            touched = {c.session_id: c.new_messages for c in report.conversations}
            assert touched == {SESSION: 6, **{f"{SESSION}/agent-{aid}": 4 for aid in FINDINGS}}
            before = (links, st.stats())
        again = import_sources(app, [project_dir(tmp_path / "claude")])
        assert (again.stored, again.messages, again.errors) == (0, 0, [])
        with app.project(CWD) as st:
            assert (_links(st), st.stats()) == before
    finally:
        app.close()


def test_recall_searches_runs_by_default_and_names_where_they_came_from(tmp_path: Path) -> None:
    current_layout(tmp_path / "claude", FINDINGS)
    app = make_app(tmp_path / "here")
    try:
        import_sources(app, [project_dir(tmp_path / "claude")])
        with app.project(CWD) as st:
            result = grep(st, "reading the lexer tables", mode=SearchMode.SUBSTRING)
            hits = [h for g in result.groups for h in g.hits]
            assert len(hits) == 2  # "Let me start by ..." and "Found main0.py: ..."
            for hit in hits:
                assert hit.subagent is not None
                assert (hit.subagent.parent_session_id, hit.subagent.tool_call_id, hit.subagent.agent_id) == \
                    (SESSION, "toolu_task_a1b2c3d", "a1b2c3d")
            assert grep(st, "reading the lexer tables", mode=SearchMode.SUBSTRING, include_subagents=False).total == 0
            (parent,) = st.conversations.find_conversations(SESSION)
            scoped = grep(st, "lexer", conversation_ids=[parent.conversation_id])  # a session includes its runs
            assert scoped.total == 2
            assert grep(st, "lexer", conversation_ids=[parent.conversation_id], include_subagents=False).total == 0
    finally:
        app.close()


def test_a_run_written_after_its_parent_was_imported_is_linked_when_the_hook_brings_it(tmp_path: Path) -> None:
    calls = [("toolu_task_a1b2c3d", "Survey part a1b2c3d of the repository", "a1b2c3d")]
    session = write_jsonl(project_dir(tmp_path / "claude") / f"{SESSION}.jsonl", parent_session(calls, tool="Agent"))
    app = make_app(tmp_path / "here")
    try:  # the hooks import into the project of the agent's working directory: here
        assert "subagent_files" not in operations.ingest(app, session)
        with app.project() as st:
            assert st.conversations.list_subagent_links() == []
        _, files = current_layout(tmp_path / "claude", {"a1b2c3d": "reading the lexer tables"}, parent=False)
        done = operations.ingest(app, session)  # what Stop / SubagentStop / SessionStart run
        assert [Path(r["path"]).name for r in done["subagent_files"]] == ["agent-a1b2c3d.jsonl"]
        with app.project() as st:
            (link,) = st.conversations.list_subagent_links()
            assert link.tool_call_id == "toolu_task_a1b2c3d" and link.agent_type == "Explore"
        again = operations.ingest(app, session, extra=[files["a1b2c3d"]])  # named by SubagentStop too: once
        assert [r["status"] for r in again["subagent_files"]] == ["unchanged"]
    finally:
        app.close()


def test_a_parent_imported_after_its_run_completes_the_link(tmp_path: Path) -> None:
    session, files = current_layout(tmp_path / "claude", FINDINGS)
    app = make_app(tmp_path / "here")
    try:
        for path in files.values():
            assert ingest_file(app, path).ok
        with app.project(CWD) as st:  # the meta files name the calls; the parent's messages are not there yet
            assert {link.parent_message_id for link in st.conversations.list_subagent_links()} == {None}
            assert verify(st).ok
        assert ingest_file(app, session).ok
        with app.project(CWD) as st:
            links = st.conversations.list_subagent_links()
            assert {link.tool_call_id for link in links} == {f"toolu_task_{aid}" for aid in FINDINGS}
            assert all(link.tool_call_id in _calls(st, link) for link in links)
            assert verify(st).ok
    finally:
        app.close()


def test_each_parent_message_is_read_once_however_many_runs_it_started(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A long session with many runs: finding each run's call reads the parent's stored parts once in all,
    not once per run (which made linking quadratic in the session's length)."""
    runs, work = 20, 15
    calls = [(f"toolu_task_{aid}", f"Survey part {aid}", aid) for aid in (f"a{n:06x}" for n in range(runs))]
    folder = project_dir(tmp_path / "claude")
    write_jsonl(folder / f"{SESSION}.jsonl", parent_session(calls, tool="Agent", work=work))
    for n, (_call, prompt, aid) in enumerate(calls):
        write_jsonl(folder / SESSION / "subagents" / f"agent-{aid}.jsonl",
                    run_records(Chain(sidechain=True, agent_id=aid, start=100 * (n + 1)), prompt, f"part {n}", n))
    app = make_app(tmp_path / "here")
    fmt = app.plugins.formats()["claude-code/claude-jsonl/v1"]
    asked = []
    spawn = type(fmt).spawn
    monkeypatch.setattr(type(fmt), "spawn", lambda self, part: asked.append(part) or spawn(self, part))
    try:
        report = import_sources(app, [folder], workers=1)
        assert report.errors == []
        with app.project(CWD) as st:
            links = st.conversations.list_subagent_links()
            assert len(links) == runs and all(link.parent_message_id is not None for link in links)
            parts = sum(len(v) for c in st.conversations.list_conversations()
                        for v in st.conversations.list_parts(
                            [m.message_id for m in st.conversations.list_messages(c.conversation_id)]).values())
        assert parts > 2 * runs * work  # the parent is the bulk of what is stored
        assert len(asked) <= 2 * parts  # each stored part: once as it is stored, at most once as a parent's
    finally:
        app.close()


@pytest.mark.parametrize("parent_first", [True, False])
def test_the_meta_file_names_the_call(tmp_path: Path, parent_first: bool) -> None:
    session, files = current_layout(tmp_path / "claude", FINDINGS, only_meta_names_the_call=True)
    app = make_app(tmp_path / "here")
    try:
        order = [session, *files.values()] if parent_first else [*files.values(), session]
        assert all(ingest_file(app, path).ok for path in order)
        with app.project(CWD) as st:
            for aid in FINDINGS:
                link = _links(st)[f"{SESSION}/agent-{aid}"]
                assert link.tool_call_id == f"toolu_task_{aid}" and link.tool_call_id in _calls(st, link)
            assert verify(st).ok
    finally:
        app.close()


def test_older_agent_files_are_linked_by_the_prompt_they_were_given(tmp_path: Path) -> None:
    session, agent = older_layout(tmp_path / "claude", "7f3e", "listing the npm scripts")
    app = make_app(tmp_path / "here")
    try:
        assert import_sources(app, [session, agent]).errors == []
        with app.project(CWD) as st:
            link = _links(st)[f"{SESSION}/agent-7f3e"]
            assert (link.agent_id, link.tool_call_id, link.agent_type) == ("7f3e", "toolu_old", "Explore")
    finally:
        app.close()


def test_in_file_sidechains_are_runs_of_their_own_even_interleaved(tmp_path: Path) -> None:
    records = in_file_sidechains("Count the TODOs", ["walking the src tree", "grepping the tests"])
    path = write_jsonl(project_dir(tmp_path / "claude") / f"{SESSION}.jsonl", records[:-3])
    app = make_app(tmp_path / "here")
    try:
        assert ingest_file(app, path).ok
        write_jsonl(path, records)  # the file grows: the rest is read on resume
        assert ingest_file(app, path).ok
        with app.project(CWD) as st:
            links = _links(st)
            runs = sorted(links.values(), key=lambda link: link.child_conversation_id)
            assert len(runs) == 2 and all(s.startswith(f"{SESSION}/sidechain-") for s in links)
            assert {link.tool_call_id for link in runs} == {"toolu_par_0", "toolu_par_1"}  # same prompt, two calls
            found = [_texts(st, link.child_conversation_id) for link in runs]
            assert [len(t) for t in found] == [4, 4] and all(t[0] == "Count the TODOs" for t in found)
            assert any("walking the src tree" in x for x in found[0]) and any("grepping" in x for x in found[1])
            (parent,) = st.conversations.find_conversations(SESSION)
            assert len(_texts(st, parent.conversation_id)) == 5 and verify(st).ok
    finally:
        app.close()


def test_a_database_holding_sidechains_as_native_records_only_upgrades_on_reimport(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What earlier LCM versions stored (checkpoint payload 2, sidechains kept native only) converges."""
    from lcm_format_claude.format import ClaudeCodeFormat

    from lcm_framework.ingest import state
    from lcm_framework.transcripts.contracts import MappedRecord

    new_mapping = ClaudeCodeFormat.map_record

    def native_only_sidechains(self: ClaudeCodeFormat, record: Any) -> MappedRecord:
        mapped = new_mapping(self, record)
        return mapped if mapped.subagent is None else replace(mapped, message=None, subagent=None)

    records = in_file_sidechains("Count the TODOs", ["walking the src tree", "grepping the tests"])
    path = write_jsonl(project_dir(tmp_path / "claude") / f"{SESSION}.jsonl", records)
    app = make_app(tmp_path / "here")
    try:
        with monkeypatch.context() as old:
            old.setattr(state, "STATE_VERSION", 2)
            old.setattr(ClaudeCodeFormat, "map_record", native_only_sidechains)
            first = ingest_file(app, path)
            assert first.ok and first.messages == 5
        again = ingest_file(app, path)
        assert again.ok and again.rescanned and (again.stored, again.messages) == (0, 8)
        with app.project(CWD) as st:
            assert len(st.conversations.list_subagent_links()) == 2 and verify(st).ok
            natives = st.native_transcripts.list_by_source(path.name)
            assert len(natives) == len(records)
    finally:
        app.close()


def test_codex_sub_agent_rollouts_are_linked_to_their_spawn_agent_call(tmp_path: Path) -> None:
    parent_id, child_id = "019a0000-0000-7000-8000-00000000000a", "019a0000-0000-7000-8000-00000000000b"
    codex_pair(tmp_path / "codex", parent_id, child_id, "the parser drops trailing commas")
    app = make_app(tmp_path / "here")
    try:
        assert import_sources(app, [tmp_path / "codex"], provider="codex").errors == []
        with app.project(CWD) as st:
            link = _links(st)[child_id]
            assert (link.parent_session_id, link.agent_id, link.agent_type, link.tool_call_id) == \
                (parent_id, child_id, "worker", "call_spawn")
            hit = next(h for g in grep(st, "trailing commas").groups for h in g.hits)
            assert hit.subagent is not None and hit.subagent.parent_session_id == parent_id
    finally:
        app.close()


def test_the_real_session_finds_what_its_sub_agents_wrote(tmp_path: Path) -> None:
    sessions = shared_testdata(CLAUDE_SESSIONS)
    root = tmp_path / "proj"
    root.mkdir()
    env = {"LCM_HOME": str(tmp_path / "home" / ".lcm")}
    done = run_lcm("import", str(sessions), "--project", str(root), cwd=root, env=env)
    assert done.returncode == 0, done.stderr
    found = run_lcm("grep", "--mode", "substring", "examining the current directory structure", "--json",
                    cwd=root, env=env)
    assert found.returncode == 0, found.stderr
    (hit,) = [h for g in json.loads(found.stdout)["groups"] for h in g["hits"]]
    assert hit["subagent"]["parent_session_id"] == "fe5e1c67-53e7-4862-81ae-d0e013e3270b"
    assert hit["subagent"]["tool_call_id"] == "toolu_01LS6tcVd796SbQKmZqeVnWY"
    left_out = run_lcm("grep", "--mode", "substring", "--no-subagents", "examining the current directory structure",
                       cwd=root, env=env)
    assert left_out.returncode == 1
    stats = run_lcm("--project", str(root), "stats", "--json", cwd=root, env=env)
    (row,) = json.loads(stats.stdout)["projects"]
    assert row["subagent_conversations"] == 9 and row["conversations"] == 12, stats.stdout
    assert run_lcm("verify", cwd=root, env=env).returncode == 0


def test_the_mcp_tools_reach_runs_and_can_leave_them_out(tmp_path: Path) -> None:
    from lcm_framework.kernel.arguments import ArgumentError
    from lcm_framework.kernel.arguments import call as run_tool

    current_layout(tmp_path / "claude", FINDINGS)
    app = make_app(tmp_path / "here")
    tools = app.plugins.capabilities()
    try:
        import_sources(app, [project_dir(tmp_path / "claude")], project=app.config.project_root)
        found = run_tool(app, tools["lcm_grep"], {"pattern": "lexer tables", "scope": "messages"})
        hits = [h for g in found["groups"] for h in g["hits"]]
        assert hits and all(h["subagent"]["tool_call_id"] == "toolu_task_a1b2c3d" for h in hits)
        left_out = run_tool(app, tools["lcm_grep"], {"pattern": "lexer tables", "include_subagents": False})
        assert left_out["groups"] == left_out["summary_hits"] == []
        ranked = run_tool(app, tools["lcm_search"], {"query": "checkout flow"})["results"]
        assert ranked and ranked[0]["subagent"]["agent_id"] == "e4f5a6b"
        left_out = run_tool(app, tools["lcm_search"], {"query": "checkout flow", "include_subagents": False})
        assert left_out["results"] == []
        with pytest.raises(ArgumentError):
            run_tool(app, tools["lcm_grep"], {"pattern": "x", "include_subagents": "no"})
        with app.project() as st:
            link = _links(st)[f"{SESSION}/agent-a1b2c3d"]
        call = f"msg_{link.parent_message_id}"
        described = run_tool(app, tools["lcm_describe"], {"id": call})
        assert described["lineage"]["subagent_sessions"] == [f"{SESSION}/agent-a1b2c3d"]
        expanded = run_tool(app, tools["lcm_expand"], {"id": call})
        reached = [n for n in expanded["nodes"] if n["via"] == call]
        assert len(reached) == 4 and reached[0]["content"] == "Survey part a1b2c3d of the repository"
        inner = run_tool(app, tools["lcm_describe"], {"id": reached[1]["id"]})
        assert inner["metadata"]["subagent_of"]["parent_message"] == call
    finally:
        app.close()


def test_a_subagent_stop_event_imports_the_run_it_names(tmp_path: Path) -> None:
    """The hook forwards the sub-agent transcript Claude Code's SubagentStop names (``agent_transcript_path``, read
    by its hook protocol); the daemon imports it after the session."""
    import asyncio

    from lcm_format_claude.hooks import PROTOCOL

    from lcm_framework.agent_hooks.payload import SUBAGENT_TRANSCRIPT, parse
    from lcm_framework.config import load_config
    from lcm_framework.daemon.service import DaemonService
    from lcm_framework.kernel.plugins import build_plugins

    runs = {"a1b2c3d": "reading the lexer tables"}
    session, files = current_layout(tmp_path / "claude", runs)
    elsewhere = files["a1b2c3d"].rename(tmp_path / "agent-a1b2c3d.jsonl")  # not where companions are looked for
    project = tmp_path / "here"
    project.mkdir()
    raw = json.dumps({"session_id": SESSION, "transcript_path": str(session), "cwd": str(project),
                      "hook_event_name": "SubagentStop", "agent_id": "a1b2c3d",
                      "agent_transcript_path": str(elsewhere)}).encode()
    payload = parse(raw, event="SubagentStop", agent="claude", protocol=PROTOCOL).forward(project)
    assert payload[SUBAGENT_TRANSCRIPT] == str(elsewhere)
    service = DaemonService(load_config(project=project, plugins=build_plugins()), build_plugins())

    async def scenario() -> dict[str, Any]:
        try:
            return await service.hook("SubagentStop", payload, wait=True)
        finally:
            await service.close()

    answer = asyncio.run(scenario())
    assert [Path(r["path"]).name for r in answer["ingest"]["subagent_files"]] == ["agent-a1b2c3d.jsonl"]
    app = make_app(project)
    try:
        with app.project() as st:
            (link,) = st.conversations.list_subagent_links()
            assert link.tool_call_id == "toolu_task_a1b2c3d"
    finally:
        app.close()


def test_the_hooks_compact_each_run_on_its_own(tmp_path: Path) -> None:
    import asyncio

    from lcm_framework.config import load_config
    from lcm_framework.daemon.service import DaemonService
    from lcm_framework.kernel.plugins import build_plugins

    session, _files = current_layout(tmp_path / "claude", FINDINGS, turns=12)
    project = tmp_path / "here"
    project.mkdir()
    service = DaemonService(load_config(project=project, plugins=build_plugins()), build_plugins())
    payload = {"session_id": SESSION, "transcript_path": str(session), "cwd": str(project), "project": str(project)}

    async def scenario() -> None:
        try:
            await service.hook("SessionEnd", payload)  # ingest, then full compaction in the background
        finally:
            await service.close()  # waits for the background compactions

    asyncio.run(scenario())
    app = make_app(project)
    try:
        with app.project() as st:
            for link in st.conversations.list_subagent_links():
                assert st.summaries.list_summaries(link.child_conversation_id), link
    finally:
        app.close()


def test_a_parent_summary_names_the_runs_it_started_and_where_to_drill_down(tmp_path: Path) -> None:
    from lcm_framework.compaction import CompactionEngine, Mode

    runs = {f"r{n}": f"checking area {n}" for n in range(8)}
    current_layout(tmp_path / "claude", runs, turns=12)
    app = make_app(tmp_path / "here")
    try:
        import_sources(app, [project_dir(tmp_path / "claude")], project=app.config.project_root)
        engine = CompactionEngine(app)
        with app.project() as st:
            links = _links(st)
            first = links[f"{SESSION}/agent-r0"]
            engine.compact(st, first.child_conversation_id, Mode.FULL)  # one run summarized, the others not
            (parent,) = st.conversations.find_conversations(SESSION)
            engine.compact(st, parent.conversation_id, Mode.FULL)
            leaves = st.summaries.list_summaries(parent.conversation_id, depth=0)
            notes = "\n".join(s.content for s in leaves)
            run_summaries = [i.summary_id for i in st.context.list_items(first.child_conversation_id) if i.summary_id]
            assert run_summaries and f"{SESSION}/agent-r0 ({', '.join(run_summaries)})" in notes
            later = links[f"{SESSION}/agent-r1"]
            (first_message,) = st.conversations.list_messages(later.child_conversation_id, limit=1)
            assert f"{SESSION}/agent-r1 (msg_{first_message.message_id})" in notes
            assert all(st.summaries.list_summaries(link.child_conversation_id) == [] for link in links.values()
                       if link is not first)  # never summarized into the parent
            assert verify(st).ok
    finally:
        app.close()


def test_a_runs_link_is_looked_up_once_per_import_not_once_per_batch(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from lcm_sqlite.subagent_links import SqliteSubagentLinks

    records = in_file_sidechains("Count the TODOs", ["walking the src tree", "grepping the tests"])
    path = write_jsonl(project_dir(tmp_path / "claude") / f"{SESSION}.jsonl", records)
    looked: list[int] = []
    real = SqliteSubagentLinks.get_subagent_link
    monkeypatch.setattr(SqliteSubagentLinks, "get_subagent_link",
                        lambda self, conversation_id: looked.append(conversation_id) or real(self, conversation_id))
    app = make_app(tmp_path / "here")
    try:
        assert import_sources(app, [path], batch_size=1, workers=1).errors == []
        with app.project(CWD) as st:
            links = _links(st)
        assert len(links) == 2 and all(link.parent_message_id is not None for link in links.values())
        assert sorted(looked) == sorted(link.child_conversation_id for link in links.values())  # once per run
    finally:
        app.close()
