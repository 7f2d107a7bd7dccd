package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/mattn/go-runewidth"
)

// modes are the output formats of .mode and --format.
var modes = []string{"table", "csv", "tsv", "json", "markdown", "html", "insert", "line"}

// modeAliases are other shells' names for skade's modes: DuckDB's box
// and duckbox are skade's table.
var modeAliases = map[string]string{"box": "table", "duckbox": "table"}

// renderer prints one result. Rows arrive as they are read; a renderer
// that needs them all (table) buffers them.
type renderer interface {
	header(cols []column)
	row(r []cell)
	// done ends the result; total counts every row read.
	done(total int64, elapsed time.Duration)
}

// renderOptions shape the table mode for a terminal.
type renderOptions struct {
	width   int  // fit the table to this many columns; 0 for no limit
	maxRows int  // show at most this many rows; 0 for all
	colour  bool // dim NULLs
	timer   bool // put the elapsed time in the footer
	// noHeaders leaves out the header line (csv, tsv, markdown, html)
	noHeaders bool
	// insertTable names the table of insert mode's statements
	insertTable string
	// widths fix the table mode's column widths, in order (.width); 0 or
	// a missing entry fits the column as usual
	widths []int
}

func newRenderer(mode string, w io.Writer, o renderOptions) renderer {
	switch mode {
	case "csv", "tsv":
		cw := csv.NewWriter(w)
		if mode == "tsv" {
			cw.Comma = '\t'
		}
		return &csvRenderer{w: cw, noHeader: o.noHeaders}
	case "html":
		return &htmlRenderer{w: w, noHeader: o.noHeaders}
	case "insert":
		name := o.insertTable
		if name == "" {
			name = "table"
		}
		return &insertRenderer{w: w, table: name}
	case "json":
		return &jsonRenderer{w: w}
	case "markdown":
		return &markdownRenderer{w: w}
	case "line":
		return &lineRenderer{w: w}
	}
	return &tableRenderer{w: w, o: o}
}

