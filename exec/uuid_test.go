package exec

import (
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// testUUIDType stands in for extensions.UUID when no package in the test
// binary registered it: same name, same storage.
type testUUIDType struct{ arrow.ExtensionBase }

func (*testUUIDType) ExtensionName() string { return uuidExtName }
func (*testUUIDType) Serialize() string     { return "" }
func (t *testUUIDType) Deserialize(arrow.DataType, string) (arrow.ExtensionType, error) {
	return t, nil
}
func (t *testUUIDType) ExtensionEquals(o arrow.ExtensionType) bool {
	return o.ExtensionName() == t.ExtensionName()
}
func (*testUUIDType) ArrayType() reflect.Type { return reflect.TypeOf(testUUIDArray{}) }
func (*testUUIDType) String() string          { return "extension<arrow.uuid>" }

type testUUIDArray struct{ array.ExtensionArrayBase }

func uuidTypeForTest(t *testing.T) arrow.DataType {
	if u := UUIDType(); u != nil {
		return u
	}
	_ = arrow.RegisterExtensionType(&testUUIDType{ExtensionBase: arrow.ExtensionBase{Storage: &arrow.FixedSizeBinaryType{ByteWidth: 16}}})
	u := UUIDType()
	if u == nil {
		t.Fatal("no uuid type")
	}
	return u
}

func TestUUID(t *testing.T) {
	ut := uuidTypeForTest(t)
	env := newTestEnv(t)
	defer env.mem.AssertSize(t, 0)
	b := env.batch(env.col(tString, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", nil, "{A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A12}"))
	defer b.Release()
	if TypeName(ut) != "uuid" {
		t.Errorf("TypeName = %q", TypeName(ut))
	}
	u := mustCast(t, colRef(b, 0), ut)
	got, err := env.eval(u, b)
	if err != nil {
		t.Fatal(err)
	}
	if want := "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11 NULL a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12"; got != want {
		t.Fatalf("got %q want %q", got, want)
	}
	runCalls(t, env, b, []callCase{
		{name: "=", args: []Expr{u, lit(t, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")}, want: "true NULL false"},
		{name: "<", args: []Expr{u, lit(t, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12")}, want: "true NULL false"},
		{name: "=", args: []Expr{u, lit(t, "not-a-uuid")}, err: `invalid input syntax for type uuid: "not-a-uuid"`},
		{name: "is_not_null", args: []Expr{mustCall(t, "gen_random_uuid")}, want: "true true true"},
		{name: "<>", args: []Expr{mustCall(t, "gen_random_uuid"), mustCall(t, "gen_random_uuid")}, want: "true true true"},
	})
	e, err := NewCase([]When{{Cond: mustCall(t, "is_null", u), Then: mustCall(t, "gen_random_uuid")}}, u)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := env.eval(e, b); err != nil || len(got) != 3*36+2 {
		t.Fatalf("CASE over uuids: %q, %v", got, err)
	}
}
