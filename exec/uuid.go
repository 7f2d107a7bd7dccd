package exec

import (
	"errors"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/uuid"
)

// UUID support. The canonical UUID type is arrow-go's extensions.UUID,
// found by name in arrow's extension registry: importing the extensions
// package would pull parquet into exec's build, and whichever package
// reads or writes UUID columns registers it anyway. Casts to and from text
// and comparisons are in cast.go and compare.go.

var errNoUUIDType = errors.New("uuid type is not registered; import github.com/apache/arrow-go/v18/arrow/extensions")

// UUIDType returns the registered canonical UUID type, or nil.
func UUIDType() arrow.DataType {
	if t := arrow.GetExtensionType(uuidExtName); t != nil {
		return t
	}
	return nil
}

func init() {
	register("gen_random_uuid", resolveRandomUUID)
	register("uuid", resolveRandomUUID)
}

func resolveRandomUUID(name string, args []Expr) (Expr, error) {
	if len(args) != 0 {
		return nil, errNoMatch
	}
	t := UUIDType()
	if t == nil {
		return nil, errNoUUIDType
	}
	ext := t.(arrow.ExtensionType)
	return newCall(name, t, func(ec *EvalContext, _ []arrow.Array, n int) (arrow.Array, error) {
		storage, err := randomUUIDs(ec.Mem, n)
		if err != nil {
			return nil, err
		}
		defer storage.Release()
		return array.NewExtensionArrayWithStorage(ext, storage), nil
	}, formFunc), nil
}

// randomUUIDs makes n version 4 UUIDs as FixedSizeBinary(16) storage.
func randomUUIDs(mem memory.Allocator, n int) (arrow.Array, error) {
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(16 * n)
	b := buf.Bytes()
	for i := range n {
		u, err := uuid.NewRandom()
		if err != nil {
			buf.Release()
			return nil, err
		}
		copy(b[16*i:], u[:])
	}
	return makeArray(&arrow.FixedSizeBinaryType{ByteWidth: 16}, n, nil, 0, buf), nil
}
