-- 0003_fast_key: the fast key of each entry, so a client can look an entry up by the XXH3-128 of
-- its source while it still computes the content digest (docs/cache-key.md "The fast key: look up
-- first, verify after"; proto/PROTOCOL.md LOOKUP selector 2). docs/entry-format.md describes the
-- columns.
--
-- Released migrations are never edited: a change is a new NNNN_name.sql file. This file runs inside
-- the migrator's transaction, so it must not contain BEGIN, COMMIT or PRAGMA statements.

-- The XXH3-128 of the source whose SHA-based digest is content_digest, as the writer sent it, and
-- proto::fast_key_id of (key_schema, content_fast, arch, driver_api, driver_build, options),
-- computed by the daemon. NULL when the writer sent no content_fast (an older client, the CLI
-- without a source): such an entry is found by its key only. A fast key only finds an entry; the
-- client serves it only if content_digest equals the digest it computed itself, so a wrong
-- content_fast costs a second lookup, never a wrong image.
ALTER TABLE entries ADD COLUMN content_fast BLOB CHECK (content_fast IS NULL OR length(content_fast) = 16);
ALTER TABLE entries ADD COLUMN fast_key_id BLOB CHECK (fast_key_id IS NULL OR length(fast_key_id) = 32);

-- Only entries that have a fast key; (fast_key_id, namespace) as entries_by_key for key ids.
CREATE INDEX entries_by_fast_key ON entries (fast_key_id, namespace) WHERE fast_key_id IS NOT NULL;
