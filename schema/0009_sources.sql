-- 0009_sources: the PTX the daemon compiled entries from, kept so that it can compile them again
-- without a client (a driver upgrade's or a new arch's re-JIT: daemon/rejit/), deduplicated by
-- content digest, zstd-compressed, within the source_budget (daemon/store/sources.hpp,
-- docs/entry-format.md "sources").
--
-- Released migrations are never edited: a change is a new NNNN_name.sql file. This file runs inside
-- the migrator's transaction, so it must not contain BEGIN, COMMIT or PRAGMA statements.

-- One row per distinct source. content_digest is the key's content field (the chunked SHA-256 of
-- the PTX, docs/cache-key.md): every entry of that content shares the row.
CREATE TABLE sources (
  id INTEGER PRIMARY KEY NOT NULL,
  content_digest BLOB NOT NULL UNIQUE CHECK (length(content_digest) = 32),
  codec INTEGER NOT NULL CHECK (codec IN (0, 1)),
  raw_size INTEGER NOT NULL CHECK (raw_size > 0),
  stored_size INTEGER NOT NULL CHECK (stored_size > 0),
  kept_at_ms INTEGER NOT NULL,
  data BLOB NOT NULL
) STRICT;

-- Which entry was compiled from which source, and with which nvJitLink options (besides -arch):
-- the ones the daemon's option mapping gave for the entry's canonical options at the time, so the
-- record stays true if a later mapping differs. Deleting the entry deletes its row.
CREATE TABLE entry_sources (
  entry_id INTEGER PRIMARY KEY NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
  source_id INTEGER NOT NULL REFERENCES sources (id),
  worker_options TEXT NOT NULL
) STRICT;

CREATE INDEX entry_sources_by_source ON entry_sources (source_id);

-- A source goes with the last entry compiled from it, whatever code deletes the entry.
CREATE TRIGGER entry_sources_after_delete AFTER DELETE ON entry_sources
WHEN NOT EXISTS (SELECT 1 FROM entry_sources WHERE source_id = OLD.source_id)
BEGIN
  DELETE FROM sources WHERE id = OLD.source_id;
END;

-- Count and bytes of the sources in the totals row, so STATS never scans them.
ALTER TABLE totals ADD COLUMN sources INTEGER NOT NULL DEFAULT 0;
ALTER TABLE totals ADD COLUMN source_bytes INTEGER NOT NULL DEFAULT 0;

CREATE TRIGGER sources_totals_after_insert AFTER INSERT ON sources
BEGIN
  UPDATE totals SET sources = sources + 1, source_bytes = source_bytes + NEW.stored_size WHERE id = 0;
END;

CREATE TRIGGER sources_totals_after_delete AFTER DELETE ON sources
BEGIN
  UPDATE totals SET sources = sources - 1, source_bytes = source_bytes - OLD.stored_size WHERE id = 0;
END;
