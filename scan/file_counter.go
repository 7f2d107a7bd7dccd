package scan

// FileCounter is a reader over files that tells how far it has got: how
// many of its files it has read to their end, of how many. The readers
// OpenCSV and OpenParquet return implement it, so that whoever drains
// them (read_csv, COPY FROM, import) can drive a progress bar.
type FileCounter interface {
	Files() (done, total int)
}

// ByteCounter is a reader over one file that tells how many of its bytes
// it has consumed, of how many: a progress bar's fraction within a file
// whose rows are not known in advance (CSV).
type ByteCounter interface {
	Bytes() (read, total int64)
}

var (
	_ FileCounter = (*csvReader)(nil)
	_ FileCounter = (*parquetReader)(nil)
	_ ByteCounter = (*csvReader)(nil)
)
