package scan

import (
	"bufio"
	"bytes"
	"io"
)

// encoding/csv reads only RFC 4180 quoting: fields quoted with '"' and a
// quote inside written twice. Files with other conventions (fields in
// single quotes, a backslash before an embedded quote, as MySQL and some
// exporters write) are transcoded to it on the fly by quoteReader.

// sniffQuote picks the quote and escape characters from the file's first
// bytes: single quotes when fields start and end with them and never
// with double quotes; a backslash escape when one stands before a quote.
func sniffQuote(head []byte) (quote, escape rune) {
	quoted := func(q byte) int {
		n := 0
		for i := 0; i < len(head); i++ {
			if head[i] != q {
				continue
			}
			opens := i == 0 || bytes.IndexByte([]byte(",;\t|\n"), head[i-1]) >= 0
			closes := i+1 == len(head) || bytes.IndexByte([]byte(",;\t|\r\n"), head[i+1]) >= 0
			if opens || closes {
				n++
			}
		}
		return n
	}
	quote = '"'
	if quoted('"') == 0 && quoted('\'') > 0 {
		quote = '\''
	}
	escape = quote
	if bytes.Contains(head, []byte{'\\', byte(quote)}) {
		escape = '\\'
	}
	return quote, escape
}

// quoteReader rewrites CSV quoted with quote and escaped with escape into
// RFC 4180 form: quoted fields in '"', a '"' inside one doubled, and an
// escaped character written as itself. A delim of 0 takes any of the
// delimiters the sniffer knows as one (for sniffing the delimiter).
type quoteReader struct {
	r             *bufio.Reader
	quote, escape byte
	delim         byte
	inQuotes      bool
	fieldStart    bool
	out           []byte
}

func newQuoteReader(r io.Reader, quote, escape, delim rune) *quoteReader {
	return &quoteReader{r: bufio.NewReaderSize(r, 1<<20), quote: byte(quote), escape: byte(escape), delim: byte(delim), fieldStart: true}
}

func (q *quoteReader) Read(p []byte) (int, error) {
	for len(q.out) < len(p) {
		c, err := q.r.ReadByte()
		if err != nil {
			if len(q.out) > 0 {
				break
			}
			return 0, err
		}
		switch {
		case q.inQuotes && q.escape != q.quote && c == q.escape:
			next, err := q.r.ReadByte()
			if err != nil {
				q.out = append(q.out, c)
				break
			}
			q.emitQuoted(next)
		case q.inQuotes && c == q.quote:
			if q.escape == q.quote {
				if next, err := q.r.Peek(1); err == nil && next[0] == q.quote {
					q.r.ReadByte()
					q.emitQuoted(q.quote)
					break
				}
			}
			q.out = append(q.out, '"')
			q.inQuotes = false
		case q.inQuotes:
			q.emitQuoted(c)
		case q.fieldStart && c == q.quote:
			q.out = append(q.out, '"')
			q.inQuotes = true
			q.fieldStart = false
		default:
			q.out = append(q.out, c)
			q.fieldStart = c == '\n' || c == q.delim || q.delim == 0 && bytes.IndexByte([]byte(",;\t|"), c) >= 0
		}
	}
	n := copy(p, q.out)
	q.out = q.out[n:]
	return n, nil
}

// emitQuoted writes c inside a quoted field, doubling a '"'.
func (q *quoteReader) emitQuoted(c byte) {
	if c == '"' {
		q.out = append(q.out, '"', '"')
		return
	}
	q.out = append(q.out, c)
}
