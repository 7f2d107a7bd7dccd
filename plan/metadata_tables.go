package plan

import (
	"github.com/skadedb/skade/parser"
)

// metadataTable binds t$snapshots, t$history, t$files, t$manifests and
// t$partitions.
func (b *binder) metadataTable(t *parser.TableName, ref *TableRef, suffix string) (Node, error) {
	return nil, errorf(t.Pos, "metadata table %s$%s is not supported yet", ref.Name, suffix)
}
