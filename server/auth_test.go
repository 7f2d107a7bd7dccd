package server

import (
	"strings"
	"testing"
)

func TestPasswords(t *testing.T) {
	p := Passwords{Users: map[string]string{"alice": "a"}, Password: "shared"}
	for user, want := range map[string]string{"alice": "a", "bob": "shared"} {
		if got, ok := p.Lookup(user); !ok || got != want {
			t.Errorf("%s: %q %v", user, got, ok)
		}
	}
	if _, ok := (Passwords{Users: map[string]string{"alice": "a"}}).Lookup("bob"); ok {
		t.Error("bob has a password")
	}
	if (Passwords{}).Required() {
		t.Error("no passwords, yet required")
	}
}

func TestCheckListen(t *testing.T) {
	cases := []struct {
		addr   string
		p      Passwords
		remote bool
		err    string
	}{
		{"127.0.0.1:5433", Passwords{}, false, ""},
		{"[::1]:5433", Passwords{}, false, ""},
		{"localhost:5433", Passwords{}, false, ""},
		{"0.0.0.0:5433", Passwords{}, false, "refusing to listen on \"0.0.0.0:5433\" without authentication"},
		{"10.1.2.3:5433", Passwords{}, false, "without authentication"},
		{"0.0.0.0:5433", Passwords{Password: "x"}, false, ""},
		{"0.0.0.0:5433", Passwords{}, true, ""},
		{"nonsense", Passwords{}, false, "listen address \"nonsense\""},
	}
	for _, c := range cases {
		err := CheckListen("door", c.addr, c.p, c.remote)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s %+v %v: %v, want %q", c.addr, c.p, c.remote, err, c.err)
		}
	}
}
