package scan

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"golang.org/x/sync/semaphore"
)

// fileRead is one planned data file and how to read it.
type fileRead struct {
	task table.FileScanTask
	scan *table.Scan
	// tbl and alt read a file lacking a partition column (ReadTasks)
	tbl     *table.Table
	alt     ScanFunc
	timeIDs []int // the timestamp columns scan's filter compares
	// conform turns a batch read into the scan's output schema.
	conform func(context.Context, arrow.RecordBatch) (arrow.RecordBatch, error)
	// deletes, when not nil, applies deletesOf's position and equality
	// deletes; task then carries none and is read whole and unfiltered.
	deletes   *deleteIndex
	deletesOf table.FileScanTask
	// more are the splits of the same file planned right after task,
	// read with it in one ReadTasks call (groupSplits); each of them
	// also has an entry of its own, marked read, that yields nothing.
	more []table.FileScanTask
	read bool
	// dict, when not nil, is the scan's row filter compiled for reading
	// the file filtered by dictionary (dictread.go); set only where the
	// file has no deletes applied here.
	dict *dictFilter
	// exact, when not nil, filters every batch not read by dictionary
	// (ReadSpec.Exact)
	exact *exactFilter
	// plain, when not nil, is the scan's columns compiled for reading the
	// file page by page (plainquery.go); set only where the scan has no
	// row filter. For a file whose deletes are applied here, they are
	// the raw scan's columns (the equality keys among them).
	plain *plainQuery
	// scanRows, when not nil, makes scan with batches of other sizes,
	// for the string columns wide (field ids) to bound (wideRows)
	scanRows func(rows int) *table.Scan
	wide     []int
	// top, when not nil, leaves the file unread where no row of it can
	// enter an ORDER BY … LIMIT's top-N (topbound.go); topGroups counts
	// the row groups a plain read of it leaves out so
	top       *TopBound
	topGroups *atomic.Int64
	// pruned counts the row groups a plain or dictionary read leaves out
	// by their statistics
	pruned *atomic.Int64
}

// TestHookWideRows, when set (by tests only), is called with the batch
// rows wideBatch bounds a file's batches to.
var TestHookWideRows func(rows int)

// wideRows is the rows a batch of f read through iceberg-go's scan
// should hold, where f's string columns would make a batch of the scan's
// own rows hold more than about plainStringBatch bytes; 0 to read with
// the scan's own. The bytes a row holds are judged by the footer's
// uncompressed chunk sizes (read once per process, fileColumns): PLAIN
// values are seen, the expansion of a dictionary is not.
func (f *fileRead) wideRows(ctx context.Context) int {
	if f.scanRows == nil || f.task.File.FileFormat() != iceberg.ParquetFile {
		return 0
	}
	fs, err := f.tbl.FS(ctx)
	if err != nil {
		return 0
	}
	fc, err := fileColumns(fs, f.tbl.Metadata(), f.task.File.FilePath())
	if err != nil {
		return 0 // the scan reports it
	}
	var per float64
	for _, id := range f.wide {
		per += fc.perRow[id]
	}
	rows := queryBatchRows(f.tbl)
	if k := wideBatch(per, rows); k < rows {
		return k
	}
	return 0
}

// wideBatch is rows, or fewer where rows of per bytes of string values
// each would hold more than about plainStringBatch bytes.
func wideBatch(per float64, rows int) int {
	if per*float64(rows) <= float64(plainStringBatch) {
		return rows
	}
	k := max(int(float64(plainStringBatch)/per), 1)
	if TestHookWideRows != nil {
		TestHookWideRows(k)
	}
	return k
}

// wideBytesPerRow is the most bytes a row of a row group of md holds in
// the top-level columns ids (field ids), by their chunks' uncompressed
// sizes.
func wideBytesPerRow(md *metadata.FileMetaData, ids []int) float64 {
	var per float64
	for _, id := range ids {
		if k := TopLeaf(md.Schema, id); k >= 0 {
			per += chunkBytesPerRow(md, k)
		}
	}
	return per
}

// taskFile is a data file opened for reading it here, rather than
// through iceberg-go's scan (a read by dictionary, a plain read).
type taskFile struct {
	src  iceio.File
	size int64
	pr   *file.Reader // its footer parsed, buffers from ReadBuffers
}

func (tf *taskFile) close() {
	tf.pr.Close()
	tf.src.Close()
}

