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
// lost. Register adopts a table whose metadata file lies in the lake, in
// a directory no other table uses (catalog.Catalog.RegisterTable);
// metadata elsewhere is refused, since skade keeps every table inside its
// lake.
//
// # Authentication
//
// Without a token or clients every request is served, and the server
// refuses to listen on a non-loopback address (server.CheckListen). With
// a static token (Config.Token) or OAuth2 clients (Config.Clients), every
// request but /v1/config's and the token endpoint's needs
// "Authorization: Bearer <token>". /v1/oauth/tokens issues tokens by the
// client-credentials grant (form or HTTP Basic), valid for
// Config.TokenTTL; a client may be limited to namespaces, and a request
// for any other namespace answers 403 ForbiddenException.
//
// # Object stores
//
// For a lake in an object store, LoadTableResult's config carries
// s3.endpoint, s3.path-style-access and client.region, and with
// Config.VendCredentials the store credentials the server itself uses
// (static keys as the AWS chain resolved them; they are not scoped down
// per table). They are sent only in answers for tables the principal may
// see.
package rest
