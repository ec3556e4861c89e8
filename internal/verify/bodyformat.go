package verify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"unicode"
)

// Body formats: how a provider encodes its bodies. Hookgate reads a body in
// its provider's format, never in the one the request's Content-Type names:
// no scheme signs that header, so following it would let a replayed request
// be read differently from the original.
const (
	// FormatJSON is one JSON value.
	FormatJSON = "json"
	// FormatForm is application/x-www-form-urlencoded.
	FormatForm = "form"
	// FormatEither is JSON when the body starts like JSON, a form otherwise:
	// decided by the signed bytes alone.
	FormatEither = "either"
)

// CheckFormat returns an error for a format that is not json, form or either.
func CheckFormat(format string) error {
	switch format {
	case FormatJSON, FormatForm, FormatEither:
		return nil
	}
	return fmt.Errorf("unknown format %q (use json, form or either)", format)
}

// LooksJSON reports whether a body starts like a JSON object or array.
func LooksJSON(body []byte) bool {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	return len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[')
}

// WellFormed reports whether the whole body is one value of the format:
// for JSON one value with nothing but whitespace after it, for a form only
// the bytes an urlencoder produces. The glue a SHA-256 length extension
// inserts (0x80, zero bytes, a binary length) is neither.
func WellFormed(format string, body []byte) bool {
	if format == FormatEither {
		format = FormatForm
		if LooksJSON(body) {
			format = FormatJSON
		}
	}
	if format == FormatJSON {
		return json.Valid(body)
	}
	for _, c := range body {
		if c <= ' ' || c >= 0x7f {
			return false
		}
	}
	_, err := url.ParseQuery(string(body))
	return err == nil
}

// strictJSON reports whether body is one JSON value in which no object holds
// a key twice, exactly or by case. encoding/json matches struct fields
// without regard to case and keeps the last match, so such a body could show
// a scheme one value and a case-sensitive reader (the backend, a rule, the
// dedup key) another.
func strictJSON(body []byte) bool {
	if !json.Valid(body) {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	// One frame per open object or array; keys holds an object's folded keys.
	type frame struct {
		keys    map[string]bool
		wantKey bool
	}
	var open []*frame
	valueDone := func() {
		if n := len(open); n > 0 && open[n-1].keys != nil {
			open[n-1].wantKey = true
		}
	}
	for {
		t, err := dec.Token()
		if err == io.EOF {
			return len(open) == 0
		}
		if err != nil {
			return false
		}
		if d, ok := t.(json.Delim); ok {
			switch d {
			case '{':
				open = append(open, &frame{keys: map[string]bool{}, wantKey: true})
			case '[':
				open = append(open, &frame{})
			default:
				open = open[:len(open)-1]
				valueDone()
			}
			continue
		}
		if n := len(open); n > 0 && open[n-1].wantKey {
			folded := foldKey(t.(string))
			if open[n-1].keys[folded] {
				return false
			}
			open[n-1].keys[folded] = true
			open[n-1].wantKey = false
			continue
		}
		valueDone()
	}
}

// foldKey maps every key that bytes.EqualFold (and so encoding/json's field
// matching) holds equal to one string: each rune becomes the smallest rune
// of its case-folding orbit.
func foldKey(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		low := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			low = min(low, f)
		}
		b.WriteRune(low)
	}
	return b.String()
}

// object decodes a JSON object whose keys are matched exactly, as maps are
// (and struct fields are not).
func object(raw json.RawMessage) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return nil, false
	}
	return m, true
}

// objects decodes a JSON array of objects.
func objects(raw json.RawMessage) ([]map[string]json.RawMessage, bool) {
	var list []map[string]json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil, false
	}
	return list, true
}

// stringField reads an optional string member: "" when absent, not ok when
// present but not a string.
func stringField(m map[string]json.RawMessage, key string) (string, bool) {
	raw, present := m[key]
	if !present {
		return "", true
	}
	var s string
	return s, json.Unmarshal(raw, &s) == nil
}
