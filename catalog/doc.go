// Package catalog is skade's Iceberg catalog: one bbolt file,
// <lake>/catalog.db, that maps each table name to the metadata file of its
// current version, and moves those pointers atomically.
//
// # Layer
//
// catalog is the lowest storage layer (see STYLE.md). It imports iceberg-go,
// bbolt and klauspost/compress (metadata codecs), and nothing of skade
// (TestImports checks); its tests also use arrow-go. It is the only package
// that imports bbolt. snapshot, scan and lake build on it.
//
// It implements the Catalog, TransactionalCatalog and PurgeableTable
// interfaces of iceberg-go's catalog package, and passes iceberg-go's
// catalogtest conformance suite.
//
// # Names
//
// The catalog is "skade"; a table is (namespace, table), and "events",
// "main.events" and "skade.main.events" name the same table (Normalize).
// Namespaces are single-level; "main" always exists. Names are 1 to 200
// bytes of ASCII letters, digits, _ and - (ValidateName), because they
// become directory names and parts of Iceberg locations, which are URLs.
//
// # On-disk layout
//
//	<lake>/catalog.db                                  bbolt: the pointers
//	<lake>/<ns>/<table>-<8 hex>/                        one table's location
//	<lake>/<ns>/<table>-<8 hex>/metadata/NNNNN-<uuid>.metadata.json
//	<lake>/<ns>/<table>-<8 hex>/metadata/*.avro         manifests, lists (iceberg-go)
//	<lake>/<ns>/<table>-<8 hex>/data/...                data files (iceberg-go)
//
// catalog.db has three buckets: "meta" (format version), "namespaces"
// (name -> properties as JSON) and "tables" ("<ns>\x00<table>" -> absolute
// path of the current metadata file).
//
// # Commit protocol
//
//  1. Read the pointer and the metadata file it names (the base).
//  2. Validate every requirement against the base; a failure wraps
//     table.ErrCommitFailed, so iceberg-go refreshes and replays.
//  3. Apply the updates and write the next metadata file, version+1 with a
//     fresh uuid, durably (file and directory fsync'd).
//  4. SwapPointers: in one bbolt Update, check that every pointer still
//     names its base and move them all, or none. A mismatch is a
//     *ConflictError, which wraps table.ErrCommitFailed.
//  5. When nothing moved, remove the metadata files written in 3. When
//     writing catalog.db itself failed, the outcome is unknown: the error
//     wraps ErrCommitStateUnknown and the files are kept, since they may
//     be live.
//
// Errors that mean "reload and retry" wrap table.ErrCommitFailed; a lock
// timeout (ErrLockTimeout) deliberately does not, so iceberg-go does not
// retry into a lake another process is holding.
//
// Data files and manifests are written by iceberg-go through DurableFS,
// which fsyncs each file and its directory on Close, so they too are durable
// before the pointer moves. A writer that wants to remove what a failed
// commit wrote wraps FS() in a Tracker and loads its table with WithFS.
//
// CommitTable is this for one table, CommitTransaction for several in one
// swap. StageCommit (steps 1-3) and SwapPointers (step 4) are exported so
// that a higher layer can publish creates, changes and drops of several
// tables atomically.
//
// # Where tables live, and REST catalogs
//
// A Catalog's tables live in a Store: the lake directory (DurableFS), or,
// for a lake opened with OpenStore, a prefix of an object store, while the
// catalog file stays local. Location checks (inside the lake, a fresh
// table directory) work on both kinds of location.
//
// OpenRemote makes a Catalog stand in for an Iceberg REST catalog instead
// of a catalog file (see remote.go): loads, creates, drops, renames and
// commits go to the REST catalog through iceberg-go's client, a
// transaction's staged changes are published as requirements and updates
// (StageUpdates, Publish), and what needs pointers to metadata files
// (clones, SwapPointers, LoadTableAt) is refused with ErrRemoteUnsupported.
//
// # Invariants
//
// INVARIANT: a table pointer only ever names a metadata file that is
// durable and inside the lake; the file is fsync'd before the pointer moves
// and bbolt fsyncs the pointer before Update returns.
//
// INVARIANT: pointers change only inside SwapPointers' compare-and-swap
// (applySwaps), all of a call's swaps in one bbolt transaction.
//
// INVARIANT: the catalog never holds catalog.db open between operations;
// reads take a shared lock, writes an exclusive one, each waiting at most
// the lock timeout, so several processes can share one lake.
//
// INVARIANT: nothing is created outside the lake directory: names cannot
// escape it (ValidateName), table locations, metadata files and the
// write.data.path / write.metadata.path properties are checked to lie inside
// it after filepath.Clean, and DurableFS refuses to write outside it.
//
// INVARIANT: a table location is unique per created table (random suffix),
// so a purge or a re-created table never touches another table's files.
package catalog
