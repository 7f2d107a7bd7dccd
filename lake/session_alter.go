package lake

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/parser"
	"github.com/skadedb/skade/plan"
)

func identText(id parser.Ident) string {
	if id.Quoted {
		return id.Name
	}
	return strings.ToLower(id.Name)
}

// alterTable evolves a table's schema and properties with Iceberg schema
// evolution: no data is rewritten. All actions of one statement commit
// together.
func (s *Session) alterTable(ctx context.Context, st *parser.AlterTable) (*Result, error) {
	name := tableName(st.Name)
	tbl, err := s.table(ctx, name)
	if errors.Is(err, ErrTableNotFound) && st.IfExists {
		return noticeResult([]string{fmt.Sprintf("relation %q does not exist, skipping", st.Name.Last().Name)}), nil
	}
	if err != nil {
		return nil, err
	}
	for _, a := range st.Actions {
		if ra, ok := a.(*parser.RefAction); ok {
			if len(st.Actions) > 1 {
				return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("ALTER TABLE %s: a branch or tag action stands alone; run it as its own ALTER TABLE", tbl.Name())}
			}
			return s.alterRef(ctx, tbl, ra)
		}
	}
	if len(st.Actions) == 1 {
		if ep, ok := st.Actions[0].(*parser.ExecuteProcedure); ok {
			if err := s.notInTx("ALTER TABLE … EXECUTE " + identText(ep.Procedure)); err != nil {
				return nil, err
			}
			return s.execute(ctx, tbl, ep)
		}
		if rn, ok := st.Actions[0].(*parser.RenameTable); ok {
			if err := s.notInTx("ALTER TABLE … RENAME TO"); err != nil {
				return nil, err
			}
			to, err := s.lk.ident(tableName(rn.NewName))
			if err != nil {
				return nil, err
			}
			if _, err := s.lk.cat.RenameTable(ctx, tbl.id, to); err != nil {
				return nil, fmt.Errorf("alter table %s: rename to %s: %w", tbl.Name(), displayName(to), err)
			}
			return emptyResult(), nil
		}
	}
	ref := &plan.TableRef{Name: tbl.Name(), Ident: tbl.id, Table: tbl.tbl}
	alter, err := s.planner(time.Now()).AlterTable(ctx, st, ref)
	if err != nil {
		return nil, err // classified by translate and sqlError
	}
	if alter.Empty() {
		return emptyResult(), nil
	}
	changes, props, unset, upgrade := alter.Schema, alter.Props, alter.Unset, alter.Upgrade
	specChanges, order := alter.Spec, alter.SortOrder
	err = s.write(ctx, tbl, "alter table", nil, func(txn *table.Transaction) error {
		if (len(alter.AddConstraints) > 0 || len(alter.SetNotNull) > 0) && tbl.tbl.CurrentSnapshot() != nil {
			// the rows checked are the rows the constraint starts on: a
			// write landing first is a conflict, not a row left unchecked
			ref := tbl.branch
			if ref == "" {
				ref = table.MainBranch
			}
			if err := txn.AssertRefSnapshotID(ref); err != nil {
				return err
			}
		}
		if upgrade > 0 {
			if err := txn.UpgradeFormatVersion(upgrade); err != nil {
				return err
			}
		}
		if len(alter.SetNotNull) > 0 {
			// on the rows as they are before the schema says required
			if err := validateNotNull(ctx, tbl.Name(), tbl.branch, txn, alter.SetNotNull); err != nil {
				return err
			}
		}
		if len(changes) > 0 {
			// making a column required is what Iceberg calls incompatible:
			// allowed once the rows were checked (the planner refuses
			// every other incompatible change)
			u := txn.UpdateSchema(false /* caseSensitive */, len(alter.SetNotNull) > 0 || alter.ClearRequiredDefault /* allowIncompatibleChanges */)
			for _, c := range changes {
				c(u)
			}
			if err := u.Commit(); err != nil {
				return err
			}
		}
		if len(specChanges) > 0 {
			u := txn.UpdateSpec(false /* caseSensitive */)
			for _, c := range specChanges {
				c(u)
			}
			if err := u.Commit(); err != nil {
				return fmt.Errorf("partition spec: %w", err)
			}
		}
		if order != nil {
			if err := txn.ReplaceSortOrder(*order); err != nil {
				return fmt.Errorf("sort order: %w", err)
			}
		}
		if len(props) > 0 {
			if err := txn.SetProperties(props); err != nil {
				return err
			}
		}
		if len(unset) > 0 {
			if err := txn.RemoveProperties(unset); err != nil {
				return err
			}
		}
		if len(alter.AddConstraints) > 0 {
			return validateConstraints(ctx, tbl.Name(), tbl.branch, txn, alter.AddConstraints)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return emptyResult(), nil
}
