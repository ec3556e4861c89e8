package verify

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Spec declares an HMAC signature scheme.
type Spec struct {
	// Algorithm is sha1, sha256 or sha512.
	Algorithm string `json:"algorithm"`
	// Header carries the signature.
	Header string `json:"header"`
	// Prefix precedes each signature value ("sha256=", "v1,").
	Prefix string `json:"prefix,omitempty"`
	// Separator splits a header holding several signatures (" " for Standard Webhooks).
	Separator string `json:"separator,omitempty"`
	// SignatureKey switches to key=value pairs ("t=1,v1=abc"): the key whose values are signatures.
	SignatureKey string `json:"signature_key,omitempty"`
	// TimestampKey is the pair key carrying the timestamp.
	TimestampKey string `json:"timestamp_key,omitempty"`
	// PairSeparator splits pairs; default ",".
	PairSeparator string `json:"pair_separator,omitempty"`
	// Encoding of the signature bytes: hex or base64.
	Encoding string `json:"encoding"`
	// Content is the signed-content template over {body}, {timestamp}, {id}, {url}, {method}.
	Content string `json:"content"`
	// TimestampHeader carries the timestamp when it is not in the signature header.
	TimestampHeader string `json:"timestamp_header,omitempty"`
	// TimestampUnit is s (default) or ms.
	TimestampUnit string `json:"timestamp_unit,omitempty"`
	// IDHeader carries the message id for {id}.
	IDHeader string `json:"id_header,omitempty"`
	// SecretEncoding says how key bytes come from a secret: raw (default), base64, hex, or whsec.
	SecretEncoding string `json:"secret_encoding,omitempty"`
	// Tolerance is the largest accepted distance between the timestamp and now; zero disables the check.
	Tolerance time.Duration `json:"tolerance,omitempty"`
}

// maxCandidates bounds the signatures tried from one header, so a header
// stuffed with values costs no more than a handful of comparisons.
const maxCandidates = 16

type segmentKind uint8

const (
	segLiteral segmentKind = iota
	segBody
	segTimestamp
	segID
	segURL
	segMethod
)

type segment struct {
	kind    segmentKind
	literal []byte
}

// HMAC is a compiled Spec with its secrets.
type HMAC struct {
	spec         Spec
	content      []segment
	needsTS      bool
	needsID      bool
	newHash      func() hash.Hash
	macs         []*sync.Pool // one pool of keyed MACs per secret
	keys         [][]byte
	sigSize      int
	decode       func(string) ([]byte, error)
	encode       func([]byte) string
	timestampDiv int64
}

// NewHMAC compiles spec with the given secrets.
func NewHMAC(spec Spec, secrets []string) (*HMAC, error) {
	h := &HMAC{spec: spec}
	switch strings.ToLower(spec.Algorithm) {
	case "sha1", "hmac-sha1":
		h.newHash = sha1.New
	case "sha256", "hmac-sha256", "":
		h.newHash = sha256.New
	case "sha512", "hmac-sha512":
		h.newHash = sha512.New
	default:
		return nil, fmt.Errorf("unknown algorithm %q (use sha1, sha256 or sha512)", spec.Algorithm)
	}
	h.sigSize = h.newHash().Size()
	switch spec.Encoding {
	case "hex", "":
		h.decode, h.encode = hex.DecodeString, hex.EncodeToString
	case "base64":
		h.decode, h.encode = decodeBase64, base64.StdEncoding.EncodeToString
	default:
		return nil, fmt.Errorf("unknown encoding %q (use hex or base64)", spec.Encoding)
	}
	if spec.Header == "" {
		return nil, fmt.Errorf("header is required")
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
	h.content = segs
	for _, s := range segs {
		switch s.kind {
		case segTimestamp:
			h.needsTS = true
		case segID:
			h.needsID = true
		}
	}
	if h.needsTS && spec.TimestampHeader == "" && spec.TimestampKey == "" {
		return nil, fmt.Errorf("content uses {timestamp} but neither timestamp_header nor timestamp_key is set")
	}
	if h.needsID && spec.IDHeader == "" {
		return nil, fmt.Errorf("content uses {id} but id_header is not set")
	}
	if spec.Tolerance > 0 && spec.TimestampHeader == "" && spec.TimestampKey == "" {
		return nil, fmt.Errorf("a tolerance needs a timestamp (timestamp_header or timestamp_key)")
	}
	switch spec.TimestampUnit {
	case "", "s":
		h.timestampDiv = 1
	case "ms":
		h.timestampDiv = 1000
	default:
		return nil, fmt.Errorf("unknown timestamp_unit %q (use s or ms)", spec.TimestampUnit)
	}
	if len(secrets) == 0 {
		return nil, fmt.Errorf("no secrets")
	}
	for i, s := range secrets {
		key, err := DecodeSecret(spec.SecretEncoding, s)
		if err != nil {
			return nil, fmt.Errorf("secret %d: %w", i+1, err)
		}
		h.keys = append(h.keys, key)
		h.macs = append(h.macs, &sync.Pool{New: func() any { return hmac.New(h.newHash, key) }})
	}
	return h, nil
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
	default:
		return nil, fmt.Errorf("unknown secret_encoding %q (use raw, base64, hex or whsec)", encoding)
	}
}

func decodeBase64(s string) ([]byte, error) {
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		return b, nil
	}
	return base64.RawStdEncoding.DecodeString(s)
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
		var kind segmentKind
		switch name {
		case "body":
			kind = segBody
		case "timestamp":
			kind = segTimestamp
		case "id":
			kind = segID
		case "url":
			kind = segURL
		case "method":
			kind = segMethod
		default:
			return nil, fmt.Errorf("content: unknown variable {%s} (use {body}, {timestamp}, {id}, {url}, {method})", name)
		}
		segs = append(segs, segment{kind: kind})
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

