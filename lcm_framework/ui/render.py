"""Results as pages (the Jinja templates beside this module, autoescaped) or as their JSON (``to_jsonable``)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from ..jsonable import to_jsonable
from ..output import human_size

_REDACTED = re.compile(r"\[REDACTED:[A-Za-z0-9_.:-]{1,200}\]")


def wants_json(request: Request) -> bool:
    return request.url.path.endswith(".json")


def respond(request: Request, template: str, result: Any, **extra: Any) -> Response:
    """``result`` as JSON at a ``.json`` path, else the page ``template`` renders with it."""
    if wants_json(request):
        return JSONResponse(to_jsonable(result))
    html = environment().get_template(template).render(
        result=result, csrf=request.scope.get("state", {}).get("csrf"), path=request.url.path,
        query=request.url.query, **extra)
    return HTMLResponse(html)


def fragment(template: str, **values: Any) -> str:
    return environment().get_template(template).render(**values)


def error_page(status: int, message: str) -> str:
    return environment().get_template("error.html.j2").render(status=status, message=message, csrf=None, pid=None,
                                                              path="", query="")


@cache
def environment() -> Environment:
    env = Environment(loader=PackageLoader("lcm_framework.ui", "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True), trim_blocks=True,
                      lstrip_blocks=True)
    env.filters.update(when=when, size=human_size, redacted=redacted, pct=pct)
    return env


def when(moment: datetime | None) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S") if moment else "-"


def pct(fraction: float) -> str:
    return f"{max(0.0, min(1.0, fraction)) * 100:.2f}%"


def redacted(text: str | None) -> Markup:
    """``text`` escaped, each ``[REDACTED:rule]`` placeholder marked (the secret itself was never stored)."""
    escaped = str(escape(text or ""))
    return Markup(_REDACTED.sub(lambda m: f'<mark class="redacted" title="removed by the scrubber">{m.group(0)}</mark>',
                                escaped))
