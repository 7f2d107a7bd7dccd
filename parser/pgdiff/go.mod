module github.com/skadedb/skade/parser/pgdiff

go 1.26.0

replace github.com/skadedb/skade => ../..

require (
	github.com/pganalyze/pg_query_go/v6 v6.2.5
	github.com/skadedb/skade v0.0.0
)

require google.golang.org/protobuf v1.36.12 // indirect
