-- 0001_initial: the first jitcache store schema (docs/entry-format.md describes every column).
--
-- Released migrations are never edited: a change is a new NNNN_name.sql file. This file runs inside
-- the migrator's transaction, so it must not contain BEGIN, COMMIT or PRAGMA statements.

-- Schema version bookkeeping (Chromium sql/meta_table.h style). Rows: 'version' (the newest
-- migration applied) and 'compatible_version' (the oldest schema version whose code can still use
-- this file).
CREATE TABLE meta (
  key TEXT PRIMARY KEY NOT NULL,
  value TEXT NOT NULL
) STRICT;

-- One row per (key id, namespace): every cache-key field in its own column, so a mismatch is
-- visible rather than inferred, plus what is known about the image. The image bytes live in blobs,
-- so scans of this table (LIST, eviction, stats) never read image pages.
CREATE TABLE entries (
  id INTEGER PRIMARY KEY NOT NULL,
  key_id BLOB NOT NULL CHECK (length(key_id) = 32),
  namespace INTEGER NOT NULL CHECK (namespace BETWEEN 0 AND 4294967295),
  key_schema INTEGER NOT NULL,
  content_digest BLOB NOT NULL CHECK (length(content_digest) = 32),
  arch TEXT NOT NULL,
  driver_api INTEGER NOT NULL,
  driver_build TEXT NOT NULL,
  options TEXT NOT NULL,
  producer TEXT NOT NULL,
  codec INTEGER NOT NULL,
  raw_size INTEGER NOT NULL CHECK (raw_size >= 0),
  stored_size INTEGER NOT NULL CHECK (stored_size >= 0),
  checksum BLOB NOT NULL CHECK (length(checksum) = 16),
  created_at_ms INTEGER NOT NULL,
  last_used_at_ms INTEGER NOT NULL,
  hits INTEGER NOT NULL CHECK (hits >= 0),
  compile_time_us INTEGER NOT NULL CHECK (compile_time_us >= 0)
) STRICT;

-- Lookups by key id, hex-prefix range scans, and LIST's cursor order (key_id, namespace).
CREATE UNIQUE INDEX entries_by_key ON entries (key_id, namespace);
-- LIST restricted to one namespace, REMOVE by an untrusted owner, per-uid accounting.
CREATE INDEX entries_by_namespace ON entries (namespace, key_id);
-- Least-recently-used eviction walks this from the oldest end.
CREATE INDEX entries_by_last_used ON entries (last_used_at_ms);

-- The image bytes, stored as the entry's codec says (raw in schema 1). entry_id is the rowid, so
-- sqlite3_blob_open reads an image without a lookup, and deleting an entry deletes its image.
CREATE TABLE blobs (
  entry_id INTEGER PRIMARY KEY NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
  data BLOB NOT NULL
) STRICT;

-- Exactly one row (id 0), kept exact by the triggers below, so STATS never scans the entries.
CREATE TABLE totals (
  id INTEGER PRIMARY KEY NOT NULL CHECK (id = 0),
  entries INTEGER NOT NULL,
  bytes_raw INTEGER NOT NULL,
  bytes_stored INTEGER NOT NULL
) STRICT;

INSERT INTO totals (id, entries, bytes_raw, bytes_stored) VALUES (0, 0, 0, 0);

CREATE TRIGGER entries_totals_after_insert AFTER INSERT ON entries
BEGIN
  UPDATE totals
  SET entries = entries + 1,
      bytes_raw = bytes_raw + NEW.raw_size,
      bytes_stored = bytes_stored + NEW.stored_size
  WHERE id = 0;
END;

CREATE TRIGGER entries_totals_after_delete AFTER DELETE ON entries
BEGIN
  UPDATE totals
  SET entries = entries - 1,
      bytes_raw = bytes_raw - OLD.raw_size,
      bytes_stored = bytes_stored - OLD.stored_size
  WHERE id = 0;
END;

CREATE TRIGGER entries_totals_after_update AFTER UPDATE OF raw_size, stored_size ON entries
BEGIN
  UPDATE totals
  SET bytes_raw = bytes_raw - OLD.raw_size + NEW.raw_size,
      bytes_stored = bytes_stored - OLD.stored_size + NEW.stored_size
  WHERE id = 0;
END;
