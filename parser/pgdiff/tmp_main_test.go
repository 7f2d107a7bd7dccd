package pgdiff

import (
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

func TestWarm(t *testing.T) { _, _ = pg_query.ParseToJSON("select 1") }
