package verify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// contentful verifies Contentful's signed requests: an HMAC-SHA256 (hex)
// of method, normalised path, the signed headers and the body, joined by
// newlines, as @contentful/node-apps-toolkit's signRequest builds it.
type contentful struct {
	secrets   [][]byte
	tolerance time.Duration
}

const (
	contentfulSignature     = "x-contentful-signature"
	contentfulSignedHeaders = "x-contentful-signed-headers"
	contentfulTimestamp     = "x-contentful-timestamp"
)

func newContentful(secrets []string, opts Options) (Scheme, error) {
	keys, err := secretBytes(secrets)
	c := &contentful{secrets: keys, tolerance: 30 * time.Second}
	if opts.Tolerance > 0 {
		c.tolerance = opts.Tolerance
	}
	return c, err
}

func (c *contentful) Verify(r *Request) (Result, error) { return Result{}, c.check(r) }

func (c *contentful) check(r *Request) error {
	sig, err := hex.DecodeString(r.Header.Get(contentfulSignature))
	if err != nil || len(sig) != sha256.Size {
		if r.Header.Get(contentfulSignature) == "" {
			return ErrMissingSignature
		}
		return ErrMalformedSignature
	}
	ts, err := strconv.ParseInt(strings.TrimSpace(r.Header.Get(contentfulTimestamp)), 10, 64)
	if err != nil {
		return ErrMissingTimestamp
	}
	if err := CheckTolerance(time.UnixMilli(ts), r.Now, c.tolerance); err != nil {
		return err
	}
	// Contentful lists only headers it sends; a listed header that is absent
	// means the list was damaged, though the toolkit would skip it.
	picked := map[string]string{}
	for _, name := range strings.Split(r.Header.Get(contentfulSignedHeaders), ",") {
		name = strings.ToLower(strings.TrimSpace(name))
		vals := r.Header.Values(name)
		if len(vals) == 0 {
			return ErrMalformedSignature
		}
		picked[name] = strings.TrimSpace(vals[0])
	}
	path, err := requestPath(r.URL)
	if err != nil {
		return ErrMalformedSignature
	}
	canonical := contentfulCanonical(r.Method, path, picked, ts, r.Body)
	for _, secret := range c.secrets {
		mac := hmac.New(sha256.New, secret)
		mac.Write(canonical)
		if hmac.Equal(mac.Sum(nil), sig) {
			return nil
		}
	}
	return ErrInvalidSignature
}

// requestPath is the path and query of a URL, as a server sees the request target.
func requestPath(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	return u.RequestURI(), nil
}

// contentfulCanonical builds the signed string; headers are the picked
// signed headers, lower-case and trimmed.
func contentfulCanonical(method, path string, headers map[string]string, ts int64, body []byte) []byte {
	h := make(map[string]string, len(headers)+2)
	for k, v := range headers {
		h[k] = v
	}
	names := make([]string, 0, len(h)+2)
	for k := range h {
		names = append(names, k)
	}
	for _, k := range []string{contentfulSignedHeaders, contentfulTimestamp} {
		if _, ok := h[k]; !ok {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	h[contentfulTimestamp] = strconv.FormatInt(ts, 10)
	h[contentfulSignedHeaders] = strings.Join(names, ",")
	pairs := make([]string, 0, len(names))
	for _, k := range names {
		pairs = append(pairs, k+":"+h[k])
	}
	var b strings.Builder
	b.WriteString(method)
	b.WriteByte('\n')
	b.WriteString(normalizedEncodedURI(path))
	b.WriteByte('\n')
	b.WriteString(strings.Join(pairs, ";"))
	b.WriteByte('\n')
	b.Write(body)
	return []byte(b.String())
}

// normalizedEncodedURI mirrors the toolkit's getNormalizedEncodedURI: the
// query after the first "?" (up to any second one) is escaped as
// querystring.escape does, then the whole is passed through encodeURI.
func normalizedEncodedURI(uri string) string {
	parts := strings.SplitN(uri, "?", 3)
	out := parts[0]
	if len(parts) > 1 && parts[1] != "" {
		out += "?" + jsEscape(parts[1], componentSafe)
	}
	return jsEscape(out, uriSafe)
}

const (
	componentSafe = "-_.!~*'()"
	uriSafe       = "-_.!~*'();,/?:@&=+$#"
)

// jsEscape percent-encodes every byte but ASCII letters, digits and safe.
func jsEscape(s, safe string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x80 && (('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') || strings.IndexByte(safe, c) >= 0) {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// Sign produces Contentful's headers for a request, signing Content-Type
// alongside the timestamp.
func (c *contentful) Sign(key string, msg Message) (http.Header, error) {
	path, err := requestPath(msg.URL)
	if err != nil {
		return nil, err
	}
	ts := msg.Time.UnixMilli()
	picked := map[string]string{}
	if ct := msg.Header.Get("Content-Type"); ct != "" {
		picked["content-type"] = ct
	}
	method := msg.Method
	if method == "" {
		method = http.MethodPost
	}
	canonical := contentfulCanonical(method, path, picked, ts, msg.Body)
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write(canonical)
	names := []string{contentfulSignedHeaders, contentfulTimestamp}
	for k := range picked {
		names = append(names, k)
	}
	slices.Sort(names)
	h := http.Header{}
	h.Set(contentfulSignature, hex.EncodeToString(mac.Sum(nil)))
	h.Set(contentfulSignedHeaders, strings.Join(names, ","))
	h.Set(contentfulTimestamp, strconv.FormatInt(ts, 10))
	return h, nil
}
