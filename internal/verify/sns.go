package verify

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// snsScheme verifies Amazon SNS HTTP(S) messages: the JSON body carries the
// signature (SignatureVersion 1: SHA1withRSA, 2: SHA256withRSA) over a
// canonical string of its fields, made with the certificate at
// SigningCertURL. That URL must be SNS's certificate file on the SNS host of
// the topic's region, or nothing is fetched. SNS signs every topic with the
// same certificate, so a source is bound to its topics: its secrets are the
// TopicArns it accepts.
//
// Not signed, so never trusted: MessageAttributes, UnsubscribeURL,
// Signature, SignatureVersion, SigningCertURL and the x-amz-sns-* headers.
// The dedup key is the digest of the string to sign, so a captured message
// sent again with other unsigned fields is still a duplicate.
type snsScheme struct {
	topics    map[string]bool
	tolerance time.Duration
	// fetches is this source's budget for certificates not cached.
	fetches *fetchLimiter
	// testBase is a stand-in for SNS's hosts (EnvTestSNSURL), or "".
	testBase string
}

// snsTopic is a topic ARN in any partition; its fourth field is the region.
var snsTopic = regexp.MustCompile(`^arn:aws[a-z\-]*:sns:[a-z]{2}(-[a-z]+)+-[0-9]:[0-9]{12}:[A-Za-z0-9_\-]{1,256}(\.fifo)?$`)

// snsCertPath is the name SNS gives its signing certificates
// (SimpleNotificationService-<hex>.pem at the root of the regional host).
// Under the test stand-in the hex is the certificate's DER itself.
var (
	snsCertPath     = regexp.MustCompile(`^/SimpleNotificationService-[0-9a-f]{16,64}\.pem$`)
	snsTestCertPath = regexp.MustCompile(`^/SimpleNotificationService-[0-9a-f]+\.pem$`)
)

