package verify

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"encoding/xml"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// snsScheme verifies Amazon SNS HTTP(S) messages: the JSON body carries the
// signature (SignatureVersion 1: SHA1withRSA, 2: SHA256withRSA) over a
// canonical string of its fields, made with the certificate at
// SigningCertURL. That URL must be an HTTPS .pem on an SNS host, or nothing
// is fetched. SNS signs every topic with the same certificate, so a source
// is bound to its topics: its secrets are the TopicArns it accepts.
type snsScheme struct {
	topics    map[string]bool
	tolerance time.Duration
	// testBase is a stand-in for SNS's hosts (EnvTestSNSURL), or "".
	testBase string
}

// snsHost is the host rule of AWS's SNS message validators
// (aws-js-sns-message-validator, aws-sdk-php): sns.<region>.amazonaws.com
// or .amazonaws.com.cn, no port, no user.
var snsHost = regexp.MustCompile(`^sns\.[a-zA-Z0-9\-]{3,}\.amazonaws\.com(\.cn)?$`)

// snsTopic is a topic ARN in any partition.
var snsTopic = regexp.MustCompile(`^arn:aws[a-z\-]*:sns:[a-z0-9\-]+:[0-9]{12}:[A-Za-z0-9_\-]{1,256}(\.fifo)?$`)

// snsTolerance is SNS's longest retry period for HTTP(S) endpoints: a
// retried message keeps its first Timestamp, and MessageId deduplicates it.
const snsTolerance = time.Hour

// snsCerts caches certificates by URL, for every source: SNS uses a few per
// region. A URL that failed is not fetched again for a while, and misses
// share a budget.
var snsCerts = newRemoteCache[*x509.Certificate](64, 5*time.Minute, newFetchLimiter(10, 6*time.Second))

func newSNS(secrets []string, opts Options) (Scheme, error) {
	if len(secrets) == 0 {
		return nil, fmt.Errorf("no secrets (the TopicArns this source accepts)")
	}
	s := &snsScheme{topics: map[string]bool{}, tolerance: snsTolerance, testBase: testBase(EnvTestSNSURL)}
	if opts.Tolerance > 0 {
		s.tolerance = opts.Tolerance
	}
	for i, t := range secrets {
		if !snsTopic.MatchString(t) {
			return nil, fmt.Errorf("secret %d: not a topic ARN (arn:aws:sns:<region>:<account>:<topic>)", i+1)
		}
		s.topics[t] = true
	}
	return s, nil
}

// snsMessage is an SNS message's fields, read with exact key matching.
type snsMessage struct {
	fields map[string]string
	// present lists the fields the message has, null ones excluded.
	present map[string]bool
}

func (m *snsMessage) get(k string) string { return m.fields[k] }

// readSNS reads a message body that repeats no key, exactly or by case
// (strictJSON), whose members are strings (or null).
func readSNS(body []byte) (*snsMessage, error) {
	top, ok := object(body)
	if !ok {
		return nil, ErrMissingSignature
	}
	if !strictJSON(body) {
		return nil, ErrMalformedSignature
	}
	m := &snsMessage{fields: map[string]string{}, present: map[string]bool{}}
	for k, raw := range top {
		if string(raw) == "null" {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			continue // not a signed field; SNS's members are all strings
		}
		m.fields[k], m.present[k] = s, true
	}
	return m, nil
}

// snsSigned lists the fields signed for each message type, in order.
func snsSigned(typ string) []string {
	switch typ {
	case "Notification":
		return []string{"Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"}
	case "SubscriptionConfirmation", "UnsubscribeConfirmation":
		return []string{"Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"}
	}
	return nil
}

// snsStringToSign is the canonical string: each signed field present, as
// name\nvalue\n. Subject is signed only when present.
func snsStringToSign(m *snsMessage) ([]byte, error) {
	keys := snsSigned(m.get("Type"))
	if keys == nil {
		return nil, ErrMalformedSignature
	}
	var b strings.Builder
	for _, k := range keys {
		if !m.present[k] {
			if k == "Subject" {
				continue
			}
			return nil, ErrMalformedSignature
		}
		b.WriteString(k + "\n" + m.get(k) + "\n")
	}
	return []byte(b.String()), nil
}

// allowedURL reports whether u is an SNS URL the gateway may fetch: HTTPS
// on an SNS host (certificates: a .pem path), or under the test stand-in.
func (s *snsScheme) allowedURL(raw string, pem bool) bool { return snsURLAllowed(raw, pem, s.testBase) }

func snsURLAllowed(raw string, pemPath bool, testBase string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.User != nil || u.Fragment != "" || u.Opaque != "" {
		return false
	}
	if pemPath && !strings.HasSuffix(u.Path, ".pem") {
		return false
	}
	if testBase != "" && strings.HasPrefix(raw, testBase+"/") {
		return true
	}
	return u.Scheme == "https" && snsHost.MatchString(u.Host)
}

func (s *snsScheme) Verify(r *Request) (Result, error) { return Result{}, s.check(r) }

