"""Every page of ``lcm ui`` in a real browser (Debian's Chromium through Playwright), on a real imported project
of each backend: click from a session to its summary, expand it, reach a source message; search; move the budget
slider; archive and revive a memory; watch a message arrive; a planted ``<script>`` never runs. Screenshots of
each page are saved in the test's tmp dir (``LCM_UI_SCREENSHOTS`` names another folder)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.ui.browser import browser_context, chromium_path
from tests.ui.support import Explorer, append_message, explorer

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def ui(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Explorer]:
    chromium_path()
    with explorer(request.param, tmp_path_factory.mktemp(f"ui-{request.param}")) as running:
        yield running


@pytest.fixture(scope="module")
def page(ui: Explorer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with browser_context(tmp_path_factory.mktemp("chromium-profile")) as context:
        tab = context.new_page()
        tab.set_default_timeout(15_000)
        tab.goto(f"{ui.base}/login?key={ui.login_key}")
        yield tab


@pytest.fixture(scope="module")
def shots(ui: Explorer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get("LCM_UI_SCREENSHOTS")
    folder = Path(given) if given else tmp_path_factory.mktemp("screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def shoot(page: Any, shots: Path, name: str, ui: Explorer) -> None:
    backend = "postgresql" if "_schema" in ui.env else "sqlite"
    page.screenshot(path=str(shots / f"{backend}-{name}.png"), full_page=False)


def never_ran(page: Any) -> None:
    assert page.evaluate("typeof window.__lcm_pwned") == "undefined"


def test_projects_then_sessions_then_transcript(page: Any, ui: Explorer, shots: Path) -> None:
    page.goto(f"{ui.base}/projects")
    assert page.get_by_role("heading", name="Projects").is_visible()
    shoot(page, shots, "projects", ui)
    page.get_by_role("link", name=str(ui.root.resolve())).click()
    page.wait_for_url(re.compile(r"/sessions$"))
    assert page.get_by_text("claude-code").first.is_visible()
    shoot(page, shots, "sessions", ui)
    page.get_by_role("link", name=ui.session_id).click()
    page.wait_for_url(re.compile(re.escape(ui.session_id) + r"$"))
    first = page.locator("article.msg").first
    assert "Address already in use" in first.inner_text()
    assert page.locator("mark.redacted").count() > 0  # placeholders, never the secret
    assert page.locator("details.part-tool_call, details.part-tool_result").count() > 0  # folded
    shoot(page, shots, "transcript", ui)


def test_session_to_summary_to_expanded_source_message(page: Any, ui: Explorer, shots: Path) -> None:
    page.goto(f"{ui.base}/p/{ui.project_id}/s/{ui.session_id}/summaries")
    assert page.get_by_role("heading", name=re.compile("Depth 0")).is_visible()
    bar = page.locator(".covered-range").first
    assert bar.bounding_box()["width"] > 0  # the coverage bar is drawn
    shoot(page, shots, "summaries", ui)
    page.locator("a.sumid").first.click()
    page.wait_for_url(re.compile(r"/summary/sum_[0-9a-f]+$"))
    sources = page.locator("#sources")
    assert not sources.locator("article.msg").first.is_visible()
    page.get_by_text(re.compile(r"Expand to the \d+ source messages")).click()
    message = sources.locator("article.msg").first
    assert message.is_visible()
    shoot(page, shots, "summary", ui)
    message_id = message.get_attribute("id")
    message.locator("a.mid").click()
    page.wait_for_url(re.compile(rf"#{message_id}$"))
    target = page.locator(f"#{message_id}")
    assert target.is_visible() and page.evaluate("location.hash") == f"#{message_id}"


def test_search_lists_ranks_and_links_into_the_transcript(page: Any, ui: Explorer, shots: Path) -> None:
    page.goto(f"{ui.base}/p/{ui.project_id}/sessions")
    page.keyboard.press("/")
    page.keyboard.type("address already in use")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/search\?q="))
    results = page.locator("li.result")
    assert results.count() > 0
    assert "search #1" in results.first.inner_text()
    shoot(page, shots, "search", ui)
    link = page.locator("li.result.kind-message a.rid").first
    ident = link.inner_text()
    link.click()
    page.wait_for_url(re.compile(rf"#{ident}$"))
    assert page.locator(f"#{ident}").is_visible()


def test_the_budget_slider_changes_what_the_model_gets(page: Any, ui: Explorer, shots: Path) -> None:
    page.goto(f"{ui.base}/p/{ui.project_id}/s/{ui.session_id}/context")
    before = page.locator("#context-total").inner_text()
    items_before = page.locator(".bar-row").count()
    assert page.locator(".bar-row.summary").count() >= 1 or page.locator(".bar-row.message").count() >= 1
    shoot(page, shots, "context", ui)
    page.get_by_label("Token budget").fill("200")
    page.wait_for_url(re.compile(r"budget=200"))
    after = page.locator("#context-total").inner_text()
    assert after != before and "of 200" in after
    assert page.locator(".bar-row").count() <= items_before
    page.get_by_role("link", name="What SessionStart restores for this session →").click()
    page.wait_for_url(re.compile(r"/start$"))
    assert "memories" in page.locator("#restored-count").inner_text()
    assert page.locator("pre.restore").inner_text().strip()


def test_archive_and_revive_a_memory(page: Any, ui: Explorer, shots: Path) -> None:
    page.goto(f"{ui.base}/p/{ui.project_id}/memories")
    card = page.locator("li.memory", has_text="never hard-code 8432")
    ident = card.get_attribute("id")
    assert "archived" not in (card.get_attribute("class") or "")
    shoot(page, shots, "memories", ui)
    page.get_by_role("button", name=f"Archive {ident}").click()
    page.wait_for_load_state()
    assert "archived" in (page.locator(f"#{ident}").get_attribute("class") or "")
    page.get_by_role("button", name=f"Revive {ident}").click()
    page.wait_for_load_state()
    assert "archived" not in (page.locator(f"#{ident}").get_attribute("class") or "")
    page.get_by_role("button", name=f"Mark useful {ident}").click()
    page.wait_for_load_state()
    assert "useful 1" in page.locator(f"#{ident}").inner_text()
    never_ran(page)


def test_a_new_message_arrives_without_a_reload(page: Any, ui: Explorer) -> None:
    page.goto(f"{ui.base}/p/{ui.project_id}/s/{ui.session_id}")
    page.evaluate("window.__same_page = true")
    append_message(ui.transcript, "A live message from the agent's next turn", 1)
    ui.lcm("import", str(ui.transcript), "--project", str(ui.root))
    page.get_by_text("A live message from the agent's next turn").wait_for(timeout=20_000)
    assert page.evaluate("window.__same_page") is True  # no reload happened


def test_a_planted_script_never_runs(page: Any, ui: Explorer) -> None:
    for path in (f"/p/{ui.project_id}/s/{ui.session_id}", f"/p/{ui.project_id}/memories",
                 f"/p/{ui.project_id}/search?q=render+safely"):
        page.goto(ui.base + path)
        assert page.get_by_text("<script>window.__lcm_pwned = 1</script>", exact=False).first.is_visible()
        never_ran(page)


def test_health_page(page: Any, ui: Explorer, shots: Path) -> None:
    page.goto(f"{ui.base}/health")
    assert page.get_by_role("heading", name="lcm doctor").is_visible()
    assert page.get_by_role("cell", name="storage", exact=True).is_visible()
    assert page.get_by_text("credentialed-url").first.is_visible()  # the sample's redactions, per rule
    shoot(page, shots, "health", ui)


def test_light_and_dark_switch_with_the_keyboard(page: Any, ui: Explorer, shots: Path) -> None:
    page.goto(f"{ui.base}/projects")
    before = page.evaluate("getComputedStyle(document.body).backgroundColor")
    page.get_by_role("button", name="Switch light or dark theme").focus()
    page.keyboard.press("Enter")
    after = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert after != before and page.evaluate("document.documentElement.dataset.theme") in ("light", "dark")
    shoot(page, shots, "projects-switched-theme", ui)
    page.keyboard.press("Enter")
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == before
