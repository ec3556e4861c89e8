package verify

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Spec declares a signature scheme: where the signature is, what was
// signed, and how.
type Spec struct {
	// Algorithm: hmac-sha1, hmac-sha256 (default), hmac-sha512 (also written
	// sha1, sha256, sha512); hash-sha256 (a plain hash of content that
	// includes {secret}); ed25519; ed25519ph (Ed25519 over the content's
	// SHA-512, as KMS-held keys sign); ecdsa-p256-sha256; rsa-sha256 (PKCS#1 v1.5,
	// public keys as PEM or base64 DER); token (the header is
	// the secret); basic (HTTP basic auth equal to "user:password").
	Algorithm string `json:"algorithm"`
	// Header carries the signature.
	Header string `json:"header"`
	// Prefix precedes each signature value ("sha256=", "v1,", "Bearer ").
	Prefix string `json:"prefix,omitempty"`
	// Separator splits a header holding several signatures (" " for
	// Standard Webhooks), or with SignatureKey, several sets of pairs.
	Separator string `json:"separator,omitempty"`
	// SignatureKey switches to key=value pairs ("t=1,v1=abc"): the key whose values are signatures.
	SignatureKey string `json:"signature_key,omitempty"`
	// TimestampKey is the pair key carrying the timestamp.
	TimestampKey string `json:"timestamp_key,omitempty"`
	// PairSeparator splits pairs; default ",".
	PairSeparator string `json:"pair_separator,omitempty"`
	// Encoding of the signature bytes: hex (default) or base64.
	Encoding string `json:"encoding,omitempty"`
	// Content is the signed-content template over {body}, {timestamp}, {id},
	// {url}, {method}, {secret} and {header:Name}. Default "{body}".
	Content string `json:"content,omitempty"`
	// TimestampHeader carries the timestamp when it is not in the signature header.
	TimestampHeader string `json:"timestamp_header,omitempty"`
	// TimestampUnit is s (default), ms, rfc3339, or iso8601 (RFC 3339,
	// UTC when it names no zone).
	TimestampUnit string `json:"timestamp_unit,omitempty"`
	// IDHeader carries the message id for {id}.
	IDHeader string `json:"id_header,omitempty"`
	// SecretEncoding says how key bytes come from a secret: raw (default),
	// base64, hex, whsec (Standard Webhooks secret), whsec-or-raw (a whsec_
	// secret tried decoded and as its raw bytes), whpk (Standard Webhooks
	// public key), der-base64 (a base64 DER public key).
	SecretEncoding string `json:"secret_encoding,omitempty"`
	// Tolerance is the largest accepted distance between the timestamp and now; zero disables the check.
	Tolerance time.Duration `json:"tolerance,omitempty"`
	// Format is how the provider encodes bodies: json, form or either
	// (default). Rules and dedup keys read the body in this format, and
	// hash-sha256 accepts only a body that is wholly one value of it.
	Format string `json:"format,omitempty"`
}

// maxCandidates bounds the signatures tried from one header, so a header
// stuffed with values costs no more than a handful of comparisons.
const maxCandidates = 16

// maxAsymmetricCandidates bounds the signatures tried for public-key
// schemes, where each try hashes the whole body again: a request stuffed
// with signatures must not cost the CPU of many.
const maxAsymmetricCandidates = 3

// MinKeyBytes is the shortest shared key accepted for schemes that MAC or
// hash with it: from one captured request, a shorter key can be searched
// for offline. A placeholder that expanded to nothing behind a prefix
// (whsec_{env.UNSET}) is caught the same way.
const MinKeyBytes = 16