// snsMessageID and snsTimestamp are the shapes of SNS's MessageId (a UUID)
// and Timestamp (UTC, with milliseconds).
var (
	snsMessageID = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	snsTimestamp = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?Z$`)
)

// snsTolerance is SNS's longest retry period for HTTP(S) endpoints: a
// retried message keeps its first Timestamp.
const snsTolerance = time.Hour

// snsCerts caches certificates by URL, for every source: SNS uses a few per
// region. A URL SNS says does not exist is remembered for five minutes.
// Each source spends its own fetch budget on misses.
var snsCerts = newRemoteCache[*x509.Certificate](256, 0, 5*time.Minute)

// snsFetchBudget makes each source's budget of certificate fetches: a
// burst of 10, then one every 6 seconds.
var snsFetchBudget = func() *fetchLimiter { return newFetchLimiter(10, 6*time.Second) }

func newSNS(secrets []string, opts Options) (Scheme, error) {
	if len(secrets) == 0 {
		return nil, fmt.Errorf("no secrets (the TopicArns this source accepts)")
	}
	s := &snsScheme{topics: map[string]bool{}, tolerance: snsTolerance, fetches: snsFetchBudget(), testBase: testBase(EnvTestSNSURL)}
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

// snsRegion is the region of a topic ARN.
func snsRegion(topicArn string) string {
	parts := strings.SplitN(topicArn, ":", 5)
	if len(parts) < 5 {
		return ""
	}
	return parts[3]
}

// snsHost is the SNS endpoint of a region, the only host whose
// certificates and confirmations a message of that region may name.
func snsHost(region string) string {
	if strings.HasPrefix(region, "cn-") {
		return "sns." + region + ".amazonaws.com.cn"
	}
	return "sns." + region + ".amazonaws.com"
}

// snsMessage is an SNS message's string fields, read with exact key
// matching.
type snsMessage struct {
	fields map[string]string
	// present lists the fields the message has, null ones excluded.
	present map[string]bool
}

func (m *snsMessage) get(k string) string { return m.fields[k] }

// snsVerifiedFields are the fields the scheme reads: the signed ones and
// those naming the signature. Each must be a string.
var snsVerifiedFields = map[string]bool{
	"Message": true, "MessageId": true, "Subject": true, "Timestamp": true, "TopicArn": true, "Type": true,
	"SubscribeURL": true, "Token": true, "Signature": true, "SignatureVersion": true, "SigningCertURL": true,
}

// readSNS reads a message body that repeats no key, exactly or by case
// (strictJSON). A field the scheme reads that is not a string is refused,
// not skipped: skipped, it would be absent from the string to sign while
// the body still carried it.
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
			if snsVerifiedFields[k] {
				return nil, ErrMalformedSignature
			}
			continue // MessageAttributes and the like: unsigned, never read
		}
		m.fields[k], m.present[k] = s, true
	}
	return m, nil
}

// snsSigned lists the fields signed for each message type, in order; nil
// for a type SNS does not send.
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
// name\nvalue\n. Subject is signed only when present. No field but Message
// may hold a control character: a newline in one would let a message move
// a field into another's value and still verify (a MessageId ending in
// "\nSubject\n…" standing for a Subject). Message comes first, so it cannot.
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
		v := m.get(k)
		if k != "Message" && strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return nil, ErrMalformedSignature
		}
		b.WriteString(k + "\n" + v + "\n")
	}
	return []byte(b.String()), nil
}

// snsURLAllowed reports whether raw is an SNS URL the gateway may fetch for
// a message of the region: HTTPS on that region's SNS host, and either SNS's
// certificate file (cert) or a ConfirmSubscription call; or under the test
// stand-in.
func snsURLAllowed(raw, region string, cert bool, testBase string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.User != nil || u.Fragment != "" || u.Opaque != "" {
		return false
	}
	if testBase != "" && strings.HasPrefix(raw, testBase+"/") {
		return !cert || (snsTestCertPath.MatchString(strings.TrimPrefix(u.Path, strings.TrimPrefix(testBase, u.Scheme+"://"+u.Host))) && u.RawQuery == "")
	}
	if u.Scheme != "https" || region == "" || u.Host != snsHost(region) {
		return false
	}
	if cert {
		return snsCertPath.MatchString(u.Path) && u.RawQuery == ""
	}
	return (u.Path == "/" || u.Path == "") && u.Query().Get("Action") == "ConfirmSubscription"
}

func (s *snsScheme) Verify(r *Request) (Result, error) {
	signed, err := s.check(r)
	if err != nil {
		return Result{}, err
	}
	return Result{DedupKey: snsDedupKey(signed)}, nil
}

// snsDedupKey names one SNS message: the digest of what its signature
// covers.
func snsDedupKey(signed []byte) string {
	sum := sha256.Sum256(signed)
	return "aws-sns:" + hex.EncodeToString(sum[:])
}

// check verifies a message and returns its string to sign.
func (s *snsScheme) check(r *Request) ([]byte, error) {
	m, err := readSNS(r.Body)
	if err != nil {
		return nil, err
	}
	if !m.present["Signature"] || !m.present["SigningCertURL"] {
		return nil, ErrMissingSignature
	}
	hash := map[string]crypto.Hash{"1": crypto.SHA1, "2": crypto.SHA256}[m.get("SignatureVersion")]
	sig, err := base64.StdEncoding.DecodeString(m.get("Signature"))
	if hash == 0 || err != nil || len(sig) == 0 || len(sig) > 1024 {
		return nil, ErrMalformedSignature
	}
	signed, err := snsStringToSign(m)
	if err != nil {
		return nil, err
	}
	if !snsMessageID.MatchString(m.get("MessageId")) {
		return nil, ErrMalformedSignature
	}
	// Unbound topics and foreign hosts are refused before anything is fetched.
	topic := m.get("TopicArn")
	if !s.topics[topic] {
		return nil, fmt.Errorf("%w: topic not accepted by this source", ErrInvalidSignature)
	}
	region := snsRegion(topic)
	certURL := m.get("SigningCertURL")
	if !snsURLAllowed(certURL, region, true, s.testBase) {
		return nil, fmt.Errorf("%w: certificate URL is not SNS's for the topic's region", ErrInvalidSignature)
	}
	ts := m.get("Timestamp")
	at, err := time.Parse(time.RFC3339Nano, ts)
	if !snsTimestamp.MatchString(ts) || err != nil {
		return nil, ErrMissingTimestamp
	}
	if err := CheckTolerance(at, r.Now, s.tolerance); err != nil {
		return nil, err
	}
	cert, err := snsCerts.get(certURL, time.Now(), s.fetches, func() (*x509.Certificate, error) {
		return fetchSNSCert(r.context(), certURL, region, s.testBase != "")
	})
	if err != nil {
		if errors.Is(err, ErrKeyUnavailable) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: signing certificate: %v", ErrInvalidSignature, err)
	}
	pub, ok := cert.PublicKey.(*rsa.PublicKey)
	if !ok {
		return nil, ErrInvalidSignature
	}
	h := hash.New()
	h.Write(signed)
	if rsa.VerifyPKCS1v15(pub, hash, h.Sum(nil), sig) != nil {
		return nil, ErrInvalidSignature
	}
	return signed, nil
}

// fetchSNSCert fetches a signing certificate and checks it is one SNS
// signs with: a PEM certificate, valid now, with an RSA key of at least
// 2048 bits, for one of the names SNS signs as in that region. The TLS
// connection to the region's SNS host is what vouches for it: SNS serves
// the leaf alone, without the chain to a root.
func fetchSNSCert(ctx context.Context, certURL, region string, testStandIn bool) (*x509.Certificate, error) {
	cert, err := fetchCertificate(ctx, certURL)
	if err != nil {
		return nil, err
	}
	if err := checkSNSCert(cert, region, time.Now()); err != nil {
		return nil, gone{err}
	}
	return cert, nil
}

// snsSigningNames are the names SNS's signing certificates are issued
// for: sns.amazonaws.com in most regions, and the regional names of the
// China, GovCloud and newer opt-in regions (as AWS's Java SDK expects).
func snsSigningNames(region string) []string {
	return []string{
		"sns.amazonaws.com",
		"sns-signing." + region + ".amazonaws.com",
		"sns-" + region + ".amazonaws.com",
		"sns-" + region + ".amazonaws.com.cn",
		"sns-us-gov-west-1.amazonaws.com",
	}
}

func checkSNSCert(cert *x509.Certificate, region string, now time.Time) error {
	if now.Before(cert.NotBefore) || now.After(cert.NotAfter) {
		return errors.New("certificate not valid now")
	}
	pub, ok := cert.PublicKey.(*rsa.PublicKey)
	if !ok || pub.N.BitLen() < 2048 {
		return errors.New("certificate key is not RSA of 2048 bits or more")
	}
	for _, name := range snsSigningNames(region) {
		if cert.VerifyHostname(name) == nil {
			return nil
		}
	}
	return errors.New("certificate is not issued to SNS")
}

// snsConfirmations remembers subscription Tokens confirmed (or refused by
// SNS) by this process, so that a confirmation sent again is not a GET
// again; confirmation GETs spend a budget of their own.
var (
	snsConfirmations = newRemoteCache[string](1024, 0, time.Hour)
	snsConfirmBudget = newFetchLimiter(10, 6*time.Second)
)

// snsConfirmation answers SNS's subscription messages once their signature
// verified. Both kinds are kept as records: stored, listed, never
// delivered. A SubscriptionConfirmation is confirmed by the documented GET
// of its SubscribeURL (the SNS host of the topic's region), once the record
// is stored, at most once per Token; an UnsubscribeConfirmation is only
// noted (visiting its URL would subscribe again).
var snsConfirmation = &Handshake{Name: "aws-sns subscription confirmation", Answer: func(r *HandshakeRequest) (*HandshakeResponse, bool) {
	m, err := readSNS(r.Body)
	if err != nil {
		return nil, false
	}
	topic := m.get("TopicArn")
	switch m.get("Type") {
	case "SubscriptionConfirmation":
	case "UnsubscribeConfirmation":
		resp := plainText("unsubscribe confirmation recorded")
		resp.Record = "aws-sns UnsubscribeConfirmation for " + topic
		return resp, true
	default:
		return nil, false
	}
	subscribeURL, token := m.get("SubscribeURL"), m.get("Token")
	resp := plainText("subscription confirmed")
	resp.Record = "aws-sns SubscriptionConfirmation for " + topic
	resp.Followup = func(ctx context.Context) *HandshakeResponse {
		arn, err := snsConfirmations.get(token, time.Now(), snsConfirmBudget, func() (string, error) {
			return confirmSNS(ctx, subscribeURL, snsRegion(topic), testBase(EnvTestSNSURL))
		})
		if err != nil {
			return &HandshakeResponse{Status: http.StatusServiceUnavailable, ContentType: "text/plain; charset=utf-8",
				Body: []byte("subscription not confirmed, retry later"), Reason: "sns_confirm_failed: " + err.Error()}
		}
		confirmed := plainText("subscription confirmed")
		confirmed.Reason = "confirmed " + arn
		return confirmed
	}
	return resp, true
}}

// confirmSNS visits a SubscribeURL and returns the SubscriptionArn SNS
// answers with.
func confirmSNS(ctx context.Context, subscribeURL, region, testBase string) (string, error) {
	if !snsURLAllowed(subscribeURL, region, false, testBase) {
		return "", gone{errors.New("SubscribeURL is not SNS's for the topic's region")}
	}
	req, err := http.NewRequest(http.MethodGet, subscribeURL, nil)
	if err != nil {
		return "", gone{errors.New("SubscribeURL does not parse")}
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
		return "", statusFailure(status)
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
	keyPEM, certPEM, err := newRSACertificate("sns.amazonaws.com")
	if err != nil {
		return "", "", err
	}
	k := snsKey{TopicArn: "arn:aws:sns:us-east-1:123456789012:hookgate-" + randomHex(6), PrivateKey: keyPEM, Certificate: certPEM}
	return k.TopicArn, string(mustJSON(k)), nil
}

func parseSNSKey(key string) (*snsKey, *rsa.PrivateKey, []byte, error) {
	var k snsKey
	if err := json.Unmarshal([]byte(key), &k); err != nil || k.PrivateKey == "" || k.Certificate == "" {
		return nil, nil, nil, errors.New("aws-sns signing key must be the JSON `hookgate keys new --provider aws-sns` prints")
	}
	cb, _ := pem.Decode([]byte(k.Certificate))
	if cb == nil {
		return nil, nil, nil, errors.New("aws-sns signing key: bad PEM")
	}
	priv, err := parseRSAKey(k.PrivateKey, "aws-sns signing key")
	if err != nil {
		return nil, nil, nil, err
	}
	return &k, priv, cb.Bytes, nil
}

// SNSCertURL is where a sample names its certificate: under the test
// stand-in when EnvTestSNSURL is set (which serves the certificate whose
// DER the path's hex is), else on SNS's host, where verification of a sample fails.
func SNSCertURL(certDER []byte) string {
	base := testBase(EnvTestSNSURL)
	if base == "" {
		base = "https://sns.us-east-1.amazonaws.com"
	}
	return base + "/SimpleNotificationService-" + hex.EncodeToString(certDER) + ".pem"
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
