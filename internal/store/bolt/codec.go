package bolt

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/hookgate/hookgate/internal/store"
)

// Records are encoded compactly: a format byte, then the fields that are
// set, each as a tag byte and its value. Strings and lists carry a uvarint
// length, integers are varints and times are varint Unix nanoseconds. A
// header name that commonNames lists is written as a zero length (no
// header has an empty name) and its index there; a delivery's state is a
// byte when stateCodes has it.
// Records written before this encoding are JSON objects, which never start
// with the format byte, so both are read.
const recordFormat = 0x01

// Event record tags.
const (
	evSource = iota + 1
	evReceivedAt
	evMethod
	evPath
	evRawQuery
	evHost
	evRemoteAddr
	evProto
	evViaTrustedProxy
	evHeader
	evDedupKey
	evUnrouted
	evQuarantined
	evHandshake
	evTrace
	evBody
	evOrigin
	evSecret
	evSearch
)

// Delivery record tags.
const (
	dlUpstream = iota + 1
	dlRoute
	dlState
	dlAttempts
	dlNextAt
	dlLastStatus
	dlLastError
	dlUpdatedAt
	dlRetryBase
	dlReplayedAt
	dlOrderKey
	dlPath
	dlSetHeaders
	dlRemoveHeaders
	dlTransformed
	dlStateCode
)

// Attempt record tags.
const (
	atN = iota + 1
	atAt
	atDuration
	atStatus
	atError
	atResponse
)

