-- 0005_namespace_totals: entries and bytes per namespace (the shared one, 0, and each uid's), kept
-- exact by triggers as `totals` is, so the metrics endpoint reports bytes by namespace without
-- scanning the entries (docs/operations.md "Monitoring"). docs/entry-format.md describes the table.
--
-- Released migrations are never edited: a change is a new NNNN_name.sql file. This file runs inside
-- the migrator's transaction, so it must not contain BEGIN, COMMIT or PRAGMA statements.

-- One row per namespace that holds at least one entry (a row whose last entry goes is deleted).
CREATE TABLE namespace_totals (
  namespace INTEGER PRIMARY KEY NOT NULL,
  entries INTEGER NOT NULL,
  bytes_raw INTEGER NOT NULL,
  bytes_stored INTEGER NOT NULL
) STRICT;

-- Seeded from the entries once, here; the triggers keep it from then on.
INSERT INTO namespace_totals (namespace, entries, bytes_raw, bytes_stored)
  SELECT namespace, COUNT(*), SUM(raw_size), SUM(stored_size) FROM entries GROUP BY namespace;

CREATE TRIGGER entries_namespace_totals_after_insert AFTER INSERT ON entries
BEGIN
  INSERT INTO namespace_totals (namespace, entries, bytes_raw, bytes_stored)
    VALUES (NEW.namespace, 1, NEW.raw_size, NEW.stored_size)
    ON CONFLICT (namespace) DO UPDATE
    SET entries = entries + 1,
        bytes_raw = bytes_raw + excluded.bytes_raw,
        bytes_stored = bytes_stored + excluded.bytes_stored;
END;

CREATE TRIGGER entries_namespace_totals_after_delete AFTER DELETE ON entries
BEGIN
  UPDATE namespace_totals
  SET entries = entries - 1,
      bytes_raw = bytes_raw - OLD.raw_size,
      bytes_stored = bytes_stored - OLD.stored_size
  WHERE namespace = OLD.namespace;
  DELETE FROM namespace_totals WHERE namespace = OLD.namespace AND entries <= 0;
END;

-- An entry never changes namespace ((key id, namespace) is its identity); a PUT over it changes
-- its sizes.
CREATE TRIGGER entries_namespace_totals_after_update AFTER UPDATE OF raw_size, stored_size ON entries
BEGIN
  UPDATE namespace_totals
  SET bytes_raw = bytes_raw - OLD.raw_size + NEW.raw_size,
      bytes_stored = bytes_stored - OLD.stored_size + NEW.stored_size
  WHERE namespace = OLD.namespace;
END;
