-- Team learning without rescanning the log: the files each session edited, and per pair of files the
-- number of sessions that edited both (kept up to date by the applied transition, exactly once).
CREATE TABLE passive_session_files (
    project_id text NOT NULL,
    session_id text NOT NULL,
    path text NOT NULL,
    PRIMARY KEY (project_id, session_id, path)
);

CREATE TABLE passive_co_edits (
    project_id text NOT NULL,
    path_a text NOT NULL,
    path_b text NOT NULL,
    sessions bigint NOT NULL CHECK (sessions >= 1),
    PRIMARY KEY (project_id, path_a, path_b),
    CHECK (path_a < path_b)
);
CREATE INDEX passive_co_edits_b_idx ON passive_co_edits (project_id, path_b);
