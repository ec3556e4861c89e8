package verify

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
)

// SignerFor returns a signer for a preset's scheme that signs with any key
// it is given, or an error for schemes the gateway cannot sign.
func SignerFor(p Preset) (Signer, error) {
	signer := p.Bespoke.Signer
	if signer == nil {
		if p.Bespoke.Build != nil {
			return nil, fmt.Errorf("provider %s cannot be signed here", p.Name)
		}
		d, err := compileSpec(p.Spec)
		if err != nil {
			return nil, err
		}
		signer = d
	}
	if p.Trust.ObjectBodies {
		return objectSigner{signer}, nil
	}
	return signer, nil
}

// objectSigner signs only the JSON objects an ObjectBodies preset accepts.
type objectSigner struct{ Signer }

func (o objectSigner) Sign(key string, msg Message) (http.Header, error) {
	if _, ok := object(msg.Body); !ok {
		return nil, ErrNotObject
	}
	return o.Signer.Sign(key, msg)
}

// SpecSigner signs as spec does, with whatever key it is given. It compiles
// the spec when it signs, not when the catalog is built, so the catalog
// does not depend on the order in which algorithms register.
func SpecSigner(spec Spec) Signer { return specSigner{spec} }

type specSigner struct{ spec Spec }

func (s specSigner) Sign(key string, msg Message) (http.Header, error) {
	d, err := compileSpec(s.spec)
	if err != nil {
		return nil, err
	}
	return d.Sign(key, msg)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func uuid() string {
	u := randomHex(16)
	return u[:8] + "-" + u[8:12] + "-" + u[12:16] + "-" + u[16:20] + "-" + u[20:]
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
