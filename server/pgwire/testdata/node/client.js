// node-postgres against skade serve: queries, parameters (the extended
// protocol with untyped parameters), a transaction and an error. Prints
// one JSON line per check; TestNodePostgres compares them.
const { Client } = require('pg');

async function main() {
  const client = new Client({ host: process.env.PGHOST, port: +process.env.PGPORT, user: 'node', database: 'lake' });
  await client.connect();
  const out = [];
  let r = await client.query('SELECT 1 AS one, $1::VARCHAR AS greeting', ['hello']);
  out.push(r.rows[0]);
  await client.query('CREATE TABLE people (id BIGINT, name VARCHAR, born DATE, score DOUBLE)');
  r = await client.query('INSERT INTO people VALUES ($1, $2, $3, $4), ($5, $6, $7, $8)', [1, 'Ada', '1815-12-10', 9.5, 2, 'Alan', '1912-06-23', null]);
  out.push({ command: r.command, rowCount: r.rowCount });
  r = await client.query('SELECT id, name, born, score FROM people WHERE id >= $1 ORDER BY id', [1]);
  out.push(r.rows.map(x => [typeof x.id, x.id, x.name, x.born instanceof Date, x.score]));
  await client.query('BEGIN');
  await client.query("UPDATE people SET score = 1 WHERE name = $1", ['Alan']);
  await client.query('ROLLBACK');
  r = await client.query({ text: 'SELECT score FROM people WHERE id = 2', rowMode: 'array' });
  out.push(r.rows);
  try {
    await client.query('SELECT nope FROM people');
    out.push('no error');
  } catch (e) {
    out.push({ code: e.code, position: e.position });
  }
  r = await client.query('SELECT count(*) AS n FROM people');
  out.push(r.rows[0]);
  await client.end();
  for (const o of out) console.log(JSON.stringify(o));
}

main().catch(e => { console.error(e); process.exit(1); });
