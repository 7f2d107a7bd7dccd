package objstore

import (
	"bytes"
	"container/list"
	"strings"
	"sync"
)

// The tail cache. Planning a statement reads the table's manifest list
// and every manifest it names: one GET each, every statement, and a MERGE
// whose source is large reads them twice (its key range, then its plan).
// A copy-on-write MERGE opens each data file it rewrites four or five
// times (its layout, its key columns, its row groups, the row groups it
// copies), and the footer of each file it writes once more for the file's
// metrics: each Open is one GET of the object's tail. Iceberg never
// rewrites any of these files: each is written once, under a name no
// other file takes (a UUID, a snapshot id). So an FS keeps what Open's
// suffix-range GET reads of them, the object's size and its last TailSize
// bytes (the whole of a small manifest, a Parquet file's footer), as read
// or as written, and serves Open, and ReadFile of a whole object, again
// without a request.
//
// INVARIANT: only manifests and manifest lists (".avro" under a
// "metadata/" directory) and Parquet data and delete files (".parquet"
// under a "data/" directory) of the FS's own lake are cached. Remove,
// DeleteFiles, RemoveAll and a new writer of a key drop it, so this FS
// never serves bytes of an object it deleted or is replacing. Another
// process that replaced such a file in place would break Iceberg's own
// rule first.

// tailCacheBytes bounds the bytes the cache holds (Config can change it).
const tailCacheBytes = 16 << 20

type tailCache struct {
	mu    sync.Mutex
	max   int
	bytes int
	lru   *list.List // of *tailEntry, most recently used first
	byKey map[string]*list.Element
}

type tailEntry struct {
	key  string
	size int64  // the object's
	tail []byte // its last len(tail) bytes; never changed once cached
}

func newTailCache(max int) *tailCache {
	return &tailCache{max: max, lru: list.New(), byKey: map[string]*list.Element{}}
}

// cacheable reports whether key names an immutable Iceberg file whose
// tail is worth keeping: a manifest list, a manifest, or a Parquet data
// or delete file.
func cacheable(key string) bool {
	in := func(dir string) bool { return strings.HasPrefix(key, dir+"/") || strings.Contains(key, "/"+dir+"/") }
	return (strings.HasSuffix(key, ".avro") && in("metadata")) || (strings.HasSuffix(key, ".parquet") && in("data"))
}

// get returns key's size and tail, if cached.
func (c *tailCache) get(key string) (size int64, tail []byte, ok bool) {
	if c == nil || c.max <= 0 {
		return 0, nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[key]
	if !ok {
		return 0, nil, false
	}
	c.lru.MoveToFront(e)
	te := e.Value.(*tailEntry)
	return te.size, te.tail, true
}

// put caches tail as the last bytes of key's object of size bytes: a copy
// of it unless owned (the caller never changes tail again).
func (c *tailCache) put(key string, size int64, tail []byte, owned bool) {
	if c == nil || c.max <= 0 || !cacheable(key) || len(tail) > c.max/16 || int64(len(tail)) > size {
		return
	}
	if !owned {
		tail = bytes.Clone(tail)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		c.remove(e)
	}
	c.byKey[key] = c.lru.PushFront(&tailEntry{key: key, size: size, tail: tail})
	c.bytes += len(tail)
	for c.bytes > c.max {
		c.remove(c.lru.Back())
	}
}

// drop forgets key.
func (c *tailCache) drop(key string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		c.remove(e)
	}
}

func (c *tailCache) remove(e *list.Element) {
	te := c.lru.Remove(e).(*tailEntry)
	delete(c.byKey, te.key)
	c.bytes -= len(te.tail)
}
