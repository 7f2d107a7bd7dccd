-- skade demo: `go run ./cmd/skade sql -f testdata/demo.sql`
-- Loads a small CSV into a table, applies a batch of changes the way the
-- MERGE guide does, and reads the table as it was before the change.
DROP TABLE IF EXISTS events;
DROP TABLE IF EXISTS incoming;

-- 1. A table from a CSV file: 8 orders.
CREATE TABLE events AS SELECT * FROM read_csv('testdata/events.csv');

-- 2. A batch of changes: two known orders move on, one is new.
CREATE TABLE incoming AS
SELECT * FROM (VALUES
    (2, 'refunded', TIMESTAMP '2026-01-11 09:00:00'),
    (5, 'paid',     TIMESTAMP '2026-01-11 09:30:00'),
    (9, 'new',      TIMESTAMP '2026-01-11 10:00:00')
) AS v(id, status, seen_at);

-- 3. Apply it with the MERGE guide's example: update the orders we know,
-- insert the ones we do not.
MERGE INTO events USING incoming ON events.id = incoming.id
WHEN MATCHED THEN UPDATE SET status = incoming.status, seen_at = incoming.seen_at
WHEN NOT MATCHED THEN INSERT (id, status, seen_at)
                    VALUES (incoming.id, incoming.status, incoming.seen_at);

-- 4. The table now, and its history.
SELECT count(*) AS orders, count(amount) AS priced FROM events;
SELECT * FROM events ORDER BY id;
.history events

-- 5. Time travel: the table before the merge, which is the parent of the
-- current snapshot (snapshot ids differ on every run, so look it up).
SELECT id, status, seen_at
FROM events FOR VERSION AS OF (
    SELECT parent_id FROM events$snapshots ORDER BY committed_at DESC LIMIT 1)
WHERE id IN (2, 5, 9) ORDER BY id;
