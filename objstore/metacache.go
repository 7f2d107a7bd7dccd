package objstore

import (
	"bytes"
	"container/list"
	"strings"
	"sync"
)

// The metadata cache. Planning a statement reads the table's manifest
// list and every manifest it names: one GET each, every statement, and a
// MERGE whose source is large reads them twice (its key range, then its
// plan). Iceberg never rewrites these files: each is written once, under
// a name no other file takes (a UUID, a snapshot id). So an FS keeps the
// bytes of the small ones, as read or as written, and serves them again
// without a request.
//
// INVARIANT: only keys that end in ".avro" under a "metadata/" directory
// are cached, and only whole objects of at most TailSize bytes (those
// Open's one suffix-range GET reads whole). Remove, DeleteFiles, RemoveAll
// and a new writer of a key drop it, so this FS never serves bytes of an
// object it deleted or is replacing. Another process that replaced such a
// file in place would break Iceberg's own rule first.

// metaCacheBytes bounds the bytes the cache holds (FS.Config can lower it).
const metaCacheBytes = 16 << 20

type metaCache struct {
	mu    sync.Mutex
	max   int
	bytes int
	lru   *list.List // of *metaEntry, most recently used first
	byKey map[string]*list.Element
}

type metaEntry struct {
	key  string
	data []byte // never changed once cached
}

func newMetaCache(max int) *metaCache {
	return &metaCache{max: max, lru: list.New(), byKey: map[string]*list.Element{}}
}

// cacheable reports whether key names an immutable Iceberg metadata
// file: a manifest list or a manifest.
func cacheable(key string) bool {
	return strings.HasSuffix(key, ".avro") && (strings.HasPrefix(key, "metadata/") || strings.Contains(key, "/metadata/"))
}

// get returns key's bytes, if cached.
func (c *metaCache) get(key string) ([]byte, bool) {
	if c == nil || c.max <= 0 {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	c.lru.MoveToFront(e)
	return e.Value.(*metaEntry).data, true
}

// put caches data as key's bytes: a copy of it unless owned (the caller
// never changes data again).
func (c *metaCache) put(key string, data []byte, owned bool) {
	if c == nil || c.max <= 0 || !cacheable(key) || len(data) > c.max/16 {
		return
	}
	if !owned {
		data = bytes.Clone(data)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		c.remove(e)
	}
	c.byKey[key] = c.lru.PushFront(&metaEntry{key: key, data: data})
	c.bytes += len(data)
	for c.bytes > c.max {
		c.remove(c.lru.Back())
	}
}

// drop forgets key.
func (c *metaCache) drop(key string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		c.remove(e)
	}
}

func (c *metaCache) remove(e *list.Element) {
	me := c.lru.Remove(e).(*metaEntry)
	delete(c.byKey, me.key)
	c.bytes -= len(me.data)
}
