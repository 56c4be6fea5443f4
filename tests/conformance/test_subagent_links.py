"""Sub-agent links: a run's conversation, its parent session and the tool call that started it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from lcm_framework.errors import DataValidationError, NotFoundError
from lcm_framework.storage.contracts import ProjectStorage, Repositories
from lcm_framework.storage.models import NewMessage, Role, SearchMode, SearchQuery, SubagentLink


def _conversation_with(project: ProjectStorage, session: str, text: str) -> tuple[int, int]:
    conv = project.conversations.create_conversation(session)
    (msg,) = project.conversations.append_messages(conv.conversation_id, [NewMessage(Role.ASSISTANT, text, 3)])
    return conv.conversation_id, msg.message_id


def test_link_is_stored_then_completed_never_overwritten(project: ProjectStorage) -> None:
    parent, call = _conversation_with(project, "parent", "tool call Task: start the review")
    child, _ = _conversation_with(project, "parent/agent-a1", "reviewing the parser")
    repo = project.conversations
    first = repo.link_subagent(SubagentLink(child, "parent", agent_id="a1", prompt_sha256="ab" * 32))
    assert first == SubagentLink(child, "parent", "a1", None, "ab" * 32)
    assert repo.get_subagent_link(child) == first
    done = repo.link_subagent(SubagentLink(child, "ignored", agent_id="other", agent_type="Explore",
                                           parent_conversation_id=parent, parent_message_id=call,
                                           tool_call_id="toolu_1"))
    assert done == SubagentLink(child, "parent", "a1", "Explore", "ab" * 32, parent, call, "toolu_1")
    assert repo.get_subagent_link(child) == done
    assert repo.link_subagent(SubagentLink(child, "parent")) == done  # repeating converges
    assert repo.get_subagent_link(parent) is None


def test_links_are_listed_by_parent_session(project: ProjectStorage) -> None:
    repo = project.conversations
    children = [_conversation_with(project, f"s{n}/agent-{n}", "x")[0] for n in range(3)]
    links = [repo.link_subagent(SubagentLink(cid, "s1" if n < 2 else "s2")) for n, cid in enumerate(children)]
    assert repo.list_subagent_links() == sorted(links, key=lambda link: link.child_conversation_id)
    assert repo.list_subagent_links(parent_session_id="s1") == links[:2]
    assert repo.list_subagent_links(parent_session_id="none") == []
    assert project.stats().subagent_conversations == 3


def test_link_refuses_missing_rows_and_bad_values(project: ProjectStorage) -> None:
    child, msg = _conversation_with(project, "c", "x")
    repo = project.conversations
    for bad in (SubagentLink(10**9, "p"), SubagentLink(child, "p", parent_conversation_id=10**9),
                SubagentLink(child, "p", parent_message_id=10**9)):
        with pytest.raises(NotFoundError):
            repo.link_subagent(bad)
    for bad in (SubagentLink(child, ""), SubagentLink(child, "p", agent_id="a\x00"),
                SubagentLink(child, "p", parent_message_id=-1)):
        with pytest.raises(DataValidationError):
            repo.link_subagent(bad)
    assert repo.get_subagent_link(child) is None and repo.list_subagent_links() == []
    assert repo.link_subagent(SubagentLink(child, "p", parent_message_id=msg)).parent_message_id == msg


def test_links_are_project_isolated(project: ProjectStorage, other_project: ProjectStorage) -> None:
    child, _ = _conversation_with(project, "c", "x")
    other_child, _ = _conversation_with(other_project, "c", "x")
    link = project.conversations.link_subagent(SubagentLink(child, "p", agent_id="mine"))
    assert project.conversations.list_subagent_links() == [link]
    assert project.conversations.get_subagent_link(child) == link
    assert other_project.conversations.list_subagent_links() == []
    assert other_project.conversations.get_subagent_link(other_child) is None
    theirs = other_project.conversations.link_subagent(SubagentLink(other_child, "q", agent_id="theirs"))
    assert other_project.conversations.list_subagent_links() == [theirs]
    assert project.conversations.list_subagent_links() == [link]
    assert project.conversations.get_subagent_link(child) == link


@pytest.mark.parametrize("mode", [SearchMode.FULL_TEXT, SearchMode.SUBSTRING])
def test_search_can_leave_out_subagent_conversations(project: ProjectStorage, mode: SearchMode) -> None:
    parent, _ = _conversation_with(project, "p", "the parser is broken")
    child, _ = _conversation_with(project, "p/agent-1", "the parser is fixed")
    project.conversations.link_subagent(SubagentLink(child, "p"))
    query = SearchQuery("parser", mode)
    assert {h.conversation_id for h in project.lexical_search.search(query)} == {parent, child}
    assert {h.conversation_id for h in project.lexical_search.search(replace(query, include_subagents=False))} == \
        {parent}
    scoped = replace(query, conversation_id=child, include_subagents=False)
    assert project.lexical_search.search(scoped) == []


def test_linking_in_two_transactions_at_once_is_serialized(project: ProjectStorage) -> None:
    """A run linked in one transaction is seen by another transaction listing that parent's runs meanwhile."""
    import threading

    child, _ = _conversation_with(project, "p/agent-1", "x")
    linked, release = threading.Event(), threading.Event()
    seen: list[list[SubagentLink]] = []

    def first(repos: Repositories) -> None:
        repos.conversations.link_subagent(SubagentLink(child, "p", agent_id="1"))
        linked.set()
        release.wait(10)

    def second(repos: Repositories) -> None:
        seen.append(repos.conversations.list_subagent_links(parent_session_id="p"))

    writer = threading.Thread(target=project.transaction, args=(first,))
    writer.start()
    assert linked.wait(10)
    reader = threading.Thread(target=project.transaction, args=(second,))
    reader.start()
    reader.join(0.5)
    assert reader.is_alive() and seen == []  # it waits for the first transaction
    release.set()
    writer.join(10)
    reader.join(10)
    assert [link.agent_id for link in seen[0]] == ["1"]
