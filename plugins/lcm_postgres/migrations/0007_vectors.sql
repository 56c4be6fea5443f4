-- The semantic recall lane: one quantized vector (a signed byte per dimension) per message and per summary,
-- and the embedder they come from (a change of embedder drops them; `lcm embed` fills them again).
CREATE TABLE vector_spaces (
    project_id text PRIMARY KEY,
    embedder text NOT NULL,
    dimensions integer NOT NULL CHECK (dimensions >= 1)
);

CREATE TABLE message_vectors (
    row_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id text NOT NULL,
    message_id bigint NOT NULL UNIQUE REFERENCES messages (message_id) ON DELETE CASCADE,
    vector bytea NOT NULL
);
CREATE INDEX message_vectors_project_idx ON message_vectors (project_id, row_id);

CREATE TABLE summary_vectors (
    row_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id text NOT NULL,
    summary_id text NOT NULL,
    vector bytea NOT NULL,
    UNIQUE (project_id, summary_id),
    FOREIGN KEY (project_id, summary_id) REFERENCES summaries (project_id, summary_id) ON DELETE CASCADE
);
CREATE INDEX summary_vectors_project_idx ON summary_vectors (project_id, row_id);