// Verify implements Scheme.
func (h *HMAC) Verify(r *Request) error {
	values := r.Header.Values(h.spec.Header)
	if len(values) == 0 || (len(values) == 1 && strings.TrimSpace(values[0]) == "") {
		return ErrMissingSignature
	}
	var p parsed
	if err := h.parseHeader(values, &p); err != nil {
		return err
	}
	ts := p.timestamp
	if h.spec.TimestampHeader != "" {
		ts = r.Header.Get(h.spec.TimestampHeader)
	}
	if h.needsTS || h.spec.Tolerance > 0 {
		if err := h.checkTimestamp(ts, r.Now); err != nil {
			return err
		}
	}
	id := ""
	if h.needsID {
		id = r.Header.Get(h.spec.IDHeader)
		if id == "" {
			return ErrMalformedSignature
		}
	}
	var sum [sha512.Size]byte
	for i, pool := range h.macs {
		mac := pool.Get().(hash.Hash)
		mac.Reset()
		h.writeContent(mac, r, ts, id)
		digest := mac.Sum(sum[:0])
		h.macs[i].Put(mac)
		for _, c := range p.candidates[:p.n] {
			if hmac.Equal(digest, c) {
				return nil
			}
		}
	}
	return ErrInvalidSignature
}

func (h *HMAC) parseHeader(values []string, p *parsed) error {
	for _, v := range values {
		if h.spec.SignatureKey != "" {
			sep := h.spec.PairSeparator
			if sep == "" {
				sep = ","
			}
			for part := range strings.SplitSeq(v, sep) {
				key, val, ok := strings.Cut(strings.TrimSpace(part), "=")
				if !ok {
					continue
				}
				switch key {
				case h.spec.TimestampKey:
					if p.timestamp != "" && p.timestamp != val {
						return ErrMalformedSignature
					}
					p.timestamp = val
				case h.spec.SignatureKey:
					h.addCandidate(p, val)
				}
			}
			continue
		}
		if h.spec.Separator == "" {
			h.addCandidate(p, strings.TrimSpace(v))
			continue
		}
		for part := range strings.SplitSeq(v, h.spec.Separator) {
			h.addCandidate(p, strings.TrimSpace(part))
		}
	}
	if p.n == 0 {
		return ErrMalformedSignature
	}
	return nil
}

func (h *HMAC) addCandidate(p *parsed, v string) {
	if p.n == maxCandidates {
		return
	}
	if h.spec.Prefix != "" {
		rest, ok := strings.CutPrefix(v, h.spec.Prefix)
		if !ok {
			return
		}
		v = rest
	}
	sig, err := h.decode(v)
	if err != nil || len(sig) != h.sigSize {
		return
	}
	p.candidates[p.n] = sig
	p.n++
}

func (h *HMAC) checkTimestamp(ts string, now time.Time) error {
	n, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || n <= 0 {
		return ErrMissingTimestamp
	}
	if h.spec.Tolerance <= 0 {
		return nil
	}
	var at time.Time
	if h.timestampDiv == 1000 {
		at = time.UnixMilli(n)
	} else {
		at = time.Unix(n, 0)
	}
	diff := now.Sub(at)
	if diff < 0 {
		diff = -diff
	}
	if diff > h.spec.Tolerance {
		return ErrStaleTimestamp
	}
	return nil
}

func (h *HMAC) writeContent(w hash.Hash, r *Request, ts, id string) {
	for _, s := range h.content {
		switch s.kind {
		case segLiteral:
			w.Write(s.literal)
		case segBody:
			w.Write(r.Body)
		case segTimestamp:
			w.Write([]byte(ts))
		case segID:
			w.Write([]byte(id))
		case segURL:
			w.Write([]byte(r.URL))
		case segMethod:
			w.Write([]byte(r.Method))
		}
	}
}

// Message is what Sign needs to produce a signature.
type Message struct {
	Body   []byte
	Method string
	URL    string
	ID     string
	Time   time.Time
}

// Sign returns the headers that make msg verify with the given secret. It is
// the inverse of Verify, used by `hookgate send` and by tests.
func (h *HMAC) Sign(secret string, msg Message) (http.Header, error) {
	key, err := DecodeSecret(h.spec.SecretEncoding, secret)
	if err != nil {
		return nil, err
	}
	ts := strconv.FormatInt(msg.Time.Unix(), 10)
	if h.timestampDiv == 1000 {
		ts = strconv.FormatInt(msg.Time.UnixMilli(), 10)
	}
	mac := hmac.New(h.newHash, key)
	h.writeContent(mac, &Request{Body: msg.Body, Method: msg.Method, URL: msg.URL}, ts, msg.ID)
	sig := h.spec.Prefix + h.encode(mac.Sum(nil))
	out := http.Header{}
	if h.spec.SignatureKey != "" {
		sep := h.spec.PairSeparator
		if sep == "" {
			sep = ","
		}
		value := h.spec.SignatureKey + "=" + sig
		if h.spec.TimestampKey != "" {
			value = h.spec.TimestampKey + "=" + ts + sep + value
		}
		out.Set(h.spec.Header, value)
	} else {
		out.Set(h.spec.Header, sig)
	}
	if h.spec.TimestampHeader != "" {
		out.Set(h.spec.TimestampHeader, ts)
	}
	if h.spec.IDHeader != "" {
		out.Set(h.spec.IDHeader, msg.ID)
	}
	return out, nil
}