// formatElapsed prints a duration with three significant digits, and
// from 100 s on in minutes and seconds.
func formatElapsed(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	case d < 999500*time.Microsecond: // 999.5 ms would print as 1e+03 ms

		return fmt.Sprintf("%.3g ms", float64(d)/float64(time.Millisecond))
	case d < 100*time.Second:
		return fmt.Sprintf("%.3g s", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", d/time.Minute, d%time.Minute/time.Second)
	}
	return fmt.Sprintf("%dh%02dm%02ds", d/time.Hour, d%time.Hour/time.Minute, d%time.Minute/time.Second)
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// tableRenderer draws a box with the column names and types in the header,
// numbers right-aligned and NULL distinct from any string.
type tableRenderer struct {
	w    io.Writer
	o    renderOptions
	cols []column
	rows [][]cell
}

func (t *tableRenderer) header(cols []column) { t.cols = cols }

func (t *tableRenderer) row(r []cell) {
	if t.o.maxRows > 0 && len(t.rows) >= t.o.maxRows {
		return
	}
	t.rows = append(t.rows, r)
}

func tableText(c cell) string {
	if c.null {
		return c.text
	}
	return strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(c.text)
}

func (t *tableRenderer) done(total int64, elapsed time.Duration) {
	n := len(t.cols)
	natural := make([]int, n)
	least := make([]int, n)
	for i, c := range t.cols {
		// a column is never narrower than its name; its type may be cut
		least[i] = max(runewidth.StringWidth(c.name), 1)
		natural[i] = max(least[i], runewidth.StringWidth(c.typ))
	}
	for _, r := range t.rows {
		for i, c := range r {
			natural[i] = max(natural[i], runewidth.StringWidth(tableText(c)))
		}
	}
	for i, w := range t.o.widths {
		if i < n && w > 0 {
			// .width: exactly this wide, the name cut too if need be
			natural[i], least[i] = w, w
		}
	}
	show, widths, gap := fitColumns(natural, least, t.o.width)
	hidden := n - len(show)

	var b strings.Builder
	rule := func(l, m, r string) {
		b.WriteString(l)
		for k, w := range widths {
			if k > 0 {
				b.WriteString(m)
			}
			if k == gap {
				b.WriteString("───" + m)
			}
			b.WriteString(strings.Repeat("─", w+2))
		}
		if gap == len(widths) {
			b.WriteString(m + "───")
		}
		b.WriteString(r + "\n")
	}
	line := func(texts []string, right []bool, dim []bool) {
		b.WriteString("│")
		for k, w := range widths {
			if k == gap {
				b.WriteString(" … │")
			}
			i := show[k]
			s := runewidth.Truncate(texts[i], w, "…")
			pad := strings.Repeat(" ", w-runewidth.StringWidth(s))
			if dim != nil && dim[i] && t.o.colour {
				s = "\x1b[2m" + s + "\x1b[0m"
			}
			if right != nil && right[i] {
				s = pad + s
			} else {
				s += pad
			}
			b.WriteString(" " + s + " │")
		}
		if gap == len(widths) {
			b.WriteString(" … │")
		}
		b.WriteString("\n")
	}
	names := make([]string, n)
	types := make([]string, n)
	right := make([]bool, n)
	for i, c := range t.cols {
		names[i], types[i], right[i] = c.name, c.typ, c.numeric
	}
	rule("┌", "┬", "┐")
	line(names, nil, nil)
	line(types, nil, nil)
	rule("├", "┼", "┤")
	texts := make([]string, n)
	dim := make([]bool, n)
	for _, r := range t.rows {
		for i, c := range r {
			texts[i], dim[i] = tableText(c), c.null
		}
		if n == 1 && len(widths) == 1 && runewidth.StringWidth(texts[0]) > widths[0] {
			// one column (EXPLAIN's plan): wrap long values, don't cut them
			for _, part := range wrapText(texts[0], widths[0]) {
				line([]string{part}, right, dim)
			}
			continue
		}
		line(texts, right, dim)
	}
	rule("└", "┴", "┘")
	foot := plural(total, "row", "rows")
	if more := total - int64(len(t.rows)); more > 0 {
		fmt.Fprintf(&b, "… %s\n", plural(more, "more row", "more rows"))
		foot += fmt.Sprintf(" (%d shown; .maxrows 0 shows all)", len(t.rows))
	}
	if hidden > 0 {
		foot += fmt.Sprintf(", %d columns (%d shown; .mode line or \\x shows all)", n, len(show))
	}
	if t.o.timer {
		foot += " (" + formatElapsed(elapsed) + ")"
	}
	b.WriteString(foot + "\n")
	io.WriteString(t.w, b.String())
}

// wrapText splits s into pieces at most width wide, continuing a wrapped
// line under its indentation (plus two) when there is room for that.
func wrapText(s string, width int) []string {
	indent := len(s) - len(strings.TrimLeft(s, " "))
	cont := strings.Repeat(" ", indent+2)
	if runewidth.StringWidth(cont)*2 > width {
		cont = ""
	}
	var out []string
	for first := true; s != ""; first = false {
		room := width
		prefix := ""
		if !first {
			prefix = cont
			room -= runewidth.StringWidth(cont)
		}
		var b strings.Builder
		w := 0
		rest := s
		for i, r := range s {
			rw := runewidth.RuneWidth(r)
			if w+rw > room && w > 0 {
				rest = s[i:]
				break
			}
			b.WriteRune(r)
			w += rw
			rest = s[i+len(string(r)):]
		}
		out = append(out, prefix+b.String())
		s = rest
	}
	return out
}

// fitColumns chooses how a table of columns with these natural widths
// fits in limit terminal columns, as DuckDB's shell does: every column is
// first capped (never below least, its name's width; the outer columns
// less than the others), then columns are
// taken from both ends, the first and last first, and the middle ones
// that do not fit are left out for a "…" column. It returns the columns
// shown (indexes, in order), their widths, and where the "…" column goes
// (an index into show; -1 when every column is shown).
func fitColumns(natural, least []int, limit int) (show, widths []int, gap int) {
	n := len(natural)
	all := func() ([]int, []int) {
		s := make([]int, n)
		for i := range s {
			s[i] = i
		}
		return s, slices.Clone(natural)
	}
	total := func(ws []int, elided bool) int {
		s := 1
		for _, w := range ws {
			s += w + 3
		}
		if elided {
			s += 4 // " … │"
		}
		return s
	}
	if limit <= 0 || total(natural, false) <= limit {
		show, widths = all()
		return show, widths, -1
	}
	// cap wide columns, never below their name: the first and the last
	// keep up to two fifths of the terminal, the others a quarter
	capped := make([]int, n)
	for i, w := range natural {
		c := max(limit/4, 12)
		if i == 0 || i == n-1 {
			c = max(limit*2/5, 12)
		}
		capped[i] = max(least[i], min(w, c))
	}
	if total(capped, false) <= limit {
		// every column fits once the widest are cut: shrink the widest
		// further only as far as needed
		show, _ = all()
		widths = slices.Clone(natural)
		for total(widths, false) > limit {
			widest := -1
			for i, w := range widths {
				if w > least[i] && (widest < 0 || w > widths[widest]) {
					widest = i
				}
			}
			if widest < 0 {
				break
			}
			widths[widest]--
		}
		return show, widths, -1
	}
	// take columns from the left and the right alternately while they fit
	var left, right []int
	l, r := 0, n-1
	for l <= r {
		took := false
		for _, side := range []bool{true, false} {
			if l > r {
				break
			}
			i := l
			if !side {
				i = r
			}
			ws := make([]int, 0, len(left)+len(right)+1)
			for _, j := range left {
				ws = append(ws, capped[j])
			}
			for _, j := range right {
				ws = append(ws, capped[j])
			}
			ws = append(ws, capped[i])
			if total(ws, l < r) > limit && len(left)+len(right) > 0 {
				continue
			}
			if side {
				left = append(left, i)
				l++
			} else {
				right = append(right, i)
				r--
			}
			took = true
		}
		if !took {
			break
		}
	}
	slices.Reverse(right)
	show = append(left, right...)
	for _, i := range show {
		widths = append(widths, capped[i])
	}
	gap = -1
	if len(show) < n {
		gap = len(left)
	}
	return show, widths, gap
}

type csvRenderer struct {
	w        *csv.Writer
	rec      []string
	noHeader bool
}

func (c *csvRenderer) header(cols []column) {
	c.rec = make([]string, len(cols))
	for i, col := range cols {
		c.rec[i] = col.name
	}
	if !c.noHeader {
		c.w.Write(c.rec)
	}
}

func (c *csvRenderer) row(r []cell) {
	for i, v := range r {
		if v.null {
			c.rec[i] = ""
		} else {
			c.rec[i] = v.text
		}
	}
	c.w.Write(c.rec)
}

func (c *csvRenderer) done(int64, time.Duration) { c.w.Flush() }

// jsonRenderer prints an array of objects, one a line, as DuckDB's .mode
// json does: numbers and booleans bare, NULL as null.
type jsonRenderer struct {
	w    io.Writer
	cols []column
	keys []string
	n    int64
}

func (j *jsonRenderer) header(cols []column) {
	j.cols = cols
	j.keys = make([]string, len(cols))
	for i, c := range cols {
		k, _ := json.Marshal(c.name)
		j.keys[i] = string(k)
	}
}

func (j *jsonRenderer) row(r []cell) {
	var b strings.Builder
	if j.n == 0 {
		b.WriteString("[{")
	} else {
		b.WriteString(",\n{")
	}
	for i, v := range r {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(j.keys[i] + ":")
		switch {
		case v.null:
			b.WriteString("null")
		case (j.cols[i].numeric && json.Valid([]byte(v.text))) || j.cols[i].boolean:
			b.WriteString(v.text)
		default:
			s, _ := json.Marshal(v.text)
			b.Write(s)
		}
	}
	b.WriteString("}")
	j.n++
	io.WriteString(j.w, b.String())
}

func (j *jsonRenderer) done(int64, time.Duration) {
	if j.n == 0 {
		io.WriteString(j.w, "[]\n")
		return
	}
	io.WriteString(j.w, "]\n")
}

type markdownRenderer struct {
	w io.Writer
}

func markdownCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", "<br>", "\r", "").Replace(s)
}

