-- 0009_sources: (being written: issue 19)
--
-- Released migrations are never edited: a change is a new NNNN_name.sql file. This file runs inside
-- the migrator's transaction, so it must not contain BEGIN, COMMIT or PRAGMA statements.

SELECT 1;
