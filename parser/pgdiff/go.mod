module github.com/skadedb/skade/parser/pgdiff

go 1.26

replace github.com/skadedb/skade => ../..

require (
	github.com/pganalyze/pg_query_go/v6 v6.2.5 // indirect
	google.golang.org/protobuf v1.33.0 // indirect
)
