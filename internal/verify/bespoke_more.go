package verify

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
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

// braintree verifies Braintree's form of two fields: bt_payload (base64
// of the XML notification) and bt_signature, "PUBLIC_KEY|hex" pairs joined
// by "&", each an HMAC-SHA1 of the payload keyed with the SHA-1 of the
// private key. Secrets are PUBLIC_KEY:PRIVATE_KEY. The payload must decode
// to XML: the bt_challenge handshake MACs hex text the same way, and no
// hex text is base64 of XML.
type braintree struct{ keys []braintreeKey }

type braintreeKey struct{ public, private string }

// braintreePayload is the shape of bt_payload: base64 text, which
// Braintree wraps with newlines.
var braintreePayload = regexp.MustCompile(`^[A-Za-z0-9+=/\n]+$`)

func newBraintree(secrets []string, _ Options) (Scheme, error) {
	if len(secrets) == 0 {
		return nil, errors.New("no secrets (PUBLIC_KEY:PRIVATE_KEY)")
	}
	b := &braintree{}
	for i, s := range secrets {
		public, private, ok := strings.Cut(s, ":")
		if !ok || public == "" || private == "" {
			return nil, fmt.Errorf("secret %d must be PUBLIC_KEY:PRIVATE_KEY", i+1)
		}
		b.keys = append(b.keys, braintreeKey{public, private})
	}
	return b, nil
}

func (b *braintree) Verify(r *Request) (Result, error) {
	form, err := strictForm(r.Body)
	if err != nil {
		return Result{}, ErrMalformedSignature
	}
	signature, payload := form.Get("bt_signature"), form.Get("bt_payload")
	if signature == "" {
		return Result{}, ErrMissingSignature
	}
	if !braintreePayload.MatchString(payload) || len(form) != 2 {
		return Result{}, ErrMalformedSignature
	}
	xml, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(payload, "\n", ""))
	if err != nil || !bytes.HasPrefix(bytes.TrimSpace(xml), []byte("<")) {
		return Result{}, ErrMalformedSignature
	}
	for pair := range strings.SplitSeq(signature, "&") {
		public, mac, ok := strings.Cut(pair, "|")
		if !ok {
			continue
		}
		for _, k := range b.keys {
			if subtle.ConstantTimeCompare([]byte(public), []byte(k.public)) != 1 {
				continue
			}
			for _, signed := range []string{payload, payload + "\n"} {
				if subtle.ConstantTimeCompare([]byte(braintreeMAC(k.private, signed)), []byte(strings.ToLower(mac))) == 1 {
					sum := sha256.Sum256([]byte(strings.TrimRight(payload, "\n")))
					return Result{DedupKey: "braintree:" + hex.EncodeToString(sum[:])}, nil
				}
			}
		}
	}
	return Result{}, ErrInvalidSignature
}

// Sign puts the signed fields in the body: msg.Body is the notification
// XML, and the key PUBLIC_KEY:PRIVATE_KEY.
func (b *braintree) Sign(key string, msg Message) (http.Header, error) {
	return http.Header{}, nil
}

// BraintreeForm is the form body Braintree posts for a notification XML,
// signed with PUBLIC_KEY:PRIVATE_KEY.
func BraintreeForm(key string, xml []byte) ([]byte, error) {
	public, private, ok := strings.Cut(key, ":")
	if !ok {
		return nil, errors.New("braintree key must be PUBLIC_KEY:PRIVATE_KEY")
	}
	payload := base64.StdEncoding.EncodeToString(xml) + "\n"
	form := url.Values{"bt_signature": {public + "|" + braintreeMAC(private, payload)}, "bt_payload": {payload}}
	return []byte(form.Encode()), nil
}

// strictForm parses a form body, refusing one that repeats a field: which
// value a verifier read and which one the backend reads must not differ.
func strictForm(body []byte) (url.Values, error) {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, err
	}
	for k, v := range form {
		if len(v) != 1 {
			return nil, fmt.Errorf("field %s repeated", k)
		}
	}
	return form, nil
}

// recurly verifies recurly-signature "timestamp,sig[,sig]": HMAC-SHA256
// hex over timestamp.body, the timestamp in milliseconds. While a key is
// regenerated, Recurly signs with both.
type recurly struct {
	keys      [][]byte
	tolerance time.Duration
}

func newRecurly(secrets []string, opts Options) (Scheme, error) {
	keys, err := secretBytes(secrets)
	r := &recurly{keys: keys, tolerance: 5 * time.Minute}
	if opts.Tolerance > 0 {
		r.tolerance = opts.Tolerance
	}
	return r, err
}

func (rc *recurly) Verify(r *Request) (Result, error) {
	header := r.Header.Get("Recurly-Signature")
	if header == "" {
		return Result{}, ErrMissingSignature
	}
	parts := strings.Split(header, ",")
	ms, err := strconv.ParseInt(strings.TrimSpace(parts[0]), 10, 64)
	if err != nil || len(parts) < 2 {
		return Result{}, ErrMalformedSignature
	}
	if err := CheckTolerance(time.UnixMilli(ms), r.Now, rc.tolerance); err != nil {
		return Result{}, err
	}
	var sigs [][]byte
	for _, p := range parts[1:min(len(parts), maxCandidates+1)] {
		if sig, err := hex.DecodeString(strings.TrimSpace(p)); err == nil && len(sig) == sha256.Size {
			sigs = append(sigs, sig)
		}
	}
	if len(sigs) == 0 {
		return Result{}, ErrMalformedSignature
	}
	for _, k := range rc.keys {
		mac := hmac.New(sha256.New, k)
		mac.Write([]byte(strings.TrimSpace(parts[0]) + "."))
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

func (rc *recurly) Sign(key string, msg Message) (http.Header, error) {
	ts := strconv.FormatInt(msg.Time.UnixMilli(), 10)
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write([]byte(ts + "."))
	mac.Write(msg.Body)
	h := http.Header{}
	h.Set("Recurly-Signature", ts+","+hex.EncodeToString(mac.Sum(nil)))
	return h, nil
}
