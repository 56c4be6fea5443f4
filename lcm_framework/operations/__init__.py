"""The operations layer: one function per verb, a typed request in, a typed result out.

The front doors (the ``lcm`` commands, the MCP tools, the daemon's routes, the web explorer) build a request
from what they parsed, call the verb and render its result: ``result.to_json()`` is the one JSON form, what
``--json`` prints, the tool returns and the route answers. Nothing here prints, parses a command line or
speaks HTTP. Modules, one per verb group: ``recall`` (grep, search, describe, expand), ``context``,
``compaction`` (compact, promote), ``memory`` (the ``lcm memory`` actions, the agent's store and feedback),
``sessions``, ``health`` (stats, status, doctor), ``transfer`` (import transcripts, export records); ``browse``
holds the web explorer's reads.
"""

from .base import Result, from_arguments
from .compaction import Compacted, CompactRequest, Promoted, PromoteRequest, compact, promote
from .context import Context, ContextRequest, context
from .health import (
    Diagnosis,
    DoctorRequest,
    Stats,
    StatsRequest,
    Status,
    StatusRequest,
    doctor,
    stats,
    status,
)
from .memory import (
    FeedbackGiven,
    FeedbackRequest,
    MemoryDone,
    MemoryRequest,
    Stored,
    StoreRequest,
    feedback,
    memory,
    store,
)
from .recall import (
    Described,
    DescribeRequest,
    Expanded,
    ExpandRequest,
    GrepFound,
    GrepRequest,
    InvalidRegexError,
    SearchFound,
    SearchRequest,
    describe,
    expand,
    grep,
    search,
)
from .sessions import Sessions, SessionsRequest, sessions
from .transfer import Exported, ExportRequest, Imported, ImportRequest, export_records, import_transcripts

__all__ = [
    "CompactRequest",
    "Compacted",
    "Context",
    "ContextRequest",
    "DescribeRequest",
    "Described",
    "Diagnosis",
    "DoctorRequest",
    "ExpandRequest",
    "Expanded",
    "ExportRequest",
    "Exported",
    "FeedbackGiven",
    "FeedbackRequest",
    "GrepFound",
    "GrepRequest",
    "ImportRequest",
    "Imported",
    "InvalidRegexError",
    "MemoryDone",
    "MemoryRequest",
    "PromoteRequest",
    "Promoted",
    "Result",
    "SearchFound",
    "SearchRequest",
    "Sessions",
    "SessionsRequest",
    "Stats",
    "StatsRequest",
    "Status",
    "StatusRequest",
    "StoreRequest",
    "Stored",
    "compact",
    "context",
    "describe",
    "doctor",
    "expand",
    "export_records",
    "feedback",
    "from_arguments",
    "grep",
    "import_transcripts",
    "memory",
    "promote",
    "search",
    "sessions",
    "stats",
    "status",
    "store",
]
