package verify

import (
	"bytes"
	"compress/gzip"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
)

// numberedHeaders is DocuSign Connect's scheme: one HMAC-SHA256 base64 of
// the body per active key, in Prefix1, Prefix2, … Any header matching any
// configured key verifies. At most maxCandidates headers are read.
type numberedHeaders struct {
	prefix string
	keys   [][]byte
}

func newNumberedHeaders(prefix string) func([]string, Options) (Scheme, error) {
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

// keyedHMAC is an HMAC-SHA256 hex of the body with one of several apps'
// secrets, the app named by a header (Pusher's X-Pusher-Key, Stream's
// X-Api-Key). Secrets are APP_KEY:APP_SECRET. With gzipped, a body that is
// gzip (by its magic bytes) is verified over its inflated bytes, as
// Stream signs; what is forwarded is the body as received.
type keyedHMAC struct {
	keyHeader, sigHeader string
	gzipped              bool
	apps                 map[string][]byte
}

func newKeyedHMAC(keyHeader, sigHeader string, gzipped bool) func([]string, Options) (Scheme, error) {
	return func(secrets []string, _ Options) (Scheme, error) {
		if len(secrets) == 0 {
			return nil, errors.New("no secrets (APP_KEY:APP_SECRET)")
		}
		k := &keyedHMAC{keyHeader: keyHeader, sigHeader: sigHeader, gzipped: gzipped, apps: map[string][]byte{}}
		for i, s := range secrets {
			key, secret, ok := strings.Cut(s, ":")
			if !ok || key == "" || secret == "" {
				return nil, fmt.Errorf("secret %d must be KEY:SECRET", i+1)
			}
			k.apps[key] = []byte(secret)
		}
		return k, nil
	}
}

// maxInflated bounds a gzipped body inflated to verify it.
const maxInflated = 8 << 20

func (k *keyedHMAC) Verify(r *Request) (Result, error) {
	header := r.Header.Get(k.sigHeader)
	if header == "" {
		return Result{}, ErrMissingSignature
	}
	sig, err := hex.DecodeString(header)
	if err != nil || len(sig) != sha256.Size {
		return Result{}, ErrMalformedSignature
	}
	secret, ok := k.apps[r.Header.Get(k.keyHeader)]
	if !ok {
		return Result{}, fmt.Errorf("%w: %s names no configured app", ErrInvalidSignature, k.keyHeader)
	}
	body := r.Body
	if k.gzipped && bytes.HasPrefix(body, []byte{0x1f, 0x8b}) {
		if body, err = inflate(body); err != nil {
			return Result{}, ErrMalformedSignature
		}
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	if !hmac.Equal(mac.Sum(nil), sig) {
		return Result{}, ErrInvalidSignature
	}
	return Result{}, nil
}

func inflate(body []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	out, err := io.ReadAll(io.LimitReader(zr, maxInflated+1))
	if err != nil || len(out) > maxInflated {
		return nil, errors.New("gzip body too large or broken")
	}
	return out, nil
}

func (k *keyedHMAC) Sign(key string, msg Message) (http.Header, error) {
	app, secret, ok := strings.Cut(key, ":")
	if !ok {
		return nil, errors.New("key must be APP_KEY:APP_SECRET")
	}
	body := msg.Body
	if k.gzipped && bytes.HasPrefix(body, []byte{0x1f, 0x8b}) {
		var err error
		if body, err = inflate(body); err != nil {
			return nil, err
		}
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	h := http.Header{}
	h.Set(k.keyHeader, app)
	h.Set(k.sigHeader, hex.EncodeToString(mac.Sum(nil)))
	return h, nil
}

// sortedForm is Mandrill's scheme: HMAC-SHA1 base64 over the webhook URL
// as registered (public_url) followed by each POST field, sorted by name,
// as name+value: Twilio's content (twilioDigest), over a form that repeats
// no field.
type sortedForm struct {
	header string
	keys   [][]byte
}

func newSortedForm(header string) func([]string, Options) (Scheme, error) {
	return func(secrets []string, _ Options) (Scheme, error) {
		keys, err := secretBytes(secrets)
		return &sortedForm{header: header, keys: keys}, err
	}
}

func (f *sortedForm) Verify(r *Request) (Result, error) {
	header := r.Header.Get(f.header)
	if header == "" {
		return Result{}, ErrMissingSignature
	}
	sig, err := base64.StdEncoding.DecodeString(header)
	if err != nil || len(sig) != sha1.Size {
		return Result{}, ErrMalformedSignature
	}
	form, err := strictForm(r.Body)
	if err != nil {
		return Result{}, ErrMalformedSignature
	}
	for _, k := range f.keys {
		if hmac.Equal(twilioDigest(k, r.URL, form), sig) {
			return Result{}, nil
		}
	}
	return Result{}, ErrInvalidSignature
}

func (f *sortedForm) Sign(key string, msg Message) (http.Header, error) {
	form, err := strictForm(msg.Body)
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	h.Set(f.header, base64.StdEncoding.EncodeToString(twilioDigest([]byte(key), msg.URL, form)))
	return h, nil
}

// plivoV3 verifies X-Plivo-Signature-V3 (or -Ma-V3, made with the main
// account's token): HMAC-SHA256 base64 over the public URL, its sorted
// query, the sorted POST fields and the X-Plivo-Signature-V3-Nonce, as
// Plivo's SDKs build it. Several comma-separated signatures may be sent.
type plivoV3 struct{ keys [][]byte }

func newPlivo(secrets []string, _ Options) (Scheme, error) {
	keys, err := secretBytes(secrets)
	return &plivoV3{keys: keys}, err
}

// plivoContent is what Plivo signs for a request (v3Security.js).
func plivoContent(method, rawURL string, body []byte, nonce string) ([]byte, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	query := u.Query()
	base := u.Scheme + "://" + u.Host + u.Path
	var post url.Values
	if method == http.MethodPost && len(body) > 0 {
		if post, err = strictForm(body); err != nil {
			return nil, err
		}
	}
	sortedPairs := func(v url.Values, sep, join string) string {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(v)) {
			vals := slices.Sorted(slices.Values(v[k]))
			for _, val := range vals {
				parts = append(parts, k+sep+val)
			}
		}
		return strings.Join(parts, join)
	}
	var b strings.Builder
	b.WriteString(base)
	switch {
	case method == http.MethodGet:
		all := url.Values{}
		for k, v := range query {
			all[k] = append(all[k], v...)
		}
		if len(all) > 0 {
			b.WriteString("?" + sortedPairs(all, "=", "&"))
		}
	case len(post) > 0:
		b.WriteString("?")
		if len(query) > 0 {
			b.WriteString(sortedPairs(query, "=", "&") + ".")
		}
		b.WriteString(sortedPairs(post, "", ""))
	case len(query) > 0:
		b.WriteString("?" + sortedPairs(query, "=", "&"))
	}
	b.WriteString("." + nonce)
	return []byte(b.String()), nil
}

func (p *plivoV3) Verify(r *Request) (Result, error) {
	header := r.Header.Get("X-Plivo-Signature-V3")
	if header == "" {
		header = r.Header.Get("X-Plivo-Signature-Ma-V3")
	}
	nonce := r.Header.Get("X-Plivo-Signature-V3-Nonce")
	if header == "" {
		return Result{}, ErrMissingSignature
	}
	if nonce == "" || len(nonce) > 64 {
		return Result{}, ErrMalformedSignature
	}
	content, err := plivoContent(r.Method, r.URL, r.Body, nonce)
	if err != nil {
		return Result{}, ErrMalformedSignature
	}
	var sigs [][]byte
	for part := range strings.SplitSeq(header, ",") {
		if sig, err := base64.StdEncoding.DecodeString(strings.TrimSpace(part)); err == nil && len(sig) == sha256.Size && len(sigs) < maxCandidates {
			sigs = append(sigs, sig)
		}
	}
	for _, k := range p.keys {
		mac := hmac.New(sha256.New, k)
		mac.Write(content)
		sum := mac.Sum(nil)
		for _, sig := range sigs {
			if hmac.Equal(sum, sig) {
				// The nonce is signed and fresh per request: it names this
				// delivery once.
				return Result{}, nil
			}
		}
	}
	return Result{}, ErrInvalidSignature
}

func (p *plivoV3) Sign(key string, msg Message) (http.Header, error) {
	nonce := strconv.FormatInt(time.Now().UnixNano(), 10)
	content, err := plivoContent(msg.Method, msg.URL, msg.Body, nonce)
	if err != nil {
		return nil, err
	}
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write(content)
	h := http.Header{}
	h.Set("X-Plivo-Signature-V3", base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	h.Set("X-Plivo-Signature-V3-Nonce", nonce)
	return h, nil
}

// box verifies Box's BOX-SIGNATURE-PRIMARY and -SECONDARY: HMAC-SHA256
// base64 over the body followed by BOX-DELIVERY-TIMESTAMP, with the
// application's primary or secondary key. The timestamp must be at most
// 10 minutes old and not in the future (beyond a minute of clock skew),
// as Box's SDK requires. Box signs
// Java-escaped JSON; a body whose non-ASCII was unescaped on the way is
// tried escaped again, as the SDK does.
type box struct {
	keys   [][]byte
	maxAge time.Duration
}

func newBox(secrets []string, opts Options) (Scheme, error) {
	keys, err := secretBytes(secrets)
	b := &box{keys: keys, maxAge: 10 * time.Minute}
	if opts.Tolerance > 0 {
		b.maxAge = opts.Tolerance
	}
	return b, err
}

func (b *box) Verify(r *Request) (Result, error) {
	primary, secondary := r.Header.Get("Box-Signature-Primary"), r.Header.Get("Box-Signature-Secondary")
	if primary == "" && secondary == "" {
		return Result{}, ErrMissingSignature
	}
	if v := r.Header.Get("Box-Signature-Version"); v != "" && v != "1" {
		return Result{}, ErrMalformedSignature
	}
	if a := r.Header.Get("Box-Signature-Algorithm"); a != "" && a != "HmacSHA256" {
		return Result{}, ErrMalformedSignature
	}
	ts := r.Header.Get("Box-Delivery-Timestamp")
	at, err := time.Parse(time.RFC3339, ts)
	if err != nil {
		return Result{}, ErrMissingTimestamp
	}
	// Box's SDK refuses any timestamp in the future; a minute of clock
	// skew between Box and the gateway is allowed.
	if at.After(r.Now.Add(time.Minute)) || r.Now.Sub(at) > b.maxAge {
		return Result{}, fmt.Errorf("%w: %s old", ErrStaleTimestamp, r.Now.Sub(at).Round(time.Second))
	}
	var sigs [][]byte
	for _, h := range []string{primary, secondary} {
		if sig, err := base64.StdEncoding.DecodeString(h); err == nil && len(sig) == sha256.Size {
			sigs = append(sigs, sig)
		}
	}
	bodies := [][]byte{r.Body}
	if escaped := javaEscaped(r.Body); !bytes.Equal(escaped, r.Body) {
		bodies = append(bodies, escaped)
	}
	for _, k := range b.keys {
		for _, body := range bodies {
			mac := hmac.New(sha256.New, k)
			mac.Write(body)
			mac.Write([]byte(ts))
			sum := mac.Sum(nil)
			for _, sig := range sigs {
				if hmac.Equal(sum, sig) {
					return Result{}, nil
				}
			}
		}
	}
	return Result{}, ErrInvalidSignature
}

// javaEscaped writes every character from U+007F up as \uXXXX (UTF-16
// units) and every unescaped "/" as "\/", as Box's signer does.
func javaEscaped(body []byte) []byte {
	var b bytes.Buffer
	s := string(body)
	for i, r := range s {
		switch {
		case r == '/' && (i == 0 || s[i-1] != '\\'):
			b.WriteString(`\/`)
		case r >= 0x7f:
			for _, u := range utf16.Encode([]rune{r}) {
				fmt.Fprintf(&b, `\u%04x`, u)
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.Bytes()
}

func (b *box) Sign(key string, msg Message) (http.Header, error) {
	ts := msg.Time.UTC().Format(time.RFC3339)
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write(msg.Body)
	mac.Write([]byte(ts))
	sig := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	// The secondary header is made with the application's other key,
	// which a sample does not have: one derived from this one stands in.
	other := sha256.Sum256([]byte(key))
	mac = hmac.New(sha256.New, other[:])
	mac.Write(msg.Body)
	mac.Write([]byte(ts))
	h := http.Header{}
	h.Set("Box-Delivery-Id", uuid())
	h.Set("Box-Delivery-Timestamp", ts)
	h.Set("Box-Signature-Primary", sig)
	h.Set("Box-Signature-Secondary", base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	h.Set("Box-Signature-Version", "1")
	h.Set("Box-Signature-Algorithm", "HmacSHA256")
	return h, nil
}

// cloudinary verifies X-Cld-Signature: the plain SHA-1 (or SHA-256, by its
// length) hex of the body, X-Cld-Timestamp and the API secret, within two
// hours of the timestamp. The secret comes last, so the hash cannot be
// extended.
type cloudinary struct {
	secrets   []string
	tolerance time.Duration
}

func newCloudinary(secrets []string, opts Options) (Scheme, error) {
	if len(secrets) == 0 {
		return nil, errors.New("no secrets (the API secret)")
	}
	c := &cloudinary{secrets: secrets, tolerance: 2 * time.Hour}
	if opts.Tolerance > 0 {
		c.tolerance = opts.Tolerance
	}
	return c, nil
}

func (c *cloudinary) Verify(r *Request) (Result, error) {
	header, ts := r.Header.Get("X-Cld-Signature"), r.Header.Get("X-Cld-Timestamp")
	if header == "" {
		return Result{}, ErrMissingSignature
	}
	sig, err := hex.DecodeString(header)
	if err != nil || (len(sig) != sha1.Size && len(sig) != sha256.Size) {
		return Result{}, ErrMalformedSignature
	}
	secs, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return Result{}, ErrMissingTimestamp
	}
	if err := CheckTolerance(time.Unix(secs, 0), r.Now, c.tolerance); err != nil {
		return Result{}, err
	}
	for _, secret := range c.secrets {
		h := sha256.New()
		if len(sig) == sha1.Size {
			h = sha1.New()
		}
		h.Write(r.Body)
		h.Write([]byte(ts))
		h.Write([]byte(secret))
		if hmac.Equal(h.Sum(nil), sig) {
			return Result{}, nil
		}
	}
	return Result{}, ErrInvalidSignature
}

func (c *cloudinary) Sign(key string, msg Message) (http.Header, error) {
	ts := strconv.FormatInt(msg.Time.Unix(), 10)
	sum := sha256.Sum256(append(append(append([]byte{}, msg.Body...), ts...), key...))
	h := http.Header{}
	h.Set("X-Cld-Timestamp", ts)
	h.Set("X-Cld-Signature", hex.EncodeToString(sum[:]))
	return h, nil
}

// dropboxSign verifies Dropbox Sign's event_hash, the hex HMAC-SHA256 of
// event_time followed by event_type under the API key. Nothing else of
// the body is signed, so the scheme is body-unsigned: the hash names the
// event, each is accepted once (the dedup key), and event_time must be
// within the provider's retry window. Bodies are the event JSON, as JSON,
// as the json field of a form, or of a multipart form.
type dropboxSign struct {
	keys      [][]byte
	tolerance time.Duration
}

func newDropboxSign(secrets []string, opts Options) (Scheme, error) {
	keys, err := secretBytes(secrets)
	d := &dropboxSign{keys: keys, tolerance: 4 * 24 * time.Hour}
	if opts.Tolerance > 0 {
		d.tolerance = opts.Tolerance
	}
	return d, err
}

// dropboxSignJSON finds the event JSON in a body of any of its three forms.
func dropboxSignJSON(r *Request) ([]byte, error) {
	if LooksJSON(r.Body) {
		return r.Body, nil
	}
	mediaType, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mediaType == "multipart/form-data" && params["boundary"] != "" {
		mr := multipart.NewReader(bytes.NewReader(r.Body), params["boundary"])
		form, err := mr.ReadForm(int64(len(r.Body)) + 1)
		if err != nil {
			return nil, err
		}
		defer form.RemoveAll()
		if v := form.Value["json"]; len(v) == 1 {
			return []byte(v[0]), nil
		}
		return nil, errors.New("no json field")
	}
	form, err := strictForm(r.Body)
	if err != nil || form.Get("json") == "" {
		return nil, errors.New("no json field")
	}
	return []byte(form.Get("json")), nil
}

func (d *dropboxSign) Verify(r *Request) (Result, error) {
	raw, err := dropboxSignJSON(r)
	if err != nil || !strictJSON(raw) {
		return Result{}, ErrMalformedSignature
	}
	var body struct {
		Event struct {
			Time string `json:"event_time"`
			Type string `json:"event_type"`
			Hash string `json:"event_hash"`
		} `json:"event"`
	}
	if json.Unmarshal(raw, &body) != nil {
		return Result{}, ErrMalformedSignature
	}
	if body.Event.Hash == "" {
		return Result{}, ErrMissingSignature
	}
	sig, err := hex.DecodeString(body.Event.Hash)
	secs, terr := strconv.ParseInt(body.Event.Time, 10, 64)
	if err != nil || len(sig) != sha256.Size || terr != nil {
		return Result{}, ErrMalformedSignature
	}
	if err := CheckTolerance(time.Unix(secs, 0), r.Now, d.tolerance); err != nil {
		return Result{}, err
	}
	for _, k := range d.keys {
		mac := hmac.New(sha256.New, k)
		mac.Write([]byte(body.Event.Time + body.Event.Type))
		if hmac.Equal(mac.Sum(nil), sig) {
			return Result{DedupKey: "dropbox-sign:" + hex.EncodeToString(sig)}, nil
		}
	}
	return Result{}, ErrInvalidSignature
}

// DropboxSignHash is event_hash for an event time and type.
func DropboxSignHash(key, eventTime, eventType string) string {
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write([]byte(eventTime + eventType))
	return hex.EncodeToString(mac.Sum(nil))
}

// bodyPasscode is Figma's scheme: a passcode set when the webhook was
// made, sent back in each body's passcode field. It proves the sender knew
// it; the body is otherwise unsigned.
type bodyPasscode struct {
	field    string
	passcode [][]byte
}

func newBodyPasscode(field string) func([]string, Options) (Scheme, error) {
	return func(secrets []string, _ Options) (Scheme, error) {
		keys, err := secretBytes(secrets)
		return &bodyPasscode{field: field, passcode: keys}, err
	}
}

func (p *bodyPasscode) Verify(r *Request) (Result, error) {
	if !strictJSON(r.Body) {
		return Result{}, ErrMalformedSignature
	}
	m := jsonFields(r.Body)
	got, ok := jsonString(m[p.field])
	if !ok {
		return Result{}, ErrMissingSignature
	}
	for _, k := range p.passcode {
		if subtle.ConstantTimeCompare([]byte(got), k) == 1 {
			return Result{}, nil
		}
	}
	return Result{}, ErrInvalidSignature
}
