package lake

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/parser"
	"github.com/skadedb/skade/plan"
	"github.com/skadedb/skade/snapshot"
)

// CreateStatement is a CREATE TABLE statement that recreates the table
// as of this handle: its columns (SQL types, NOT NULL), its current
// partition spec, and every property that differs from what a new table
// of this lake gets (format-version always; not the name mapping, which
// follows from the schema). A sort order follows as ALTER TABLE … WRITE
// ORDERED BY, the only way to declare one. SHOW CREATE TABLE and the
// shell's .schema print it.
func (t *Table) CreateStatement() string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s (\n", quoteName(t.Name()))
	sch := t.icebergSchema()
	fields := t.Schema().Fields()
	// a table whose constraint properties do not parse shows none of them
	// as constraints: they stay in WITH
	cons, cerr := plan.TableConstraints(t.tbl.Metadata().Properties())
	for i, f := range fields {
		fmt.Fprintf(&b, "    %s %s", parser.QuoteIdent(f.Name), strings.ToUpper(exec.TypeName(f.Type)))
		if sch.Fields()[i].Required {
			b.WriteString(" NOT NULL")
		}
		if d := t.tbl.Metadata().Properties()[plan.DefaultProperty(f.Name)]; d != "" {
			b.WriteString(" DEFAULT " + d)
		}
		if i < len(fields)-1 || len(cons) > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	for i, c := range cons {
		fmt.Fprintf(&b, "    CONSTRAINT %s %s", parser.QuoteIdent(c.Name), c.SQL())
		if i < len(cons)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString(")")
	meta := t.tbl.Metadata()
	if spec := meta.PartitionSpec(); spec.NumFields() > 0 {
		var parts []string
		for _, f := range spec.Fields() {
			src, _ := sch.FindColumnName(f.SourceID())
			parts = append(parts, partitionText(f.Transform.String(), parser.QuoteIdent(src)))
		}
		fmt.Fprintf(&b, "\nPARTITIONED BY (%s)", strings.Join(parts, ", "))
	}
	props := meta.Properties()
	// what CREATE TABLE in this lake sets anyway: skade's defaults, then
	// the lake's own (WithTableDefaults)
	defaults := snapshot.Defaults()
	maps.Copy(defaults, t.lk.opts.tableDefaults)
	var keys []string
	for k, v := range props {
		if d, ok := defaults[k]; ok && d == v && k != table.PropertyFormatVersion {
			continue
		}
		if dk, dv := dictionaryDefault(sch, k); dk && dv == v {
			continue // what CREATE TABLE sets for a string column
		}
		if k == table.DefaultNameMappingKey {
			continue // derived from the schema when files are added
		}
		if strings.HasPrefix(k, plan.DefaultProperty("")) {
			continue // a column's DEFAULT, written with the column
		}
		if strings.HasPrefix(k, plan.ConstraintProperty("")) && cerr == nil {
			continue // written as a CONSTRAINT
		}
		keys = append(keys, k)
	}
	if !slices.Contains(keys, table.PropertyFormatVersion) {
		keys = append(keys, table.PropertyFormatVersion)
		props = maps.Clone(props)
		props[table.PropertyFormatVersion] = fmt.Sprint(meta.Version())
	}
	slices.Sort(keys)
	b.WriteString("\nWITH (\n")
	for i, k := range keys {
		fmt.Fprintf(&b, "    %s = %s", sqlString(k), sqlString(props[k]))
		if i < len(keys)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString(")")
	if so := meta.SortOrder(); !so.IsUnsorted() {
		var fs []string
		for _, f := range so.Fields() {
			src, _ := sch.FindColumnName(f.SourceID())
			k := partitionText(f.Transform.String(), parser.QuoteIdent(src))
			if f.Direction == table.SortDESC {
				k += " DESC"
			}
			if f.NullOrder == table.NullsFirst {
				k += " NULLS FIRST"
			} else {
				k += " NULLS LAST"
			}
			fs = append(fs, k)
		}
		order := "ORDERED BY"
		if props["write.distribution-mode"] != "range" {
			order = "LOCALLY ORDERED BY"
		}
		fmt.Fprintf(&b, ";\nALTER TABLE %s WRITE %s %s", quoteName(t.Name()), order, strings.Join(fs, ", "))
	}
	return b.String()
}

// dictionaryDefault reports whether key is the dictionary-encoding
// property CREATE TABLE sets for one of sch's string columns, and the
// value it sets.
func dictionaryDefault(sch *iceberg.Schema, key string) (bool, string) {
	for _, f := range sch.Fields() {
		if f.Type.Equals(iceberg.PrimitiveTypes.String) {
			if k, v := snapshot.DictionaryFor(f.Name); k == key {
				return true, v
			}
		}
	}
	return false, ""
}

// quoteName quotes each part of a dotted table name as needed.
func quoteName(name string) string {
	parts := strings.Split(name, ".")
	for i, p := range parts {
		parts[i] = parser.QuoteIdent(p)
	}
	return strings.Join(parts, ".")
}

// partitionText renders an Iceberg transform ("day", "bucket[16]") on a
// column as PARTITIONED BY spells it: col, day(col), bucket(16, col).
func partitionText(transform, col string) string {
	name, arg, ok := strings.Cut(strings.TrimSuffix(transform, "]"), "[")
	switch {
	case transform == "identity":
		return col
	case ok:
		return fmt.Sprintf("%s(%s, %s)", name, arg, col)
	}
	return fmt.Sprintf("%s(%s)", transform, col)
}
