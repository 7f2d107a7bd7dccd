package objstore

import (
	"fmt"
	"sync/atomic"
)

// Stats counts an FS's requests and bytes. Retries inside the SDK count
// once: these are the operations skade asked for.
type Stats struct {
	gets, heads, puts, lists, deletes, multipart atomic.Int64
	bytesRead, bytesWritten                      atomic.Int64
	cached                                       atomic.Int64
}

// StatsSnapshot is Stats at one moment.
type StatsSnapshot struct {
	GETs, HEADs, PUTs, Lists, Deletes int64
	// MultipartUploads counts uploads started in parts; PUTs counts
	// their parts.
	MultipartUploads        int64
	BytesRead, BytesWritten int64
	// Cached counts the opens and whole reads served from the FS's tail
	// cache, with no request (tailcache.go).
	Cached int64
}

func (s *Stats) snapshot() StatsSnapshot {
	return StatsSnapshot{
		GETs: s.gets.Load(), HEADs: s.heads.Load(), PUTs: s.puts.Load(), Lists: s.lists.Load(),
		Deletes: s.deletes.Load(), MultipartUploads: s.multipart.Load(),
		BytesRead: s.bytesRead.Load(), BytesWritten: s.bytesWritten.Load(), Cached: s.cached.Load(),
	}
}

// Sub is the difference s - base.
func (s StatsSnapshot) Sub(base StatsSnapshot) StatsSnapshot {
	return StatsSnapshot{
		GETs: s.GETs - base.GETs, HEADs: s.HEADs - base.HEADs, PUTs: s.PUTs - base.PUTs,
		Lists: s.Lists - base.Lists, Deletes: s.Deletes - base.Deletes,
		MultipartUploads: s.MultipartUploads - base.MultipartUploads,
		BytesRead:        s.BytesRead - base.BytesRead, BytesWritten: s.BytesWritten - base.BytesWritten,
		Cached: s.Cached - base.Cached,
	}
}

func (s StatsSnapshot) String() string {
	return fmt.Sprintf("%d GET (%d B), %d PUT (%d B), %d HEAD, %d LIST, %d DELETE, %d multipart, %d cached",
		s.GETs, s.BytesRead, s.PUTs, s.BytesWritten, s.HEADs, s.Lists, s.Deletes, s.MultipartUploads, s.Cached)
}
