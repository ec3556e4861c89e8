package verify

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	_ "embed"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"time"
)

// appleStore verifies App Store Server Notifications v2: the body is
// {"signedPayload": JWS}, an ES256 JWS whose x5c header carries the leaf and
// intermediate certificates. The chain must lead to the pinned root (Apple
// Root CA - G3 unless provider_options root names another), the
// intermediate carry Apple's WWDR marker OID and the leaf Apple's App Store
// receipt-signing OID, as Apple's own library checks, and the payload's
// bundleId be one of the source's secrets.
type appleStore struct {
	roots       *x509.CertPool
	bundles     []string
	environment string
}

//go:embed certs/AppleRootCA-G3.cer
var appleRootG3 []byte

var (
	// appleLeafOID marks a certificate Apple issues for signing App Store
	// data; appleIntermediateOID marks Apple's WWDR intermediate.
	appleLeafOID         = asn1.ObjectIdentifier{1, 2, 840, 113635, 100, 6, 11, 1}
	appleIntermediateOID = asn1.ObjectIdentifier{1, 2, 840, 113635, 100, 6, 2, 1}
)

func newAppleStore(secrets []string, opts Options) (Scheme, error) {
	if len(secrets) == 0 {
		return nil, errors.New("no secrets (the app's bundle ids)")
	}
	a := &appleStore{roots: x509.NewCertPool(), bundles: secrets, environment: opts.ProviderOptions["environment"]}
	switch a.environment {
	case "", "Production", "Sandbox":
	default:
		return nil, fmt.Errorf("provider_options: environment must be Production or Sandbox, got %q", a.environment)
	}
	root := appleRootG3
	if text := opts.ProviderOptions["root"]; text != "" {
		cert, err := parsePEMCert(text)
		if err != nil {
			return nil, fmt.Errorf("provider_options: root: %v", err)
		}
		root = cert.Raw
	}
	cert, err := x509.ParseCertificate(root)
	if err != nil {
		return nil, err
	}
	a.roots.AddCert(cert)
	return a, nil
}

// appleNotification is what the gateway reads of a decoded payload.
type appleNotification struct {
	NotificationUUID string `json:"notificationUUID"`
	SignedDate       int64  `json:"signedDate"`
	Data             struct {
		BundleID    string `json:"bundleId"`
		Environment string `json:"environment"`
	} `json:"data"`
	Summary *struct {
		BundleID    string `json:"bundleId"`
		Environment string `json:"environment"`
	} `json:"summary"`
}

func (a *appleStore) Verify(r *Request) (Result, error) {
	var body struct {
		SignedPayload string `json:"signedPayload"`
	}
	if !strictJSON(r.Body) || json.Unmarshal(r.Body, &body) != nil {
		return Result{}, ErrMalformedSignature
	}
	if body.SignedPayload == "" {
		return Result{}, ErrMissingSignature
	}
	t, err := parseJWS(body.SignedPayload)
	if err != nil || t.header.Alg != "ES256" || len(t.header.X5c) != 3 {
		return Result{}, ErrMalformedSignature
	}
	var n appleNotification
	if json.Unmarshal(t.payload, &n) != nil || n.NotificationUUID == "" || n.SignedDate == 0 {
		return Result{}, ErrMalformedSignature
	}
	bundle, environment := n.Data.BundleID, n.Data.Environment
	if n.Summary != nil {
		bundle, environment = n.Summary.BundleID, n.Summary.Environment
	}
	if !slices.Contains(a.bundles, bundle) || (a.environment != "" && environment != a.environment) {
		return Result{}, fmt.Errorf("%w: another app or environment", ErrInvalidSignature)
	}
	leaf, err := a.chain(t.header.X5c, time.UnixMilli(n.SignedDate))
	if err != nil {
		return Result{}, fmt.Errorf("%w: %v", ErrInvalidSignature, err)
	}
	if err := t.verify(leaf); err != nil {
		return Result{}, err
	}
	return Result{DedupKey: "apple:" + n.NotificationUUID}, nil
}

// chain checks x5c's leaf and intermediate against the pinned root at the
// time Apple signed, as Apple's library does without online checks, and
// returns the leaf's key. The x5c root is ignored: the pinned one is used.
func (a *appleStore) chain(x5c []string, signed time.Time) (*ecdsa.PublicKey, error) {
	var certs [2]*x509.Certificate
	for i := range certs {
		der, err := base64.StdEncoding.DecodeString(x5c[i])
		if err != nil {
			return nil, errors.New("x5c is not base64 DER")
		}
		if certs[i], err = x509.ParseCertificate(der); err != nil {
			return nil, err
		}
	}
	leaf, intermediate := certs[0], certs[1]
	if !hasExtension(leaf, appleLeafOID) || !hasExtension(intermediate, appleIntermediateOID) || !intermediate.IsCA {
		return nil, errors.New("certificates lack Apple's marker OIDs")
	}
	pool := x509.NewCertPool()
	pool.AddCert(intermediate)
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: a.roots, Intermediates: pool, CurrentTime: signed, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
		return nil, err
	}
	pub, ok := leaf.PublicKey.(*ecdsa.PublicKey)
	if !ok || pub.Curve != elliptic.P256() {
		return nil, errors.New("leaf key is not P-256")
	}
	return pub, nil
}

