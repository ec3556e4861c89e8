package verify

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Schemes whose signed content is not a template over the request: they
// read form fields, JSON fields or the URL. Each still checks the signature
// over bytes taken from the raw request, compared in constant time.

// twilio signs the full URL followed by every POST parameter, sorted by
// name, as name+value; HMAC-SHA1, base64, X-Twilio-Signature. JSON bodies
// are signed through a bodySHA256 query parameter instead. Like Twilio's own
// SDKs it accepts the URL with and without the default port.
type twilio struct{ secrets [][]byte }

// secretBytes turns configured secrets into keys used as they are.
func secretBytes(secrets []string) ([][]byte, error) {
	if len(secrets) == 0 {
		return nil, fmt.Errorf("no secrets")
	}
	out := make([][]byte, len(secrets))
	for i, s := range secrets {
		out[i] = []byte(s)
	}
	return out, nil
}

func newTwilio(secrets []string, _ Options) (Scheme, error) {
	keys, err := secretBytes(secrets)
	return &twilio{secrets: keys}, err
}

func (t *twilio) Verify(r *Request) (Result, error) { return Result{}, t.check(r) }

func (t *twilio) check(r *Request) error {
	header := r.Header.Get("X-Twilio-Signature")
	if header == "" {
		return ErrMissingSignature
	}
	sig, err := base64.StdEncoding.DecodeString(header)
	if err != nil || len(sig) != sha1.Size {
		return ErrMalformedSignature
	}
	u, err := url.Parse(r.URL)
	if err != nil {
		return ErrMalformedSignature
	}
	var params url.Values
	if bodyHash := u.Query().Get("bodySHA256"); bodyHash != "" {
		want, err := hex.DecodeString(bodyHash)
		sum := sha256.Sum256(r.Body)
		if err != nil || subtle.ConstantTimeCompare(want, sum[:]) != 1 {
			return ErrInvalidSignature
		}
	} else if isForm(r.Header) {
		params, err = url.ParseQuery(string(r.Body))
		if err != nil {
			return ErrMalformedSignature
		}
	} else if len(r.Body) > 0 {
		// Neither form parameters nor bodySHA256: the signature would cover
		// the URL only, and any body could ride on a captured one.
		return ErrInvalidSignature
	}
	for _, candidate := range twilioURLVariants(u) {
		for _, secret := range t.secrets {
			if hmac.Equal(twilioDigest(secret, candidate, params), sig) {
				return nil
			}
		}
	}
	return ErrInvalidSignature
}

func isForm(h http.Header) bool {
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	return mt == "application/x-www-form-urlencoded"
}

func twilioDigest(secret []byte, u string, params url.Values) []byte {
	mac := hmac.New(sha1.New, secret)
	mac.Write([]byte(u))
	names := make([]string, 0, len(params))
	for name := range params {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		// Repeated values are sorted and counted once, as Twilio's SDKs do.
		values := slices.Clone(params[name])
		slices.Sort(values)
		for _, v := range slices.Compact(values) {
			mac.Write([]byte(name))
			mac.Write([]byte(v))
		}
	}
	return mac.Sum(nil)
}

// twilioURLVariants returns the URL as given, and with its default port
// added or removed.
func twilioURLVariants(u *url.URL) []string {
	out := []string{u.String()}
	alt := *u
	defaultPort := map[string]string{"https": "443", "http": "80"}[u.Scheme]
	switch {
	case u.Port() == "" && defaultPort != "":
		alt.Host = u.Hostname() + ":" + defaultPort
	case u.Port() == defaultPort:
		alt.Host = u.Hostname()
	default:
		return out
	}
	return append(out, alt.String())
}

// Sign signs a request as Twilio does.
func (t *twilio) Sign(key string, msg Message) (http.Header, error) {
	u, err := url.Parse(msg.URL)
	if err != nil {
		return nil, err
	}
	var params url.Values
	switch {
	case u.Query().Get("bodySHA256") != "":
	case isForm(msg.Header):
		params, err = url.ParseQuery(string(msg.Body))
		if err != nil {
			return nil, err
		}
	case len(msg.Body) > 0:
		return nil, errors.New("twilio signs a body that is not a form through bodySHA256 in the URL")
	}
	h := http.Header{}
	h.Set("X-Twilio-Signature", base64.StdEncoding.EncodeToString(twilioDigest([]byte(key), msg.URL, params)))
	return h, nil
}

// mailgun puts the signature in the JSON body: signature.timestamp,
// signature.token and signature.signature, the hex HMAC-SHA256 of
// timestamp+token under the webhook signing key.
type mailgun struct {
	keys      [][]byte
	tolerance time.Duration
}

func newMailgun(secrets []string, opts Options) (Scheme, error) {
	keys, err := secretBytes(secrets)
	m := &mailgun{keys: keys, tolerance: 5 * time.Minute}
	if opts.Tolerance > 0 {
		m.tolerance = opts.Tolerance
	}
	return m, err
}