// tasks are f's task and the splits of its file read with it.
func (f *fileRead) tasks() []table.FileScanTask {
	return append([]table.FileScanTask{f.task}, f.more...)
}

// openTaskFile opens the Parquet file of tasks (f's), which must all be
// of that one file and carry no deletes; nil where they do not, or the
// file cannot be opened or its footer read: the caller leaves the file
// to iceberg-go's scan, which reports what went wrong.
func openTaskFile(ctx context.Context, f *fileRead, tasks []table.FileScanTask) *taskFile {
	for _, t := range tasks {
		if HasDeletes(t) || t.File.FileFormat() != iceberg.ParquetFile || t.File.FilePath() != f.task.File.FilePath() {
			return nil
		}
	}
	fsys, err := f.tbl.FS(ctx)
	if err != nil {
		return nil
	}
	src, err := fsys.Open(f.task.File.FilePath())
	if err != nil {
		return nil
	}
	st, err := src.Stat()
	if err != nil {
		src.Close()
		return nil
	}
	pr, err := file.NewParquetReader(src, file.WithReadProps(parquet.NewReaderProperties(ReadBuffers)))
	if err != nil {
		src.Close()
		return nil
	}
	return &taskFile{src: src, size: st.Size(), pr: pr}
}

// splitShares is how many shares of a large file's splits groupSplits
// makes per worker. With one share per worker, the second half of a file
// read on two cores could run only as far ahead as its channel holds
// (plainQuery.ahead, a sixth of an 18M-row file) before waiting for the
// whole first half to be taken: the scan used 1.26 cores of 2
// (BENCHMARKS.md, session 39). Smaller shares, read in order by the
// workers as they come free, keep every core busy.
const splitShares = 4

// groupSplits gives each run of consecutive splits of one data file
// (read by the same scan, with iceberg-go's delete handling) to at most
// splitShares entries per worker (one with one worker), each reading a
// contiguous share of the run (about as many bytes each) in one ReadTasks
// call. iceberg-go parses a file's footer once per call only when the
// call holds several tasks (its per-operation metadata cache); one call
// per split parsed the whole footer for every split, which made a file of
// many small row groups, split small, quadratic to read (a fuzzer table
// of 1–3-row row groups and 1-byte splits took over 30 s for 5,600 rows).
// A bounded number of shares per worker bounds the parses and still
// reads one large file on every core. The entries keep their places, so
// plan order and where each file ends stay as they were.
func groupSplits(files []fileRead, workers int) {
	for i := 0; i < len(files); {
		j := i + 1
		if files[i].deletes == nil {
			path := files[i].task.File.FilePath()
			var bytes int64
			for j < len(files) && files[j].deletes == nil && files[j].scan == files[i].scan && files[j].task.File.FilePath() == path {
				bytes += TaskBytes(files[j].task)
				j++
			}
			bytes += TaskBytes(files[i].task)
			shares := int64(1) // one core: one call, one footer parse
			if workers > 1 {
				shares = int64(max(min(workers*splitShares, j-i), 1))
			}
			// entry lead reads the splits after it until its share is
			// full; the next split then leads the next share
			lead, done, acc := i, int64(0), TaskBytes(files[i].task)
			for k := i + 1; k < j; k++ {
				if done+1 < shares && (done+1)*bytes <= acc*shares {
					lead, done = k, done+1
				} else {
					files[lead].more = append(files[lead].more, files[k].task)
					files[k].read = true
				}
				acc += TaskBytes(files[k].task)
			}
		}
		i = j
	}
}

// fileReader reads files on a few goroutines, each file through its own
// iceberg-go ReadTasks, and hands their batches out in plan order, telling
// where each file ends (which one ReadTasks over every file hides).
//
// INVARIANT: at most workers+1 files are read or hold unread batches at
// once, so memory stays bounded by a few files' batches whatever the
// consumer's pace.
type fileReader struct {
	files  []fileRead
	out    []chan fileItem // per file, closed when the file is done
	window chan struct{}   // a slot per file being read or not yet consumed
	// ahead holds, per file, the bytes of its batches read and not yet
	// taken: at most aheadBytes (a batch larger than that alone)
	ahead  []*aheadGate
	cancel context.CancelFunc
	wg     sync.WaitGroup
	cur    int
	closed bool
	// topSkipped counts the files (or ranges) left unread by their top
	// bound, topGroups the row groups of the files read
	topSkipped, topGroups atomic.Int64
	// pruned counts the row groups left out by their statistics
	pruned atomic.Int64
}

