-- The shell's output formats: every type the renderers treat apart, NULLs,
-- and text that needs quoting in CSV, JSON and Markdown.
CREATE TABLE t (id BIGINT, name VARCHAR, price DECIMAL(10,2), ratio DOUBLE, ok BOOLEAN, day DATE);
INSERT INTO t VALUES
    (1, 'plain', 19.99, 0.5, true, DATE '2026-01-05'),
    (2, 'comma, "quote" | pipe', -5.00, -1e-3, false, DATE '2026-02-28'),
    (3, NULL, NULL, NULL, NULL, NULL),
    (4, '', 0, 1e300, true, DATE '1999-12-31');
SELECT * FROM t ORDER BY id;
SELECT count(*) AS n FROM t WHERE id > 100;
UPDATE t SET ratio = 2 WHERE id = 1;
SELECT NULL AS nothing, 'x' AS something;
DELETE FROM t WHERE id < 0;