func hasExtension(c *x509.Certificate, oid asn1.ObjectIdentifier) bool {
	return slices.ContainsFunc(c.Extensions, func(e pkix.Extension) bool { return e.Id.Equal(oid) })
}

// appleTestKey is a test chain for `hookgate send`: a root to configure as
// provider_options root, and a leaf key with its chain to sign with.
type appleTestKey struct {
	Bundle       string `json:"bundle_id"`
	Root         string `json:"root"`
	Intermediate string `json:"intermediate"`
	Leaf         string `json:"leaf"`
	PrivateKey   string `json:"private_key"`
}

// appleKeys makes a root, an intermediate and a leaf marked as Apple's are.
func appleKeys() (secret, signingKey string, err error) {
	mk := func(tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey, error) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, nil, err
		}
		if parent == nil {
			parent, parentKey = tmpl, key
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
		if err != nil {
			return nil, nil, err
		}
		cert, err := x509.ParseCertificate(der)
		return cert, key, err
	}
	// Valid from 2000, so that samples dated in the past (tests) verify at
	// their signedDate as real notifications do.
	from, until := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), time.Now().Add(10*365*24*time.Hour)
	ca := func(name string, serial int64, ext ...pkix.Extension) *x509.Certificate {
		return &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name}, NotBefore: from, NotAfter: until,
			IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, ExtraExtensions: ext}
	}
	root, rootKey, err := mk(ca("Hookgate Test Root", 1), nil, nil)
	if err != nil {
		return "", "", err
	}
	inter, interKey, err := mk(ca("Hookgate Test Intermediate", 2, pkix.Extension{Id: appleIntermediateOID, Value: []byte{5, 0}}), root, rootKey)
	if err != nil {
		return "", "", err
	}
	leafTmpl := &x509.Certificate{SerialNumber: big.NewInt(3), Subject: pkix.Name{CommonName: "Hookgate Test Leaf"}, NotBefore: from, NotAfter: until,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtraExtensions: []pkix.Extension{{Id: appleLeafOID, Value: []byte{5, 0}}}}
	leaf, leafKey, err := mk(leafTmpl, inter, interKey)
	if err != nil {
		return "", "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(leafKey)
	if err != nil {
		return "", "", err
	}
	pemOf := func(t string, b []byte) string { return string(pem.EncodeToMemory(&pem.Block{Type: t, Bytes: b})) }
	k := appleTestKey{Bundle: "com.example.hookgate", Root: pemOf("CERTIFICATE", root.Raw), Intermediate: base64.StdEncoding.EncodeToString(inter.Raw),
		Leaf: base64.StdEncoding.EncodeToString(leaf.Raw), PrivateKey: pemOf("PRIVATE KEY", der)}
	return k.Bundle, string(mustJSON(k)), nil
}

// SignAppleNotification signs a notification payload with a key from
// GenerateKeys and returns the body Apple would send.
func SignAppleNotification(signingKey string, payload any) ([]byte, error) {
	var k appleTestKey
	if err := json.Unmarshal([]byte(signingKey), &k); err != nil || k.PrivateKey == "" {
		return nil, errors.New("apple-app-store signing key must be the JSON `hookgate keys new --provider apple-app-store` prints")
	}
	block, _ := pem.Decode([]byte(k.PrivateKey))
	rootBlock, _ := pem.Decode([]byte(k.Root))
	if block == nil || rootBlock == nil {
		return nil, errors.New("apple-app-store signing key: bad PEM")
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	priv, ok := parsed.(*ecdsa.PrivateKey)
	if err != nil || !ok {
		return nil, errors.New("apple-app-store signing key: not an EC key")
	}
	header, _ := json.Marshal(map[string]any{"alg": "ES256", "x5c": []string{k.Leaf, k.Intermediate, base64.StdEncoding.EncodeToString(rootBlock.Bytes)}})
	claims, err := json.Marshal(payload)
	if err != nil {
		return nil, err
	}
	signing := base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(claims)
	digest := digestOf(crypto.SHA256, signing)
	rInt, sInt, err := ecdsa.Sign(rand.Reader, priv, digest)
	if err != nil {
		return nil, err
	}
	sig := make([]byte, 64)
	rInt.FillBytes(sig[:32])
	sInt.FillBytes(sig[32:])
	return mustJSON(map[string]string{"signedPayload": signing + "." + base64.RawURLEncoding.EncodeToString(sig)}), nil
}

// AppleTestRoot is the root certificate (PEM) of a key from GenerateKeys,
// for provider_options root.
func AppleTestRoot(signingKey string) string {
	var k appleTestKey
	_ = json.Unmarshal([]byte(signingKey), &k)
	return k.Root
}
