-- Team memory across machines: each machine's drain worker delivers its local hook outbox here, in its own
-- sequence order; any machine's worker applies a row exactly once (docs/postgresql.md, "Several machines").

-- The last sequence each machine delivered: a new event must name it as its predecessor (gap-safe).
CREATE TABLE passive_event_streams (
    machine_id text PRIMARY KEY,
    last_seq bigint NOT NULL CHECK (last_seq >= 1),
    updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- One row per delivered event: immutable as delivered, then pending -> claimed -> retry -> applied | quarantined.
CREATE TABLE passive_event_inbox (
    event_uuid uuid PRIMARY KEY,
    project_id text NOT NULL,
    machine_id text NOT NULL,
    seq bigint NOT NULL CHECK (seq >= 1),
    version integer NOT NULL CHECK (version >= 1),
    event text NOT NULL,
    payload text NOT NULL,
    digest text NOT NULL,
    created_at timestamptz NOT NULL,
    inserted_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    state text NOT NULL DEFAULT 'pending'
        CHECK (state IN ('pending', 'claimed', 'retry', 'applied', 'quarantined')),
    attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_attempt_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    claim_token text,
    claim_expires_at timestamptz,
    last_error text,
    applied_at timestamptz,
    quarantined_at timestamptz,
    CONSTRAINT passive_event_inbox_machine_seq UNIQUE (machine_id, seq),
    CONSTRAINT passive_event_inbox_claimed CHECK (state <> 'claimed' OR (claim_token IS NOT NULL
        AND claim_expires_at IS NOT NULL)),
    CONSTRAINT passive_event_inbox_applied CHECK ((state = 'applied') = (applied_at IS NOT NULL)),
    CONSTRAINT passive_event_inbox_quarantined CHECK ((state = 'quarantined') = (quarantined_at IS NOT NULL))
);
CREATE INDEX passive_event_inbox_open_idx ON passive_event_inbox (machine_id, seq)
    WHERE state IN ('pending', 'claimed', 'retry');
CREATE INDEX passive_event_inbox_project_idx ON passive_event_inbox (project_id, state);

-- The effect of applying an event: the project's team activity log (one row per event, in apply order).
CREATE TABLE passive_event_log (
    project_id text NOT NULL,
    event_uuid uuid NOT NULL,
    machine_id text NOT NULL,
    seq bigint NOT NULL,
    applied_order bigint GENERATED ALWAYS AS IDENTITY,
    event text NOT NULL,
    session_id text,
    tool_name text,
    status text,
    files text[] NOT NULL DEFAULT '{}',
    detail text,
    observed_at timestamptz NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (project_id, event_uuid)
);
CREATE INDEX passive_event_log_files_idx ON passive_event_log USING gin (files);
CREATE INDEX passive_event_log_machine_idx ON passive_event_log (project_id, machine_id, seq);
