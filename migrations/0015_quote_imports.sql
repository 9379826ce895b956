-- Imports in progress: each batch of an import commits with its count here, so an interrupted import of the same
-- rows resumes after the last committed batch (a batch cut short rolls back whole). A finished import's row is
-- deleted. `key` is a digest of the valid rows, in order; `started_at` dates the rows (the file's first newest).
CREATE TABLE quote_imports (
    key        text PRIMARY KEY,
    total      bigint NOT NULL,
    done       bigint NOT NULL DEFAULT 0,
    started_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
