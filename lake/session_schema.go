package lake

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	icecatalog "github.com/apache/iceberg-go/catalog"

	"github.com/skadedb/skade/parser"
	"github.com/skadedb/skade/plan"
)

// createSchema is CREATE SCHEMA [IF NOT EXISTS] ns: a catalog namespace.
func (s *Session) createSchema(ctx context.Context, st *parser.CreateSchema) (*Result, error) {
	ns := identText(st.Name.Last())
	if len(st.Name) > 2 || (len(st.Name) == 2 && identText(st.Name[0]) != "skade") {
		return nil, &sentinelError{ErrInvalidName, fmt.Errorf("create schema %s: a schema name is one identifier (or skade.name)", st.Name)}
	}
	if s.tx != nil {
		// namespaces are not transactional: inside a transaction only the
		// no-op form runs
		exists, err := s.lk.cat.CheckNamespaceExists(ctx, []string{ns})
		if err != nil {
			return nil, err
		}
		if exists && st.IfNotExists {
			return noticeResult([]string{fmt.Sprintf("schema %q already exists, skipping", ns)}), nil
		}
		if err := s.notInTx("CREATE SCHEMA"); err != nil {
			return nil, err
		}
	}
	err := s.lk.cat.CreateNamespace(ctx, []string{ns}, nil)
	if errors.Is(err, icecatalog.ErrNamespaceAlreadyExists) {
		if st.IfNotExists {
			return noticeResult([]string{fmt.Sprintf("schema %q already exists, skipping", ns)}), nil
		}
		return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("create schema %s: the schema already exists", ns)}
	}
	if err != nil {
		return nil, fmt.Errorf("create schema %s: %w", ns, err)
	}
	return emptyResult(), nil
}

// dropSchema is DROP SCHEMA [IF EXISTS] ns; the catalog refuses a schema
// that still holds tables.
func (s *Session) dropSchema(ctx context.Context, st *parser.DropSchema) (*Result, error) {
	ns := identText(st.Name.Last())
	if st.Cascade {
		return nil, &sentinelError{ErrNotImplemented, fmt.Errorf("drop schema %s: CASCADE is not supported; drop its tables first", ns)}
	}
	if err := s.notInTx("DROP SCHEMA"); err != nil {
		return nil, err
	}
	err := s.lk.cat.DropNamespace(ctx, []string{ns})
	if errors.Is(err, icecatalog.ErrNoSuchNamespace) && st.IfExists {
		return noticeResult([]string{fmt.Sprintf("schema %q does not exist, skipping", ns)}), nil
	}
	if err != nil {
		return nil, fmt.Errorf("drop schema %s: %w", ns, err)
	}
	return emptyResult(), nil
}

// execute runs ALTER TABLE t EXECUTE expire_snapshots(older_than => …,
// retain_last => …), remove_orphan_files(older_than => …) and
// compact[(target_file_size_bytes => …)], Trino's maintenance procedures,
// and returns what they did.
func (s *Session) execute(ctx context.Context, tbl *Table, ep *parser.ExecuteProcedure) (*Result, error) {
	proc := strings.ToLower(ep.Procedure.Name)
	olderThan := time.Now()
	retain := 1
	var targetSize int64
	for _, a := range ep.Args {
		na, ok := a.(*parser.NamedArg)
		if !ok {
			return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("alter table %s execute %s: pass arguments by name, e.g. older_than => '2024-01-01 00:00:00'", tbl.Name(), proc)}
		}
		v, err := plan.PropertyValue(na.Value)
		if err != nil {
			return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("alter table %s execute %s: %w", tbl.Name(), proc, err)}
		}
		switch strings.ToLower(na.Name.Name) {
		case "older_than":
			t, err := parseTimestamp(v)
			if err != nil {
				return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("alter table %s execute %s: older_than: %w", tbl.Name(), proc, err)}
			}
			olderThan = t
		case "retain_last":
			if _, err := fmt.Sscan(v, &retain); err != nil || retain < 1 {
				return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("alter table %s execute %s: retain_last must be a positive integer", tbl.Name(), proc)}
			}
		case "target_file_size_bytes":
			if _, err := fmt.Sscan(v, &targetSize); err != nil || targetSize < 1 {
				return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("alter table %s execute %s: target_file_size_bytes must be a positive integer", tbl.Name(), proc)}
			}
		default:
			return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("alter table %s execute %s: unknown argument %q; the arguments are older_than, retain_last and target_file_size_bytes", tbl.Name(), proc, na.Name.Name)}
		}
	}
	switch proc {
	case "expire_snapshots":
		res, err := tbl.ExpireSnapshots(ctx, olderThan, retain)
		if err != nil {
			return nil, err
		}
		return textResult("result", []string{fmt.Sprintf("expired %d snapshots, deleted %d files", len(res.Expired), len(res.DeletedFiles))})
	case "remove_orphan_files":
		res, err := tbl.RemoveOrphanFiles(ctx, olderThan)
		if err != nil {
			return nil, err
		}
		return textResult("result", []string{fmt.Sprintf("deleted %d orphan files (%d bytes)", len(res.DeletedFiles), res.DeletedBytes)})
	case "compact":
		out, res, err := tbl.Compact(ctx, CompactOptions{TargetFileSizeBytes: targetSize})
		if err != nil {
			return nil, err
		}
		if out != nil && out.Snapshot() != nil && (tbl.Snapshot() == nil || out.Snapshot().ID != tbl.Snapshot().ID) {
			s.lastCommit = out.Snapshot().ID
		}
		return textResult("result", []string{fmt.Sprintf("rewrote %d data files into %d, removed %d delete files%s", res.RewrittenDataFiles, res.AddedDataFiles, res.RemovedDeleteFiles, res.MislabeledNote())})
	}
	return nil, &sentinelError{ErrNotImplemented, fmt.Errorf("alter table %s execute %s: unknown procedure; the procedures are compact, expire_snapshots and remove_orphan_files", tbl.Name(), proc)}
}

func parseTimestamp(v string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999Z07:00", "2006-01-02 15:04:05.999999", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a timestamp; write 'YYYY-MM-DD HH:MM:SS'", v)
}
