package verify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
)

// asana verifies X-Hook-Signature, the hex HMAC-SHA256 of the body under
// the secret Asana sent in the X-Hook-Secret handshake (Request.Learned),
// or a configured one. Notion's X-Notion-Signature (sha256=…) works the
// same way, with the verification_token its handshake sends.
type asana struct {
	header, prefix string
	secrets        [][]byte
}

func newAsana(secrets []string, _ Options) (Scheme, error) {
	return newLearnedHMAC("X-Hook-Signature", "")(secrets, Options{})
}

// newLearnedHMAC builds a learned-secret HMAC-SHA256 hex scheme.
func newLearnedHMAC(header, prefix string) func([]string, Options) (Scheme, error) {
	return func(secrets []string, _ Options) (Scheme, error) {
		a := &asana{header: header, prefix: prefix}
		for _, s := range secrets {
			a.secrets = append(a.secrets, []byte(s))
		}
		return a, nil
	}
}

func (a *asana) Verify(r *Request) (Result, error) { return Result{}, a.check(r) }

func (a *asana) check(r *Request) error {
	header := r.Header.Get(a.header)
	if header == "" {
		return ErrMissingSignature
	}
	hexSig, ok := strings.CutPrefix(header, a.prefix)
	if !ok {
		return ErrMalformedSignature
	}
	sig, err := hex.DecodeString(hexSig)
	if err != nil || len(sig) != sha256.Size {
		return ErrMalformedSignature
	}
	secrets := a.secrets
	if r.Learned != "" {
		secrets = append(secrets[:len(secrets):len(secrets)], []byte(r.Learned))
	}
	for _, secret := range secrets {
		mac := hmac.New(sha256.New, secret)
		mac.Write(r.Body)
		if hmac.Equal(mac.Sum(nil), sig) {
			return nil
		}
	}
	return ErrInvalidSignature
}

// Sign signs a body as Asana (or Notion) does.
func (a *asana) Sign(key string, msg Message) (http.Header, error) {
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write(msg.Body)
	h := http.Header{}
	h.Set(a.header, a.prefix+hex.EncodeToString(mac.Sum(nil)))
	return h, nil
}

// notionVerification answers Notion's one-time POST of the subscription's
// verification_token, unsigned as Notion sends it: like Asana's handshake,
// the token is learned only inside the source's learning window and only
// if no secret is established, and the operator reads it once with
// `hookgate secrets reveal` to paste into Notion.
var notionVerification = &Handshake{Name: "notion verification_token", Unsigned: true, Answer: func(r *HandshakeRequest) (*HandshakeResponse, bool) {
	m := jsonFields(r.Body)
	token, ok := jsonString(m["verification_token"])
	if r.Method != http.MethodPost || len(m) != 1 || !ok || !strings.HasPrefix(token, "secret_") {
		return nil, false
	}
	if r.KnownSecrets > 0 || len(token) > maxChallenge || !echoable(token) {
		return &HandshakeResponse{Status: http.StatusForbidden, ContentType: "text/plain; charset=utf-8",
			Body: []byte("a secret is already established for this endpoint")}, true
	}
	return &HandshakeResponse{Status: http.StatusOK, Learn: token}, true
}}

// asanaHookSecret answers Asana's handshake: a POST carrying X-Hook-Secret,
// echoed back, whose value becomes the source's secret. It is unsigned by
// design, so the answer only proposes to learn the secret: the pipeline
// answers 200 only inside the source's learning window and only if the
// store's create-if-absent of the secret succeeds, and 403 otherwise.
var asanaHookSecret = &Handshake{Name: "asana X-Hook-Secret", Unsigned: true, Answer: func(r *HandshakeRequest) (*HandshakeResponse, bool) {
	secret := r.Header.Get("X-Hook-Secret")
	if r.Method != http.MethodPost || secret == "" {
		return nil, false
	}
	if r.KnownSecrets > 0 || len(secret) > maxChallenge {
		return &HandshakeResponse{Status: http.StatusForbidden, ContentType: "text/plain; charset=utf-8",
			Body: []byte("a secret is already established for this endpoint")}, true
	}
	return &HandshakeResponse{Status: http.StatusOK, ContentType: "text/plain; charset=utf-8",
		Header: http.Header{"X-Hook-Secret": {secret}}, Learn: secret}, true
}}
