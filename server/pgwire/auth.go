package pgwire

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"
)

// SCRAM-SHA-256 (RFC 5802, RFC 7677) as PostgreSQL runs it: the
// client proves it knows the password without sending it, and the server
// proves it knows it too. Channel binding (SCRAM-SHA-256-PLUS) is not
// offered. Passwords are used as given (no SASLprep).

const scramIterations = 4096

var errAuthFailed = errors.New("password authentication failed")

// authenticate runs SCRAM-SHA-256 with the client; on failure it sends
// the FATAL error itself and returns errAuthFailed.
func (c *conn) authenticate() error {
	fail := func() error {
		c.fatal("28P01", fmt.Sprintf("password authentication failed for user %q", c.user))
		return errAuthFailed
	}
	c.be.Send(&pgproto3.AuthenticationSASL{AuthMechanisms: []string{"SCRAM-SHA-256"}})
	if err := c.be.Flush(); err != nil {
		return err
	}
	if err := c.be.SetAuthType(pgproto3.AuthTypeSASL); err != nil {
		return err
	}
	msg, err := c.be.Receive()
	if err != nil {
		return err
	}
	first, ok := msg.(*pgproto3.SASLInitialResponse)
	if !ok || first.AuthMechanism != "SCRAM-SHA-256" {
		c.fatal("28000", "authentication: expected a SCRAM-SHA-256 initial response; md5 and cleartext passwords are refused")
		return errAuthFailed
	}
	cfirst := string(first.Data)
	// gs2 header: "n,," or "y,," (no channel binding), then the bare part
	if !strings.HasPrefix(cfirst, "n,") && !strings.HasPrefix(cfirst, "y,") {
		c.fatal("28000", "authentication: SCRAM channel binding is not supported")
		return errAuthFailed
	}
	parts := strings.SplitN(cfirst, ",", 3)
	if len(parts) != 3 {
		return fail()
	}
	bare := parts[2]
	cnonce := scramAttr(bare, "r")
	if cnonce == "" {
		return fail()
	}
	password, known := c.srv.passwords().Lookup(c.user)
	salt := make([]byte, 16)
	snonce := make([]byte, 18)
	if _, err := rand.Read(salt); err != nil {
		return err
	}
	if _, err := rand.Read(snonce); err != nil {
		return err
	}
	nonce := cnonce + base64.RawStdEncoding.EncodeToString(snonce)
	sfirst := fmt.Sprintf("r=%s,s=%s,i=%d", nonce, base64.StdEncoding.EncodeToString(salt), scramIterations)
	c.be.Send(&pgproto3.AuthenticationSASLContinue{Data: []byte(sfirst)})
	if err := c.be.Flush(); err != nil {
		return err
	}
	if err := c.be.SetAuthType(pgproto3.AuthTypeSASLContinue); err != nil {
		return err
	}
	msg, err = c.be.Receive()
	if err != nil {
		return err
	}
	final, ok := msg.(*pgproto3.SASLResponse)
	if !ok {
		return fail()
	}
	cfinal := string(final.Data)
	i := strings.LastIndex(cfinal, ",p=")
	if i < 0 || scramAttr(cfinal, "r") != nonce {
		return fail()
	}
	proof, err := base64.StdEncoding.DecodeString(cfinal[i+3:])
	if err != nil || len(proof) != sha256.Size {
		return fail()
	}
	salted, err := pbkdf2.Key(sha256.New, password, salt, scramIterations, sha256.Size)
	if err != nil {
		return err
	}
	clientKey := hmacSHA256(salted, "Client Key")
	stored := sha256.Sum256(clientKey)
	authMsg := bare + "," + sfirst + "," + cfinal[:i]
	sig := hmacSHA256(stored[:], authMsg)
	recovered := make([]byte, sha256.Size)
	for k := range recovered {
		recovered[k] = proof[k] ^ sig[k]
	}
	got := sha256.Sum256(recovered)
	// an unknown user runs the same steps and fails here, so that a
	// client cannot tell unknown users from wrong passwords
	if !known || subtle.ConstantTimeCompare(got[:], stored[:]) != 1 {
		return fail()
	}
	serverSig := hmacSHA256(hmacSHA256(salted, "Server Key"), authMsg)
	c.be.Send(&pgproto3.AuthenticationSASLFinal{Data: []byte("v=" + base64.StdEncoding.EncodeToString(serverSig))})
	return nil
}

func hmacSHA256(key []byte, msg string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msg))
	return h.Sum(nil)
}

// scramAttr returns attribute name's value in a SCRAM message.
func scramAttr(msg, name string) string {
	for _, kv := range strings.Split(msg, ",") {
		if strings.HasPrefix(kv, name+"=") {
			return kv[len(name)+1:]
		}
	}
	return ""
}