func putString(b []byte, tag byte, s string) []byte {
	if s == "" {
		return b
	}
	b = append(b, tag)
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func putInt(b []byte, tag byte, v int64) []byte {
	if v == 0 {
		return b
	}
	return binary.AppendVarint(append(b, tag), v)
}

func putTime(b []byte, tag byte, t time.Time) []byte {
	if t.IsZero() {
		return b
	}
	return binary.AppendVarint(append(b, tag), t.UnixNano())
}

func putBool(b []byte, tag byte, v bool) []byte {
	if !v {
		return b
	}
	return append(b, tag)
}

// commonNames are header names that most requests carry, in canonical form.
// Append only: a name's index is stored.
var commonNames = []string{
	"Content-Type", "Content-Length", "User-Agent", "Accept", "Accept-Encoding", "Connection",
	"X-Forwarded-For", "X-Forwarded-Proto", "X-Forwarded-Host", "X-Real-Ip", "Traceparent", "Tracestate",
	"Stripe-Signature",
	"X-Github-Event", "X-Github-Delivery", "X-Github-Hook-Id", "X-Github-Hook-Installation-Target-Id",
	"X-Github-Hook-Installation-Target-Type", "X-Hub-Signature", "X-Hub-Signature-256",
	"Webhook-Id", "Webhook-Timestamp", "Webhook-Signature", "Svix-Id", "Svix-Timestamp", "Svix-Signature",
	"X-Shopify-Hmac-Sha256", "X-Shopify-Topic", "X-Shopify-Shop-Domain", "X-Shopify-Api-Version",
	"X-Shopify-Webhook-Id", "X-Shopify-Event-Id", "X-Shopify-Triggered-At",
	"X-Slack-Signature", "X-Slack-Request-Timestamp",
}

var commonIndex = func() map[string]byte {
	m := make(map[string]byte, len(commonNames))
	for i, name := range commonNames {
		m[name] = byte(i)
	}
	return m
}()

func putHeaderName(b []byte, name string) []byte {
	if i, ok := commonIndex[name]; ok {
		return append(b, 0, i)
	}
	b = binary.AppendUvarint(b, uint64(len(name)))
	return append(b, name...)
}

// stateCodes are the delivery states written as one byte; append only.
var stateCodes = []store.State{store.StatePending, store.StateDelivered, store.StateDead, store.StateCanceled}

func putStrings(b []byte, ss []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

func putStringMap(b []byte, tag byte, m map[string]string) []byte {
	if len(m) == 0 {
		return b
	}
	b = binary.AppendUvarint(append(b, tag), uint64(len(m)))
	for k, v := range m {
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
		b = binary.AppendUvarint(b, uint64(len(v)))
		b = append(b, v...)
	}
	return b
}

// encodeEvent encodes an event's metadata, without its body or where the
// body is: appendBodyRef adds that.
func encodeEvent(e *store.Event) []byte {
	// Room for appendBodyRef, so the record is built in one allocation.
	b := make([]byte, 0, 320)
	b = append(b, recordFormat)
	b = putString(b, evSource, e.Source)
	b = putTime(b, evReceivedAt, e.ReceivedAt)
	b = putString(b, evMethod, e.Method)
	b = putString(b, evPath, e.Path)
	b = putString(b, evRawQuery, e.RawQuery)
	b = putString(b, evHost, e.Host)
	b = putString(b, evRemoteAddr, e.RemoteAddr)
	b = putString(b, evProto, e.Proto)
	b = putBool(b, evViaTrustedProxy, e.ViaTrustedProxy)
	if len(e.Header) > 0 {
		b = binary.AppendUvarint(append(b, evHeader), uint64(len(e.Header)))
		for k, vs := range e.Header {
			b = putHeaderName(b, k)
			b = putStrings(b, vs)
		}
	}
	b = putString(b, evDedupKey, e.DedupKey)
	b = putBool(b, evUnrouted, e.Unrouted)
	b = putString(b, evQuarantined, e.Quarantined)
	b = putString(b, evHandshake, e.Handshake)
	b = putStringMap(b, evTrace, e.Trace)
	b = putString(b, evOrigin, e.Origin)
	if e.Secret > 0 {
		b = binary.AppendUvarint(append(b, evSecret), uint64(e.Secret))
	}
	b = putStringMap(b, evSearch, e.Search)
	return b
}

// appendBodyRef returns an encoded event that says where its body is. It
// writes past meta's length, in meta's spare capacity when it has room:
// meta itself is left as it was, so a write that runs again (its batch
// retried) appends the same bytes to it again.
func appendBodyRef(meta []byte, ref bodyRef) []byte {
	b := append(meta, evBody)
	b = binary.AppendUvarint(b, ref.segment)
	b = binary.AppendUvarint(b, uint64(ref.offset))
	return binary.AppendUvarint(b, uint64(ref.length))
}

func encodeDelivery(d *store.Delivery) []byte {
	b := make([]byte, 0, 64)
	b = append(b, recordFormat)
	b = putString(b, dlUpstream, d.Upstream)
	b = putString(b, dlRoute, d.Route)
	if i := slices.Index(stateCodes, d.State); i >= 0 {
		b = append(b, dlStateCode, byte(i))
	} else {
		b = putString(b, dlState, string(d.State))
	}
	b = putInt(b, dlAttempts, int64(d.Attempts))
	b = putTime(b, dlNextAt, d.NextAt)
	b = putInt(b, dlLastStatus, int64(d.LastStatus))
	b = putString(b, dlLastError, d.LastError)
	b = putTime(b, dlUpdatedAt, d.UpdatedAt)
	b = putInt(b, dlRetryBase, int64(d.RetryBase))
	b = putTime(b, dlReplayedAt, d.ReplayedAt)
	b = putString(b, dlOrderKey, d.OrderKey)
	b = putString(b, dlPath, d.Path)
	b = putStringMap(b, dlSetHeaders, d.SetHeaders)
	if len(d.RemoveHeaders) > 0 {
		b = putStrings(append(b, dlRemoveHeaders), d.RemoveHeaders)
	}
	b = putBool(b, dlTransformed, d.Transformed)
	return b
}

func encodeAttempt(a *store.Attempt) []byte {
	b := make([]byte, 0, 32+len(a.Error)+len(a.Response))
	b = append(b, recordFormat)
	b = putInt(b, atN, int64(a.N))
	b = putTime(b, atAt, a.At)
	b = putInt(b, atDuration, int64(a.Duration))
	b = putInt(b, atStatus, int64(a.Status))
	b = putString(b, atError, a.Error)
	b = putString(b, atResponse, a.Response)
	return b
}

var errTruncated = errors.New("record truncated")

// reader decodes one record; the first error sticks.
type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errTruncated
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = errTruncated
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) string() string {
	n := r.uvarint()
	if r.err != nil {
		return ""
	}
	if n > uint64(len(r.b)) {
		r.err = errTruncated
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *reader) byte() byte {
	if r.err != nil {
		return 0
	}
	if len(r.b) == 0 {
		r.err = errTruncated
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

// headerName reads a header name written by putHeaderName.
func (r *reader) headerName() string {
	if len(r.b) > 0 && r.b[0] == 0 {
		r.b = r.b[1:]
		if i := int(r.byte()); r.err == nil {
			if i >= len(commonNames) {
				r.err = fmt.Errorf("unknown common header %d", i)
				return ""
			}
			return commonNames[i]
		}
		return ""
	}
	return r.string()
}

func (r *reader) time() time.Time { return time.Unix(0, r.varint()) }

func (r *reader) strings() []string {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.err = errTruncated
		return nil
	}
	out := make([]string, 0, n)
	for range n {
		out = append(out, r.string())
	}
	return out
}

func (r *reader) stringMap() map[string]string {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.err = errTruncated
		return nil
	}
	m := make(map[string]string, n)
	for range n {
		k := r.string()
		m[k] = r.string()
	}
	return m
}

// next returns the next field's tag, or 0 at the end of the record.
func (r *reader) next() byte {
	if r.err != nil || len(r.b) == 0 {
		return 0
	}
	tag := r.b[0]
	r.b = r.b[1:]
	return tag
}

func unknownTag(kind string, tag byte) error {
	return fmt.Errorf("%s record has unknown field %d (written by a newer hookgate?)", kind, tag)
}

// decodeEvent reads an event's metadata and says where its body is; ok is
// false for a record that keeps its body in the bodies bucket (written
// before the body log).
func decodeEvent(v []byte, e *store.Event) (ref bodyRef, ok bool, err error) {
	if len(v) == 0 || v[0] != recordFormat {
		if err := json.Unmarshal(v, e); err != nil {
			return ref, false, fmt.Errorf("decoding event: %w", err)
		}
		return ref, false, nil
	}
	r := reader{b: v[1:]}
	for tag := r.next(); tag != 0; tag = r.next() {
		switch tag {
		case evSource:
			e.Source = r.string()
		case evReceivedAt:
			e.ReceivedAt = r.time()
		case evMethod:
			e.Method = r.string()
		case evPath:
			e.Path = r.string()
		case evRawQuery:
			e.RawQuery = r.string()
		case evHost:
			e.Host = r.string()
		case evRemoteAddr:
			e.RemoteAddr = r.string()
		case evProto:
			e.Proto = r.string()
		case evViaTrustedProxy:
			e.ViaTrustedProxy = true
		case evHeader:
			n := r.uvarint()
			if n > uint64(len(r.b)) {
				r.err = errTruncated
				break
			}
			e.Header = make(http.Header, n)
			for range n {
				k := r.headerName()
				e.Header[k] = r.strings()
			}
		case evDedupKey:
			e.DedupKey = r.string()
		case evUnrouted:
			e.Unrouted = true
		case evQuarantined:
			e.Quarantined = r.string()
		case evHandshake:
			e.Handshake = r.string()
		case evTrace:
			e.Trace = r.stringMap()
		case evOrigin:
			e.Origin = r.string()
		case evSecret:
			e.Secret = int(r.uvarint())
		case evSearch:
			e.Search = r.stringMap()
		case evBody:
			ref.segment = r.uvarint()
			ref.offset = int64(r.uvarint())
			ref.length = int(r.uvarint())
			ok = true
		default:
			return ref, false, unknownTag("event", tag)
		}
	}
	if r.err != nil {
		return ref, false, fmt.Errorf("decoding event: %w", r.err)
	}
	return ref, ok, nil
}

func decodeDelivery(v []byte, d *store.Delivery) error {
	if len(v) == 0 || v[0] != recordFormat {
		if err := json.Unmarshal(v, d); err != nil {
			return fmt.Errorf("decoding delivery: %w", err)
		}
		return nil
	}
	r := reader{b: v[1:]}
	for tag := r.next(); tag != 0; tag = r.next() {
		switch tag {
		case dlUpstream:
			d.Upstream = r.string()
		case dlRoute:
			d.Route = r.string()
		case dlState:
			d.State = store.State(r.string())
		case dlStateCode:
			if i := int(r.byte()); i < len(stateCodes) {
				d.State = stateCodes[i]
			} else if r.err == nil {
				r.err = fmt.Errorf("unknown state %d", i)
			}
		case dlAttempts:
			d.Attempts = int(r.varint())
		case dlNextAt:
			d.NextAt = r.time()
		case dlLastStatus:
			d.LastStatus = int(r.varint())
		case dlLastError:
			d.LastError = r.string()
		case dlUpdatedAt:
			d.UpdatedAt = r.time()
		case dlRetryBase:
			d.RetryBase = int(r.varint())
		case dlReplayedAt:
			d.ReplayedAt = r.time()
		case dlOrderKey:
			d.OrderKey = r.string()
		case dlPath:
			d.Path = r.string()
		case dlSetHeaders:
			d.SetHeaders = r.stringMap()
		case dlRemoveHeaders:
			d.RemoveHeaders = r.strings()
		case dlTransformed:
			d.Transformed = true
		default:
			return unknownTag("delivery", tag)
		}
	}
	if r.err != nil {
		return fmt.Errorf("decoding delivery: %w", r.err)
	}
	return nil
}

func decodeAttempt(v []byte, a *store.Attempt) error {
	if len(v) == 0 || v[0] != recordFormat {
		if err := json.Unmarshal(v, a); err != nil {
			return fmt.Errorf("decoding attempt: %w", err)
		}
		return nil
	}
	r := reader{b: v[1:]}
	for tag := r.next(); tag != 0; tag = r.next() {
		switch tag {
		case atN:
			a.N = int(r.varint())
		case atAt:
			a.At = r.time()
		case atDuration:
			a.Duration = time.Duration(r.varint())
		case atStatus:
			a.Status = int(r.varint())
		case atError:
			a.Error = r.string()
		case atResponse:
			a.Response = r.string()
		default:
			return unknownTag("attempt", tag)
		}
	}
	if r.err != nil {
		return fmt.Errorf("decoding attempt: %w", r.err)
	}
	return nil
}
