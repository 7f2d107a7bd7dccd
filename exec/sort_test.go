package exec

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
)

// sortTestNeg is a test-only expression: -x for an INT64 column, so that
// sorts by computed keys (not plain columns) are exercised.
type sortTestNeg struct{ col int }

func (e *sortTestNeg) DataType() arrow.DataType { return arrow.PrimitiveTypes.Int64 }
func (e *sortTestNeg) String() string           { return fmt.Sprintf("-#%d", e.col) }
func (e *sortTestNeg) Eval(ec *EvalContext, b arrow.RecordBatch) (arrow.Array, error) {
	in := b.Column(e.col).(*array.Int64)
	bld := array.NewInt64Builder(ec.Mem)
	defer bld.Release()
	for i := 0; i < in.Len(); i++ {
		if in.IsNull(i) {
			bld.AppendNull()
		} else {
			bld.Append(-in.Value(i))
		}
	}
	return bld.NewArray(), nil
}

var sortTestSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

func sortTestKey(col int, desc, nullsFirst bool) SortKey {
	return SortKey{Expr: &Column{Index: col, Type: sortTestSchema.Field(col).Type}, Descending: desc, NullsFirst: nullsFirst}
}

// sortTestOracleCmp orders Go values the way the SQL spec and Postgres
// say, independently of sort_keys.go.
func sortTestOracleCmp(a, b any, desc, nullsFirst bool) int {
	if a == nil || b == nil {
		switch {
		case a == nil && b == nil:
			return 0
		case a == nil:
			if nullsFirst {
				return -1
			}
			return 1
		default:
			if nullsFirst {
				return 1
			}
			return -1
		}
	}
	var c int
	switch x := a.(type) {
	case int64:
		c = cmp.Compare(x, b.(int64))
	case float64:
		y := b.(float64)
		switch {
		case math.IsNaN(x) && math.IsNaN(y):
			c = 0
		case math.IsNaN(x):
			c = 1
		case math.IsNaN(y):
			c = -1
		default:
			c = cmp.Compare(x, y)
		}
	case string:
		c = strings.Compare(x, b.(string))
	default:
		panic(fmt.Sprintf("oracle: %T", a))
	}
	if desc {
		c = -c
	}
	return c
}

func sortTestOracle(rows [][]any, keys []SortKey) [][]any {
	out := slices.Clone(rows)
	slices.SortStableFunc(out, func(a, b []any) int {
		for _, k := range keys {
			var av, bv any
			switch e := k.Expr.(type) {
			case *Column:
				av, bv = a[e.Index], b[e.Index]
			case *sortTestNeg:
				if a[e.col] != nil {
					av = -a[e.col].(int64)
				}
				if b[e.col] != nil {
					bv = -b[e.col].(int64)
				}
			}
			if c := sortTestOracleCmp(av, bv, k.Descending, k.NullsFirst); c != 0 {
				return c
			}
		}
		return 0
	})
	return out
}

func sortTestRandomRows(rng *rand.Rand, n int) [][]any {
	rows := make([][]any, n)
	for r := range rows {
		row := []any{int64(r), nil, nil, nil}
		if rng.IntN(8) != 0 {
			row[1] = int64(rng.IntN(20) - 10)
		}
		switch rng.IntN(10) {
		case 0:
		case 1:
			row[2] = math.NaN()
		case 2:
			row[2] = math.Inf(-1 + 2*rng.IntN(2))
		default:
			row[2] = float64(rng.IntN(7)) / 2
		}
		if rng.IntN(6) != 0 {
			row[3] = string(rune('a'+rng.IntN(4))) + strings.Repeat("x", rng.IntN(3))
		}
		rows[r] = row
	}
	return rows
}

// sortTestEqual compares rows, treating NaN as equal to NaN.
func sortTestEqual(a, b [][]any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		for j := range a[i] {
			x, y := a[i][j], b[i][j]
			if fx, ok := x.(float64); ok && math.IsNaN(fx) {
				if fy, ok := y.(float64); ok && math.IsNaN(fy) {
					continue
				}
			}
			if !reflect.DeepEqual(x, y) {
				return false
			}
		}
	}
	return true
}

