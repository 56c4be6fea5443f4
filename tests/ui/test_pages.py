"""What each page of ``lcm ui`` says, read as its JSON (the same path + ``.json``) through real HTTP from a real
``lcm ui``, on a project of each backend: the sample session compacted, plus a session that started two
sub-agent runs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.ingest.subagent_layouts import SESSION, current_layout, project_dir
from tests.ui.support import Explorer, explorer

RUNS = {"a1b2c3": "the payment module retries twice", "d4e5f6": "the cart module caches prices"}


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def ui(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Explorer]:
    tmp = tmp_path_factory.mktemp(f"ui-pages-{request.param}")
    with explorer(request.param, tmp) as running:
        current_layout(tmp / "claude", RUNS)
        running.lcm("import", str(project_dir(tmp / "claude")), "--project", str(running.root))
        yield running


def get(ui: Explorer, path: str) -> Any:
    answer = httpx.get(ui.base + path, headers=ui.auth, timeout=60)
    assert answer.status_code == 200, (path, answer.status_code, answer.text[:300])
    return answer.json()


def test_projects_list_counts_storage_and_backend(ui: Explorer) -> None:
    [row] = get(ui, "/projects.json")
    assert row["root"] == str(ui.root.resolve())
    assert row["backend"] == ("postgresql" if "_schema" in ui.env else "sqlite")
    assert row["conversations"] == 4 and row["subagent_conversations"] == 2
    assert row["messages"] > 48 and row["summaries"] >= 1 and row["memories"] >= 2
    assert row["last_activity"].startswith("2025-10-14T14:05")  # the planted message is the newest


def test_sub_agent_runs_are_a_tree_under_the_session_that_started_them(ui: Explorer) -> None:
    listed = get(ui, f"/p/{ui.project_id}/sessions.json")["sessions"]
    mains = {node["session"]["session_id"]: node for node in listed}
    assert set(mains) == {SESSION, ui.session_id}
    runs = mains[SESSION]["runs"]
    assert len(runs) == 2 and all(r["subagent_of"] == SESSION for r in runs)
    assert mains[ui.session_id]["runs"] == []
    parent = get(ui, f"/p/{ui.project_id}/s/{SESSION}.json")
    linked = {link["session_id"] for m in parent["messages"] for link in m["runs"]}
    assert linked == {r["session_id"] for r in runs}
    child = get(ui, f"/p/{ui.project_id}/s/{runs[0]['session_id']}.json")
    assert child["subagent_of"] == SESSION and child["messages"]


def test_transcript_pages_cover_every_message_once(ui: Explorer) -> None:
    base = f"/p/{ui.project_id}/s/{ui.session_id}.json"
    first = get(ui, base)
    seen, after = [], None
    while True:
        page = get(ui, base + "?limit=7" + (f"&after={after}" if after is not None else ""))
        assert len(page["messages"]) <= 7
        seen += [m["seq"] for m in page["messages"]]
        after = page["next_after_seq"]
        if after is None:
            break
    assert seen == sorted(set(seen)) and len(seen) == first["total_messages"] == 48
    errors = [m for m in first["messages"] if m["has_error"]]
    assert errors and all(any(p["is_error"] for p in m["parts"]) for m in errors)
    text = " ".join(m["content"] for m in first["messages"])
    assert "[REDACTED:credentialed-url]" in text and "[REDACTED:stripe-key]" in text


def test_a_message_permalink_lands_on_the_page_holding_it(ui: Explorer) -> None:
    transcript = get(ui, f"/p/{ui.project_id}/s/{ui.session_id}.json?limit=500")
    last = transcript["messages"][-1]["message_id"]
    where = get(ui, f"/p/{ui.project_id}/m/{last}.json")
    assert where["session_id"] == ui.session_id and where["url"].endswith(f"#msg_{last}")
    page = httpx.get(ui.base + where["url"].split("#")[0], headers=ui.auth).text
    assert f'id="msg_{last}"' in page


def test_the_dag_places_each_summary_on_the_timeline_and_expands_to_its_sources(ui: Explorer) -> None:
    dag = get(ui, f"/p/{ui.project_id}/s/{ui.session_id}/summaries.json")
    nodes = [n for _depth, listed in dag["depths"] for n in listed]
    assert nodes and [d for d, _ in dag["depths"]] == sorted({n["depth"] for n in nodes}, reverse=True)
    for node in nodes:
        start, end = node["coverage"]
        assert 0.0 <= start <= end <= 1.0
        detail = get(ui, f"/p/{ui.project_id}/summary/{node['summary_id']}.json")
        assert detail["session_id"] == ui.session_id
        assert set(detail["children"]) == set(node["children"])
        if node["kind"] == "leaf":
            assert detail["sources"] and all(node["summary_id"] in m["covered_by"] for m in detail["sources"])
            for parent in node["children"]:
                assert node["summary_id"] in get(ui, f"/p/{ui.project_id}/summary/{parent}.json")["parents"]


def test_the_context_preview_follows_the_budget(ui: Explorer) -> None:
    wide = get(ui, f"/p/{ui.project_id}/s/{ui.session_id}/context.json")
    dag = get(ui, f"/p/{ui.project_id}/s/{ui.session_id}/summaries.json")
    leaves = sum(n["token_count"] for depth, nodes in dag["depths"] if depth == 0 for n in nodes)
    budget = wide["fresh_tail_tokens"] + leaves + 50  # room for the tail and the summaries, not the raw turns
    assert budget < wide["token_estimate"]
    narrow = get(ui, f"/p/{ui.project_id}/s/{ui.session_id}/context.json?budget={budget}")
    assert wide["budget"] == wide["default_budget"] and narrow["budget"] == budget
    assert narrow["token_estimate"] < wide["token_estimate"]
    assert any(i["kind"] == "summary" for i in narrow["items"])  # older turns come back as their summary
    assert sum(i["tokens"] for i in narrow["items"]) >= narrow["fresh_tail_tokens"]
    assert any(i["fresh_tail"] for i in narrow["items"])
    start = get(ui, f"/p/{ui.project_id}/s/{ui.session_id}/start.json")["restored"]
    assert start["session_id"] == ui.session_id and start["context"] and start["memories"]


def test_search_ranks_each_result_in_both_lists(ui: Explorer) -> None:
    found = get(ui, f"/p/{ui.project_id}/search.json?q=address+already+in+use")
    rows = found["rows"]
    assert rows and rows[0]["search_rank"] == 1
    assert {r["id"] for r in rows if r["search_rank"]} == {r["id"] for r in found["search"]}
    assert any(r["grep_rank"] for r in rows)
    assert all(r["id"].startswith(("msg_", "sum_", "mem_")) for r in rows)
    assert get(ui, f"/p/{ui.project_id}/search.json?q=")["rows"] == []


def test_memories_show_lineage_and_feedback(ui: Explorer) -> None:
    memories = get(ui, f"/p/{ui.project_id}/memories.json")["memories"]
    promoted = [m for m in memories if m["lineage"]["origin"] == "promotion"]
    assert promoted and all(m["source_summary_id"] for m in promoted)
    typed = next(m for m in memories if "never hard-code 8432" in m["content"])
    assert typed["tags"] == ["tests"] and typed["lineage"]["origin"] == "user"


@pytest.mark.parametrize("page", ["/projects", "/health", "/p/{pid}/sessions", "/p/{pid}/s/{sid}",
                                  "/p/{pid}/s/{sid}/summaries", "/p/{pid}/s/{sid}/context", "/p/{pid}/s/{sid}/start",
                                  "/p/{pid}/search?q=port",
                                  "/p/{pid}/memories"])
def test_every_page_renders_as_html_and_json(ui: Explorer, page: str) -> None:
    path = page.format(pid=ui.project_id, sid=ui.session_id)
    html = httpx.get(ui.base + path, headers=ui.auth, timeout=60)
    assert html.status_code == 200 and html.headers["content-type"].startswith("text/html")
    assert "Traceback" not in html.text
    where, _, query = path.partition("?")
    data = httpx.get(f"{ui.base}{where}.json" + (f"?{query}" if query else ""), headers=ui.auth, timeout=60)
    assert data.status_code == 200 and data.headers["content-type"] == "application/json"


def test_project_for_another_home_is_not_found(ui: Explorer, tmp_path: Path) -> None:
    answer = httpx.get(f"{ui.base}/p/{'0' * 64}/sessions.json", headers=ui.auth)
    assert answer.status_code == 404 and answer.json()["error"] == "not_found"


def test_search_and_grep_lists_are_what_the_cli_prints(ui: Explorer) -> None:
    """The page renders the operations layer's results: its lists are ``lcm search --json`` and
    ``lcm grep --json`` for the same request."""
    import json

    from lcm_framework.ui.views import GREP_LIMIT, SEARCH_LIMIT

    query = "address already in use"
    page = get(ui, f"/p/{ui.project_id}/search.json?q=address+already+in+use")
    searched = json.loads(ui.lcm("search", query, "--limit", str(SEARCH_LIMIT), "--json").stdout)
    grepped = json.loads(ui.lcm("grep", query, "--mode", "full_text", "--limit", str(GREP_LIMIT), "--json").stdout)
    assert list(page["search"]) == searched["results"]
    assert page["grep"] == grepped
