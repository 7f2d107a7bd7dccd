package main

import (
	"slices"
	"sort"
	"strings"

	"github.com/skadedb/skade/plan"
)

// sqlKeywords are the words tab completion offers besides names.
var sqlKeywords = strings.Fields(`
SELECT FROM WHERE GROUP BY HAVING ORDER LIMIT OFFSET DISTINCT AS ON USING JOIN
INNER LEFT RIGHT FULL OUTER CROSS NATURAL UNION INTERSECT EXCEPT ALL WITH
RECURSIVE INSERT INTO VALUES UPDATE SET DELETE MERGE MATCHED THEN WHEN NOT
AND OR IS NULL TRUE FALSE IN EXISTS BETWEEN LIKE ILIKE CASE ELSE END CAST
CREATE TABLE DROP ALTER ADD COLUMN RENAME TO IF REPLACE PARTITIONED TRUNCATE
EXPLAIN ANALYZE DESCRIBE SHOW TABLES COPY FOR VERSION TIMESTAMP OF AT ASC DESC
NULLS FIRST LAST OVER PARTITION WINDOW ROWS RANGE PRECEDING FOLLOWING CURRENT
ROW FILTER RETURNING BIGINT INTEGER SMALLINT DOUBLE REAL DECIMAL NUMERIC
VARCHAR TEXT BOOLEAN DATE TIME TIMESTAMPTZ INTERVAL UUID BLOB count sum avg
min max coalesce read_csv read_parquet range generate_series`)

// complete is the line editor's word completer: the word before the
// cursor is completed with keywords, table names, and the columns of the
// tables the line names ("t.col" completes t's columns).
func (sh *shell) complete(line string, pos int) (head string, completions []string, tail string) {
	rs := []rune(line)
	pos = min(max(pos, 0), len(rs))
	start := pos
	for start > 0 && isWordRune(rs[start-1]) {
		start--
	}
	head, word, tail := string(rs[:start]), string(rs[start:pos]), string(rs[pos:])

	var cands []string
	trimmed := strings.TrimLeft(head, " \t")
	switch {
	case strings.HasPrefix(trimmed, ".") || (trimmed == "" && strings.HasPrefix(word, ".")):
		cands = sh.completeDot(trimmed, word)
	case strings.Contains(word, "$"):
		// Metadata tables: events$snapshots and friends.
		for _, t := range sh.tableNames() {
			for _, m := range plan.MetadataTableNames() {
				cands = append(cands, strings.TrimPrefix(t, "main.")+"$"+m)
			}
		}
	case strings.Contains(word, "."):
		qual := word[:strings.LastIndexByte(word, '.')]
		for _, c := range sh.columnsOf(qual) {
			cands = append(cands, qual+"."+c)
		}
		for _, t := range sh.tableNames() {
			if strings.HasPrefix(t, qual+".") {
				cands = append(cands, t)
			}
		}
	default:
		lower := word == strings.ToLower(word)
		for _, k := range sqlKeywords {
			if lower {
				k = strings.ToLower(k)
			}
			cands = append(cands, k)
		}
		tables := sh.tableNames()
		for _, t := range tables {
			cands = append(cands, strings.TrimPrefix(t, "main."))
		}
		// Columns of the tables this line names.
		for _, w := range strings.FieldsFunc(line, func(r rune) bool { return !isWordRune(r) }) {
			if slices.Contains(tables, w) || slices.Contains(tables, "main."+strings.ToLower(w)) {
				cands = append(cands, sh.columnsOf(w)...)
			}
		}
	}
	seen := map[string]bool{}
	for _, c := range cands {
		if strings.HasPrefix(strings.ToLower(c), strings.ToLower(word)) && !seen[c] {
			seen[c] = true
			completions = append(completions, c)
		}
	}
	sort.Strings(completions)
	if len(completions) == 1 {
		completions[0] += " "
	}
	return head, completions, tail
}

func isWordRune(r rune) bool {
	return r == '_' || r == '.' || r == '$' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 127
}

func (sh *shell) completeDot(head, word string) []string {
	fields := strings.Fields(head)
	if len(fields) == 0 {
		var out []string
		for _, c := range dotCommands {
			out = append(out, "."+c.name)
		}
		return out
	}
	switch strings.TrimPrefix(fields[0], ".") {
	case "mode":
		return modes
	case "timer":
		return []string{"on", "off"}
	case "schema", "history":
		var out []string
		for _, t := range sh.tableNames() {
			out = append(out, strings.TrimPrefix(t, "main."))
		}
		return out
	}
	return nil
}

func (sh *shell) tableNames() []string {
	names, err := sh.lk.Tables(sh.ctx)
	if err != nil {
		return nil
	}
	return names
}

func (sh *shell) columnsOf(table string) []string {
	tbl, err := sh.lk.Table(sh.ctx, table)
	if err != nil {
		return nil
	}
	var out []string
	for _, f := range tbl.Schema().Fields() {
		out = append(out, f.Name)
	}
	return out
}
