package plan

import (
	"context"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/skadedb/skade/parser"
)

// metadataTable binds t$snapshots, t$history, t$files, t$manifests and
// t$partitions, read through iceberg-go's inspection tables at the
// table's current metadata (staged metadata inside a transaction).
func (b *binder) metadataTable(t *parser.TableName, ref *TableRef, suffix string) (Node, error) {
	if t.AsOf != nil {
		return nil, errorf(t.Pos, "metadata tables cannot be read with time travel")
	}
	insp := ref.Table.Inspect()
	var open func(context.Context) (array.RecordReader, error)
	switch suffix {
	case "snapshots":
		open = insp.Snapshots
	case "history":
		open = insp.History
	case "files":
		open = insp.Files
	case "manifests":
		open = insp.Manifests
	case "partitions":
		open = insp.Partitions
	case "refs":
		open = insp.Refs
	default:
		return nil, errorf(t.Pos, "metadata table %q does not exist%s; the metadata tables are $snapshots, $history, $files, $manifests, $partitions and $refs",
			ref.Name+"$"+suffix, didYouMean(suffix, []string{"snapshots", "history", "files", "manifests", "partitions", "refs"}))
	}
	n, err := b.readerNode(ref.Name+"$"+strings.ToLower(suffix), open)
	return n, atPos(t.Pos, err)
}
