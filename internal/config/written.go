package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"
)

// Caddy's JSON carries a configuration as written: placeholders stay
// unexpanded (so no secret reaches GET /config/ or autosave.json) and
// relative file names are Caddy's working directory's. A Routes read from
// JSON keeps those bytes and is decoded, placeholders expanded, when the
// handler provisions (ParseJSON); one built in Go is written from its
// fields.

// UnmarshalJSON keeps the document as written; ParseJSON decodes it.
func (r *Routes) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' || !json.Valid(data) {
		return errors.New("routes must be a JSON object: the keys of routes.yaml")
	}
	*r = Routes{written: bytes.Clone(data)}
	return nil
}

// MarshalJSON writes the document as it was written, or, for a Routes
// built in Go, its fields.
func (r *Routes) MarshalJSON() ([]byte, error) {
	if r.written != nil {
		return r.written, nil
	}
	type fields Routes // without these methods
	return json.Marshal((*fields)(r))
}

// Written is the JSON document the configuration stands for.
func (r *Routes) Written() (json.RawMessage, error) { return r.MarshalJSON() }

// WrittenRoutes is a configuration that carries a JSON document as it was
// written (Inline's output), for the Caddyfile adapter.
func WrittenRoutes(doc json.RawMessage) *Routes { return &Routes{written: doc} }

// The value types write themselves as they are read.

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

func (e Expr) MarshalJSON() ([]byte, error) { return json.Marshal(e.Src) }

func (r Refs) MarshalJSON() ([]byte, error) { return json.Marshal(r.Names) }

// IsZero reports an unset list, for omitzero.
func (r Refs) IsZero() bool { return r.Names == nil }

func (u URL) MarshalJSON() ([]byte, error) {
	if u.URL == nil {
		return []byte(`""`), nil
	}
	return json.Marshal(u.URL.String())
}

// IsZero reports an unset URL, for omitzero.
func (u URL) IsZero() bool { return u.URL == nil }

func (t Time) MarshalJSON() ([]byte, error) { return json.Marshal(t.Format(time.RFC3339)) }

func (r Rate) MarshalJSON() ([]byte, error) {
	return json.Marshal(strconv.FormatFloat(float64(r), 'f', -1, 64) + "/s")
}

func (r RetryOn) MarshalJSON() ([]byte, error) {
	var items []string
	codes := make([]int, 0, len(r.Codes))
	for c := range r.Codes {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	for _, c := range codes {
		items = append(items, strconv.Itoa(c))
	}
	if r.Class4xx {
		items = append(items, "4xx")
	}
	if r.Class5xx {
		items = append(items, "5xx")
	}
	if r.Network {
		items = append(items, "network")
	}
	return json.Marshal(items)
}

// IsZero reports an unset list, for omitzero.
func (r RetryOn) IsZero() bool {
	return len(r.Codes) == 0 && !r.Class4xx && !r.Class5xx && !r.Network
}

func (s Schema) MarshalJSON() ([]byte, error) {
	if s.Doc != nil {
		return json.Marshal(s.Doc)
	}
	return json.Marshal(s.File)
}

func (a AllowIPs) MarshalJSON() ([]byte, error) {
	if a.Entries == nil {
		return []byte("[]"), nil
	}
	return json.Marshal(a.Entries)
}

// IsZero reports an unset allowlist, for omitzero.
func (a AllowIPs) IsZero() bool { return !a.Set }

func (c Claim) MarshalJSON() ([]byte, error) {
	if c.Prefixes == nil {
		return []byte("[]"), nil
	}
	return json.Marshal(c.Prefixes)
}

// IsZero reports an unset claim, for omitzero.
func (c Claim) IsZero() bool { return !c.Set }

func (r IPRanges) MarshalJSON() ([]byte, error) {
	if r.Off {
		return []byte(`{"refresh":"off"}`), nil
	}
	return json.Marshal(map[string]Duration{"refresh": r.Refresh})
}

func (d Dedup) MarshalJSON() ([]byte, error) {
	if d.Disabled {
		return []byte(`"off"`), nil
	}
	type fields Dedup
	return json.Marshal(fields(d))
}

// IsZero reports a dedup block that changes nothing, for omitzero.
func (d Dedup) IsZero() bool {
	return !d.Disabled && d.Key.Src == "" && d.Window == 0 && d.ReplayDigest == nil
}

func (s Sources) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, src := range s {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(src.Name)
		body, err := json.Marshal(src)
		if err != nil {
			return nil, fmt.Errorf("source %s: %w", src.Name, err)
		}
		b.Write(name)
		b.WriteByte(':')
		b.Write(body)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
