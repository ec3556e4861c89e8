package verify

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"hash/crc32"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// paypal verifies PayPal's webhook signature: SHA256withRSA over
// transmission_id|transmission_time|webhook_id|crc32(body), with the
// certificate PAYPAL-CERT-URL names, fetched only from PayPal's API hosts
// over HTTPS, issued to messageverificationcerts.*.paypal.com, and
// cached. The source's secrets are its webhook ids.
//
// The signature covers the body only through CRC-32, which anyone can
// match with a body of their choosing: a captured signature could carry
// another body. So the transmission time must be within the tolerance,
// and each transmission id is a single-use token for twice that: a
// capture carrying another event is refused. The event's dedup key is
// its id, which PayPal's retries and resends keep, so reconciliation can
// tell which events the gateway has.
type paypal struct {
	webhookIDs []string
	tolerance  time.Duration
	pinned     *x509.Certificate
	fetches    *fetchLimiter
	testBase   string
}

// EnvTestPayPalURL is a base URL whose certificate URLs paypal accepts
// besides PayPal's, for tests; nothing in production sets it.
const EnvTestPayPalURL = "HOOKGATE_TEST_PAYPAL_URL"

// paypalCertHosts are the hosts PayPal serves its signing certificates
// from.
var paypalCertHosts = map[string]bool{
	"api.paypal.com": true, "api-m.paypal.com": true, "api.sandbox.paypal.com": true, "api-m.sandbox.paypal.com": true,
}

var (
	paypalCerts        = newRemoteCache[*x509.Certificate](64, 0, 5*time.Minute)
	paypalTransmission = regexp.MustCompile(`^[0-9a-fA-F-]{8,64}$`)
)

func newPayPal(secrets []string, opts Options) (Scheme, error) {
	if len(secrets) == 0 {
		return nil, errors.New("no secrets (the webhook ids PayPal shows for this URL)")
	}
	p := &paypal{webhookIDs: secrets, tolerance: 10 * time.Minute, fetches: newFetchLimiter(5, 12*time.Second), testBase: testBase(EnvTestPayPalURL)}
	if opts.Tolerance > 0 {
		p.tolerance = opts.Tolerance
	}
	if pemText := opts.ProviderOptions["certificate"]; pemText != "" {
		cert, err := parsePEMCert(pemText)
		if err != nil {
			return nil, fmt.Errorf("provider_options: certificate: %v", err)
		}
		p.pinned = cert
	}
	return p, nil
}

func (p *paypal) Verify(r *Request) (Result, error) {
	h := r.Header
	sigText, id, at, certURL := h.Get("Paypal-Transmission-Sig"), h.Get("Paypal-Transmission-Id"), h.Get("Paypal-Transmission-Time"), h.Get("Paypal-Cert-Url")
	if sigText == "" {
		return Result{}, ErrMissingSignature
	}
	sig, err := base64.StdEncoding.DecodeString(sigText)
	if err != nil || len(sig) == 0 || len(sig) > 1024 || !paypalTransmission.MatchString(id) {
		return Result{}, ErrMalformedSignature
	}
	if h.Get("Paypal-Auth-Algo") != "SHA256withRSA" {
		return Result{}, ErrMalformedSignature
	}
	sent, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return Result{}, ErrMissingTimestamp
	}
	if err := CheckTolerance(sent, r.Now, p.tolerance); err != nil {
		return Result{}, err
	}
	cert, err := p.cert(r.context(), certURL, r.Now)
	if err != nil {
		return Result{}, err
	}
	pub, ok := cert.PublicKey.(*rsa.PublicKey)
	if !ok {
		return Result{}, ErrInvalidSignature
	}
	crc := strconv.FormatUint(uint64(crc32.ChecksumIEEE(r.Body)), 10)
	for _, webhookID := range p.webhookIDs {
		digest := sha256.Sum256([]byte(id + "|" + at + "|" + webhookID + "|" + crc))
		if rsa.VerifyPKCS1v15(pub, crypto.SHA256, digest[:], sig) == nil {
			return Result{SingleUseToken: "paypal:" + strings.ToLower(id), SingleUseWindow: 2 * p.tolerance}, nil
		}
	}
	return Result{}, ErrInvalidSignature
}