// CheckSharedKey refuses a configured secret that a preset or spec would
// use as a MAC or hash key when it is too short to resist an offline search.
// Public keys, tokens and passwords are not keys of that kind. Published
// test vectors use shorter keys, so the schemes themselves accept them.
func CheckSharedKey(p Preset, secret string) error {
	encoding := p.Spec.SecretEncoding
	switch {
	case p.Keys.Kind == SecretPublicKey || p.Keys.Kind == SecretToken:
		return nil
	case p.Keys.Kind == SecretMACKeyHex:
		encoding = "hex"
	case p.Bespoke.Build != nil:
		encoding = "raw"
	}
	if p.Bespoke.Build == nil {
		d, err := compileSpec(p.Spec)
		if err != nil || !d.sharedKey() {
			return nil
		}
	}
	key, err := DecodeSecret(encoding, secret)
	if err != nil {
		return nil // the scheme reports a secret it cannot decode
	}
	return checkKey(secret, key)
}

func checkKey(secret string, key []byte) error {
	if len(key) >= MinKeyBytes {
		return nil
	}
	for _, prefix := range []string{"whsec_", "whsk_", "whpk_", "sha256=", "v1,"} {
		if secret == prefix || secret == strings.TrimSuffix(prefix, "_") {
			return fmt.Errorf("is only the prefix %q: did a placeholder after it expand to nothing?", prefix)
		}
	}
	return fmt.Errorf("gives a %d-byte key; at least %d bytes are required, or one captured request lets the key be found by search", len(key), MinKeyBytes)
}

type segmentKind uint8

const (
	segLiteral segmentKind = iota
	segBody
	segTimestamp
	segID
	segURL
	segMethod
	segSecret
	segHeader
)

type segment struct {
	kind    segmentKind
	literal []byte // the text of a literal, or the name of a header
}

// Declarative is a compiled Spec with its keys: the header parsed, the
// timestamp checked and the content written here, the signature bytes made
// and checked by its algorithm.
type Declarative struct {
	spec     Spec
	def      algorithmDef
	alg      algorithm
	content  []segment
	needsTS  bool
	needsID  bool
	decode   func(string) ([]byte, error)
	encode   func([]byte) string
	tsParse  func(string) (time.Time, bool)
	tsFormat func(time.Time) string
	// signedPool holds the per-request state verification reuses.
	signedPool sync.Pool
}

// specScheme is a compiled Spec: a Declarative signature scheme, or a
// credential check (token, basic).
type specScheme interface {
	Scheme
	Signer
	addKey(secret string) error
	// signsFreshness reports whether the signature covers a timestamp or
	// an id, so that a capture cannot be sent again as a new event.
	signsFreshness() bool
	// SignedHeaders names the headers whose values the signature covers.
	SignedHeaders() []string
	// sharedKey reports whether the secrets are keys a MAC or hash uses.
	sharedKey() bool
}

func (d *Declarative) signsFreshness() bool { return d.needsTS || d.needsID }
func (d *Declarative) sharedKey() bool      { return d.def.sharedKey }

// SignedHeaders names the headers whose values the signature covers: those
// the content names, and the id and timestamp headers when it signs them.
func (d *Declarative) SignedHeaders() []string {
	var out []string
	for _, s := range d.content {
		if s.kind == segHeader {
			out = append(out, string(s.literal))
		}
	}
	if d.needsID && d.spec.IDHeader != "" {
		out = append(out, http.CanonicalHeaderKey(d.spec.IDHeader))
	}
	if d.needsTS && d.spec.TimestampHeader != "" {
		out = append(out, http.CanonicalHeaderKey(d.spec.TimestampHeader))
	}
	return out
}

// SecretError says which configured secret a scheme cannot use, so that a
// caller can point at the secrets rather than at the scheme.
type SecretError struct {
	Index int // from 1, as the secrets are listed
	Err   error
}

func (e *SecretError) Error() string { return fmt.Sprintf("secret %d: %v", e.Index, e.Err) }

func (e *SecretError) Unwrap() error { return e.Err }

// SpecScheme is a compiled declarative spec: it verifies, and signs as the
// provider does (for `hookgate send`, re-signing and tests).
type SpecScheme interface {
	Scheme
	Signer
}

