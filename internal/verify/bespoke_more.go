package verify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
)

// numberedHeaders is DocuSign Connect's scheme: one HMAC-SHA256 base64 of
// the body per active key, in Prefix1, Prefix2, … Any header matching any
// configured key verifies. At most maxCandidates headers are read.
type numberedHeaders struct {
	prefix string
	keys   [][]byte
}

func newNumberedHeaders(prefix string, _ int) func([]string, Options) (Scheme, error) {
	return func(secrets []string, _ Options) (Scheme, error) {
		keys, err := secretBytes(secrets)
		return &numberedHeaders{prefix: prefix, keys: keys}, err
	}
}

func (n *numberedHeaders) Verify(r *Request) (Result, error) {
	var sigs [][]byte
	for i := 1; i <= maxCandidates; i++ {
		v := r.Header.Get(n.prefix + strconv.Itoa(i))
		if v == "" {
			break
		}
		if sig, err := base64.StdEncoding.DecodeString(v); err == nil && len(sig) == sha256.Size {
			sigs = append(sigs, sig)
		}
	}
	if r.Header.Get(n.prefix+"1") == "" {
		return Result{}, ErrMissingSignature
	}
	if len(sigs) == 0 {
		return Result{}, ErrMalformedSignature
	}
	for _, k := range n.keys {
		mac := hmac.New(sha256.New, k)
		mac.Write(r.Body)
		sum := mac.Sum(nil)
		for _, sig := range sigs {
			if hmac.Equal(sum, sig) {
				return Result{}, nil
			}
		}
	}
	return Result{}, ErrInvalidSignature
}

// numberedSigner signs as DocuSign does with one key: the first header.
type numberedSigner struct{ prefix string }

func (s numberedSigner) Sign(key string, msg Message) (http.Header, error) {
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write(msg.Body)
	h := http.Header{}
	h.Set(s.prefix+"1", base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	h.Set("X-Authorization-Digest", "HMACSHA256")
	return h, nil
}
