-- 0007_every_entry_has_a_fast_key: every entry can be found by its fast key, so that a LOOKUP by
-- fast key that finds nothing is the end of the search (proto/PROTOCOL.md §5 LOOKUP): a client asks
-- once per load, and the daemon counts one hit or one miss per load (docs/cache-key.md "The fast
-- key: look up first, verify after"). docs/entry-format.md describes the columns.
--
-- Released migrations are never edited: a change is a new NNNN_name.sql file. This file runs inside
-- the migrator's transaction, so it must not contain BEGIN, COMMIT or PRAGMA statements.

-- Entries written without content_fast (before schema 3, by a client older than fast keys, or by a
-- PUT that did not send it) cannot be given a fast key: only their writer knew the source. A client
-- that asks by fast key would never find them, so they go; the next load of each rebuilds it and
-- stores it with its fast key. Their blobs and failure reports are deleted here rather than left to
-- the foreign keys' cascades, which a connection without PRAGMA foreign_keys would skip; 0001's and
-- 0005's triggers keep totals and namespace_totals, 0006's the drivers.
DELETE FROM blobs WHERE entry_id IN (SELECT id FROM entries WHERE fast_key_id IS NULL OR content_fast IS NULL);
DELETE FROM failure_reports
WHERE entry_id IN (SELECT id FROM entries WHERE fast_key_id IS NULL OR content_fast IS NULL);
DELETE FROM entries WHERE fast_key_id IS NULL OR content_fast IS NULL;

-- And none is written again, whatever code writes: an entry without a fast key is refused.
CREATE TRIGGER entries_need_a_fast_key_on_insert BEFORE INSERT ON entries
WHEN NEW.content_fast IS NULL OR NEW.fast_key_id IS NULL
BEGIN
  SELECT RAISE(ABORT, 'every entry needs a fast key (content_fast and fast_key_id, schema 7)');
END;

CREATE TRIGGER entries_need_a_fast_key_on_update BEFORE UPDATE OF content_fast, fast_key_id ON entries
WHEN NEW.content_fast IS NULL OR NEW.fast_key_id IS NULL
BEGIN
  SELECT RAISE(ABORT, 'every entry needs a fast key (content_fast and fast_key_id, schema 7)');
END;
