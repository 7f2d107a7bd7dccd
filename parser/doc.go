// Package parser turns SQL text in skade's dialect into a typed AST and back.
//
// Layer: the bottom of the house. parser imports only the standard library and
// nothing else of skade; everything above it (plan, lake, cmd/skade) consumes
// its AST.
//
// The dialect is PostgreSQL's expressions and statements, plus DuckDB
// conveniences (SELECT * EXCLUDE/REPLACE, GROUP BY ALL, table functions with
// name = value arguments, TRY_CAST, QUALIFY), plus lakehouse DDL
// (PARTITIONED BY transforms, table properties, CLONE, ALTER TABLE ... EXECUTE)
// and time travel (FOR VERSION/TIMESTAMP AS OF, AT (VERSION => n)).
//
// Entry points are Parse (a script), ParseOne (exactly one statement) and
// ParseExpr (a lone expression). Split and Incomplete give a CLI statement
// boundaries and a continuation-prompt signal without parsing.
//
// Invariants:
//   - INVARIANT: every AST node carries the Pos of its first token.
//   - INVARIANT: for every node n produced by the parser, parsing n.String()
//     yields an AST equal to n once positions are ignored (the round-trip
//     property the corpus test checks). String() is therefore canonical SQL:
//     upper-case keywords, minimal parentheses, one line (unless a quoted
//     identifier itself contains a line break).
//   - INVARIANT: no input makes the parser panic or recurse without bound;
//     nesting deeper than MaxDepth is a syntax error.
//   - Every syntax error is a *Error with line, column, offset, the offending
//     token and what was expected.
//
// The parser keeps names as written: identifiers are not case-folded, so
// consumers decide how to compare them (Ident.Quoted says whether the user
// asked for an exact spelling). Semantic checks (does the table exist, may
// a NOT MATCHED BY SOURCE clause insert) belong to the binder and the MERGE
// engine, not here; the parser refuses only what cannot be given a meaning,
// such as DELETE in a WHEN NOT MATCHED clause.
package parser
