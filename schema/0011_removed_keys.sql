-- 0011_removed_keys: the key ids an operator removed from the shared namespace (REMOVE by a trusted
-- caller), so that a bundle imported later does not bring them back: an import into the shared
-- namespace skips a removed key id, whoever imports and whoever signed (docs/security.md
-- "Bundles"). A trusted caller's `jitcache import --restore-removed` imports such an entry again and
-- forgets its removal.
--
-- Released migrations are never edited: a change is a new NNNN_name.sql file. This file runs inside
-- the migrator's transaction, so it must not contain BEGIN, COMMIT or PRAGMA statements.

CREATE TABLE removed_keys (
  key_id BLOB PRIMARY KEY NOT NULL CHECK (length(key_id) = 32),
  removed_at_ms INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
