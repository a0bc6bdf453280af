-- 0010_explain_by_content_namespace: EXPLAIN's entries of one content, by namespace
-- (daemon/store/sqlite_store_diagnosis.cpp).
--
-- entries_by_content (schema 8) holds content_digest alone, so the entries of a content in one
-- namespace, or in namespace order, were every row of that content read and sorted: one uid that
-- stored 200 000 entries of one source made each EXPLAIN of it cost 0.1 s. This index orders the
-- rows of a content by namespace and then by id (the rowid every index ends with), so each of
-- EXPLAIN's queries is a probe and a walk of at most its LIMIT rows, whatever the store holds.
-- It serves every query entries_by_content served, which therefore goes.
--
-- Released migrations are never edited: a change is a new NNNN_name.sql file. This file runs inside
-- the migrator's transaction, so it must not contain BEGIN, COMMIT or PRAGMA statements.

CREATE INDEX entries_by_content_namespace ON entries (content_digest, namespace);
DROP INDEX entries_by_content;
