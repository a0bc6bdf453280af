-- 0006_drivers_of_entries: the drivers table holds exactly the drivers of the entries stored, kept so
-- by triggers, so that it grows only with what the quotas bound (docs/security.md "Limits").
-- Until 0005 every LOOKUP recorded its driver, found or not: made-up drivers of misses added a row
-- each and nothing ever deleted one (200 000 misses made 200 000 rows and filled a small disk).
-- docs/entry-format.md describes the table.
--
-- Released migrations are never edited: a change is a new NNNN_name.sql file. This file runs inside
-- the migrator's transaction, so it must not contain BEGIN, COMMIT or PRAGMA statements.

-- A row of no entry says nothing eviction or `jitcache ls --stale` could use.
DELETE FROM drivers
WHERE NOT EXISTS (SELECT 1 FROM entries
                  WHERE entries.driver_api = drivers.driver_api AND entries.driver_build = drivers.driver_build);

-- Writing an entry is a use of its driver: the row is made, or its time moved on, with the entry,
-- in whatever jitcached version writes it. The daemon then only moves the times of existing rows
-- (usage flush) and never inserts one itself.
CREATE TRIGGER entries_drivers_after_insert AFTER INSERT ON entries
BEGIN
  INSERT INTO drivers (driver_api, driver_build, last_asked_at_ms)
    VALUES (NEW.driver_api, NEW.driver_build, NEW.created_at_ms)
    ON CONFLICT (driver_api, driver_build) DO UPDATE
    SET last_asked_at_ms = MAX(last_asked_at_ms, excluded.last_asked_at_ms);
END;

-- A PUT over an entry (the only write that sets created_at_ms again) is a use of its driver too.
CREATE TRIGGER entries_drivers_after_replace AFTER UPDATE OF created_at_ms, driver_api, driver_build ON entries
BEGIN
  INSERT INTO drivers (driver_api, driver_build, last_asked_at_ms)
    VALUES (NEW.driver_api, NEW.driver_build, NEW.created_at_ms)
    ON CONFLICT (driver_api, driver_build) DO UPDATE
    SET last_asked_at_ms = MAX(last_asked_at_ms, excluded.last_asked_at_ms);
  DELETE FROM drivers
  WHERE driver_api = OLD.driver_api AND driver_build = OLD.driver_build
    AND NOT EXISTS (SELECT 1 FROM entries WHERE driver_api = OLD.driver_api AND driver_build = OLD.driver_build);
END;

-- The last entry of a driver takes its row along (one probe of entries_by_driver per deleted entry).
CREATE TRIGGER entries_drivers_after_delete AFTER DELETE ON entries
BEGIN
  DELETE FROM drivers
  WHERE driver_api = OLD.driver_api AND driver_build = OLD.driver_build
    AND NOT EXISTS (SELECT 1 FROM entries WHERE driver_api = OLD.driver_api AND driver_build = OLD.driver_build);
END;
