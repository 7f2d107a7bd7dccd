// Package flightsql serves a lake over Arrow Flight SQL, on arrow-go's
// flightsql server, for clients that read Arrow: results stream as the
// engine's own record batches, with no per-value conversion.
//
// Supported: statements and updates, prepared statements with
// parameters (bound as an Arrow batch; each row of a bound batch runs an
// update once), GetSqlInfo, GetCatalogs, GetDbSchemas, GetTables (with
// schemas), GetTableTypes, transactions (BeginTransaction and
// EndTransaction onto BEGIN/COMMIT/ROLLBACK), bulk ingest
// (CommandStatementIngest, one commit), and cancellation through the
// call's context. Authentication is the PostgreSQL server's: without
// users every client is trusted (loopback only); with them, HTTP basic
// authentication checked against the same passwords, answered with a
// bearer token. TLS is the gRPC server's.
//
// Statements outside a transaction run on a session of their own; a
// transaction's statements run on its session, one at a time.
//
// Layer: a front door above lake, beside server/pgwire; nothing in skade
// below cmd imports it.
package flightsql