// New compiles spec with the given secrets (or public keys, for asymmetric
// algorithms).
func New(spec Spec, secrets []string) (SpecScheme, error) {
	d, err := compileSpec(spec)
	if err != nil {
		return nil, err
	}
	if len(secrets) == 0 {
		return nil, fmt.Errorf("no secrets")
	}
	for i, s := range secrets {
		if err := d.addKey(s); err != nil {
			return nil, &SecretError{Index: i + 1, Err: err}
		}
	}
	return d, nil
}

// compileSpec checks a spec and prepares everything but the keys.
func compileSpec(spec Spec) (specScheme, error) {
	if spec.Header == "" {
		return nil, fmt.Errorf("header is required")
	}
	if a := strings.ToLower(spec.Algorithm); a == "token" || a == "basic" {
		return newCredential(spec), nil
	}
	return compileSignature(spec)
}

// compileSignature prepares a signature scheme from a spec.
func compileSignature(spec Spec) (*Declarative, error) {
	def, err := lookupAlgorithm(spec.Algorithm)
	if err != nil {
		return nil, err
	}
	d := &Declarative{spec: spec, def: def}
	if err := d.setEncoding(spec.Encoding); err != nil {
		return nil, err
	}
	if spec.Format == "" {
		d.spec.Format = FormatEither
	} else if err := CheckFormat(spec.Format); err != nil {
		return nil, err
	}
	d.alg = def.new(d.spec.Format)
	if spec.SignatureKey == "" && spec.TimestampKey != "" {
		return nil, fmt.Errorf("timestamp_key needs signature_key (key=value pairs)")
	}
	content := spec.Content
	if content == "" {
		content = "{body}"
	}
	segs, err := parseTemplate(content)
	if err != nil {
		return nil, err
	}
	d.content = segs
	for _, s := range segs {
		switch s.kind {
		case segTimestamp:
			d.needsTS = true
		case segID:
			d.needsID = true
		case segSecret:
			if !def.signsSecret {
				return nil, fmt.Errorf("content uses {secret}, which only hash-sha256 signs")
			}
		}
	}
	hasTimestamp := spec.TimestampHeader != "" || spec.TimestampKey != ""
	if d.needsTS && !hasTimestamp {
		return nil, fmt.Errorf("content uses {timestamp} but neither timestamp_header nor timestamp_key is set")
	}
	if d.needsID && spec.IDHeader == "" {
		return nil, fmt.Errorf("content uses {id} but id_header is not set")
	}
	if spec.Tolerance > 0 && !hasTimestamp {
		return nil, fmt.Errorf("a tolerance needs a timestamp (timestamp_header or timestamp_key)")
	}
	if err := d.setTimestampUnit(spec.TimestampUnit); err != nil {
		return nil, err
	}
	d.signedPool.New = func() any { return &signed{d: d} }
	return d, nil
}

// setEncoding picks how signature bytes are written in the header.
func (d *Declarative) setEncoding(encoding string) error {
	switch encoding {
	case "hex", "":
		d.decode, d.encode = hex.DecodeString, hex.EncodeToString
	case "base64":
		d.decode, d.encode = decodeBase64, base64.StdEncoding.EncodeToString
	case "base64url":
		d.decode, d.encode = decodeBase64URL, base64.URLEncoding.EncodeToString
	default:
		return fmt.Errorf("unknown encoding %q (use hex, base64 or base64url)", encoding)
	}
	return nil
}

