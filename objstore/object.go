package objstore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strconv"
	"strings"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
)

// object is an open object: its size and tail are known from Open's one
// suffix-range GET; the rest is fetched by range as it is read.
type object struct {
	fs       *FS
	loc, key string
	size     int64
	// tail holds the object's bytes from tailStart to size.
	tail      []byte
	tailStart int64
	pos       int64
	// body streams sequential reads from bodyPos up to tailStart.
	body    io.ReadCloser
	bodyPos int64
	closed  bool
}

var _ iceio.File = (*object)(nil)

// fetchTail reads the object's last TailSize bytes and, from the
// answer's Content-Range, its size.
func (o *object) fetchTail() error {
	f := o.fs
	f.stats.gets.Add(1)
	rng := "bytes=-" + strconv.Itoa(f.cfg.TailSize)
	out, err := f.client.GetObject(f.ctx(), &s3.GetObjectInput{Bucket: &f.bucket, Key: &o.key, Range: &rng})
	if err != nil {
		var ae smithy.APIError
		if errors.As(err, &ae) && ae.ErrorCode() == "InvalidRange" {
			// an empty object has no last bytes
			info, serr := f.Stat(o.loc)
			if serr != nil {
				return serr
			}
			if info.Size() != 0 {
				return fmt.Errorf("get the end of %s: %w", o.loc, err)
			}
			return nil
		}
		return err
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	f.stats.bytesRead.Add(int64(len(b)))
	if err != nil {
		return err
	}
	size := int64(len(b))
	if cr := aws.ToString(out.ContentRange); cr != "" {
		// "bytes first-last/total"
		i := strings.LastIndexByte(cr, '/')
		total, perr := strconv.ParseInt(cr[i+1:], 10, 64)
		if i < 0 || perr != nil || total < int64(len(b)) {
			return fmt.Errorf("get the end of %s: the store answered Content-Range %q", o.loc, cr)
		}
		size = total
	}
	o.size, o.tail, o.tailStart = size, b, size-int64(len(b))
	return nil
}

// getRange reads exactly [off, end) of the object.
func (o *object) getRange(p []byte, off int64) error {
	f := o.fs
	f.stats.gets.Add(1)
	rng := fmt.Sprintf("bytes=%d-%d", off, off+int64(len(p))-1)
	out, err := f.client.GetObject(f.ctx(), &s3.GetObjectInput{Bucket: &f.bucket, Key: &o.key, Range: &rng})
	if err != nil {
		return pathErr("read", o.loc, err)
	}
	defer out.Body.Close()
	n, err := io.ReadFull(out.Body, p)
	f.stats.bytesRead.Add(int64(n))
	if err != nil {
		return pathErr("read", o.loc, fmt.Errorf("range %s: %w", rng, err))
	}
	return nil
}

func (o *object) ReadAt(p []byte, off int64) (int, error) {
	if o.closed {
		return 0, fs.ErrClosed
	}
	if off < 0 {
		return 0, &fs.PathError{Op: "read", Path: o.loc, Err: errors.New("negative offset")}
	}
	if off >= o.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), o.size-off))
	q := p[:n]
	if off < o.tailStart {
		head := q[:min(int64(n), o.tailStart-off)]
		if err := o.getRange(head, off); err != nil {
			return 0, err
		}
		q, off = q[len(head):], off+int64(len(head))
	}
	if len(q) > 0 {
		copy(q, o.tail[off-o.tailStart:])
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (o *object) Read(p []byte) (int, error) {
	if o.closed {
		return 0, fs.ErrClosed
	}
	if o.pos >= o.size {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	if o.pos >= o.tailStart {
		n := copy(p, o.tail[o.pos-o.tailStart:])
		o.pos += int64(n)
		return n, nil
	}
	if o.body == nil || o.bodyPos != o.pos {
		o.closeBody()
		f := o.fs
		f.stats.gets.Add(1)
		rng := fmt.Sprintf("bytes=%d-%d", o.pos, o.tailStart-1)
		out, err := f.client.GetObject(f.ctx(), &s3.GetObjectInput{Bucket: &f.bucket, Key: &o.key, Range: &rng})
		if err != nil {
			return 0, pathErr("read", o.loc, err)
		}
		o.body, o.bodyPos = out.Body, o.pos
	}
	n, err := o.body.Read(p[:min(int64(len(p)), o.tailStart-o.pos)])
	o.fs.stats.bytesRead.Add(int64(n))
	o.pos += int64(n)
	o.bodyPos = o.pos
	if err == io.EOF {
		o.closeBody()
		if o.pos < o.tailStart {
			return n, pathErr("read", o.loc, io.ErrUnexpectedEOF)
		}
		err = nil
	}
	if err != nil {
		o.closeBody()
		return n, pathErr("read", o.loc, err)
	}
	return n, nil
}

func (o *object) closeBody() {
	if o.body != nil {
		_ = o.body.Close()
		o.body = nil
	}
}

func (o *object) Seek(offset int64, whence int) (int64, error) {
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = o.pos + offset
	case io.SeekEnd:
		abs = o.size + offset
	default:
		return 0, &fs.PathError{Op: "seek", Path: o.loc, Err: errors.New("invalid whence")}
	}
	if abs < 0 {
		return 0, &fs.PathError{Op: "seek", Path: o.loc, Err: errors.New("negative position")}
	}
	o.pos = abs
	return abs, nil
}

func (o *object) Stat() (fs.FileInfo, error) {
	return fileInfo{name: path.Base(o.key), size: o.size}, nil
}

func (o *object) Close() error {
	o.closeBody()
	o.closed = true
	return nil
}