type mailgunSignature struct {
	Timestamp string `json:"timestamp"`
	Token     string `json:"token"`
	Signature string `json:"signature"`
}

// Verify returns the token as single-use: the signature covers it, not the
// body, so a captured signature could otherwise carry any body.
func (m *mailgun) Verify(r *Request) (Result, error) {
	s, err := mailgunFields(r.Body)
	if err != nil {
		return Result{}, err
	}
	sig, err := hex.DecodeString(s.Signature)
	if err != nil || len(sig) != sha256.Size || s.Token == "" {
		return Result{}, ErrMalformedSignature
	}
	ts, err := strconv.ParseInt(s.Timestamp, 10, 64)
	if err != nil {
		return Result{}, ErrMissingTimestamp
	}
	for _, key := range m.keys {
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(s.Timestamp))
		mac.Write([]byte(s.Token))
		if hmac.Equal(mac.Sum(nil), sig) {
			if err := CheckTolerance(time.Unix(ts, 0), r.Now, m.tolerance); err != nil {
				return Result{}, err
			}
			// Valid for the tolerance on either side of its timestamp.
			return Result{SingleUseToken: s.Token, SingleUseWindow: 2 * m.tolerance}, nil
		}
	}
	return Result{}, ErrInvalidSignature
}

// mailgunFields reads body.signature with exact key matching, from a body
// that repeats no key, exactly or by case (see strictJSON).
func mailgunFields(body []byte) (*mailgunSignature, error) {
	top, ok := object(body)
	if !ok {
		return nil, ErrMissingSignature
	}
	if !strictJSON(body) {
		return nil, ErrMalformedSignature
	}
	m, ok := object(top["signature"])
	if !ok {
		return nil, ErrMissingSignature
	}
	s := &mailgunSignature{}
	for _, f := range []struct {
		dst *string
		key string
	}{{&s.Timestamp, "timestamp"}, {&s.Token, "token"}, {&s.Signature, "signature"}} {
		if *f.dst, ok = stringField(m, f.key); !ok {
			return nil, ErrMalformedSignature
		}
	}
	return s, nil
}

// MailgunSignature returns the signature object Mailgun puts in a body.
func MailgunSignature(key, token string, at time.Time) map[string]string {
	ts := strconv.FormatInt(at.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write([]byte(ts + token))
	return map[string]string{"timestamp": ts, "token": token, "signature": hex.EncodeToString(mac.Sum(nil))}
}

// adyen signs each notification item: the HMAC-SHA256, under the hex key,
// of pspReference:originalReference:merchantAccountCode:merchantReference:
// value:currency:eventCode:success, base64 in additionalData.hmacSignature.
type adyen struct{ keys [][]byte }

func newAdyen(secrets []string, _ Options) (Scheme, error) {
	if len(secrets) == 0 {
		return nil, fmt.Errorf("no secrets")
	}
	a := &adyen{}
	for i, s := range secrets {
		key, err := hex.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("secret %d: the Adyen HMAC key is hex", i+1)
		}
		a.keys = append(a.keys, key)
	}
	return a, nil
}

// AdyenItem is the part of a notification item that is signed.
type AdyenItem struct {
	PspReference        string `json:"pspReference"`
	OriginalReference   string `json:"originalReference"`
	MerchantAccountCode string `json:"merchantAccountCode"`
	MerchantReference   string `json:"merchantReference"`
	Amount              struct {
		Value    json.Number `json:"value"`
		Currency string      `json:"currency"`
	} `json:"amount"`
	EventCode      string            `json:"eventCode"`
	Success        string            `json:"success"`
	AdditionalData map[string]string `json:"additionalData"`
}

// SignedData is the colon-joined string Adyen signs.
func (it *AdyenItem) SignedData() string {
	return strings.Join([]string{it.PspReference, it.OriginalReference, it.MerchantAccountCode, it.MerchantReference,
		it.Amount.Value.String(), it.Amount.Currency, it.EventCode, it.Success}, ":")
}

// Verify reads the notification with exact key matching and refuses a body
// that repeats a key or holds keys equal but for case: the fields the HMAC
// covers must be the ones every case-sensitive reader sees. The top-level
// live flag is not covered (see the preset's LiveUnsigned).
func (a *adyen) Verify(r *Request) (Result, error) { return Result{}, a.check(r) }

func (a *adyen) check(r *Request) error {
	items, err := strictItems(r.Body, "notificationItems")
	if err != nil {
		return err
	}
	for _, wrapped := range items {
		it, sig, err := adyenItem(wrapped["NotificationRequestItem"])
		if err != nil {
			return err
		}
		if !a.matches([]byte(it.SignedData()), sig) {
			return ErrInvalidSignature
		}
	}
	return nil
}