// cert is the pinned certificate, or the one certURL names when it is on
// a PayPal API host.
func (p *paypal) cert(ctx context.Context, certURL string, now time.Time) (*x509.Certificate, error) {
	if p.pinned != nil {
		return p.pinned, nil
	}
	u, err := url.Parse(certURL)
	if err != nil || u.User != nil || u.RawQuery != "" || !strings.HasPrefix(u.Path, "/v1/notifications/certs/") {
		return nil, fmt.Errorf("%w: certificate URL is not PayPal's", ErrInvalidSignature)
	}
	standIn := p.testBase != "" && strings.HasPrefix(certURL, p.testBase+"/")
	if !standIn && (u.Scheme != "https" || !paypalCertHosts[strings.ToLower(u.Host)]) {
		return nil, fmt.Errorf("%w: certificate URL is not PayPal's", ErrInvalidSignature)
	}
	cert, err := paypalCerts.get(certURL, time.Now(), p.fetches, func() (*x509.Certificate, error) { return fetchPayPalCert(ctx, certURL) })
	if err != nil {
		if errors.Is(err, ErrKeyUnavailable) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: signing certificate: %v", ErrInvalidSignature, err)
	}
	if now.After(cert.NotAfter) || now.Before(cert.NotBefore) {
		return nil, fmt.Errorf("%w: signing certificate expired", ErrInvalidSignature)
	}
	return cert, nil
}

// fetchPayPalCert fetches a signing certificate: PEM, RSA of 2048 bits or
// more, issued to messageverificationcerts(.sandbox).paypal.com.
func fetchPayPalCert(ctx context.Context, certURL string) (*x509.Certificate, error) {
	cert, err := fetchCertificate(ctx, certURL)
	if err != nil {
		return nil, err
	}
	pub, ok := cert.PublicKey.(*rsa.PublicKey)
	if !ok || pub.N.BitLen() < 2048 {
		return nil, gone{errors.New("certificate key is not RSA of 2048 bits or more")}
	}
	if cert.VerifyHostname("messageverificationcerts.paypal.com") != nil && cert.VerifyHostname("messageverificationcerts.sandbox.paypal.com") != nil {
		return nil, gone{errors.New("certificate is not issued to PayPal's message verification")}
	}
	return cert, nil
}

// paypalKey is a test signing key: the webhook id to configure, the private
// key, and a certificate issued as PayPal's are.
type paypalKey struct {
	WebhookID   string `json:"webhook_id"`
	PrivateKey  string `json:"private_key"`
	Certificate string `json:"certificate"`
}

func paypalKeys() (secret, signingKey string, err error) {
	keyPEM, certPEM, err := newRSACertificate("messageverificationcerts.sandbox.paypal.com")
	if err != nil {
		return "", "", err
	}
	k := paypalKey{WebhookID: strings.ToUpper(randomHex(8)), PrivateKey: keyPEM, Certificate: certPEM}
	return k.WebhookID, string(mustJSON(k)), nil
}

// PayPalCertURL is where a sample names its certificate: under the test
// stand-in when EnvTestPayPalURL is set (which serves the certificate whose
// DER the path's hex is), else on PayPal's sandbox host.
func PayPalCertURL(certDER []byte) string {
	base := testBase(EnvTestPayPalURL)
	if base == "" {
		base = "https://api.sandbox.paypal.com"
	}
	return base + "/v1/notifications/certs/CERT-" + hex.EncodeToString(certDER)
}

// Sign signs as PayPal does with a key from GenerateKeys, in a new
// transmission unless msg.Header names one.
func (p *paypal) Sign(key string, msg Message) (http.Header, error) {
	var k paypalKey
	if err := json.Unmarshal([]byte(key), &k); err != nil || k.PrivateKey == "" {
		return nil, errors.New("paypal signing key must be the JSON `hookgate keys new --provider paypal` prints")
	}
	cb, _ := pem.Decode([]byte(k.Certificate))
	if cb == nil {
		return nil, errors.New("paypal signing key: bad PEM")
	}
	priv, err := parseRSAKey(k.PrivateKey, "paypal signing key")
	if err != nil {
		return nil, err
	}
	id := uuid()
	if v := msg.Header.Get("Paypal-Transmission-Id"); paypalTransmission.MatchString(v) {
		id = v // a test's capture sent again
	}
	at := msg.Time.UTC().Format(time.RFC3339)
	crc := strconv.FormatUint(uint64(crc32.ChecksumIEEE(msg.Body)), 10)
	digest := sha256.Sum256([]byte(id + "|" + at + "|" + k.WebhookID + "|" + crc))
	sig, err := rsa.SignPKCS1v15(rand.Reader, priv, crypto.SHA256, digest[:])
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	h.Set("Paypal-Transmission-Id", id)
	h.Set("Paypal-Transmission-Time", at)
	h.Set("Paypal-Transmission-Sig", base64.StdEncoding.EncodeToString(sig))
	h.Set("Paypal-Cert-Url", PayPalCertURL(cb.Bytes))
	h.Set("Paypal-Auth-Algo", "SHA256withRSA")
	h.Set("Paypal-Auth-Version", "v2")
	return h, nil
}