func (s *snsScheme) check(r *Request) error {
	m, err := readSNS(r.Body)
	if err != nil {
		return err
	}
	if !m.present["Signature"] || !m.present["SigningCertURL"] {
		return ErrMissingSignature
	}
	hash := map[string]crypto.Hash{"1": crypto.SHA1, "2": crypto.SHA256}[m.get("SignatureVersion")]
	sig, err := base64.StdEncoding.DecodeString(m.get("Signature"))
	if hash == 0 || err != nil || len(sig) == 0 || len(sig) > 1024 {
		return ErrMalformedSignature
	}
	signed, err := snsStringToSign(m)
	if err != nil {
		return err
	}
	// Unbound topics and foreign hosts are refused before anything is fetched.
	if !s.topics[m.get("TopicArn")] {
		return fmt.Errorf("%w: topic not accepted by this source", ErrInvalidSignature)
	}
	if !s.allowedURL(m.get("SigningCertURL"), true) {
		return fmt.Errorf("%w: certificate URL not on an SNS host", ErrInvalidSignature)
	}
	at, err := time.Parse(time.RFC3339Nano, m.get("Timestamp"))
	if err != nil {
		return ErrMissingTimestamp
	}
	if err := CheckTolerance(at, r.Now, s.tolerance); err != nil {
		return err
	}
	cert, err := snsCerts.get(m.get("SigningCertURL"), time.Now(), 0, func() (*x509.Certificate, error) {
		return fetchSNSCert(r.context(), m.get("SigningCertURL"))
	})
	if err != nil {
		return fmt.Errorf("%w: signing certificate: %v", ErrInvalidSignature, err)
	}
	pub, ok := cert.PublicKey.(*rsa.PublicKey)
	if !ok {
		return ErrInvalidSignature
	}
	h := hash.New()
	h.Write(signed)
	if rsa.VerifyPKCS1v15(pub, hash, h.Sum(nil), sig) != nil {
		return ErrInvalidSignature
	}
	return nil
}

// fetchSNSCert fetches and parses a PEM certificate.
func fetchSNSCert(ctx context.Context, certURL string) (*x509.Certificate, error) {
	req, err := http.NewRequest(http.MethodGet, certURL, nil)
	if err != nil {
		return nil, err
	}
	status, body, err := fetch(ctx, req)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, statusError(status)
	}
	block, _ := pem.Decode(body)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("not a PEM certificate")
	}
	return x509.ParseCertificate(block.Bytes)
}

// snsConfirmation answers SNS's subscription messages once their signature
// verified. A SubscriptionConfirmation is confirmed by the documented GET
// of its SubscribeURL (an SNS host, as for certificates); an
// UnsubscribeConfirmation is only noted (visiting its URL would subscribe
// again). Both are kept as records: stored, listed, never delivered.
var snsConfirmation = &Handshake{Name: "aws-sns subscription confirmation", Answer: func(r *HandshakeRequest) (*HandshakeResponse, bool) {
	m, err := readSNS(r.Body)
	if err != nil {
		return nil, false
	}
	switch m.get("Type") {
	case "SubscriptionConfirmation":
	case "UnsubscribeConfirmation":
		resp := plainText("unsubscribe confirmation recorded")
		resp.Record = "aws-sns UnsubscribeConfirmation for " + m.get("TopicArn")
		return resp, true
	default:
		return nil, false
	}
	arn, err := confirmSNS(r.context(), m.get("SubscribeURL"), testBase(EnvTestSNSURL))
	if err != nil {
		return &HandshakeResponse{Status: http.StatusServiceUnavailable, ContentType: "text/plain; charset=utf-8",
			Body: []byte("subscription not confirmed, retry later"), Reason: "sns_confirm_failed: " + err.Error()}, true
	}
	resp := plainText("subscription confirmed")
	resp.Record = "aws-sns SubscriptionConfirmation confirmed: " + arn
	return resp, true
}}

// confirmSNS visits a SubscribeURL and returns the SubscriptionArn SNS
// answers with.
func confirmSNS(ctx context.Context, subscribeURL, testBase string) (string, error) {
	if !snsURLAllowed(subscribeURL, false, testBase) {
		return "", errors.New("SubscribeURL not on an SNS host")
	}
	req, err := http.NewRequest(http.MethodGet, subscribeURL, nil)
	if err != nil {
		return "", err
	}
	status, body, err := fetch(ctx, req)
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		err = urlErr.Err // the URL carries the Token: kept out of the log
	}
	if err != nil {
		return "", err
	}
	if status != http.StatusOK {
		return "", statusError(status)
	}
	var out struct {
		Arn string `xml:"ConfirmSubscriptionResult>SubscriptionArn"`
	}
	if xml.Unmarshal(body, &out) != nil || out.Arn == "" {
		return "", errors.New("no SubscriptionArn in the answer")
	}
	return out.Arn, nil
}

// snsKey is an aws-sns signing key for samples and tests: the topic it
// publishes to, the RSA private key, and the self-signed certificate that
// goes with it (PEM). Real keys stay with AWS.
type snsKey struct {
	TopicArn    string `json:"topic_arn"`
	PrivateKey  string `json:"private_key"`
	Certificate string `json:"certificate"`
}

