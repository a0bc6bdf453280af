-- 0002_quarantine: entries a client reported as failing to load (REPORT_FAILURE, proto/PROTOCOL.md
-- §5) are quarantined: kept, listed, never served, until a PUT replaces them. docs/entry-format.md
-- describes the columns.
--
-- Released migrations are never edited: a change is a new NNNN_name.sql file. This file runs inside
-- the migrator's transaction, so it must not contain BEGIN, COMMIT or PRAGMA statements.

-- NULL while the entry is live; the first report's Unix time in ms once it is quarantined. The
-- other quarantine_* columns hold that first report (NULL while live): the driver's CUresult, the
-- load stage (proto::FailureStage: 1 image, 2 ptx_version, 3 jit, 4 load), the reporter's uid (from
-- SO_PEERCRED) and its free-text detail.
ALTER TABLE entries ADD COLUMN quarantined_at_ms INTEGER;
ALTER TABLE entries ADD COLUMN quarantine_result INTEGER CHECK (quarantine_result BETWEEN 0 AND 4294967295);
ALTER TABLE entries ADD COLUMN quarantine_stage INTEGER;
ALTER TABLE entries ADD COLUMN quarantine_reporter_uid INTEGER CHECK (quarantine_reporter_uid BETWEEN 0 AND 4294967295);
ALTER TABLE entries ADD COLUMN quarantine_detail TEXT;
-- Every report that applied to this key in this namespace, quarantining or not. A PUT that replaces
-- the entry keeps it, so a key whose rebuilt images keep failing stands out.
ALTER TABLE entries ADD COLUMN load_failures INTEGER NOT NULL DEFAULT 0 CHECK (load_failures >= 0);

-- Only quarantined rows, normally none or a handful: STATS counts them (entries_quarantined) and
-- operators find them without scanning every entry.
CREATE INDEX entries_quarantined ON entries (quarantined_at_ms) WHERE quarantined_at_ms IS NOT NULL;
