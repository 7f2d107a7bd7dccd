package mergeinto

// SetReadAhead makes MERGE read ahead with workers goroutines (0: not at
// all; -1: as many as it would) and at most bytes read ahead (0: the
// default), for a test; the returned func restores both.
func SetReadAhead(workers int, bytes int64) (restore func()) {
	w, b := readAheadWorkersSet, readAheadBytes
	readAheadWorkersSet = workers
	if bytes > 0 {
		readAheadBytes = bytes
	}
	return func() { readAheadWorkersSet, readAheadBytes = w, b }
}

// SetInsertRowsPerWriter sets how many inserted rows make another insert
// writer, for a test; the returned func restores it.
func SetInsertRowsPerWriter(n int) (restore func()) {
	old := insertRowsPerWriter
	insertRowsPerWriter = n
	return func() { insertRowsPerWriter = old }
}

// SetKeyRangeMinRows sets the source size from which a MERGE bounds its
// join table by the target's key range (keyrange.go), for a test; the
// returned func restores it.
func SetKeyRangeMinRows(n int) (restore func()) {
	old := keyRangeMinRows
	keyRangeMinRows = n
	return func() { keyRangeMinRows = old }
}

// SetNarrowRead switches narrow reads (narrowColumns) on or off, for a
// test; the returned func restores the setting.
func SetNarrowRead(on bool) (restore func()) {
	old := narrowReadOff
	narrowReadOff = !on
	return func() { narrowReadOff = old }
}

// SetSparsePatch switches sparse patches (sparse.go) on or off, for a
// test; the returned func restores the setting.
func SetSparsePatch(on bool) (restore func()) {
	old := sparseOff
	sparseOff = !on
	return func() { sparseOff = old }
}