// setTimestampUnit picks how timestamps are read and written.
func (d *Declarative) setTimestampUnit(unit string) error {
	switch unit {
	case "", "s":
		d.tsParse = parseUnix(1)
		d.tsFormat = func(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }
	case "ms":
		d.tsParse = parseUnix(1000)
		d.tsFormat = func(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }
	case "rfc3339":
		d.tsParse = func(s string) (time.Time, bool) {
			t, err := time.Parse(time.RFC3339Nano, s)
			return t, err == nil
		}
		d.tsFormat = func(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
	case "iso8601":
		d.tsParse = func(s string) (time.Time, bool) {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				return t, true
			}
			t, err := time.Parse("2006-01-02T15:04:05.999999999", s)
			return t, err == nil
		}
		d.tsFormat = func(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000") }
	default:
		return fmt.Errorf("unknown timestamp_unit %q (use s, ms, rfc3339 or iso8601)", unit)
	}
	return nil
}

func (d *Declarative) addKey(secret string) error {
	if d.spec.SecretEncoding == "whsec-or-raw" {
		// Some Standard Webhooks senders (Polar's secrets from before
		// 2026-09-08, Whop) MAC with the secret's own bytes; the rest
		// decode it. Both keys come from the secret alone.
		if err := d.alg.addKey(secret, "raw"); err != nil {
			return err
		}
		if _, err := DecodeSecret("whsec", secret); err == nil {
			return d.alg.addKey(secret, "whsec")
		}
		return nil
	}
	return d.alg.addKey(secret, d.spec.SecretEncoding)
}

func parseUnix(perSecond int64) func(string) (time.Time, bool) {
	return func(s string) (time.Time, bool) {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			return time.Time{}, false
		}
		if perSecond == 1000 {
			return time.UnixMilli(n), true
		}
		return time.Unix(n, 0), true
	}
}

// DecodeSecret turns a configured secret into key bytes.
func DecodeSecret(encoding, secret string) ([]byte, error) {
	switch encoding {
	case "", "raw", "utf8", "whsec-or-raw":
		return []byte(secret), nil
	case "base64":
		return decodeBase64(secret)
	case "hex":
		return hex.DecodeString(secret)
	case "whsec":
		key, err := decodeBase64(strings.TrimPrefix(secret, "whsec_"))
		if err != nil {
			key, err = decodeLenientBase64(strings.TrimPrefix(secret, "whsec_"))
		}
		if err != nil {
			return nil, fmt.Errorf("not a whsec_ base64 secret")
		}
		return key, nil
	case "whpk":
		key, err := decodeBase64(strings.TrimPrefix(secret, "whpk_"))
		if err != nil {
			return nil, fmt.Errorf("not a whpk_ base64 public key")
		}
		return key, nil
	case "der-base64":
		key, err := decodeBase64(secret)
		if err != nil {
			return nil, fmt.Errorf("not a base64 DER key")
		}
		return key, nil
	default:
		return nil, fmt.Errorf("unknown secret_encoding %q (use raw, base64, hex, whsec, whsec-or-raw, whpk or der-base64)", encoding)
	}
}

func decodeBase64(s string) ([]byte, error) {
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		return b, nil
	}
	return base64.RawStdEncoding.DecodeString(s)
}

// decodeLenientBase64 decodes a secret as Node's Buffer.from(s, "base64")
// does, which some providers' SDKs use on their own secrets (Liveblocks'
// are 33 characters): padding optional, a dangling last character dropped.
func decodeLenientBase64(s string) ([]byte, error) {
	s = strings.TrimRight(s, "=")
	if len(s)%4 == 1 {
		s = s[:len(s)-1]
	}
	return base64.RawStdEncoding.DecodeString(s)
}

func decodeBase64URL(s string) ([]byte, error) {
	if b, err := base64.URLEncoding.DecodeString(s); err == nil {
		return b, nil
	}
	return base64.RawURLEncoding.DecodeString(s)
}

func parseTemplate(t string) ([]segment, error) {
	var segs []segment
	for t != "" {
		open := strings.IndexByte(t, '{')
		if open < 0 {
			segs = append(segs, segment{kind: segLiteral, literal: []byte(t)})
			break
		}
		if open > 0 {
			segs = append(segs, segment{kind: segLiteral, literal: []byte(t[:open])})
		}
		end := strings.IndexByte(t[open:], '}')
		if end < 0 {
			return nil, fmt.Errorf("content: unclosed { in %q", t)
		}
		name := t[open+1 : open+end]
		seg := segment{}
		switch {
		case name == "body":
			seg.kind = segBody
		case name == "timestamp":
			seg.kind = segTimestamp
		case name == "id":
			seg.kind = segID
		case name == "url":
			seg.kind = segURL
		case name == "method":
			seg.kind = segMethod
		case name == "secret":
			seg.kind = segSecret
		case strings.HasPrefix(name, "header:") && len(name) > len("header:"):
			seg.kind, seg.literal = segHeader, []byte(http.CanonicalHeaderKey(name[len("header:"):]))
		default:
			return nil, fmt.Errorf("content: unknown variable {%s} (use {body}, {timestamp}, {id}, {url}, {method}, {secret} or {header:Name})", name)
		}
		segs = append(segs, seg)
		t = t[open+end+1:]
	}
	return segs, nil
}