func (m *markdownRenderer) header(cols []column) {
	var h, sep strings.Builder
	h.WriteString("|")
	sep.WriteString("|")
	for _, c := range cols {
		h.WriteString(" " + markdownCell(c.name) + " |")
		if c.numeric {
			sep.WriteString("---:|")
		} else {
			sep.WriteString("---|")
		}
	}
	fmt.Fprintf(m.w, "%s\n%s\n", h.String(), sep.String())
}

func (m *markdownRenderer) row(r []cell) {
	var b strings.Builder
	b.WriteString("|")
	for _, v := range r {
		b.WriteString(" " + markdownCell(v.text) + " |")
	}
	fmt.Fprintln(m.w, b.String())
}

// done ends the table with a blank line: Markdown would join two tables
// that touch.
func (m *markdownRenderer) done(int64, time.Duration) { io.WriteString(m.w, "\n") }

// lineRenderer prints one "name = value" line per column and a blank line
// between rows, as sqlite3's .mode line does.
type lineRenderer struct {
	w     io.Writer
	names []string
	n     int64
}

func (l *lineRenderer) header(cols []column) {
	width := 0
	for _, c := range cols {
		width = max(width, runewidth.StringWidth(c.name))
	}
	l.names = make([]string, len(cols))
	for i, c := range cols {
		l.names[i] = strings.Repeat(" ", width-runewidth.StringWidth(c.name)) + c.name
	}
}