func TestSortExamples(t *testing.T) {
	rows := [][]any{
		{int64(0), int64(3), 1.0, "b"},
		{int64(1), nil, math.NaN(), nil},
		{int64(2), int64(1), math.Inf(1), "a"},
		{int64(3), int64(3), nil, "ab"},
		{int64(4), int64(-2), math.Copysign(0, -1), ""},
		{int64(5), nil, 0.0, "b"},
	}
	ids := func(rows [][]any) []int64 {
		var out []int64
		for _, r := range rows {
			out = append(out, r[0].(int64))
		}
		return out
	}
	for _, tc := range []struct {
		name string
		keys []SortKey
		want []int64
	}{
		{"asc nulls last", []SortKey{sortTestKey(1, false, false)}, []int64{4, 2, 0, 3, 1, 5}},
		{"asc nulls first", []SortKey{sortTestKey(1, false, true)}, []int64{1, 5, 4, 2, 0, 3}},
		{"desc nulls first", []SortKey{sortTestKey(1, true, true)}, []int64{1, 5, 0, 3, 2, 4}},
		{"desc nulls last", []SortKey{sortTestKey(1, true, false)}, []int64{0, 3, 2, 4, 1, 5}},
		{"float NaN above infinity, -0 = 0", []SortKey{sortTestKey(2, false, false)}, []int64{4, 5, 0, 2, 1, 3}},
		{"float desc", []SortKey{sortTestKey(2, true, false)}, []int64{1, 2, 0, 4, 5, 3}},
		{"strings bytewise", []SortKey{sortTestKey(3, false, true)}, []int64{1, 4, 2, 3, 0, 5}},
		{"multi key", []SortKey{sortTestKey(1, false, false), sortTestKey(3, true, false)}, []int64{4, 2, 0, 3, 5, 1}},
		{"computed key", []SortKey{{Expr: &sortTestNeg{col: 1}}}, []int64{0, 3, 2, 4, 1, 5}},
	} {
		for _, limit := range []int64{0, 4} {
			t.Run(fmt.Sprintf("%s/limit=%d", tc.name, limit), func(t *testing.T) {
				mem := opsTestMem(t)
				s, err := NewSort(opsTestValues(t, mem, sortTestSchema, rows, 4), tc.keys, SortOptions{Limit: limit, Mem: mem})
				if err != nil {
					t.Fatal(err)
				}
				got := ids(opsTestRows(t, s))
				want := tc.want
				if limit > 0 {
					want = want[:limit]
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("got %v, want %v", got, want)
				}
			})
		}
	}
}

// TestSortRandom checks full sort, top-N and spilled sort against a
// stable oracle sort on random data with many ties (stability shows).
func TestSortRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 40 {
		n := rng.IntN(2000)
		rows := sortTestRandomRows(rng, n)
		var keys []SortKey
		for range 1 + rng.IntN(3) {
			desc, nf := rng.IntN(2) == 0, rng.IntN(2) == 0
			if rng.IntN(5) == 0 {
				keys = append(keys, SortKey{Expr: &sortTestNeg{col: 1}, Descending: desc, NullsFirst: nf})
			} else {
				keys = append(keys, sortTestKey(1+rng.IntN(3), desc, nf))
			}
		}
		want := sortTestOracle(rows, keys)
		limit, offset := int64(0), int64(0)
		if rng.IntN(2) == 0 {
			limit, offset = 1+int64(rng.IntN(200)), int64(rng.IntN(100))
		} else if rng.IntN(3) == 0 {
			offset = int64(rng.IntN(100))
		}
		lo := min(offset, int64(len(want)))
		hi := int64(len(want))
		if limit > 0 {
			hi = min(hi, lo+limit)
		}
		want = want[lo:hi]
		for _, mode := range []string{"memory", "spill", "full-sort-fan-in-3"} {
			t.Run(fmt.Sprintf("%d/%s", iter, mode), func(t *testing.T) {
				if mode == "full-sort-fan-in-3" {
					// LIMIT through the full sort and its spill merge, with
					// intermediate merges of three runs at a time.
					defer func(a int64, b int) { skTopNMaxRows, skMaxFanIn = a, b }(skTopNMaxRows, skMaxFanIn)
					skTopNMaxRows, skMaxFanIn = 0, 3
				}
				mem := opsTestMem(t)
				dir := t.TempDir()
				opts := SortOptions{Limit: limit, Offset: offset, Mem: mem, SpillDir: dir, BatchRows: 1 + rng.IntN(700)}
				var budget *Budget
				switch {
				case mode == "spill" && limit > 0: // top-N holds its heap; it cannot spill
					budget = NewBudget(256 << 10)
					opts.Budget = budget
				case mode == "spill":
					budget = NewBudget(int64(4096 + rng.IntN(30000)))
					opts.Budget = budget
				case mode != "memory":
					budget = NewBudget(int64(16384 + rng.IntN(30000)))
					opts.Budget = budget
				}
				s, err := NewSort(opsTestValues(t, mem, sortTestSchema, rows, 1+rng.IntN(500)), keys, opts)
				if err != nil {
					t.Fatal(err)
				}
				got := opsTestRows(t, s)
				if !sortTestEqual(got, want) {
					t.Fatalf("%s (limit %d offset %d, %d rows): got %d rows, first %v; want %d, first %v",
						s, limit, offset, n, len(got), sortTestHead(got), len(want), sortTestHead(want))
				}
				if budget.Used() != 0 {
					t.Fatalf("budget still holds %d bytes", budget.Used())
				}
				if left, _ := os.ReadDir(dir); len(left) != 0 {
					t.Fatalf("spill files left behind: %v", left)
				}
			})
		}
	}
}

