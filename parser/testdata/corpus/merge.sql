-- MERGE INTO: every clause shape of the merge-into guide, plus the sources.
MERGE INTO events USING incoming ON events.id = incoming.id
    WHEN MATCHED THEN UPDATE SET status = incoming.status, seen_at = incoming.seen_at
    WHEN NOT MATCHED THEN INSERT (id, status, seen_at)
                        VALUES (incoming.id, incoming.status, incoming.seen_at);
MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET a = s.a;
MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET a = s.a, b = s.b, c = DEFAULT;
MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE;
MERGE INTO t USING s ON t.id = s.id WHEN MATCHED AND s.deleted THEN DELETE;
MERGE INTO t USING s ON t.id = s.id WHEN MATCHED AND s.v > t.v THEN UPDATE SET v = s.v;
MERGE INTO t USING s ON t.id = s.id WHEN MATCHED AND s.op = 'D' THEN DELETE WHEN MATCHED THEN UPDATE SET v = s.v;
MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, s.v);
MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED BY TARGET THEN INSERT (id, v) VALUES (s.id, s.v);
MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.v);
MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED BY TARGET THEN INSERT VALUES (s.id, s.v);
MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED AND s.v IS NOT NULL THEN INSERT (id, v) VALUES (s.id, s.v);
MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED BY SOURCE THEN UPDATE SET active = FALSE;
MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED BY SOURCE THEN DELETE;
MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED BY SOURCE AND t.ts < DATE '2020-01-01' THEN DELETE;
MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED BY SOURCE THEN INSERT (id) VALUES (1);
MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DO NOTHING;
MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED THEN DO NOTHING;
MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED BY SOURCE THEN DO NOTHING;
MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET *;
MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED THEN INSERT *;
MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *;
MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED THEN INSERT DEFAULT VALUES;
MERGE INTO t USING s ON t.id = s.id
  WHEN MATCHED AND s.op = 'delete' THEN DELETE
  WHEN MATCHED THEN UPDATE SET v = s.v
  WHEN NOT MATCHED AND s.op <> 'delete' THEN INSERT (id, v) VALUES (s.id, s.v)
  WHEN NOT MATCHED BY SOURCE THEN DELETE;
MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v RETURNING merge_action(), t.*;
MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE RETURNING merge_action() AS action, t.id;
MERGE INTO t AS tgt USING s AS src ON tgt.id = src.id WHEN MATCHED THEN UPDATE SET v = src.v;
MERGE INTO t tgt USING s src ON tgt.id = src.id WHEN MATCHED THEN UPDATE SET v = src.v;
MERGE INTO skade.main.events USING incoming ON skade.main.events.id = incoming.id WHEN MATCHED THEN DELETE;
MERGE INTO skade.main.events AS e USING skade.staging.incoming AS i ON e.id = i.id WHEN NOT MATCHED THEN INSERT (id) VALUES (i.id);
MERGE INTO t USING (SELECT id, max(v) AS v FROM s GROUP BY id) AS src ON t.id = src.id WHEN MATCHED THEN UPDATE SET v = src.v;
MERGE INTO t USING (SELECT * FROM s WHERE s.ok) ON t.id = id WHEN MATCHED THEN DELETE;
MERGE INTO t USING read_csv('changes.csv', header = true) AS c ON t.id = c.id WHEN MATCHED THEN UPDATE SET v = c.v;
MERGE INTO t USING read_parquet('in/*.parquet') ON t.id = read_parquet.id WHEN NOT MATCHED THEN INSERT *;
MERGE INTO t USING (VALUES (1, 'a'), (2, 'b')) AS v (id, name) ON t.id = v.id WHEN MATCHED THEN UPDATE SET name = v.name WHEN NOT MATCHED THEN INSERT (id, name) VALUES (v.id, v.name);
MERGE INTO t USING s FOR VERSION AS OF 3 AS old ON t.id = old.id WHEN NOT MATCHED THEN INSERT *;
MERGE INTO t USING s ON t.id = s.id AND t.region = s.region WHEN MATCHED THEN UPDATE SET v = s.v;
MERGE INTO t USING s ON t.a > s.a WHEN MATCHED THEN DELETE;
MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET t.v = s.v;
MERGE INTO target AS _t USING (SELECT order_id, status, amount FROM raw_orders) AS _s ON _t.order_id = _s.order_id WHEN MATCHED THEN UPDATE SET status = _s.status, amount = _s.amount WHEN NOT MATCHED THEN INSERT (order_id, status, amount) VALUES (_s.order_id, _s.status, _s.amount);
MERGE INTO target AS _t USING (SELECT a, b, c FROM src) AS _s ON _t.a = _s.a AND _t.b = _s.b WHEN MATCHED THEN UPDATE SET c = _s.c WHEN NOT MATCHED THEN INSERT (a, b, c) VALUES (_s.a, _s.b, _s.c);
WITH s AS (SELECT 1 AS id) MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE;
MERGE INTO t USING s ON t.id = s.id WHEN MATCHED AND (s.a IS DISTINCT FROM t.a OR s.b IS DISTINCT FROM t.b) THEN UPDATE SET a = s.a, b = s.b;
MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET n = t.n + 1, updated_at = now();
MERGE INTO t USING s ON (t.id = s.id) WHEN MATCHED THEN DELETE;
MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * EXCEPT (created, "Mixed") WHEN NOT MATCHED THEN INSERT * EXCEPT (n);
MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE BY NAME WHEN NOT MATCHED THEN INSERT BY NAME;
MERGE WITH SCHEMA EVOLUTION INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *;
