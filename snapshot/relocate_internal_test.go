package snapshot

import "testing"

// MapPath moves plain paths and both file URI spellings, and nothing that
// only shares a prefix with the old directory.
func TestRelocatorMapPath(t *testing.T) {
	r := Relocator{From: "/old/lake", To: "/new/place"}
	for in, want := range map[string]string{
		"/old/lake/main/t/data/a.parquet":            "/new/place/main/t/data/a.parquet",
		"file:///old/lake/main/t/data/a.parquet":     "file:///new/place/main/t/data/a.parquet",
		"file:/old/lake/main/t/data/a.parquet":       "file:/new/place/main/t/data/a.parquet",
		"/old/lake2/main/t/data/a.parquet":           "",
		"/other/old/lake/main/t/data/a.parquet":      "",
		"s3://bucket/old/lake/main/t/data/a.parquet": "",
	} {
		got, ok := r.MapPath(in)
		if want == "" {
			if ok {
				t.Errorf("MapPath(%q) moved it to %q", in, got)
			}
			continue
		}
		if !ok || got != want {
			t.Errorf("MapPath(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for in, want := range map[string]string{"/a/b": "/a/b", "file:///a/b": "/a/b", "file:/a/b": "/a/b"} {
		if got := LocalPath(in); got != want {
			t.Errorf("LocalPath(%q) = %q, want %q", in, got, want)
		}
	}
}
