"""The arguments of the recall tools, described once: the ``lcm_recall`` capabilities (MCP, daemon) and the
``lcm grep/search/describe/expand`` options derive from these, defaults included."""

from __future__ import annotations

from ..kernel.extensions import Argument

MAX_LIMIT = 200
MAX_CONTENT_CHARS = 200_000

ALL_PROJECTS = Argument("all_projects", bool, "Look in every project under $LCM_HOME, not only this one.",
                        default=False)
SUBAGENTS = Argument("include_subagents", bool, "Also search the conversations of sub-agent runs (Task/Agent "
                     "calls); false leaves them out. Their hits name the parent session and tool call.",
                     default=True, flag="--no-subagents",
                     off_help="Leave out the conversations of sub-agent runs (Task/Agent calls), which are "
                              "searched by default.")

GREP = (
    Argument("pattern", str, "The exact text to find (substring), the words to find (full_text) or a regex.",
             required=True),
    Argument("mode", str, "How pattern matches: substring (the exact text, case-sensitive), full_text (every "
             "word, in any order and case, stemmed) or regex (the backend's syntax: RE2 on SQLite).",
             default="substring", choices=("substring", "full_text", "regex")),
    Argument("scope", str, "What to search.", default="both", choices=("messages", "summaries", "both")),
    Argument("session", str, "Only this session id (or unique prefix)."),
    Argument("since", str, "Only items at or after this ISO date/time."),
    Argument("limit", int, "Maximum hits per kind.", default=20, minimum=1, maximum=MAX_LIMIT),
    SUBAGENTS,
    ALL_PROJECTS,
)
SEARCH = (
    Argument("query", str, "Words to look for.", required=True),
    Argument("limit", int, "Maximum results.", default=10, minimum=1, maximum=MAX_LIMIT),
    Argument("context", int, "Neighbouring turns shown before and after each message hit (0: none).",
             default=1, minimum=0, maximum=3),
    SUBAGENTS,
    ALL_PROJECTS,
)
DESCRIBE = (
    Argument("id", str, "sum_<hex>, msg_<number>, file_<hex> or mem_<number>.", required=True),
    Argument("max_chars", int, "Cut the content after this many characters.", default=50_000, minimum=100,
             maximum=MAX_CONTENT_CHARS),
    ALL_PROJECTS,
)
EXPAND = (
    Argument("id", str, "A summary id (sum_<hex>) or msg_<number>.", required=True),
    Argument("depth", int, "Levels to descend.", default=1, minimum=1, maximum=64),
    Argument("include_messages", bool, "Expand leaf summaries to their source messages, verbatim.", default=False),
    Argument("token_cap", int, "Stop before passing this many tokens (default compaction.max_expand_tokens).",
             minimum=100, maximum=100_000),
    ALL_PROJECTS,
)
