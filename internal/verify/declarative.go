package verify

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
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
	// includes {secret}); ed25519; ecdsa-p256-sha256; token (the header is
	// the secret); basic (HTTP basic auth equal to "user:password").
	Algorithm string `json:"algorithm"`
	// Header carries the signature.
	Header string `json:"header"`
	// Prefix precedes each signature value ("sha256=", "v1,", "Bearer ").
	Prefix string `json:"prefix,omitempty"`
	// Separator splits a header holding several signatures (" " for Standard Webhooks).
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
	// TimestampUnit is s (default), ms or rfc3339.
	TimestampUnit string `json:"timestamp_unit,omitempty"`
	// IDHeader carries the message id for {id}.
	IDHeader string `json:"id_header,omitempty"`
	// SecretEncoding says how key bytes come from a secret: raw (default),
	// base64, hex, whsec (Standard Webhooks secret), whpk (Standard Webhooks
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
	case p.SecretKind == SecretPublicKey || p.SecretKind == SecretToken:
		return nil
	case p.SecretKind == SecretMACKeyHex:
		encoding = "hex"
	case p.Build != nil:
		encoding = "raw"
	}
	if p.Build == nil {
		d, err := compileSpec(p.Spec)
		if err != nil || (d.family != familyHMAC && d.family != familyHash) {
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

type family uint8

const (
	familyHMAC family = iota
	familyHash
	familyEd25519
	familyECDSA
	familyToken
	familyBasic
)

// Declarative is a compiled Spec with its keys.
type Declarative struct {
	spec      Spec
	family    family
	content   []segment
	needsTS   bool
	needsID   bool
	newHash   func() hash.Hash
	sigSize   int // expected signature length, 0 when it varies
	decode    func(string) ([]byte, error)
	encode    func([]byte) string
	keys      [][]byte
	macs      []*sync.Pool // keyed MACs, one pool per secret (HMAC only)
	publicEd  []ed25519.PublicKey
	publicEC  []*ecdsa.PublicKey
	tsParse   func(string) (time.Time, bool)
	tsFormat  func(time.Time) string
	bufs      sync.Pool
	secretRaw [][]byte // secrets as configured, for {secret} and token checks
}

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

// New compiles spec with the given secrets (or public keys, for asymmetric
// algorithms).
func New(spec Spec, secrets []string) (*Declarative, error) {
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
func compileSpec(spec Spec) (*Declarative, error) {
	d := &Declarative{spec: spec}
	if err := d.setAlgorithm(spec); err != nil {
		return nil, err
	}
	if spec.Header == "" {
		return nil, fmt.Errorf("header is required")
	}
	if spec.Format == "" {
		d.spec.Format = FormatEither
	} else if err := CheckFormat(spec.Format); err != nil {
		return nil, err
	}
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
			if d.family != familyHash {
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
	d.bufs.New = func() any { return new(bytes.Buffer) }
	return d, nil
}

// setAlgorithm picks the signature family, its hash and the encoding.
func (d *Declarative) setAlgorithm(spec Spec) error {
	switch strings.ToLower(spec.Algorithm) {
	case "hmac-sha256", "sha256", "":
		d.family, d.newHash = familyHMAC, sha256.New
	case "hmac-sha1", "sha1":
		d.family, d.newHash = familyHMAC, sha1.New
	case "hmac-sha512", "sha512":
		d.family, d.newHash = familyHMAC, sha512.New
	case "hash-sha256":
		d.family, d.newHash = familyHash, sha256.New
	case "ed25519":
		d.family = familyEd25519
	case "ecdsa-p256-sha256":
		d.family = familyECDSA
	case "token":
		d.family = familyToken
	case "basic":
		d.family = familyBasic
	default:
		return fmt.Errorf("unknown algorithm %q (use hmac-sha1, hmac-sha256, hmac-sha512, hash-sha256, ed25519, ecdsa-p256-sha256, token or basic)", spec.Algorithm)
	}
	switch {
	case d.newHash != nil:
		d.sigSize = d.newHash().Size()
	case d.family == familyEd25519:
		d.sigSize = ed25519.SignatureSize
	}
	switch spec.Encoding {
	case "hex", "":
		d.decode, d.encode = hex.DecodeString, hex.EncodeToString
	case "base64":
		d.decode, d.encode = decodeBase64, base64.StdEncoding.EncodeToString
	case "base64url":
		d.decode, d.encode = decodeBase64URL, base64.URLEncoding.EncodeToString
	default:
		return fmt.Errorf("unknown encoding %q (use hex, base64 or base64url)", spec.Encoding)
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
	default:
		return fmt.Errorf("unknown timestamp_unit %q (use s, ms or rfc3339)", unit)
	}
	return nil
}

func (d *Declarative) addKey(secret string) error {
	d.secretRaw = append(d.secretRaw, []byte(secret))
	switch d.family {
	case familyToken, familyBasic, familyHash:
		return nil
	case familyEd25519:
		key, err := DecodeSecret(d.spec.SecretEncoding, secret)
		if err != nil {
			return err
		}
		if len(key) != ed25519.PublicKeySize {
			return fmt.Errorf("an Ed25519 public key has %d bytes, got %d", ed25519.PublicKeySize, len(key))
		}
		d.publicEd = append(d.publicEd, ed25519.PublicKey(key))
		return nil
	case familyECDSA:
		der, err := DecodeSecret(d.spec.SecretEncoding, secret)
		if err != nil {
			return err
		}
		pub, err := x509.ParsePKIXPublicKey(der)
		if err != nil {
			return fmt.Errorf("not a DER public key: %v", err)
		}
		ec, ok := pub.(*ecdsa.PublicKey)
		if !ok {
			return fmt.Errorf("not an ECDSA public key")
		}
		d.publicEC = append(d.publicEC, ec)
		return nil
	}
	key, err := DecodeSecret(d.spec.SecretEncoding, secret)
	if err != nil {
		return err
	}
	d.keys = append(d.keys, key)
	d.macs = append(d.macs, &sync.Pool{New: func() any { return hmac.New(d.newHash, key) }})
	return nil
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
	case "", "raw", "utf8":
		return []byte(secret), nil
	case "base64":
		return decodeBase64(secret)
	case "hex":
		return hex.DecodeString(secret)
	case "whsec":
		key, err := decodeBase64(strings.TrimPrefix(secret, "whsec_"))
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
		return nil, fmt.Errorf("unknown secret_encoding %q (use raw, base64, hex, whsec, whpk or der-base64)", encoding)
	}
}

func decodeBase64(s string) ([]byte, error) {
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		return b, nil
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

// parsed is what a signature header yields.
type parsed struct {
	candidates [maxCandidates][]byte
	n          int
	timestamp  string
}

// Verify implements Scheme; the signature is the whole verdict.
func (d *Declarative) Verify(r *Request) (Result, error) { return Result{}, d.check(r) }

func (d *Declarative) check(r *Request) error {
	values := r.Header.Values(d.spec.Header)
	if len(values) == 0 || (len(values) == 1 && strings.TrimSpace(values[0]) == "") {
		return ErrMissingSignature
	}
	switch d.family {
	case familyToken:
		return d.verifyToken(values)
	case familyBasic:
		return d.verifyBasic(values)
	}
	var p parsed
	if err := d.parseHeader(values, &p); err != nil {
		return err
	}
	ts := p.timestamp
	if d.spec.TimestampHeader != "" {
		ts = r.Header.Get(d.spec.TimestampHeader)
	}
	if d.needsTS || d.spec.Tolerance > 0 {
		if err := d.checkTimestamp(ts, r.Now); err != nil {
			return err
		}
	}
	id := ""
	if d.needsID {
		id = r.Header.Get(d.spec.IDHeader)
		if id == "" {
			return ErrMalformedSignature
		}
	}
	if d.family == familyHMAC {
		return d.verifyHMAC(r, ts, id, &p)
	}
	buf := d.bufs.Get().(*bytes.Buffer)
	defer d.bufs.Put(buf)
	buf.Reset()
	switch d.family {
	case familyHash:
		var sum [sha256.Size]byte
		for _, secret := range d.secretRaw {
			buf.Reset()
			d.writeContent(buf, r, ts, id, secret)
			sum = sha256.Sum256(buf.Bytes())
			for _, c := range p.candidates[:p.n] {
				if hmac.Equal(sum[:], c) {
					return d.checkHashedBody(r.Body)
				}
			}
		}
	case familyEd25519:
		d.writeContent(buf, r, ts, id, nil)
		for _, key := range d.publicEd {
			for _, c := range p.candidates[:p.n] {
				if ed25519.Verify(key, buf.Bytes(), c) {
					return nil
				}
			}
		}
	case familyECDSA:
		d.writeContent(buf, r, ts, id, nil)
		digest := sha256.Sum256(buf.Bytes())
		for _, key := range d.publicEC {
			for _, c := range p.candidates[:p.n] {
				if ecdsa.VerifyASN1(key, digest[:], c) {
					return nil
				}
			}
		}
	}
	return ErrInvalidSignature
}

// checkHashedBody guards a plain hash of {secret}…{body} against SHA-256
// length extension: from one captured digest anyone can compute the digest
// of the same content plus padding plus data of their choosing. The padding
// holds 0x80 and zero bytes, so a body that is wholly one value of the
// provider's format cannot carry it. An empty body has nothing appended.
func (d *Declarative) checkHashedBody(body []byte) error {
	if len(body) == 0 || WellFormed(d.spec.Format, body) {
		return nil
	}
	return ErrInvalidSignature
}

func (d *Declarative) verifyHMAC(r *Request, ts, id string, p *parsed) error {
	var sum [sha512.Size]byte
	for _, pool := range d.macs {
		mac := pool.Get().(hash.Hash)
		mac.Reset()
		d.writeContent(mac, r, ts, id, nil)
		digest := mac.Sum(sum[:0])
		pool.Put(mac)
		for _, c := range p.candidates[:p.n] {
			if hmac.Equal(digest, c) {
				return nil
			}
		}
	}
	return ErrInvalidSignature
}

// verifyToken compares the header, less its prefix, with each secret.
func (d *Declarative) verifyToken(values []string) error {
	got, ok := strings.CutPrefix(strings.TrimSpace(values[0]), d.spec.Prefix)
	if !ok || len(values) > 1 {
		return ErrMalformedSignature
	}
	match := 0
	for _, s := range d.secretRaw {
		match |= subtle.ConstantTimeCompare([]byte(got), s)
	}
	if match == 1 {
		return nil
	}
	return ErrInvalidSignature
}

// verifyBasic checks HTTP basic credentials against "user:password" secrets.
func (d *Declarative) verifyBasic(values []string) error {
	encoded, ok := strings.CutPrefix(strings.TrimSpace(values[0]), "Basic ")
	if !ok || len(values) > 1 {
		return ErrMalformedSignature
	}
	creds, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return ErrMalformedSignature
	}
	match := 0
	for _, s := range d.secretRaw {
		match |= subtle.ConstantTimeCompare(creds, s)
	}
	if match == 1 {
		return nil
	}
	return ErrInvalidSignature
}

func (d *Declarative) parseHeader(values []string, p *parsed) error {
	for _, v := range values {
		if d.spec.SignatureKey != "" {
			sep := d.spec.PairSeparator
			if sep == "" {
				sep = ","
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

func (d *Declarative) addCandidate(p *parsed, v string) {
	if p.n == maxCandidates || (p.n == maxAsymmetricCandidates && (d.family == familyEd25519 || d.family == familyECDSA)) {
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
	if err != nil || (d.sigSize > 0 && len(sig) != d.sigSize) || len(sig) == 0 {
		return
	}
	p.candidates[p.n] = sig
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
	out := http.Header{}
	switch d.family {
	case familyToken:
		out.Set(d.spec.Header, d.spec.Prefix+key)
		return out, nil
	case familyBasic:
		out.Set(d.spec.Header, "Basic "+base64.StdEncoding.EncodeToString([]byte(key)))
		return out, nil
	}
	ts := d.tsFormat(msg.Time)
	req := &Request{Body: msg.Body, Method: msg.Method, URL: msg.URL, Header: msg.Header}
	if req.Header == nil {
		req.Header = http.Header{}
	}
	var content bytes.Buffer
	d.writeContent(&content, req, ts, msg.ID, []byte(key))
	var sig []byte
	switch d.family {
	case familyHMAC:
		k, err := DecodeSecret(d.spec.SecretEncoding, key)
		if err != nil {
			return nil, err
		}
		mac := hmac.New(d.newHash, k)
		mac.Write(content.Bytes())
		sig = mac.Sum(nil)
	case familyHash:
		if err := d.checkHashedBody(msg.Body); err != nil {
			return nil, fmt.Errorf("hash-sha256 signs only a body that is wholly %s", d.spec.Format)
		}
		s := sha256.Sum256(content.Bytes())
		sig = s[:]
	case familyEd25519:
		priv, err := ed25519PrivateKey(key)
		if err != nil {
			return nil, err
		}
		sig = ed25519.Sign(priv, content.Bytes())
	case familyECDSA:
		priv, err := ecdsaPrivateKey(key)
		if err != nil {
			return nil, err
		}
		digest := sha256.Sum256(content.Bytes())
		sig, err = ecdsa.SignASN1(nil, priv, digest[:])
		if err != nil {
			return nil, err
		}
	}
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

// ed25519PrivateKey reads a 32-byte seed or 64-byte key, as hex, base64 or
// whsk_ base64.
func ed25519PrivateKey(s string) (ed25519.PrivateKey, error) {
	var raw []byte
	if b, err := hex.DecodeString(s); err == nil {
		raw = b
	} else if b, err := decodeBase64(strings.TrimPrefix(s, "whsk_")); err == nil {
		raw = b
	}
	switch len(raw) {
	case ed25519.SeedSize:
		return ed25519.NewKeyFromSeed(raw), nil
	case ed25519.PrivateKeySize:
		return ed25519.PrivateKey(raw), nil
	}
	return nil, fmt.Errorf("not an Ed25519 private key (a 32-byte seed or 64-byte key, hex or base64)")
}

// ecdsaPrivateKey reads a base64 PKCS#8 or SEC 1 DER key.
func ecdsaPrivateKey(s string) (*ecdsa.PrivateKey, error) {
	der, err := decodeBase64(s)
	if err != nil {
		return nil, fmt.Errorf("not a base64 DER private key")
	}
	if k, err := x509.ParsePKCS8PrivateKey(der); err == nil {
		if ec, ok := k.(*ecdsa.PrivateKey); ok {
			return ec, nil
		}
	}
	return x509.ParseECPrivateKey(der)
}