// Verify implements Scheme; the signature is the whole verdict.
func (d *Declarative) Verify(r *Request) (Result, error) { return Result{}, d.check(r) }

func (d *Declarative) check(r *Request) error {
	values := r.Header.Values(d.spec.Header)
	if len(values) == 0 || (len(values) == 1 && strings.TrimSpace(values[0]) == "") {
		return ErrMissingSignature
	}
	sg := d.signedPool.Get().(*signed)
	defer d.release(sg)
	if err := d.parseHeader(values, sg); err != nil {
		return err
	}
	sg.r, sg.ts = r, sg.timestamp
	if d.spec.TimestampHeader != "" {
		sg.ts = r.Header.Get(d.spec.TimestampHeader)
	}
	if d.needsTS || d.spec.Tolerance > 0 {
		if err := d.checkTimestamp(sg.ts, r.Now); err != nil {
			return err
		}
	}
	if d.needsID {
		sg.id = r.Header.Get(d.spec.IDHeader)
		if sg.id == "" {
			return ErrMalformedSignature
		}
	}
	if !d.alg.verify(sg) {
		return ErrInvalidSignature
	}
	if d.def.checkBody != nil {
		return d.def.checkBody(d.spec.Format, r.Body)
	}
	return nil
}

// release returns a signed to the pool, keeping nothing of its request.
func (d *Declarative) release(sg *signed) {
	sg.r, sg.ts, sg.id, sg.timestamp, sg.n = nil, "", "", "", 0
	clear(sg.sigs[:])
	if sg.buf.Cap() > 64<<10 {
		sg.buf = bytes.Buffer{} // a large body's content is not kept
	}
	d.signedPool.Put(sg)
}

func (d *Declarative) parseHeader(values []string, p *signed) error {
	for _, v := range values {
		if d.spec.SignatureKey != "" {
			sep := d.spec.PairSeparator
			if sep == "" {
				sep = ","
			}
			// Separator, when set, splits the header into sets of pairs
			// (Persona's "t=…,v1=… t=…,v1=…" during a rotation).
			if d.spec.Separator != "" {
				v = strings.ReplaceAll(v, d.spec.Separator, sep)
			}
			for part := range strings.SplitSeq(v, sep) {
				key, val, ok := strings.Cut(strings.TrimSpace(part), "=")
				if !ok {
					continue
				}
				switch key {
				case d.spec.TimestampKey:
					if p.timestamp != "" && p.timestamp != val {
						return ErrMalformedSignature
					}
					p.timestamp = val
				case d.spec.SignatureKey:
					d.addCandidate(p, val)
				}
			}
			continue
		}
		if d.spec.Separator == "" {
			d.addCandidate(p, strings.TrimSpace(v))
			continue
		}
		for part := range strings.SplitSeq(v, d.spec.Separator) {
			d.addCandidate(p, strings.TrimSpace(part))
		}
	}
	if p.n == 0 {
		return ErrMalformedSignature
	}
	return nil
}

func (d *Declarative) addCandidate(p *signed, v string) {
	if p.n == d.def.maxCandidates {
		return
	}
	if d.spec.Prefix != "" {
		rest, ok := strings.CutPrefix(v, d.spec.Prefix)
		if !ok {
			return
		}
		v = rest
	}
	sig, err := d.decode(v)
	if err != nil || (d.def.sigSize > 0 && len(sig) != d.def.sigSize) || len(sig) == 0 {
		return
	}
	p.sigs[p.n] = sig
	p.n++
}

