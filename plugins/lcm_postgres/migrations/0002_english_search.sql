-- Full-text search stems and ignores English stop words (the 'english' configuration), so
-- natural-language questions find messages written with other word endings; SQLite's FTS5
-- index stems the same way (porter). Regenerating the column rebuilds every tsvector.
ALTER TABLE messages DROP COLUMN content_tsv;
ALTER TABLE messages ADD COLUMN content_tsv tsvector
    GENERATED ALWAYS AS (to_tsvector('english'::regconfig, left(content, 100000))) STORED;
CREATE INDEX messages_tsv_idx ON messages USING gin (content_tsv);

ALTER TABLE summaries DROP COLUMN content_tsv;
ALTER TABLE summaries ADD COLUMN content_tsv tsvector
    GENERATED ALWAYS AS (to_tsvector('english'::regconfig, left(content, 100000))) STORED;
CREATE INDEX summaries_tsv_idx ON summaries USING gin (content_tsv);

ALTER TABLE memories DROP COLUMN content_tsv;
ALTER TABLE memories ADD COLUMN content_tsv tsvector
    GENERATED ALWAYS AS (to_tsvector('english'::regconfig, left(content, 100000))) STORED;
CREATE INDEX memories_tsv_idx ON memories USING gin (content_tsv);