// adyenItem reads the signed fields of one NotificationRequestItem, each
// under its exact name, and its signature.
func adyenItem(raw json.RawMessage) (*AdyenItem, []byte, error) {
	m, ok := object(raw)
	if !ok {
		return nil, nil, ErrMissingSignature
	}
	it := &AdyenItem{}
	fields := []struct {
		dst *string
		key string
	}{
		{&it.PspReference, "pspReference"}, {&it.OriginalReference, "originalReference"},
		{&it.MerchantAccountCode, "merchantAccountCode"}, {&it.MerchantReference, "merchantReference"},
		{&it.EventCode, "eventCode"}, {&it.Success, "success"},
	}
	for _, f := range fields {
		if *f.dst, ok = stringField(m, f.key); !ok {
			return nil, nil, ErrMalformedSignature
		}
	}
	if raw, present := m["amount"]; present {
		amount, ok := object(raw)
		if !ok {
			return nil, nil, ErrMalformedSignature
		}
		if v, present := amount["value"]; present && json.Unmarshal(v, &it.Amount.Value) != nil {
			return nil, nil, ErrMalformedSignature
		}
		if it.Amount.Currency, ok = stringField(amount, "currency"); !ok {
			return nil, nil, ErrMalformedSignature
		}
	}
	extra, ok := object(m["additionalData"])
	if !ok {
		return nil, nil, ErrMissingSignature
	}
	encoded, _ := stringField(extra, "hmacSignature")
	sig, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil || len(sig) != sha256.Size {
		return nil, nil, ErrMalformedSignature
	}
	return it, sig, nil
}

func (a *adyen) matches(data, sig []byte) bool {
	for _, key := range a.keys {
		mac := hmac.New(sha256.New, key)
		mac.Write(data)
		if hmac.Equal(mac.Sum(nil), sig) {
			return true
		}
	}
	return false
}

// AdyenSignature returns the base64 signature of a notification item.
func AdyenSignature(hexKey string, it *AdyenItem) (string, error) {
	key, err := hex.DecodeString(hexKey)
	if err != nil {
		return "", err
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(it.SignedData()))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// graphClientState checks Microsoft Graph change notifications: each item
// of value[] carries the clientState given when subscribing.
type graphClientState struct{ secrets [][]byte }

func newGraphClientState(secrets []string, _ Options) (Scheme, error) {
	keys, err := secretBytes(secrets)
	if err != nil {
		return nil, fmt.Errorf("no secrets (the clientState of the subscription)")
	}
	return &graphClientState{secrets: keys}, nil
}

func (g *graphClientState) Verify(r *Request) (Result, error) { return Result{}, g.check(r) }

func (g *graphClientState) check(r *Request) error {
	items, err := strictItems(r.Body, "value")
	if err != nil {
		return err
	}
	for _, item := range items {
		if _, present := item["clientState"]; !present {
			return ErrMissingSignature
		}
		state, ok := stringField(item, "clientState")
		if !ok {
			return ErrMalformedSignature
		}
		match := 0
		for _, s := range g.secrets {
			match |= subtle.ConstantTimeCompare([]byte(state), s)
		}
		if match != 1 {
			return ErrInvalidSignature
		}
	}
	return nil
}

// withBodyTimestamp wraps a scheme whose timestamp sits in a top-level JSON
// field of the (already verified) body, such as Linear's webhookTimestamp.
type withBodyTimestamp struct {
	Scheme
	field     string
	unit      string
	tolerance time.Duration
}

func (w *withBodyTimestamp) Verify(r *Request) (Result, error) {
	res, err := w.Scheme.Verify(r)
	if err != nil {
		return Result{}, err
	}
	var raw json.Number
	fields := jsonFields(r.Body)
	if fields == nil || json.Unmarshal(fields[w.field], &raw) != nil {
		return Result{}, ErrMissingTimestamp
	}
	n, err := raw.Int64()
	if err != nil {
		return Result{}, ErrMissingTimestamp
	}
	at := time.Unix(n, 0)
	if w.unit == "ms" {
		at = time.UnixMilli(n)
	}
	if err := CheckTolerance(at, r.Now, w.tolerance); err != nil {
		return Result{}, err
	}
	return res, nil
}

// Sign delegates to the wrapped scheme.
func (w *withBodyTimestamp) Sign(key string, msg Message) (http.Header, error) {
	s, ok := w.Scheme.(Signer)
	if !ok {
		return nil, fmt.Errorf("scheme cannot sign")
	}
	return s.Sign(key, msg)
}

// strictItems reads the objects listed under key in a JSON body whose keys
// are all distinct, also by case: what a scheme checks in them is then what
// every case-sensitive reader sees.
func strictItems(body []byte, key string) ([]map[string]json.RawMessage, error) {
	top, ok := object(body)
	if !ok {
		return nil, ErrMissingSignature
	}
	if !strictJSON(body) {
		return nil, ErrMalformedSignature
	}
	items, ok := objects(top[key])
	if !ok || len(items) == 0 {
		return nil, ErrMissingSignature
	}
	return items, nil
}
