"""What a transcript format plugin implements and produces.

``TranscriptFormat`` (and ``SubagentFormat``) are the contracts; ``NewMessage``/``NewPart`` with ``Role`` and
``PartKind`` are what ``map_record`` returns; ``FormatIdentity`` names the format. Record kinds
(``AGENT_SCAFFOLDING``, ``CLIENT_META``, ``COMPACT_SUMMARY``, ``LCM_CONTEXT``) tag non-conversation records;
``CLIENT_AUTHORED`` marks a part the client wrote into a user turn.
The helpers turn native values into those inputs without raising on odd input (a message's token estimate:
``plugin_api.summarize.estimate_tokens``).
"""

from ..storage.inputs import FormatIdentity, NewMessage, NewPart, PartKind, Role
from ..transcripts.contracts import (
    AGENT_SCAFFOLDING,
    CLIENT_AUTHORED,
    CLIENT_META,
    COMPACT_SUMMARY,
    LCM_CONTEXT,
    MappedRecord,
    PartView,
    Spawn,
    SpawnedBy,
    SubagentFormat,
    SubagentRef,
    TranscriptFormat,
)
from ..transcripts.format_helpers import (
    is_lcm_context,
    parse_timestamp,
    prompt_sha256,
    string_fields,
    to_json,
)

__all__ = [
    "AGENT_SCAFFOLDING",
    "CLIENT_AUTHORED",
    "CLIENT_META",
    "COMPACT_SUMMARY",
    "LCM_CONTEXT",
    "FormatIdentity",
    "MappedRecord",
    "NewMessage",
    "NewPart",
    "PartKind",
    "PartView",
    "Role",
    "Spawn",
    "SpawnedBy",
    "SubagentFormat",
    "SubagentRef",
    "TranscriptFormat",
    "is_lcm_context",
    "parse_timestamp",
    "prompt_sha256",
    "string_fields",
    "to_json",
]
