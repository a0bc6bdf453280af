-- 0004_driver_usage: when a client last asked for each driver (driver_api, driver_build), so that
-- entries keyed to a driver no client uses any more (the host's driver was upgraded) are evicted
-- before anything else (docs/architecture.md "Capacity and eviction"). docs/entry-format.md
-- describes the table.
--
-- Released migrations are never edited: a change is a new NNNN_name.sql file. This file runs inside
-- the migrator's transaction, so it must not contain BEGIN, COMMIT or PRAGMA statements.

-- One row per driver any LOOKUP (by key or fast key), COMPILE or PUT named. The daemon keeps the
-- times in memory and writes them with the hit counts (usage_flush_interval), so asking is never a
-- write of its own. The daemon adds a row for any driver of an entry that has none (entries written
-- by an older jitcached) at every start, as last asked for when its newest entry was last used.
CREATE TABLE drivers (
  driver_api INTEGER NOT NULL,
  driver_build TEXT NOT NULL,
  last_asked_at_ms INTEGER NOT NULL,
  PRIMARY KEY (driver_api, driver_build)
) STRICT;

-- Seeded from the entries: the best knowledge there is of when each driver was last in use.
INSERT INTO drivers (driver_api, driver_build, last_asked_at_ms)
  SELECT driver_api, driver_build, MAX(last_used_at_ms) FROM entries GROUP BY driver_api, driver_build;

-- Eviction of a stale driver's entries (oldest first) and `jitcache ls --stale` walk this.
CREATE INDEX entries_by_driver ON entries (driver_api, driver_build, last_used_at_ms);