func (d *Declarative) checkTimestamp(ts string, now time.Time) error {
	at, ok := d.tsParse(ts)
	if !ok {
		return ErrMissingTimestamp
	}
	return CheckTolerance(at, now, d.spec.Tolerance)
}

// CheckTolerance accepts at when it lies within tolerance of now, in either
// direction; a zero tolerance accepts any time.
func CheckTolerance(at, now time.Time, tolerance time.Duration) error {
	if tolerance <= 0 {
		return nil
	}
	diff := now.Sub(at)
	if diff < 0 {
		diff = -diff
	}
	if diff > tolerance {
		return ErrStaleTimestamp
	}
	return nil
}

func (d *Declarative) writeContent(w io.Writer, r *Request, ts, id string, secret []byte) {
	for _, s := range d.content {
		switch s.kind {
		case segLiteral:
			w.Write(s.literal)
		case segBody:
			w.Write(r.Body)
		case segTimestamp:
			io.WriteString(w, ts)
		case segID:
			io.WriteString(w, id)
		case segURL:
			io.WriteString(w, r.URL)
		case segMethod:
			io.WriteString(w, r.Method)
		case segSecret:
			w.Write(secret)
		case segHeader:
			io.WriteString(w, r.Header.Get(string(s.literal)))
		}
	}
}

// SignedContent is what a declarative spec signs for msg: the content its
// template makes of the message, the timestamp written as the spec writes
// it. Key material in the content ({secret}) is left out. A credential
// check (token, basic) signs nothing: nil, without an error.
func SignedContent(spec Spec, msg Message) ([]byte, error) {
	if a := strings.ToLower(spec.Algorithm); a == "token" || a == "basic" {
		return nil, nil
	}
	d, err := compileSignature(spec)
	if err != nil {
		return nil, err
	}
	r := &Request{Body: msg.Body, Method: msg.Method, URL: msg.URL, Header: msg.Header}
	if r.Header == nil {
		r.Header = http.Header{}
	}
	var b bytes.Buffer
	d.writeContent(&b, r, d.tsFormat(msg.Time), msg.ID, nil)
	return b.Bytes(), nil
}

// Message is what Sign needs to produce a signature.
type Message struct {
	Body   []byte
	Method string
	URL    string
	ID     string
	Header http.Header
	Time   time.Time
}

// Sign returns the headers that make msg verify. key is the secret, or for
// asymmetric algorithms the private key (an Ed25519 seed or key in the
// secret encoding, whsk_ for Standard Webhooks; a base64 PKCS#8 ECDSA key).
// It is the inverse of Verify, used by `hookgate send` and by tests.
func (d *Declarative) Sign(key string, msg Message) (http.Header, error) {
	ts := d.tsFormat(msg.Time)
	req := &Request{Body: msg.Body, Method: msg.Method, URL: msg.URL, Header: msg.Header}
	if req.Header == nil {
		req.Header = http.Header{}
	}
	if d.def.checkBody != nil {
		if err := d.def.checkBody(d.spec.Format, msg.Body); err != nil {
			return nil, err
		}
	}
	sig, err := d.alg.sign(key, d.spec.SecretEncoding, &signed{d: d, r: req, ts: ts, id: msg.ID})
	if err != nil {
		return nil, err
	}
	out := http.Header{}
	value := d.spec.Prefix + d.encode(sig)
	if d.spec.SignatureKey != "" {
		sep := d.spec.PairSeparator
		if sep == "" {
			sep = ","
		}
		value = d.spec.SignatureKey + "=" + value
		if d.spec.TimestampKey != "" {
			value = d.spec.TimestampKey + "=" + ts + sep + value
		}
	}
	out.Set(d.spec.Header, value)
	if d.spec.TimestampHeader != "" {
		out.Set(d.spec.TimestampHeader, ts)
	}
	if d.spec.IDHeader != "" {
		out.Set(d.spec.IDHeader, msg.ID)
	}
	return out, nil
}
