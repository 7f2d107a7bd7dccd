// Package server holds what skade's network front doors share: password
// checks and the rule that an unauthenticated server listens on loopback
// only. The doors themselves are its subpackages: server/pgwire (the
// PostgreSQL protocol) and server/flightsql (Arrow Flight SQL).
//
// Layer: above lake, beside driver; it imports nothing of skade, and only
// its subpackages and cmd import it.
package server
