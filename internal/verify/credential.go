package verify

import (
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strings"
)

// credential is a declared check of a shared credential rather than a
// signature: a token header equal to a secret (token), or HTTP basic auth
// equal to "user:password" (basic). It proves the sender, not the body.
type credential struct {
	header, prefix string
	basic          bool
	secrets        [][]byte
}

func newCredential(spec Spec) *credential {
	return &credential{header: spec.Header, prefix: spec.Prefix, basic: strings.EqualFold(spec.Algorithm, "basic")}
}

func (c *credential) addKey(secret string) error {
	c.secrets = append(c.secrets, []byte(secret))
	return nil
}

func (c *credential) Verify(r *Request) (Result, error) { return Result{}, c.check(r.Header) }

func (c *credential) check(h http.Header) error {
	values := h.Values(c.header)
	if len(values) == 0 || (len(values) == 1 && strings.TrimSpace(values[0]) == "") {
		return ErrMissingSignature
	}
	if len(values) > 1 {
		return ErrMalformedSignature
	}
	got, ok := strings.CutPrefix(strings.TrimSpace(values[0]), c.prefix)
	if c.basic {
		encoded, isBasic := strings.CutPrefix(strings.TrimSpace(values[0]), "Basic ")
		creds, err := base64.StdEncoding.DecodeString(encoded)
		if !isBasic || err != nil {
			return ErrMalformedSignature
		}
		got, ok = string(creds), true
	}
	if !ok {
		return ErrMalformedSignature
	}
	match := 0
	for _, s := range c.secrets {
		match |= subtle.ConstantTimeCompare([]byte(got), s)
	}
	if match == 1 {
		return nil
	}
	return ErrInvalidSignature
}

// Sign sets the header a sender with this credential sends.
func (c *credential) Sign(key string, _ Message) (http.Header, error) {
	out := http.Header{}
	if c.basic {
		out.Set(c.header, "Basic "+base64.StdEncoding.EncodeToString([]byte(key)))
	} else {
		out.Set(c.header, c.prefix+key)
	}
	return out, nil
}

func (c *credential) signsFreshness() bool    { return false }
func (c *credential) SignedHeaders() []string { return nil }
func (c *credential) sharedKey() bool         { return false }
