-- LCM PostgreSQL baseline. Runs inside the migrator's transaction with
-- search_path = <managed schema>, public; object names stay unqualified so the
-- same file (and checksum) serves any configured schema. pg_trgm must already
-- be installed by an administrator; LCM never creates extensions.

CREATE TABLE projects (
    project_id text PRIMARY KEY,
    root text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE TABLE machines (
    machine_id uuid PRIMARY KEY,
    alias text NOT NULL,
    registered_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE TABLE remote_projects (
    project_uuid uuid PRIMARY KEY,
    name text NOT NULL,
    created_by uuid NOT NULL REFERENCES machines (machine_id),
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE TABLE project_bindings (
    machine_id uuid NOT NULL REFERENCES machines (machine_id),
    root text NOT NULL,
    project_uuid uuid NOT NULL REFERENCES remote_projects (project_uuid),
    bound_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (machine_id, root)
);

CREATE TABLE conversations (
    conversation_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id text NOT NULL,
    session_id text NOT NULL,
    title text,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX conversations_session_idx ON conversations (project_id, session_id, created_at, conversation_id);
CREATE INDEX conversations_created_idx ON conversations (project_id, created_at, conversation_id);

CREATE TABLE messages (
    message_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id text NOT NULL,
    conversation_id bigint NOT NULL REFERENCES conversations (conversation_id) ON DELETE CASCADE,
    seq bigint NOT NULL CHECK (seq >= 0),
    role text NOT NULL CHECK (role IN ('user', 'assistant', 'system', 'tool')),
    content text NOT NULL,
    token_count bigint NOT NULL CHECK (token_count >= 0),
    created_at timestamptz NOT NULL,
    content_tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, left(content, 100000))) STORED,
    CONSTRAINT messages_conversation_seq_key UNIQUE (conversation_id, seq)
);
CREATE INDEX messages_project_created_idx ON messages (project_id, created_at, message_id);
CREATE INDEX messages_tsv_idx ON messages USING gin (content_tsv);
CREATE INDEX messages_trgm_idx ON messages USING gin (content gin_trgm_ops);

CREATE TABLE message_parts (
    part_id text PRIMARY KEY DEFAULT gen_random_uuid()::text,
    project_id text NOT NULL,
    message_id bigint NOT NULL REFERENCES messages (message_id) ON DELETE CASCADE,
    ordinal bigint NOT NULL CHECK (ordinal >= 0),
    kind text NOT NULL CHECK (kind IN ('text', 'tool_call', 'tool_result', 'reasoning', 'image', 'file', 'other')),
    text text,
    tool_call_id text,
    tool_name text,
    is_error boolean NOT NULL DEFAULT false,
    raw_json text,
    metadata text,
    CONSTRAINT message_parts_message_ordinal_key UNIQUE (message_id, ordinal)
);

CREATE TABLE summaries (
    project_id text NOT NULL,
    summary_id text NOT NULL,
    conversation_id bigint NOT NULL REFERENCES conversations (conversation_id) ON DELETE CASCADE,
    kind text NOT NULL CHECK (kind IN ('leaf', 'condensed')),
    depth bigint NOT NULL CHECK (depth >= 0),
    content text NOT NULL,
    token_count bigint NOT NULL CHECK (token_count >= 0),
    earliest_at timestamptz,
    latest_at timestamptz,
    descendant_count bigint NOT NULL CHECK (descendant_count >= 0),
    file_ids text[] NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    content_tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, left(content, 100000))) STORED,
    PRIMARY KEY (project_id, summary_id)
);
CREATE INDEX summaries_conversation_idx ON summaries (conversation_id, depth, created_at);
CREATE INDEX summaries_tsv_idx ON summaries USING gin (content_tsv);
CREATE INDEX summaries_trgm_idx ON summaries USING gin (content gin_trgm_ops);

CREATE TABLE summary_messages (
    project_id text NOT NULL,
    summary_id text NOT NULL,
    ordinal integer NOT NULL,
    message_id bigint NOT NULL REFERENCES messages (message_id),
    PRIMARY KEY (project_id, summary_id, ordinal),
    FOREIGN KEY (project_id, summary_id) REFERENCES summaries (project_id, summary_id) ON DELETE CASCADE
);
CREATE INDEX summary_messages_message_idx ON summary_messages (message_id);

CREATE TABLE summary_parents (
    project_id text NOT NULL,
    summary_id text NOT NULL,
    ordinal integer NOT NULL,
    parent_id text NOT NULL,
    PRIMARY KEY (project_id, summary_id, ordinal),
    FOREIGN KEY (project_id, summary_id) REFERENCES summaries (project_id, summary_id) ON DELETE CASCADE,
    FOREIGN KEY (project_id, parent_id) REFERENCES summaries (project_id, summary_id)
);
CREATE INDEX summary_parents_parent_idx ON summary_parents (project_id, parent_id);

