"""``lcm mcp``: the registered recall capabilities as MCP tools over stdio (MCP Python SDK 2.x).

Each capability's JSON-schema parameters become a typed tool signature (so
clients see documented, validated arguments). Handlers run in worker threads
(storage is synchronous); results are JSON text bounded to ``MAX_RESULT_CHARS``.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal

from .errors import LcmError

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from .app import App
    from .extensions import Capability

MAX_RESULT_CHARS = 400_000
INSTRUCTIONS = (
    "LCM stores every message of this project's coding sessions losslessly and compacts old turns into "
    "summaries (ids sum_...). Use lcm_grep or lcm_search to find details, lcm_expand to open a summary down to "
    "the original messages, lcm_describe to read one summary, message (msg_N) or large file (file_...) in full. "
    "Use lcm_store to remember a durable insight for later sessions and lcm_feedback to say whether a surfaced "
    "memory (mem_N) helped."
)
_TYPES: dict[str, Any] = {"string": str, "integer": int, "boolean": bool, "number": float}


def _annotation(schema: Mapping[str, Any], required: bool) -> Any:
    from pydantic import Field

    base: Any = _TYPES.get(str(schema.get("type")), Any)
    if schema.get("type") == "array":
        base = list[_TYPES.get(str(schema.get("items", {}).get("type")), Any)]  # type: ignore[misc]
    if schema.get("enum"):
        base = Literal[tuple(schema["enum"])]
    bounds = {k: schema[k] for k in ("minimum", "maximum") if k in schema}
    field = Field(description=schema.get("description"), ge=bounds.get("minimum"), le=bounds.get("maximum"))
    return Annotated[base if required else base | None, field]


def tool_function(app: App, capability: Capability) -> Any:
    """An async function whose signature mirrors ``capability.parameters``, calling its handler in a thread."""
    import anyio

    properties: Mapping[str, Any] = capability.parameters.get("properties", {})
    required = set(capability.parameters.get("required", ()))
    params = []
    for name in sorted(properties, key=lambda n: (n not in required, list(properties).index(n))):
        schema = properties[name]
        default = inspect.Parameter.empty if name in required else schema.get("default")
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                        annotation=_annotation(schema, name in required)))

    async def call(**kwargs: Any) -> str:
        args = {k: v for k, v in kwargs.items() if v is not None}
        try:
            result = await anyio.to_thread.run_sync(capability.handler, app, args)
        except LcmError as exc:
            return json.dumps({"error": str(exc), "code": str(getattr(exc, "code", None) or type(exc).__name__)})
        text = json.dumps(result, ensure_ascii=False, default=str)
        if len(text) > MAX_RESULT_CHARS:
            text = json.dumps({"error": f"result too large ({len(text)} characters): lower limit or token_cap"})
        return text

    call.__name__ = capability.name
    call.__doc__ = capability.description
    call.__signature__ = inspect.Signature(params, return_annotation=str)  # type: ignore[attr-defined]
    return call


def build_server(app: App) -> MCPServer:
    from mcp.server.mcpserver import MCPServer

    from . import __version__

    server: MCPServer = MCPServer("lcm", instructions=INSTRUCTIONS, version=__version__)
    for name, capability in sorted(app.plugins.capabilities().items()):
        server.add_tool(tool_function(app, capability), name=name, description=capability.description,
                        structured_output=False)
    return server


def serve(app: App) -> None:
    """Serve over stdio until the client disconnects."""
    build_server(app).run("stdio")
