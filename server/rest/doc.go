// Package rest serves a lake's catalog over the Iceberg REST catalog API
// (the OpenAPI spec in apache/iceberg, open-api/rest-catalog-open-api.yaml),
// so that other engines (Spark, Trino, pyiceberg, iceberg-go) and other
// skade processes find and commit to the same tables.
//
// # Layer
//
// rest is a front door beside server/pgwire: it imports lake (for the
// lake's catalog), catalog's error sentinels, iceberg-go's table, catalog
// and metadata types, and net/http. Nothing below server imports it.
//
// # What it serves
//
// /v1/config; namespaces: list, create, load, exists, update properties,
// drop; tables: list, create (also stage-create), load, exists, commit
// (requirements and updates), rename, drop (with purgeRequested), metrics
// (accepted and dropped); /v1/transactions/commit for a multi-table
// atomic commit. A commit goes through the same catalog commit as an
// in-process one (catalog.Catalog.CommitTable): the same validation, the
// same atomic pointer swap, so REST and in-process writers racing on a
// table see a clean conflict (409 CommitFailedException) and nothing
// lost. Register is refused (skade keeps every table inside its lake).
//
// # Authentication
//
// Without a token every request is served, and the server refuses to
// listen on a non-loopback address (server.CheckListen). With a token,
// every request but /v1/config's needs "Authorization: Bearer <token>".
package rest
