// Package objstore keeps a lake's table files in an S3 or S3-compatible
// object store: the iceberg-go IO that lake.Open uses for an s3://bucket/prefix
// lake.
//
// # Layer
//
// objstore sits beside catalog at the bottom (see STYLE.md): it imports
// iceberg-go's io interfaces and the AWS SDK for Go v2 (the S3 client, its
// credential chain and its retryer), and nothing of skade. lake builds on
// it; catalog sees it only as a catalog.Store.
//
// # What it does on the wire
//
//   - Open issues one GET of the object's last TailSize bytes (a suffix
//     range), which yields the object's size and, for a Parquet file, its
//     footer; ReadAt beyond that tail issues ranged GETs of exactly the
//     bytes asked for, so a query that projects one column downloads that
//     column's chunks and not the file. Sequential reads stream one GET
//     from the read position.
//   - A writer buffers PartSize bytes; a smaller file is one PUT, a larger
//     one a multipart upload whose parts go up while the next is being
//     written, completed on Close and aborted on any failure, so a failed
//     write leaves no object behind.
//   - Every request goes through the SDK's standard retryer: 5xx answers,
//     throttling and broken connections are retried with exponential
//     backoff and jitter, up to MaxAttempts (Config). An attempt whose
//     connection delivers nothing for StallTimeout (60s) fails and is
//     retried, so a hung store ends a statement rather than holding it.
//   - The size and tail of manifests, manifest lists and Parquet data
//     files are served from memory after this FS first read or wrote
//     them (tailcache.go): Iceberg never rewrites them.
//   - Stats counts requests and bytes by kind, for tests and benchmarks.
//
// Credentials, region and endpoint come from the standard AWS chain
// (environment, shared config and credentials files, AWS_ENDPOINT_URL or
// AWS_ENDPOINT_URL_S3 for S3-compatible stores); with an endpoint set,
// requests use path-style addressing unless Config says otherwise.
//
// # Invariants
//
// INVARIANT: FS reads and writes only keys under its prefix: a location in
// another bucket, or one that path.Clean would move out of the prefix, is
// refused with an error wrapping ErrOutsidePrefix.
//
// INVARIANT: a writer that is closed after a failure, or whose upload
// failed, leaves no object and no pending multipart upload behind (it
// aborts the upload); only Close that returns nil makes the object exist.
package objstore
