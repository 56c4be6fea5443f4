"""The explorer's front door, through a real HTTP client against a real ``lcm ui``: the login, the token, the
Host and Origin checks, CSRF on changes, ids that try to escape, HTML kept as text, one instance per home."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import run_lcm
from tests.ui.support import PLANTED, Explorer, explorer, public


@pytest.fixture(scope="module")
def ui(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Explorer]:
    with explorer("sqlite", tmp_path_factory.mktemp("ui-security")) as running:
        yield running


def logged_in(ui: Explorer) -> tuple[httpx.Client, str]:
    """A browser-like client with the session cookie, and a CSRF token read from the memories page."""
    client = httpx.Client(base_url=ui.base, follow_redirects=False)
    answer = client.post("/login", data={"token": ui.token})
    assert answer.status_code == 303 and f"lcm_ui_{ui.port}" in client.cookies
    page = client.get(f"/p/{ui.project_id}/memories").text
    csrf = page.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    return client, csrf


def test_without_token_or_cookie_every_page_is_401(ui: Explorer) -> None:
    for path in ("/projects", "/projects.json", f"/p/{ui.project_id}/sessions", "/health.json"):
        assert httpx.get(ui.base + path).status_code == 401, path
    assert httpx.get(ui.base + "/projects", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert httpx.get(ui.base + "/projects", cookies={f"lcm_ui_{ui.port}": "forged"}).status_code == 401
    assert httpx.get(ui.base + "/projects.json", headers=ui.auth).status_code == 200


def test_the_login_url_works_once_and_sets_an_http_only_cookie(ui: Explorer, tmp_path: Path) -> None:
    client = httpx.Client(base_url=ui.base)
    first = client.get(f"/login?key={ui.login_key}", follow_redirects=False)
    assert first.status_code == 303 and first.headers["location"] == "/projects"
    cookie = first.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie
    assert client.get("/projects").status_code == 200
    assert httpx.get(f"{ui.base}/login?key={ui.login_key}", follow_redirects=False).status_code == 401  # spent
    assert httpx.post(f"{ui.base}/login", data={"token": "not-it"}, follow_redirects=False).status_code == 401


@pytest.mark.parametrize("host", ["evil.example", f"evil.example:{0}", "127.0.0.1:1", "localhost.evil.example"])
def test_another_host_is_refused(ui: Explorer, host: str) -> None:
    """DNS rebinding: a name that resolves to 127.0.0.1 still sends its own Host."""
    answer = httpx.get(ui.base + "/projects.json", headers={**ui.auth, "Host": host})
    assert answer.status_code == 403 and answer.json()["error"] == "forbidden_host"


def test_another_origin_is_refused_even_with_the_token(ui: Explorer) -> None:
    for headers in ({"Origin": "http://evil.example"}, {"Origin": "null"}, {"Sec-Fetch-Site": "cross-site"}):
        answer = httpx.get(ui.base + "/projects.json", headers={**ui.auth, **headers})
        assert answer.status_code == 403 and answer.json()["error"] == "forbidden_origin"
    same = httpx.get(ui.base + "/projects.json", headers={**ui.auth, "Origin": ui.base})
    assert same.status_code == 200


def test_a_change_without_the_csrf_token_is_refused_and_changes_nothing(ui: Explorer) -> None:
    client, csrf = logged_in(ui)
    archive = f"/p/{ui.project_id}/memories/mem_1/archive"
    assert client.post(archive).status_code == 403
    assert client.post(archive, data={"csrf": "wrong"}).status_code == 403
    assert client.post(archive, headers={"X-CSRF-Token": csrf[:-1] + "x"}).status_code == 403
    memories = client.get(f"/p/{ui.project_id}/memories.json").json()["memories"]
    assert not next(m for m in memories if m["id"] == "mem_1")["archived"]
    done = client.post(archive, data={"csrf": csrf})
    assert done.status_code == 303
    memories = client.get(f"/p/{ui.project_id}/memories.json").json()["memories"]
    assert next(m for m in memories if m["id"] == "mem_1")["archived"]
    assert client.post(f"/p/{ui.project_id}/memories/mem_1/revive", headers={"X-CSRF-Token": csrf}).status_code == 303


@pytest.mark.parametrize("path", [
    "/p/..%2F..%2Fetc/sessions", "/p/../../etc/passwd", "/p/{pid}/s/..%2F..%2Fpasswd", "/p/{pid}/s/../../x",
    "/p/{pid}/summary/..%2Fsum_1", "/p/{pid}/summary/sum_zz", "/p/{pid}/m/..%2F1", "/p/{pid}/m/-1",
    "/p/{pid}/s/%2Fetc%2Fpasswd/summaries", "/p/{pid}/memories/..%2Fmem_1/archive", "/static/..%2F..%2Fauth.py",
    "/static/../pages.py", "/p/0000/sessions", "/p/{pid}/s/no-such-session",
])
def test_ids_that_try_to_escape_are_404(ui: Explorer, path: str) -> None:
    answer = httpx.get(ui.base + path.format(pid=ui.project_id), headers=ui.auth)
    assert answer.status_code in (404, 405), (path, answer.status_code)
    assert "import " not in answer.text and "root:" not in answer.text


def test_html_in_a_transcript_and_a_memory_is_escaped(ui: Explorer) -> None:
    pages = [f"/p/{ui.project_id}/s/{ui.session_id}?after=40", f"/p/{ui.project_id}/memories",
             f"/p/{ui.project_id}/search?q=render+safely"]
    for path in pages:
        html = httpx.get(ui.base + path, headers=ui.auth).text
        assert "&lt;script&gt;window.__lcm_pwned" in html, path
        assert PLANTED not in html and "<script>window" not in html, path
    answer = httpx.get(ui.base + "/projects", headers=ui.auth)
    assert "script-src 'self'" in answer.headers["content-security-policy"]
    assert answer.headers["x-frame-options"] == "DENY"


def test_a_second_instance_for_the_same_home_is_refused(ui: Explorer) -> None:
    done = run_lcm("ui", "--port", "0", cwd=ui.root, env=public(ui.env), timeout=60)
    assert done.returncode != 0
    assert f"already running for this LCM_HOME on http://127.0.0.1:{ui.port}/" in done.stderr
    assert "Traceback" not in done.stderr
