-- Sub-agent runs: each child conversation's parent session and the tool call that started it.

CREATE TABLE subagent_links (
    project_id text NOT NULL,
    child_conversation_id bigint PRIMARY KEY REFERENCES conversations (conversation_id) ON DELETE CASCADE,
    parent_session_id text NOT NULL,
    agent_id text,
    agent_type text,
    prompt_sha256 text,
    parent_conversation_id bigint REFERENCES conversations (conversation_id) ON DELETE SET NULL,
    parent_message_id bigint REFERENCES messages (message_id) ON DELETE SET NULL,
    tool_call_id text
);
CREATE INDEX subagent_links_parent_idx ON subagent_links (project_id, parent_session_id, child_conversation_id);
