package server

import (
	"fmt"
	"net"
)

// Passwords are a server's credentials: a password per user, and one
// for every user the map does not name. Both empty means no
// authentication.
type Passwords struct {
	Users    map[string]string
	Password string
}

// Required reports whether clients must authenticate.
func (p Passwords) Required() bool { return p.Users != nil || p.Password != "" }

// Lookup is user's password; ok is false for a user with none.
func (p Passwords) Lookup(user string) (password string, ok bool) {
	if pw, ok := p.Users[user]; ok {
		return pw, true
	}
	if p.Password != "" {
		return p.Password, true
	}
	return "", false
}

// CheckListen refuses a non-loopback listen address for a server without
// authentication, unless allowRemote: anyone who reaches it could read
// and write the lake. what names the server in the error.
func CheckListen(what, addr string, p Passwords, allowRemote bool) error {
	if p.Required() || allowRemote {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s: listen address %q: %w", what, addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%s: refusing to listen on %q without authentication; listen on 127.0.0.1, or set a password (--password or --users)", what, addr)
	}
	return nil
}