func (l *lineRenderer) row(r []cell) {
	var b strings.Builder
	if l.n > 0 {
		b.WriteString("\n")
	}
	for i, v := range r {
		b.WriteString(l.names[i] + " = " + v.text + "\n")
	}
	l.n++
	io.WriteString(l.w, b.String())
}

// done separates results by a blank line, as rows are.
func (l *lineRenderer) done(int64, time.Duration) {
	if l.n > 0 {
		io.WriteString(l.w, "\n")
	}
}

// htmlRenderer prints an HTML table, as SQLite's .mode html does.
type htmlRenderer struct {
	w        io.Writer
	noHeader bool
}

func (h *htmlRenderer) header(cols []column) {
	io.WriteString(h.w, "<table>\n")
	if h.noHeader {
		return
	}
	var b strings.Builder
	b.WriteString("<tr>")
	for _, c := range cols {
		b.WriteString("<th>" + html.EscapeString(c.name) + "</th>")
	}
	b.WriteString("</tr>\n")
	io.WriteString(h.w, b.String())
}

func (h *htmlRenderer) row(r []cell) {
	var b strings.Builder
	b.WriteString("<tr>")
	for _, c := range r {
		if c.null {
			b.WriteString("<td></td>")
			continue
		}
		b.WriteString("<td>" + html.EscapeString(c.text) + "</td>")
	}
	b.WriteString("</tr>\n")
	io.WriteString(h.w, b.String())
}

func (h *htmlRenderer) done(int64, time.Duration) { io.WriteString(h.w, "</table>\n") }

// insertRenderer prints each row as an INSERT statement, as SQLite's
// .mode insert does, so that a result can be loaded elsewhere.
type insertRenderer struct {
	w     io.Writer
	table string
	cols  []column
}

func (r *insertRenderer) header(cols []column) { r.cols = cols }

func (r *insertRenderer) row(cells []cell) {
	var b strings.Builder
	b.WriteString(`INSERT INTO "` + strings.ReplaceAll(r.table, `"`, `""`) + `" VALUES(`)
	for i, c := range cells {
		if i > 0 {
			b.WriteString(",")
		}
		switch {
		case c.null:
			b.WriteString("NULL")
		case r.cols[i].numeric || r.cols[i].boolean:
			b.WriteString(c.text)
		default:
			b.WriteString("'" + strings.ReplaceAll(c.text, "'", "''") + "'")
		}
	}
	b.WriteString(");\n")
	io.WriteString(r.w, b.String())
}

func (r *insertRenderer) done(int64, time.Duration) {}
