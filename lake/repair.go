package lake

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/skadedb/skade/catalog"
	"github.com/skadedb/skade/objstore"
)

// RepairPlan is what Repair would do: the tables found on disk, each with
// the metadata file the new catalog points it at.
type RepairPlan struct {
	Dir    string
	Tables []catalog.FoundTable // Shadowed ones are listed, not registered
	// Unreadable are table directories none of whose metadata files parse.
	Unreadable []string
	// CatalogProblems is what bbolt's check found wrong with the current
	// catalog.db (empty when it is missing or sound).
	CatalogProblems []string
}

// PlanRepair looks for the tables of the lake at dir without opening its
// catalog: every <namespace>/<table>-<id>/ directory whose newest metadata
// file parses. It changes nothing; show the plan, then call Repair.
func PlanRepair(dir string) (*RepairPlan, error) {
	if objstore.IsURL(dir) {
		return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("repair %s: repair rebuilds the catalog of a local lake only; "+
			"for a lake in an object store, restore its catalog file from a backup", dir)}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	found, bad, err := catalog.FindTables(abs)
	if err != nil {
		return nil, fmt.Errorf("repair %q: %w", abs, err)
	}
	return &RepairPlan{Dir: abs, Tables: found, Unreadable: bad, CatalogProblems: catalog.CheckFile(abs)}, nil
}

// Repair rebuilds the lake's catalog file from p: a missing, empty or
// damaged catalog.db (kept beside it as catalog.db.broken-<time>) is
// replaced by one that points each table at its newest metadata file.
// Data and metadata files are not touched. It returns the kept file's
// path, "" when there was none.
func Repair(ctx context.Context, p *RepairPlan) (string, error) {
	return catalog.Repair(ctx, p.Dir, p.Tables)
}