type fileItem struct {
	rec   arrow.RecordBatch
	err   error
	bytes int64 // what rec holds of its file's ahead
}

// aheadBytes is how many bytes of batches a file may hold read and not
// yet taken, counted by what the batches hold. A file is read on one
// goroutine while the consumer takes the batches of the one before it (a
// file, or a range of one, in plan order); where that room was a count of
// batches guessed from the columns' types, a GROUP BY over one file's
// dictionary-encoded strings got 3 batches (a string counted at 32 bytes,
// four batches' worth of each), and the second core waited for the
// consumer much of the time: 16 MiB took that query from about 270 to 215
// ms, 32 MiB to 210 ms with 40 MB more RSS (BENCHMARKS.md, session 42).
const aheadBytes = 16 << 20

// AheadBytes is aheadBytes, for tests.
const AheadBytes = aheadBytes

// TestHookAhead, when set (by tests only), is called each time a file's
// reader takes room for a batch: the batch's bytes, and what the file
// then holds read and not yet taken.
var TestHookAhead func(batch, held int64)

// aheadGate bounds the bytes a file holds read and not yet taken.
type aheadGate struct {
	sem  *semaphore.Weighted
	held atomic.Int64
}

// acquire waits for room for a batch of n bytes (taken as aheadBytes
// when larger, so that it goes alone), and returns what it took.
func (g *aheadGate) acquire(ctx context.Context, n int64) (int64, error) {
	k := min(n, aheadBytes)
	if err := g.sem.Acquire(ctx, k); err != nil {
		return 0, err
	}
	h := g.held.Add(k)
	if TestHookAhead != nil {
		TestHookAhead(n, h)
	}
	return k, nil
}

func (g *aheadGate) release(k int64) {
	g.held.Add(-k)
	g.sem.Release(k)
}

// aheadMost is how many batches a file may hold read and not yet taken,
// however small.
const aheadMost = 64

// BatchBytes is what rec's buffers hold (a dictionary counted with every
// batch that has it).
func BatchBytes(rec arrow.RecordBatch) int64 {
	var n int64
	for _, c := range rec.Columns() {
		n += DataBytes(c.Data())
	}
	return n
}

// DataBytes is the size of the buffers d, its children and its
// dictionary hold.
func DataBytes(d arrow.ArrayData) int64 {
	var n int64
	for _, b := range d.Buffers() {
		if b != nil {
			n += int64(b.Len())
		}
	}
	for _, ch := range d.Children() {
		n += DataBytes(ch)
	}
	if d.DataType().ID() == arrow.DICTIONARY {
		if dict, ok := d.Dictionary().(*array.Data); ok && dict != nil {
			n += DataBytes(dict)
		}
	}
	return n
}

