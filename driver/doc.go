// Package driver is a database/sql driver for skade's embedded engine:
//
//	import _ "github.com/skadedb/skade/driver"
//
//	db, err := sql.Open("skade", "./skade-lake")
//
// The data source name is a lake directory; it is created when it holds
// no lake. Every connection of the pool is its own lake.Session on one
// shared *lake.Lake (a lake's catalog file is opened once per process),
// which closes when the last sql.DB on it does. NewConnector serves a lake
// the program already opened.
//
// Statements take $1, $2, … (or ?) arguments: bool, integers (a uint64
// past BIGINT as numeric(20)), floats,
// string (which takes the type its context needs, as a quoted literal
// does), []byte, time.Time, nil, and values whose Value method (the
// Valuer interface of database/sql/driver) returns one of those. Named
// arguments are refused. Rows scan into the Go types database/sql knows:
// BIGINT and the other integers as int64, DOUBLE and REAL as float64,
// BOOLEAN as bool, VARCHAR as string, BLOB as []byte, DATE, TIMESTAMP and
// TIMESTAMPTZ as time.Time (UTC), and DECIMAL, UUID, INTERVAL, TIME and
// nested values as their text. A Tx is BEGIN … COMMIT/ROLLBACK, with
// skade's snapshot isolation; cancelling a context cancels the statement.
// sql.Conn.Raw reaches the *driver.Conn, whose Session and QueryArrow give
// the Arrow result without conversion.
//
// Layer: beside server, above lake; it imports lake, parser and exec, and
// nothing in skade imports it.
package driver
