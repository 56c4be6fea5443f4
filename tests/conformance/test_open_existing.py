"""``open_existing_project``: reads open a project only when it is stored, and never create one."""

from __future__ import annotations

from lcm_framework.storage.contracts import StorageBackendFactory
from lcm_framework.storage.models import NewMessage, Role

from .conftest import make_ref


def test_an_unknown_project_is_none_and_stays_unlisted(factory: StorageBackendFactory) -> None:
    ref = make_ref("never-written")
    assert factory.open_existing_project(ref) is None
    assert factory.open_existing_project(ref) is None
    assert ref.project_id not in {r.project_id for r in factory.list_projects()}
    assert factory.health().ok


def test_a_stored_project_opens_with_its_data(factory: StorageBackendFactory) -> None:
    ref = make_ref("written")
    writer = factory.open_project(ref)
    try:
        conversation = writer.conversations.create_conversation("s-1")
        writer.conversations.append_messages(conversation.conversation_id, [NewMessage(Role.USER, "hello", 1)])
    finally:
        writer.close()
    reader = factory.open_existing_project(ref)
    assert reader is not None
    try:
        assert reader.project_id == ref.project_id
        assert [c.session_id for c in reader.conversations.list_conversations()] == ["s-1"]
        assert reader.stats().messages == 1
    finally:
        reader.close()
    assert factory.open_existing_project(make_ref("other")) is None
    assert [r.project_id for r in factory.list_projects()] == [ref.project_id]
