package exec

import "testing"

func TestTextFormatter(t *testing.T) {
	env := newTestEnv(t)
	defer env.mem.AssertSize(t, 0)
	a := env.col(tTimestampTZ, "2024-01-02T03:04:05.5Z", nil)
	defer a.Release()
	f, err := NewTextFormatter(a)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.String(0); got != "2024-01-02 03:04:05.5+00" {
		t.Errorf("got %q", got)
	}
	if got := f.String(1); got != "NULL" || !f.IsNull(1) || len(f.Append(nil, 1)) != 0 {
		t.Errorf("NULL row: %q", got)
	}
	if got := string(f.Append([]byte("t="), 0)); got != "t=2024-01-02 03:04:05.5+00" {
		t.Errorf("got %q", got)
	}
}
