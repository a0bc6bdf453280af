-- 0005_tenants: what multi-tenant trust needs in the store (docs/security.md):
-- the bytes each namespace holds, for the per-uid quota (namespace_quota), and the failure reports
-- of untrusted uids against shared entries, which quarantine an entry only once report_quorum
-- distinct uids agree. docs/entry-format.md describes both tables.
--
-- Released migrations are never edited: a change is a new NNNN_name.sql file. This file runs inside
-- the migrator's transaction, so it must not contain BEGIN, COMMIT or PRAGMA statements.

-- One row per namespace that holds entries (a row whose last entry goes is deleted), kept exact by
-- the triggers below as totals is for the whole store: a PUT checks its uid's quota, and the metrics
-- endpoint reports bytes by namespace (docs/operations.md "Monitoring"), without summing entries.
CREATE TABLE namespace_totals (
  namespace INTEGER PRIMARY KEY NOT NULL CHECK (namespace BETWEEN 0 AND 4294967295),
  entries INTEGER NOT NULL CHECK (entries >= 0),
  bytes_raw INTEGER NOT NULL CHECK (bytes_raw >= 0),
  bytes_stored INTEGER NOT NULL CHECK (bytes_stored >= 0)
) STRICT;

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
  DELETE FROM namespace_totals WHERE namespace = OLD.namespace AND entries = 0;
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

-- One row per (shared entry, untrusted uid that reported it failing to load). The entry is no
-- longer served to that uid at once; it is quarantined for everyone when report_quorum distinct
-- uids have reported it. Reports name the image they were about, so a replaced image (a PUT or a
-- compile writes different bytes over the row) starts with none: the trigger clears them in
-- whatever jitcached version does the replacing. The same bytes written again (a recompile that
-- came out identical) keep them: that image has failed already.
CREATE TABLE failure_reports (
  entry_id INTEGER NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
  reporter_uid INTEGER NOT NULL CHECK (reporter_uid BETWEEN 0 AND 4294967295),
  reported_at_ms INTEGER NOT NULL,
  cu_result INTEGER NOT NULL CHECK (cu_result BETWEEN 0 AND 4294967295),
  stage INTEGER NOT NULL,
  detail TEXT NOT NULL,
  PRIMARY KEY (entry_id, reporter_uid)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER entries_failure_reports_after_replace AFTER UPDATE OF checksum ON entries
WHEN OLD.checksum IS NOT NEW.checksum
BEGIN
  DELETE FROM failure_reports WHERE entry_id = NEW.id;
END;
