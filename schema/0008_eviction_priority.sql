-- 0008_eviction_priority: reserved for the cost-aware eviction of issue 19, which brings its own
-- content; on this branch a placeholder, so that 0009 follows without a gap (the numbers must run
-- 1, 2, 3, ... without gaps: schema/embed_migrations.cmake).
--
-- Released migrations are never edited: a change is a new NNNN_name.sql file. This file runs inside
-- the migrator's transaction, so it must not contain BEGIN, COMMIT or PRAGMA statements.

SELECT 1;
