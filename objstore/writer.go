package objstore

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// writer uploads one object: a single PUT when it stays within one part,
// a multipart upload otherwise, with one part in flight while the next
// fills (at most two parts in memory).
type writer struct {
	fs       *FS
	loc, key string
	buf      *bytes.Buffer

	uploadID *string
	parts    []types.CompletedPart
	inflight chan error // the part being uploaded, nil when none
	err      error      // the first failure; the writer is dead after it
	closed   bool
}

var _ iceio.FileWriter = (*writer)(nil)

func (w *writer) Write(p []byte) (int, error) {
	if w.closed {
		return 0, fmt.Errorf("write %s: the writer is closed", w.loc)
	}
	if w.err != nil {
		return 0, w.err
	}
	w.buf.Write(p)
	for w.buf.Len() >= w.fs.cfg.PartSize {
		part := bytes.Clone(w.buf.Next(w.fs.cfg.PartSize))
		if err := w.sendPart(part); err != nil {
			w.fail(err)
			return len(p), w.err
		}
	}
	return len(p), nil
}

func (w *writer) ReadFrom(r io.Reader) (int64, error) {
	var total int64
	chunk := make([]byte, 256<<10)
	for {
		n, err := r.Read(chunk)
		if n > 0 {
			if _, werr := w.Write(chunk[:n]); werr != nil {
				return total, werr
			}
			total += int64(n)
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// sendPart waits for the part in flight, then starts uploading part.
func (w *writer) sendPart(part []byte) error {
	f := w.fs
	if w.uploadID == nil {
		f.stats.multipart.Add(1)
		out, err := f.client.CreateMultipartUpload(f.ctx(), &s3.CreateMultipartUploadInput{Bucket: &f.bucket, Key: &w.key})
		if err != nil {
			return fmt.Errorf("start the multipart upload of %s: %w", w.loc, err)
		}
		w.uploadID = out.UploadId
	}
	if err := w.wait(); err != nil {
		return err
	}
	num := int32(len(w.parts) + 1)
	w.parts = append(w.parts, types.CompletedPart{PartNumber: aws.Int32(num)})
	done := make(chan error, 1)
	w.inflight = done
	go func() {
		f.stats.puts.Add(1)
		out, err := f.client.UploadPart(f.ctx(), &s3.UploadPartInput{
			Bucket: &f.bucket, Key: &w.key, UploadId: w.uploadID, PartNumber: aws.Int32(num),
			Body: bytes.NewReader(part), ContentLength: aws.Int64(int64(len(part))),
		})
		if err != nil {
			done <- fmt.Errorf("upload part %d of %s: %w", num, w.loc, err)
			return
		}
		f.stats.bytesWritten.Add(int64(len(part)))
		w.parts[num-1].ETag = out.ETag
		done <- nil
	}()
	return nil
}

func (w *writer) wait() error {
	if w.inflight == nil {
		return nil
	}
	err := <-w.inflight
	w.inflight = nil
	return err
}

// fail records err and aborts the upload, so that nothing is left.
func (w *writer) fail(err error) {
	if w.err == nil {
		w.err = err
	}
	w.abort()
}

// abort cancels a multipart upload in progress; the parts are dropped.
func (w *writer) abort() {
	_ = w.wait()
	if w.uploadID != nil {
		f := w.fs
		_, _ = f.client.AbortMultipartUpload(f.ctx(), &s3.AbortMultipartUploadInput{Bucket: &f.bucket, Key: &w.key, UploadId: w.uploadID})
		w.uploadID = nil
	}
	w.closed = true
}

// Close finishes the object: one PUT, or the last part and the
// completion of the multipart upload. On failure nothing is left behind.
func (w *writer) Close() error {
	if w.closed {
		if w.err != nil {
			return w.err
		}
		return nil
	}
	if w.err != nil {
		w.abort()
		return w.err
	}
	f := w.fs
	if w.uploadID == nil {
		w.closed = true
		data := w.buf.Bytes()
		f.stats.puts.Add(1)
		_, err := f.client.PutObject(f.ctx(), &s3.PutObjectInput{
			Bucket: &f.bucket, Key: &w.key, Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data))),
		})
		if err != nil {
			w.err = pathErr("write", w.loc, err)
			return w.err
		}
		f.stats.bytesWritten.Add(int64(len(data)))
		f.keepTail(w.key, data)
		return nil
	}
	if w.buf.Len() > 0 {
		if err := w.sendPart(bytes.Clone(w.buf.Bytes())); err != nil {
			w.fail(err)
			return w.err
		}
	}
	if err := w.wait(); err != nil {
		w.fail(err)
		return w.err
	}
	_, err := f.client.CompleteMultipartUpload(f.ctx(), &s3.CompleteMultipartUploadInput{
		Bucket: &f.bucket, Key: &w.key, UploadId: w.uploadID,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: w.parts},
	})
	if err != nil {
		w.fail(fmt.Errorf("complete the multipart upload of %s: %w", w.loc, err))
		// a completion whose answer was lost may have made the object
		return errors.Join(w.err, f.Remove(w.loc))
	}
	w.closed = true
	return nil
}
