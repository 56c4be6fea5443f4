-- LCM runtime grants for role lcm_runtime on schema lcm; run as the owner of schema lcm.
-- The role gets no DDL, TRUNCATE, sequence or grant-option privilege.
BEGIN;
GRANT USAGE ON SCHEMA "lcm" TO "lcm_runtime";
GRANT SELECT ON "lcm".schema_migrations TO "lcm_runtime";
GRANT SELECT, INSERT ON "lcm".projects TO "lcm_runtime";
GRANT SELECT, INSERT ON "lcm".machines TO "lcm_runtime";
GRANT SELECT, INSERT ON "lcm".remote_projects TO "lcm_runtime";
GRANT SELECT, INSERT ON "lcm".project_bindings TO "lcm_runtime";
GRANT SELECT, INSERT ON "lcm".conversations TO "lcm_runtime";
GRANT SELECT, INSERT, DELETE ON "lcm".messages TO "lcm_runtime";
GRANT SELECT, INSERT ON "lcm".message_parts TO "lcm_runtime";
GRANT SELECT, INSERT ON "lcm".summaries TO "lcm_runtime";
GRANT SELECT, INSERT ON "lcm".summary_messages TO "lcm_runtime";
GRANT SELECT, INSERT ON "lcm".summary_parents TO "lcm_runtime";
GRANT SELECT, INSERT, UPDATE, DELETE ON "lcm".context_items TO "lcm_runtime";
GRANT SELECT, INSERT ON "lcm".large_files TO "lcm_runtime";
GRANT SELECT, INSERT, UPDATE, DELETE ON "lcm".memories TO "lcm_runtime";
GRANT SELECT, INSERT, UPDATE, DELETE ON "lcm".recall_stats TO "lcm_runtime";
GRANT SELECT, INSERT, DELETE ON "lcm".recall_surfacings TO "lcm_runtime";
GRANT SELECT, INSERT, UPDATE, DELETE ON "lcm".redaction_counts TO "lcm_runtime";
GRANT SELECT, INSERT, UPDATE ON "lcm".session_ingests TO "lcm_runtime";
GRANT SELECT, INSERT, UPDATE ON "lcm".leases TO "lcm_runtime";
GRANT SELECT, INSERT ON "lcm".native_transcripts TO "lcm_runtime";
GRANT SELECT, INSERT, UPDATE ON "lcm".ingest_checkpoints TO "lcm_runtime";
GRANT SELECT, INSERT, UPDATE ON "lcm".subagent_links TO "lcm_runtime";
COMMIT;