func startFileReader(ctx context.Context, files []fileRead) *fileReader {
	workers := min(runtime.GOMAXPROCS(0), len(files))
	ctx, cancel := context.WithCancel(ctx)
	r := &fileReader{files: files, out: make([]chan fileItem, len(files)), window: make(chan struct{}, workers+1), cancel: cancel,
		ahead: make([]*aheadGate, len(files))}
	for i := range files {
		if files[i].top != nil {
			files[i].topGroups = &r.topGroups
		}
		files[i].pruned = &r.pruned
	}
	for i := range r.out {
		r.out[i] = make(chan fileItem, aheadMost)
		r.ahead[i] = &aheadGate{sem: semaphore.NewWeighted(aheadBytes)}
	}
	todo := make(chan int)
	r.wg.Add(workers + 1)
	go func() {
		defer r.wg.Done()
		defer close(todo)
		for i := range files {
			select {
			case r.window <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case todo <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	for range workers {
		go func() {
			defer r.wg.Done()
			for i := range todo {
				r.read(ctx, i)
			}
		}()
	}
	return r
}

// read reads file i into its channel and closes it.
func (r *fileReader) read(ctx context.Context, i int) {
	out := r.out[i]
	defer close(out)
	send := func(it fileItem) bool {
		if it.rec != nil {
			var err error
			if it.bytes, err = r.ahead[i].acquire(ctx, BatchBytes(it.rec)); err != nil {
				it.rec.Release()
				return false
			}
		}
		select {
		case out <- it:
			return true
		case <-ctx.Done():
			if it.rec != nil {
				it.rec.Release()
			}
			return false
		}
	}
	f := &r.files[i]
	if f.read {
		return // an earlier entry read this split (groupSplits)
	}
	if f.top.skips(f.task) {
		r.topSkipped.Add(int64(1 + len(f.more)))
		return
	}
	var filter *deleteFilter
	if f.deletes != nil {
		fd, err := f.deletes.forTask(ctx, f.deletesOf)
		if err != nil {
			send(fileItem{err: err})
			return
		}
		filter = &deleteFilter{fd: fd}
	}
	if f.dict != nil && filter == nil {
		handled, err := readDict(ctx, f, func(rec arrow.RecordBatch) bool {
			rec, err := f.conform(ctx, rec)
			if err != nil {
				send(fileItem{err: err})
				return false
			}
			return send(fileItem{rec: rec})
		})
		if err != nil {
			send(fileItem{err: err})
		}
		if handled {
			return
		}
	}
	// pass hands rec on: its deleted rows dropped, filtered exactly,
	// conformed; false when the read must stop (an error was sent, or the
	// reader was cancelled).
	pass := func(rec arrow.RecordBatch, owned bool) bool {
		var err error
		if filter != nil {
			if rec, err = filter.apply(ctx, ReadBuffers, rec, owned); err != nil {
				send(fileItem{err: err})
				return false
			}
		}
		if f.exact != nil && rec.NumRows() > 0 {
			if rec, err = f.exact.apply(ctx, rec); err != nil {
				send(fileItem{err: err})
				return false
			}
		}
		if rec.NumRows() == 0 {
			rec.Release()
			return true
		}
		if rec, err = f.conform(ctx, rec); err != nil {
			send(fileItem{err: err})
			return false
		}
		return send(fileItem{rec: rec})
	}
	handled := false
	if f.plain != nil {
		// a file whose deletes are applied here comes whole and in order,
		// as the raw scan reads it
		var err error
		if handled, err = readPlainQuery(ctx, f, pass); err != nil {
			send(fileItem{err: err})
			return
		}
	}
	if !handled {
		sc := f.scan
		if rows := f.wideRows(ctx); rows > 0 {
			sc = f.scanRows(rows)
			defer sc.Close()
		}
		seq, err := ReadTasksFiltered(compute.WithAllocator(ctx, ReadBuffers), f.tbl, sc, f.alt, f.tasks(), f.timeIDs)
		if err != nil {
			send(fileItem{err: err})
			return
		}
		for rec, err := range seq {
			if err != nil {
				send(fileItem{err: err})
				return
			}
			if !pass(rec, false) {
				return
			}
		}
	}
	if filter != nil && filter.next != f.deletesOf.File.Count() {
		// positions would be wrong: a file read unfiltered must come
		// whole (deleteIndex's invariant)
		send(fileItem{err: fmt.Errorf("file %s: read %d rows, its metadata says %d; deletes cannot be applied by position (bug)", f.task.File.FilePath(), filter.next, f.deletesOf.File.Count())})
	}
}

// next returns the next batch in plan order; fileDone (with a nil batch)
// when a data file has just been read to its end (the last of its splits,
// when it was planned as several); a nil batch and false when every file
// has.
func (r *fileReader) next(ctx context.Context) (rec arrow.RecordBatch, fileDone bool, err error) {
	for r.cur < len(r.out) {
		select {
		case it, ok := <-r.out[r.cur]:
			if !ok {
				last := r.cur+1 >= len(r.files) || r.files[r.cur+1].task.File.FilePath() != r.files[r.cur].task.File.FilePath()
				r.cur++
				<-r.window
				if last {
					return nil, true, nil
				}
				continue
			}
			r.ahead[r.cur].release(it.bytes)
			return it.rec, false, it.err
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
	return nil, false, nil
}

// close stops the readers and releases what they read but nobody took.
func (r *fileReader) close() {
	if r.closed {
		return
	}
	r.closed = true
	r.cancel()
	r.wg.Wait()
	for _, ch := range r.out {
	drain:
		for {
			select {
			case it, ok := <-ch:
				if !ok {
					break drain
				}
				if it.rec != nil {
					it.rec.Release()
				}
			default:
				break drain
			}
		}
	}
}