CREATE TABLE context_items (
    project_id text NOT NULL,
    conversation_id bigint NOT NULL REFERENCES conversations (conversation_id) ON DELETE CASCADE,
    ordinal bigint NOT NULL CHECK (ordinal >= 0),
    message_id bigint REFERENCES messages (message_id) ON DELETE CASCADE,
    summary_id text,
    CHECK ((message_id IS NULL) <> (summary_id IS NULL)),
    CONSTRAINT context_items_conversation_ordinal_key UNIQUE (conversation_id, ordinal)
        DEFERRABLE INITIALLY IMMEDIATE,
    FOREIGN KEY (project_id, summary_id) REFERENCES summaries (project_id, summary_id)
);

CREATE TABLE large_files (
    project_id text NOT NULL,
    file_id text NOT NULL,
    conversation_id bigint NOT NULL REFERENCES conversations (conversation_id) ON DELETE CASCADE,
    message_id bigint REFERENCES messages (message_id) ON DELETE SET NULL,
    file_name text,
    mime_type text,
    byte_size bigint NOT NULL CHECK (byte_size >= 0),
    token_count bigint NOT NULL CHECK (token_count >= 0),
    sha256 text NOT NULL,
    exploration_summary text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (project_id, file_id)
);
CREATE INDEX large_files_conversation_idx ON large_files (conversation_id, created_at);

CREATE TABLE memories (
    memory_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id text NOT NULL,
    content text NOT NULL,
    tags text[] NOT NULL DEFAULT '{}',
    confidence double precision NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
    source_summary_id text,
    metadata text,
    archived boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    content_tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, left(content, 100000))) STORED
);
CREATE INDEX memories_project_idx ON memories (project_id, created_at, memory_id);
CREATE INDEX memories_tsv_idx ON memories USING gin (content_tsv);
CREATE INDEX memories_trgm_idx ON memories USING gin (content gin_trgm_ops);

CREATE TABLE recall_stats (
    project_id text NOT NULL,
    target_id text NOT NULL,
    surfaced bigint NOT NULL DEFAULT 0,
    useful bigint NOT NULL DEFAULT 0,
    not_useful bigint NOT NULL DEFAULT 0,
    last_surfaced_at timestamptz,
    last_query text,
    PRIMARY KEY (project_id, target_id)
);

CREATE TABLE redaction_counts (
    project_id text NOT NULL,
    category text NOT NULL,
    count bigint NOT NULL CHECK (count >= 0),
    PRIMARY KEY (project_id, category)
);

CREATE TABLE session_ingests (
    project_id text NOT NULL,
    session_id text NOT NULL,
    source text NOT NULL,
    completed_at timestamptz NOT NULL,
    message_count bigint NOT NULL CHECK (message_count >= 0),
    PRIMARY KEY (project_id, session_id)
);

CREATE TABLE leases (
    project_id text NOT NULL,
    name text NOT NULL,
    holder text NOT NULL,
    fence bigint NOT NULL CHECK (fence > 0),
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (project_id, name)
);

CREATE TABLE native_transcripts (
    transcript_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id text NOT NULL,
    ingest_key text NOT NULL,
    client_name text NOT NULL,
    format_name text NOT NULL,
    format_version text NOT NULL,
    native_session_id text NOT NULL,
    source_locator text NOT NULL,
    source_ordinal bigint NOT NULL CHECK (source_ordinal >= 0),
    payload_json text NOT NULL,
    content_sha256 text NOT NULL,
    scrubber_version text NOT NULL,
    observed_at timestamptz NOT NULL,
    ingested_at timestamptz NOT NULL,
    message_id bigint REFERENCES messages (message_id) ON DELETE SET NULL,
    CONSTRAINT native_transcripts_ingest_key UNIQUE (project_id, ingest_key)
);
CREATE INDEX native_transcripts_session_idx ON native_transcripts (project_id, native_session_id, transcript_id);
CREATE INDEX native_transcripts_source_idx ON native_transcripts (project_id, source_locator, source_ordinal);
CREATE INDEX native_transcripts_message_idx ON native_transcripts (message_id);

CREATE TABLE ingest_checkpoints (
    project_id text NOT NULL,
    source_key text NOT NULL,
    revision bigint NOT NULL CHECK (revision >= 0),
    byte_offset bigint NOT NULL CHECK (byte_offset >= 0),
    prefix_sha256 text NOT NULL,
    scrubber_version text NOT NULL,
    last_source_ordinal bigint NOT NULL,
    imported bigint NOT NULL CHECK (imported >= 0),
    skipped bigint NOT NULL CHECK (skipped >= 0),
    quarantined bigint NOT NULL CHECK (quarantined >= 0),
    state_json text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (project_id, source_key)
);
