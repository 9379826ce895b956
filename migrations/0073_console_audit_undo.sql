-- Undo from the audit log (issue 45). `version` is the row version (xmin) a console change left on its quote, so
-- an undo can tell that nobody changed the quote since; `undoes` names the row an undo reverses, at most once.
ALTER TABLE console_audit ADD COLUMN version text, ADD COLUMN undoes bigint REFERENCES console_audit (id);
CREATE UNIQUE INDEX console_audit_undoes_idx ON console_audit (undoes) WHERE undoes IS NOT NULL;
-- The rows about one quote, newest last: whether anything touched it after a given row.
CREATE INDEX console_audit_target_idx ON console_audit (target, id);