// snsKeys makes a topic ARN to configure and a signing key for it.
func snsKeys() (secret, signingKey string, err error) {
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", "", err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sns.us-east-1.amazonaws.com"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(365 * 24 * time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		return "", "", err
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return "", "", err
	}
	k := snsKey{
		TopicArn:    "arn:aws:sns:us-east-1:123456789012:hookgate-" + randomHex(6),
		PrivateKey:  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})),
		Certificate: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
	}
	return k.TopicArn, string(mustJSON(k)), nil
}

func parseSNSKey(key string) (*snsKey, *rsa.PrivateKey, []byte, error) {
	var k snsKey
	if err := json.Unmarshal([]byte(key), &k); err != nil || k.PrivateKey == "" || k.Certificate == "" {
		return nil, nil, nil, errors.New("aws-sns signing key must be the JSON `hookgate keys --provider aws-sns` prints")
	}
	kb, _ := pem.Decode([]byte(k.PrivateKey))
	cb, _ := pem.Decode([]byte(k.Certificate))
	if kb == nil || cb == nil {
		return nil, nil, nil, errors.New("aws-sns signing key: bad PEM")
	}
	parsed, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	priv, ok := parsed.(*rsa.PrivateKey)
	if err != nil || !ok {
		return nil, nil, nil, errors.New("aws-sns signing key: not an RSA PKCS#8 key")
	}
	return &k, priv, cb.Bytes, nil
}

// SNSCertURL is where a sample names its certificate: under the test
// stand-in when EnvTestSNSURL is set (which serves the certificate encoded
// in the path), else on SNS's host, where verification of a sample fails.
func SNSCertURL(certDER []byte) string {
	base := testBase(EnvTestSNSURL)
	if base == "" {
		base = "https://sns.us-east-1.amazonaws.com"
	}
	return base + "/SimpleNotificationService-" + base64.RawURLEncoding.EncodeToString(certDER) + ".pem"
}

// SignSNSMessage signs an SNS message (Type, MessageId, TopicArn, … as
// strings) with a signing key from GenerateKeys, naming its certificate as
// SNSCertURL does, and returns the JSON body SNS would send. For tests and
// trials: the gateway fetches the certificate from that URL.
func SignSNSMessage(signingKey string, msg map[string]string, version string) ([]byte, error) {
	_, priv, der, err := parseSNSKey(signingKey)
	if err != nil {
		return nil, err
	}
	if err := signSNS(msg, priv, SNSCertURL(der), version); err != nil {
		return nil, err
	}
	return mustJSON(msg), nil
}

// signSNS signs an SNS message in place: it sets SignatureVersion,
// SigningCertURL and Signature.
func signSNS(msg map[string]string, priv *rsa.PrivateKey, certURL string, version string) error {
	msg["SignatureVersion"], msg["SigningCertURL"] = version, certURL
	m := &snsMessage{fields: msg, present: map[string]bool{}}
	for k := range msg {
		m.present[k] = true
	}
	signed, err := snsStringToSign(m)
	if err != nil {
		return err
	}
	var digest []byte
	hash := crypto.SHA256
	if version == "1" {
		sum := sha1.Sum(signed)
		digest, hash = sum[:], crypto.SHA1
	} else {
		sum := sha256.Sum256(signed)
		digest = sum[:]
	}
	sig, err := rsa.SignPKCS1v15(rand.Reader, priv, hash, digest)
	if err != nil {
		return err
	}
	msg["Signature"] = base64.StdEncoding.EncodeToString(sig)
	return nil
}

// snsSample is a signed Notification to the signing key's topic.
func snsSample(in SampleInput) (Sample, error) {
	k, priv, der, err := parseSNSKey(in.Key)
	if err != nil {
		return Sample{}, err
	}
	id := uuid()
	msg := map[string]string{
		"Type": "Notification", "MessageId": id, "TopicArn": k.TopicArn, "Subject": "Hookgate sample",
		"Message":        string(mustJSON(obj{"order_id": in.ID, "status": "shipped"})),
		"Timestamp":      in.Now.UTC().Format("2006-01-02T15:04:05.000Z"),
		"UnsubscribeURL": "https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=" + k.TopicArn + ":" + uuid(),
	}
	if err := signSNS(msg, priv, SNSCertURL(der), "2"); err != nil {
		return Sample{}, err
	}
	return Sample{Body: mustJSON(msg), Header: http.Header{
		"Content-Type":               {"text/plain; charset=UTF-8"},
		"User-Agent":                 {"Amazon Simple Notification Service Agent"},
		"X-Amz-Sns-Message-Type":     {"Notification"},
		"X-Amz-Sns-Message-Id":       {id},
		"X-Amz-Sns-Topic-Arn":        {k.TopicArn},
		"X-Amz-Sns-Subscription-Arn": {k.TopicArn + ":" + uuid()},
	}}, nil
}
