// Package pgwire serves a lake over the PostgreSQL frontend/backend
// protocol (version 3.0), so that psql, pgx, JDBC, psycopg, node-postgres
// and BI tools can use skade.
//
// Layer: a front door above lake. It imports lake (and parser, plan and
// exec for statements, errors and types) and pgx's pgproto3 for the
// message codec and pgtype for numeric's binary form; nothing in skade
// below cmd imports it.
//
// One Server shares one *lake.Lake among its connections; each connection
// has its own lake.Session, so transactions, SET variables and prepared
// statements are per connection, as in PostgreSQL.
//
// Invariants:
//   - A client's bytes never panic the server: a malformed or oversized
//     message ends that connection only.
//   - Every statement runs under a context that CancelRequest, the
//     statement timeout and shutdown cancel.
//   - A connection that ends (client gone, shutdown, fatal error) rolls
//     back its open transaction: nothing it staged is published.
//
// What is supported and how types map is in docs/pgwire.md.
package pgwire
