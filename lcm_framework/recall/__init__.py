"""Recall services: grep, search, describe, expand and verify, returning dataclasses."""

from .across import find_all, grep_all, search_all
from .describe import Description, describe
from .expand import Expansion, Node, expand
from .grep import GrepResult, Hit, HitGroup, Scope, grep
from .refs import (
    InvalidArgumentError,
    InvalidReferenceError,
    RecallNotFoundError,
    Ref,
    RefKind,
    SessionNotFoundError,
    parse_ref,
    parse_since,
)
from .scope import project_scopes, resolve_session
from .search import Ranked, search
from .verify import VerifyReport, reachable_messages, verify

__all__ = [
    "Description",
    "Expansion",
    "GrepResult",
    "Hit",
    "HitGroup",
    "InvalidArgumentError",
    "InvalidReferenceError",
    "Node",
    "Ranked",
    "RecallNotFoundError",
    "Ref",
    "RefKind",
    "Scope",
    "SessionNotFoundError",
    "VerifyReport",
    "describe",
    "expand",
    "find_all",
    "grep",
    "grep_all",
    "parse_ref",
    "parse_since",
    "project_scopes",
    "reachable_messages",
    "resolve_session",
    "search",
    "search_all",
    "verify",
]
