-- Every surfacing of a recall target (memory, summary): which, by what query, when.
CREATE TABLE recall_surfacings (
    surfacing_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id text NOT NULL,
    target_id text NOT NULL,
    query text,
    surfaced_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX recall_surfacings_target_idx ON recall_surfacings (project_id, target_id, surfaced_at);
