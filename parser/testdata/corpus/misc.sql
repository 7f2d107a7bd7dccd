-- Transactions, EXPLAIN, SHOW, DESCRIBE, COPY, SET, scripts and comments.
BEGIN;
BEGIN TRANSACTION;
BEGIN WORK;
START TRANSACTION;
COMMIT;
COMMIT TRANSACTION;
END;
ROLLBACK;
ROLLBACK WORK;
ABORT;
EXPLAIN SELECT 1;
EXPLAIN ANALYZE SELECT a FROM t WHERE a > 1;
EXPLAIN MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE;
EXPLAIN ANALYZE INSERT INTO t SELECT * FROM u;
SHOW TABLES;
SHOW TABLES FROM skade.main;
SHOW TABLES IN staging;
SHOW ALL;
SHOW search_path;
DESCRIBE t;
DESCRIBE skade.main.events;
DESC t;
COPY t FROM 'f.csv';
COPY t FROM 'f.csv' (FORMAT csv, HEADER);
COPY t FROM 'data/f.csv' (FORMAT csv, HEADER true, DELIMITER ';', NULL '');
COPY t (a, b) FROM 'f.csv' WITH (FORMAT csv);
COPY t TO 'out.parquet' (FORMAT parquet);
COPY (SELECT * FROM t WHERE a > 1) TO 'out.parquet' (FORMAT parquet);
COPY (SELECT a, b FROM t) TO 'out.csv' (FORMAT csv, HEADER, COMPRESSION 'gzip');
SET threads = 4;
SET threads TO 4;
SET search_path = main, staging;
SET memory_limit = '4GB';
SET LOCAL statement_timeout = 1000;
SET SESSION enable_progress_bar = false;
SET s3.region = 'eu-west-1';
SET x = DEFAULT;
/* a block comment */ SELECT 1 /* inline */ + 2 -- trailing
;
SELECT /* nested /* comments */ are fine */ 3;
-- a comment line
SELECT 4;
SELECT a -- comment in the middle
  , b
FROM t;
COPY t FROM STDIN;
COPY t (a, b) FROM STDIN WITH CSV HEADER DELIMITER AS ';' NULL 'NA';
COPY t FROM stdin (FORMAT text);
COPY (SELECT 1) TO STDOUT WITH (FORMAT csv, HEADER);
COPY t TO STDOUT BINARY;
SELECT 1_000_000, 1_000.000_5, 1e1_0;
