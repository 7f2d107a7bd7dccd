// Package exec holds skade's vectorized physical operators and expression
// kernels. Everything here works on arrow.RecordBatch batches.
//
// Layer: exec sits above scan and below mergeinto and plan. It may import
// arrow-go, iceberg-go types, and skade's scan and parser packages (parser
// for Abbrev, which cuts echoed values in messages); it never imports
// plan, mergeinto or lake. The binder in plan resolves names and types and
// then builds exec trees; exec trusts the types it is handed but still
// validates them in constructors, because a bad tree is a bug we want
// reported as an error, not a panic.
//
// Invariants:
//
//   - INVARIANT: Operator.Next never returns an empty batch together with a
//     nil error; a batch it returns is owned by the caller, who Releases it.
//   - INVARIANT: Expr.Eval returns an array of exactly batch.NumRows()
//     elements, owned by the caller.
//   - INVARIANT: NULL semantics are SQL's: comparisons with NULL yield NULL,
//     AND/OR are three-valued (Kleene), and a NULL join key never matches.
//   - INVARIANT: errors a user can cause (overflow, division by zero, a bad
//     cast, a memory budget exceeded) come back as errors, never panics.
//
// Canonical types. The engine computes on one Arrow type per SQL type, so
// that kernels need not handle every physical variant:
//
//	BOOLEAN      arrow.FixedWidthTypes.Boolean
//	TINYINT..BIGINT  Int8, Int16, Int32, Int64
//	REAL, DOUBLE Float32, Float64
//	DECIMAL(p,s) Decimal128(p, s)
//	VARCHAR      arrow.BinaryTypes.String (never LargeString: scan converts)
//	BLOB         arrow.BinaryTypes.Binary
//	DATE         Date32
//	TIME         Time64(us)
//	TIMESTAMP    Timestamp(us, "")      (Iceberg timestamp)
//	TIMESTAMPTZ  Timestamp(us, "UTC")   (Iceberg timestamptz)
//	UUID         extensions.UUID (FixedSizeBinary(16) storage)
//	INTERVAL     MonthDayNanoInterval (literals and arithmetic only)
//	NULL         arrow.Null (an untyped NULL literal before coercion)
package exec
