package scan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCSVBytes: the CSV reader reports the bytes its parser consumed, of
// the file's size, so that a progress bar moves inside one big file.
func TestCSVBytes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.csv")
	var b strings.Builder
	b.WriteString("id,name\n")
	for i := 0; i < 100000; i++ {
		b.WriteString("12345,some text here\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	rdr, err := OpenCSV(path, DefaultCSVOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	bc := rdr.(ByteCounter)
	_, total := bc.Bytes()
	if total != int64(b.Len()) {
		t.Fatalf("total %d, want the file's %d bytes", total, b.Len())
	}
	var last int64
	moved := false
	for rdr.Next() {
		read, _ := bc.Bytes()
		if read < last || read > total {
			t.Fatalf("read %d after %d, of %d", read, last, total)
		}
		if read > 0 && read < total {
			moved = true
		}
		last = read
	}
	if rdr.Err() != nil {
		t.Fatal(rdr.Err())
	}
	if read, _ := bc.Bytes(); read != total || !moved {
		t.Fatalf("at the end read %d of %d (moved in between: %v)", read, total, moved)
	}
}
