package lake

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/skadedb/skade/parser"
	"github.com/skadedb/skade/snapshot"
)

// cloneTable runs CREATE [OR REPLACE] TABLE [IF NOT EXISTS] dst CLONE src
// [FOR VERSION AS OF id | FOR TIMESTAMP AS OF ts]: a zero-copy clone (see
// Lake.CloneTable).
func (s *Session) cloneTable(ctx context.Context, st *parser.CreateTable) (*Result, error) {
	name := tableName(st.Name)
	src := tableName(st.Clone.Name)
	what := fmt.Sprintf("create table %s clone %s", name, src)
	if st.OrReplace && st.IfNotExists {
		return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("%s: OR REPLACE and IF NOT EXISTS cannot be combined", what)}
	}
	if _, ok := s.sources[strings.ToLower(name)]; ok && len(st.Name) == 1 {
		return nil, &sentinelError{ErrTableExists, fmt.Errorf("%s: the name is registered as a source in this session, which would shadow the table; choose another name or Unregister the source", what)}
	}
	if _, ok := s.sources[strings.ToLower(src)]; ok && len(st.Clone.Name) == 1 {
		return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("%s: %s is a source registered in this session, not a table of the lake; only tables can be cloned (use CREATE TABLE … AS SELECT to copy a source)", what, src)}
	}
	if st.IfNotExists {
		exists, err := s.tableExists(ctx, name)
		if err != nil {
			return nil, err
		}
		if exists {
			return emptyResult(), nil
		}
	}
	var opts []CloneOption
	if st.OrReplace {
		opts = append(opts, cloneOrReplace())
	}
	if exists, err := s.tableExists(ctx, src); err == nil && !exists {
		// a branch or tag (src.branch_b, src.tag_v): the table at the
		// ref's snapshot
		if ref, lerr := (sessionCatalog{s}).LookupTable(ctx, strings.Split(src, ".")); lerr == nil && (ref.Branch != "" || ref.Tag != "") {
			if st.Clone.AsOf != nil {
				return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("%s: a branch or tag names a snapshot already; drop FOR … AS OF", what)}
			}
			src = ref.Ident[0] + "." + ref.Ident[1]
			opts = append(opts, CloneAt(ref.Table.CurrentSnapshot().SnapshotID))
		}
	}
	if asOf := st.Clone.AsOf; asOf != nil {
		opt, err := s.cloneAsOf(ctx, asOf, src)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		opts = append(opts, opt)
	}
	if s.tx != nil {
		if err := s.cloneInTx(ctx, src, name, opts...); err != nil {
			return nil, err
		}
		return emptyResult(), nil
	}
	if _, err := s.lk.CloneTable(ctx, src, name, opts...); err != nil {
		return nil, err
	}
	return emptyResult(), nil
}

// cloneAsOf evaluates the FOR VERSION / TIMESTAMP AS OF of a CLONE, a
// constant expression (a literal, a parameter, now() - INTERVAL …), by
// running it as SELECT expr.
func (s *Session) cloneAsOf(ctx context.Context, asOf *parser.AsOf, src string) (CloneOption, error) {
	e := asOf.Value
	if asOf.Kind == parser.AsOfTimestamp {
		e = &parser.Cast{Pos: asOf.Pos, X: e, Type: &parser.TypeName{Pos: asOf.Pos, Name: "TIMESTAMPTZ"}}
	}
	res, err := s.query(ctx, &parser.Query{Pos: asOf.Pos, Body: &parser.Select{Pos: asOf.Pos, Items: []*parser.SelectItem{{Pos: asOf.Pos, Expr: e}}}}, time.Now())
	if err != nil {
		return nil, err
	}
	batches, err := res.Collect(ctx)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	var col arrow.Array
	for _, b := range batches {
		if b.NumRows() > 0 {
			col = b.Column(0)
			break
		}
	}
	if col == nil || col.DataType().ID() == arrow.NULL || col.IsNull(0) {
		return nil, &sentinelError{ErrInvalidArgument, errors.New("time travel to NULL; give a snapshot id or a timestamp")}
	}
	if asOf.Kind == parser.AsOfTimestamp {
		ts, ok := col.(*array.Timestamp)
		if !ok {
			return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("FOR TIMESTAMP AS OF needs a timestamp, not type %s", col.DataType())}
		}
		unit := ts.DataType().(*arrow.TimestampType).Unit
		return CloneAsOf(ts.Value(0).ToTime(unit)), nil
	}
	var id int64
	switch c := col.(type) {
	case *array.String:
		// a branch or tag of the source, as Spark's VERSION AS OF 'name'
		tbl, err := s.table(ctx, src)
		if err != nil {
			return nil, err
		}
		r, err := snapshot.Ref(tbl.tbl.Metadata(), tbl.Name(), c.Value(0))
		if err != nil {
			return nil, err
		}
		id = r.SnapshotID
	case *array.Int64:
		id = c.Value(0)
	case *array.Int32:
		id = int64(c.Value(0))
	case *array.Int16:
		id = int64(c.Value(0))
	case *array.Int8:
		id = int64(c.Value(0))
	default:
		return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("FOR VERSION AS OF needs a snapshot id (an integer) or a branch or tag name (a string), not type %s", col.DataType())}
	}
	return CloneAt(id), nil
}