func sortTestHead(rows [][]any) [][]any { return rows[:min(len(rows), 5)] }

func TestSortSpills(t *testing.T) {
	mem := opsTestMem(t)
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 4))
	rows := sortTestRandomRows(rng, 20000)
	keys := []SortKey{sortTestKey(3, false, false), sortTestKey(2, true, true)}
	budget := NewBudget(64 << 10)
	s, err := NewSort(opsTestValues(t, mem, sortTestSchema, rows, 1000), keys,
		SortOptions{Budget: budget, SpillDir: dir, Mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	got := opsTestRows(t, s)
	if !sortTestEqual(got, sortTestOracle(rows, keys)) {
		t.Fatal("spilled sort differs from the oracle")
	}
	if files := s.Metrics().Extra()["spill_files"]; files < 2 {
		t.Fatalf("spill_files = %d; the budget should have forced several runs", files)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("spill files left behind: %v", left)
	}
	if budget.Used() != 0 || budget.Peak() > 64<<10 {
		t.Fatalf("budget used %d, peak %d", budget.Used(), budget.Peak())
	}
}

// TestSortSpillCleanupOnCancel stops a spilled sort half-way.
func TestSortSpillCleanupOnCancel(t *testing.T) {
	mem := opsTestMem(t)
	dir := t.TempDir()
	rows := sortTestRandomRows(rand.New(rand.NewPCG(5, 6)), 20000)
	s, err := NewSort(opsTestValues(t, mem, sortTestSchema, rows, 1000), []SortKey{sortTestKey(1, false, false)},
		SortOptions{Budget: NewBudget(32 << 10), SpillDir: dir, Mem: mem, BatchRows: 100})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.Open(ctx); err != nil {
		t.Fatal(err)
	}
	b, err := s.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b.Release()
	if left, _ := os.ReadDir(dir); len(left) < 2 {
		t.Fatalf("expected spill files during the merge, found %d", len(left))
	}
	cancel()
	if _, err := s.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("after cancel: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("spill files left behind: %v", left)
	}
}

func TestSortMemoryLimitWithoutSpill(t *testing.T) {
	mem := opsTestMem(t)
	rows := sortTestRandomRows(rand.New(rand.NewPCG(7, 8)), 5000)
	budget := NewBudget(16 << 10)
	s, err := NewSort(opsTestValues(t, mem, sortTestSchema, rows, 500), []SortKey{sortTestKey(1, false, false)},
		SortOptions{Budget: budget, DisableSpill: true, Mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Drain(context.Background(), s)
	if !errors.Is(err, ErrMemoryLimit) {
		t.Fatalf("got %v, want ErrMemoryLimit", err)
	}
	const want = "sort: memory limit exceeded: ORDER BY needs more than the statement memory limit of 16 KiB"
	if !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("error %q does not start with %q", err, want)
	}
	if budget.Used() != 0 {
		t.Fatalf("budget still holds %d bytes", budget.Used())
	}
}

func TestSortRejectsBadKeys(t *testing.T) {
	mem := opsTestMem(t)
	v := opsTestValues(t, mem, sortTestSchema, nil, 1)
	defer v.Close()
	// arrays, maps and structs order (skListVals, skStructVals); a map
	// whose values have no order does not
	mapType := arrow.MapOf(arrow.BinaryTypes.String, arrow.FixedWidthTypes.MonthInterval)
	_, err := NewSort(v, []SortKey{{Expr: &Column{Index: 0, Type: mapType, Name: "l"}}}, SortOptions{})
	if err == nil || !strings.HasPrefix(err.Error(), "ORDER BY l: cannot order values of type ") {
		t.Fatalf("got %v", err)
	}
	if _, err := NewSort(v, nil, SortOptions{}); err == nil {
		t.Fatal("no keys accepted")
	}
}

// TestSortAllTypes sorts every canonical type, through memory and spill,
// and checks the order with the type's own comparison.
func TestSortAllTypes(t *testing.T) {
	uuidType := extensions.NewUUIDType()
	types := []arrow.DataType{
		arrow.FixedWidthTypes.Boolean, arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16,
		arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Float32, &arrow.Decimal128Type{Precision: 20, Scale: 3},
		arrow.BinaryTypes.Binary, arrow.FixedWidthTypes.Date32, arrow.FixedWidthTypes.Time64us,
		&arrow.TimestampType{Unit: arrow.Microsecond}, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"},
		uuidType, arrow.FixedWidthTypes.MonthDayNanoInterval,
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for _, dt := range types {
		t.Run(dt.String(), func(t *testing.T) {
			mem := opsTestMem(t)
			schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: dt, Nullable: true}, {Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
			const n = 600
			var keyVals []int64
			rows := make([][]any, n)
			for i := range rows {
				k := int64(rng.IntN(50) - 25)
				keyVals = append(keyVals, k)
				var v any
				switch dt.ID() {
				case arrow.BOOL:
					v = k > 0
				case arrow.DECIMAL128:
					v = decimal128.FromI64(k * 1234567)
				case arrow.BINARY:
					v = []byte{byte(k + 128), byte(k)}
				case arrow.EXTENSION:
					u := make([]byte, 16)
					u[0] = byte(k + 128)
					v = u
				case arrow.INTERVAL_MONTH_DAY_NANO:
					v = arrow.MonthDayNanoInterval{Months: int32(k / 10), Days: int32(k % 10), Nanoseconds: k}
				default:
					v = k
				}
				if rng.IntN(10) == 0 {
					v = nil
				}
				rows[i] = []any{v, int64(i)}
			}
			for _, spill := range []bool{false, true} {
				opts := SortOptions{Mem: mem, SpillDir: t.TempDir()}
				if spill {
					opts.Budget = NewBudget(2048)
				}
				s, err := NewSort(opsTestValues(t, mem, schema, rows, 64),
					[]SortKey{{Expr: &Column{Index: 0, Type: dt}, Descending: true, NullsFirst: false}}, opts)
				if err != nil {
					t.Fatal(err)
				}
				batches, err := Drain(context.Background(), s)
				if err != nil {
					t.Fatal(err)
				}
				var prev int64
				var seenNull bool
				count := 0
				for _, b := range batches {
					ids := b.Column(1).(*array.Int64)
					for r := 0; r < int(b.NumRows()); r++ {
						id := ids.Value(r)
						isNull := rows[id][0] == nil
						if seenNull && !isNull {
							t.Fatalf("row %d: non-NULL after NULL with NULLS LAST", count)
						}
						k := keyVals[id]
						if !isNull && count > 0 && !seenNull && sortTestRank(dt, k) > sortTestRank(dt, prev) {
							t.Fatalf("row %d: key %d after %d in DESC order", count, k, prev)
						}
						seenNull = seenNull || isNull
						if !isNull {
							prev = k
						}
						count++
					}
					b.Release()
				}
				if count != n {
					t.Fatalf("got %d rows, want %d", count, n)
				}
			}
		})
	}
}

// sortTestRank maps the generator's integer k to a number that orders
// like the value TestSortAllTypes made from it.
func sortTestRank(dt arrow.DataType, k int64) int64 {
	switch dt.ID() {
	case arrow.BOOL:
		if k > 0 {
			return 1
		}
		return 0
	case arrow.BINARY, arrow.EXTENSION:
		return k + 128
	}
	return k
}

// TestSortTopNHoldsLittle: ORDER BY ... LIMIT must not hold its input.
func TestSortTopNHoldsLittle(t *testing.T) {
	mem := opsTestMem(t)
	rng := rand.New(rand.NewPCG(13, 14))
	const n = 300_000
	rows := make([][]any, n)
	for i := range rows {
		rows[i] = []any{int64(i), int64(rng.IntN(1_000_000)), nil, nil}
	}
	budget := NewBudget(0)
	s, err := NewSort(opsTestValues(t, mem, sortTestSchema, rows, DefaultBatchRows), []SortKey{sortTestKey(1, true, false)},
		SortOptions{Limit: 10, Offset: 5, Budget: budget, Mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.String(), "TopN 10 offset=5 [#1 DESC NULLS LAST]"; got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
	got := opsTestRows(t, s)
	want := sortTestOracle(rows, []SortKey{sortTestKey(1, true, false)})[5:15]
	if !sortTestEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	// The input is ~4.8 MiB of values; top-N may hold a few batches.
	if peak := budget.Peak(); peak > 1<<20 {
		t.Fatalf("top-N reserved up to %s", FormatBytes(peak))
	}
}

// TestSortHugeLimit: LIMIT near MaxInt64 must not overflow into "no rows".
func TestSortHugeLimit(t *testing.T) {
	rows := sortTestRandomRows(rand.New(rand.NewPCG(4, 4)), 50)
	want := sortTestOracle(rows, []SortKey{sortTestKey(1, false, false)})[2:]
	for _, offset := range []int64{0, 2} {
		mem := opsTestMem(t)
		s, err := NewSort(opsTestValues(t, mem, sortTestSchema, rows, 7), []SortKey{sortTestKey(1, false, false)},
			SortOptions{Limit: math.MaxInt64 - offset, Offset: 2, Mem: mem})
		if err != nil {
			t.Fatal(err)
		}
		if got := opsTestRows(t, s); !sortTestEqual(got, want) {
			t.Fatalf("offset 2, limit %d: got %d rows, want %d", math.MaxInt64-offset, len(got), len(want))
		}
	}
}

func TestSortEmptyAndCancel(t *testing.T) {
	mem := opsTestMem(t)
	for _, limit := range []int64{0, 3} {
		s, err := NewSort(opsTestValues(t, mem, sortTestSchema, nil, 1), []SortKey{sortTestKey(1, false, false)}, SortOptions{Limit: limit, Mem: mem})
		if err != nil {
			t.Fatal(err)
		}
		if rows := opsTestRows(t, s); len(rows) != 0 {
			t.Fatalf("limit %d: got %v from an empty input", limit, rows)
		}
	}
	rows := sortTestRandomRows(rand.New(rand.NewPCG(1, 1)), 100)
	s, err := NewSort(opsTestValues(t, mem, sortTestSchema, rows, 10), []SortKey{sortTestKey(1, false, false)}, SortOptions{Mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Drain(ctx, s); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

func TestSortSpillDirMissing(t *testing.T) {
	mem := opsTestMem(t)
	dir := filepath.Join(t.TempDir(), "missing")
	rows := sortTestRandomRows(rand.New(rand.NewPCG(8, 8)), 3000)
	s, err := NewSort(opsTestValues(t, mem, sortTestSchema, rows, 300), []SortKey{sortTestKey(1, false, false)},
		SortOptions{Budget: NewBudget(8 << 10), SpillDir: dir, Mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Drain(context.Background(), s)
	want := "sort: spill to " + dir + ": "
	if err == nil || !strings.HasPrefix(err.Error(), want) ||
		!strings.HasSuffix(err.Error(), "; set a spill directory with room, or raise the memory limit") {
		t.Fatalf("got %v, want %q...", err, want)
	}
}

// sortTestFailing fails after a few batches.
type sortTestFailing struct {
	Operator
	left int
}

func (f *sortTestFailing) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if f.left == 0 {
		return nil, errors.New("disk on fire")
	}
	f.left--
	return f.Operator.Next(ctx)
}

// TestSortChildError: an input error mid-stream comes back unchanged, and
// the budget and spill directory are left clean.
func TestSortChildError(t *testing.T) {
	rows := sortTestRandomRows(rand.New(rand.NewPCG(6, 6)), 5000)
	for _, limit := range []int64{0, 10} {
		mem := opsTestMem(t)
		dir := t.TempDir()
		budget := NewBudget(16 << 10)
		if limit > 0 {
			budget = NewBudget(1 << 20)
		}
		src := &sortTestFailing{Operator: opsTestValues(t, mem, sortTestSchema, rows, 200), left: 20}
		s, err := NewSort(src, []SortKey{sortTestKey(3, false, false)}, SortOptions{Limit: limit, Budget: budget, SpillDir: dir, Mem: mem})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Drain(context.Background(), s); err == nil || err.Error() != "disk on fire" {
			t.Fatalf("limit %d: got %v", limit, err)
		}
		if budget.Used() != 0 {
			t.Fatalf("limit %d: budget holds %d bytes", limit, budget.Used())
		}
		if left, _ := os.ReadDir(dir); len(left) != 0 {
			t.Fatalf("limit %d: spill files left behind: %v", limit, left)
		}
	}
}

// TestSkSelect: the quickselect finds the k-th smallest of sorted,
// reversed, constant, few-valued and random inputs.
func TestSkSelect(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 42))
	for _, n := range []int{1, 2, 3, 10, 1000, 4097} {
		for shape := range 5 {
			a := make([]int64, n)
			for i := range a {
				switch shape {
				case 0:
					a[i] = int64(i)
				case 1:
					a[i] = int64(n - i)
				case 2:
					a[i] = 7
				case 3:
					a[i] = int64(rng.IntN(3))
				default:
					a[i] = rng.Int64() - rng.Int64()
				}
			}
			sorted := slices.Clone(a)
			slices.Sort(sorted)
			for _, k := range []int{0, n / 3, n / 2, n - 1} {
				if got := skSelect(slices.Clone(a), k); got != sorted[k] {
					t.Fatalf("n %d shape %d: %d-th smallest %d, want %d", n, shape, k, got, sorted[k])
				}
			}
		}
	}
}

// TestSortTopNKeyOrder: top-N over rows already in (or against) the
// order of an integer first key, in batches larger than N, with ties,
// other keys after it, and OFFSET: what the full sort gives. (Each batch
// lets only rows not worse than its N-th best key through to the heap.)
func TestSortTopNKeyOrder(t *testing.T) {
	const n = 20000
	for _, shape := range []string{"ascending", "descending", "ties"} {
		rows := make([][]any, n)
		for i := range rows {
			k := int64(i)
			switch shape {
			case "descending":
				k = int64(n - i)
			case "ties":
				k = int64(i / 700)
			}
			rows[i] = []any{int64(i), k, float64(i % 13), nil}
		}
		for _, keys := range [][]SortKey{
			{sortTestKey(1, true, false)},
			{sortTestKey(1, false, false)},
			{sortTestKey(1, true, false), sortTestKey(2, false, false)},
			{sortTestKey(1, false, true), sortTestKey(2, true, false)},
		} {
			for _, lim := range [][2]int64{{10, 0}, {5, 995}, {1500, 3}} {
				mem := opsTestMem(t)
				s, err := NewSort(opsTestValues(t, mem, sortTestSchema, rows, 4096), keys, SortOptions{Limit: lim[0], Offset: lim[1], Mem: mem})
				if err != nil {
					t.Fatal(err)
				}
				got := opsTestRows(t, s)
				want := sortTestOracle(rows, keys)[lim[1] : lim[1]+lim[0]]
				if !sortTestEqual(got, want) {
					t.Fatalf("%s, %s: got first %v, want %v", shape, s, sortTestHead(got), sortTestHead(want))
				}
			}
		}
	}
}
