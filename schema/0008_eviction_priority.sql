-- 0008_eviction_priority: cost-aware eviction (config key eviction_policy = "gdsf", the default):
-- each entry's GreedyDual-Size-Frequency priority, indexed so eviction takes the lowest first without
-- a sort, and the store's inflation value, which ages every entry written or hit before the last
-- eviction (docs/architecture.md "Capacity and eviction"; daemon/store/gdsf_priority.hpp has the
-- formula). docs/entry-format.md describes the column and the table.
--
-- It also indexes entries by content digest, so `jitcache explain` finds the entries of the same
-- content under other keys (daemon/store/sqlite_store_diagnosis.cpp) by a probe, not a scan.
--
-- Released migrations are never edited: a change is a new NNNN_name.sql file. This file runs inside
-- the migrator's transaction, so it must not contain BEGIN, COMMIT or PRAGMA statements.

-- NULL: not computed yet. Every entry here now, and any an older jitcached writes later, is given
-- its priority by the next eviction before it chooses (daemon/store/gdsf_priority.hpp
-- fill_missing_priorities), with the inflation value of the time: what it would have been given
-- when it was written, since that value only ever changes during an eviction.
ALTER TABLE entries ADD COLUMN priority REAL;

-- GDSF eviction walks this from the lowest end (NULLs first, which it fills before it walks).
CREATE INDEX entries_by_priority ON entries (priority);

-- Exactly one row (id 0): L, the priority of the last entry evicted by the gdsf order. New
-- priorities start from it, so what was hit long ago sinks below what is hit now. It only grows.
CREATE TABLE eviction_inflation (
  id INTEGER PRIMARY KEY NOT NULL CHECK (id = 0),
  value REAL NOT NULL CHECK (value >= 0)
) STRICT;

INSERT INTO eviction_inflation (id, value) VALUES (0, 0);

-- EXPLAIN's nearest entries: the same content under another driver, arch, options or namespace.
CREATE INDEX entries_by_content ON entries (content_digest);
