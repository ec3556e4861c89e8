package verify

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"
)

// snsFixture is a signing key and a message signed with it.
type snsFixture struct {
	topic string
	priv  *rsa.PrivateKey
	der   []byte
}

func newSNSFixture(t *testing.T) snsFixture {
	t.Helper()
	topic, key, err := snsKeys()
	if err != nil {
		t.Fatal(err)
	}
	_, priv, der, err := parseSNSKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return snsFixture{topic: topic, priv: priv, der: der}
}

// message signs msg (Type and the rest) at now with the fixture's key,
// naming certURL (default: the stand-in's URL for the certificate).
func (f snsFixture) message(t *testing.T, msg map[string]string, version, certURL string) []byte {
	t.Helper()
	if certURL == "" {
		certURL = SNSCertURL(f.der)
	}
	if err := signSNS(msg, f.priv, certURL, version); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(msg)
	return b
}

func (f snsFixture) notification(now time.Time) map[string]string {
	return map[string]string{"Type": "Notification", "MessageId": "22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324", "TopicArn": f.topic,
		"Subject": "My First Message", "Message": "Hello world!", "Timestamp": now.UTC().Format("2006-01-02T15:04:05.000Z")}
}

func (f snsFixture) scheme(t *testing.T) Scheme {
	t.Helper()
	s, err := newSNS([]string{f.topic}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSNSSignatureVersions(t *testing.T) {
	standIn := useSNSStandIn(t)
	f := newSNSFixture(t)
	s := f.scheme(t)
	now := time.Now()
	for _, version := range []string{"1", "2"} {
		t.Run("v"+version, func(t *testing.T) {
			body := f.message(t, f.notification(now), version, "")
			if _, err := s.Verify(&Request{Body: body, Now: now}); err != nil {
				t.Fatalf("SignatureVersion %s rejected: %v", version, err)
			}
			// The other version's hash over the same signature fails.
			var m map[string]string
			json.Unmarshal(body, &m)
			m["SignatureVersion"] = map[string]string{"1": "2", "2": "1"}[version]
			swapped, _ := json.Marshal(m)
			if _, err := s.Verify(&Request{Body: swapped, Now: now}); !errors.Is(err, ErrInvalidSignature) {
				t.Fatalf("version swapped: %v", err)
			}
		})
	}
	// One certificate URL, fetched once, then cached.
	if n := standIn.certs.Load(); n != 1 {
		t.Errorf("certificate fetched %d times, want 1", n)
	}
}

func TestSNSTamperedFields(t *testing.T) {
	useSNSStandIn(t)
	f := newSNSFixture(t)
	s := f.scheme(t)
	now := time.Now()
	good := f.message(t, f.notification(now), "2", "")
	for field, value := range map[string]string{"Message": "Hello world?", "MessageId": "other", "Subject": "", "Timestamp": now.UTC().Add(time.Second).Format(time.RFC3339), "Type": "SubscriptionConfirmation"} {
		var m map[string]string
		json.Unmarshal(good, &m)
		if value == "" {
			delete(m, field)
		} else {
			m[field] = value
		}
		bad, _ := json.Marshal(m)
		if _, err := s.Verify(&Request{Body: bad, Now: now}); err == nil {
			t.Errorf("%s changed: accepted", field)
		}
	}
	// A key repeated by case could show a reader another Message.
	dup := strings.Replace(string(good), `"Message":`, `"message":"evil","Message":`, 1)
	if _, err := s.Verify(&Request{Body: []byte(dup), Now: now}); !errors.Is(err, ErrMalformedSignature) {
		t.Errorf("repeated key: %v", err)
	}
	// Without a Subject, the canonical string has none.
	n := f.notification(now)
	delete(n, "Subject")
	if _, err := s.Verify(&Request{Body: f.message(t, n, "2", ""), Now: now}); err != nil {
		t.Errorf("no Subject: %v", err)
	}
}

func TestSNSTopicBinding(t *testing.T) {
	standIn := useSNSStandIn(t)
	f := newSNSFixture(t)
	other, err := newSNS([]string{"arn:aws:sns:us-east-1:123456789012:someone-else"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if _, err := other.Verify(&Request{Body: f.message(t, f.notification(now), "2", ""), Now: now}); !errors.Is(err, ErrInvalidSignature) {
		t.Fatalf("another topic: %v", err)
	}
	if standIn.certs.Load() != 0 {
		t.Error("a certificate was fetched for a topic the source does not accept")
	}
	for _, bad := range []string{"", "my-topic", "arn:aws:sqs:us-east-1:123456789012:q", "arn:aws:sns:us-east-1:1234:t"} {
		if _, err := newSNS([]string{bad}, Options{}); err == nil {
			t.Errorf("secret %q accepted as a topic ARN", bad)
		}
	}
}

func TestSNSCertificateHost(t *testing.T) {
	standIn := useSNSStandIn(t)
	f := newSNSFixture(t) // a topic in us-east-1
	s := f.scheme(t)
	now := time.Now()
	path := "/SimpleNotificationService-0123456789abcdef0123456789abcdef.pem"
	for _, u := range []string{
		"http://sns.us-east-1.amazonaws.com" + path,
		"https://sns.us-east-1.amazonaws.com.evil.com" + path,
		"https://evil.com/sns.us-east-1.amazonaws.com" + path,
		"https://sns.us-east-1.amazonaws.com:8443" + path,
		"https://user@sns.us-east-1.amazonaws.com" + path,
		"https://sns.us-east-1.amazonaws.com/cert.pem",
		"https://sns.us-east-1.amazonaws.com/SimpleNotificationService-xyz.pem",
		"https://sns.us-east-1.amazonaws.com/a/SimpleNotificationService-0123456789abcdef.pem",
		"https://sns.us-east-1.amazonaws.com" + path + "?x=1",
		"https://s3.amazonaws.com" + path,
		// A legacy S3 virtual host of a bucket named sns, and another
		// region's SNS host, are not the topic's region's SNS.
		"https://sns.s3-us-west-2.amazonaws.com" + path,
		"https://sns.us-west-2.amazonaws.com" + path,
		standIn.URL + "evil/x.pem",
		standIn.URL + "/SimpleNotificationService-zz.pem",
	} {
		body := f.message(t, f.notification(now), "2", u)
		if _, err := s.Verify(&Request{Body: body, Now: now}); !errors.Is(err, ErrInvalidSignature) {
			t.Errorf("%s: %v", u, err)
		}
	}
	if n := standIn.certs.Load(); n != 0 {
		t.Errorf("%d fetches for foreign certificate URLs", n)
	}
	for region, host := range map[string]string{"us-east-1": "sns.us-east-1.amazonaws.com", "cn-north-1": "sns.cn-north-1.amazonaws.com.cn", "us-gov-west-1": "sns.us-gov-west-1.amazonaws.com"} {
		if u := "https://" + host + path; !snsURLAllowed(u, region, true, "") {
			t.Errorf("%s refused for %s", u, region)
		}
	}
	if snsURLAllowed(standIn.URL+path, "us-east-1", true, "") {
		t.Error("the stand-in allowed without the test variable")
	}
	if !snsURLAllowed("https://sns.eu-west-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=a&Token=b", "eu-west-1", false, "") ||
		snsURLAllowed("https://sns.eu-west-1.amazonaws.com/?Action=Unsubscribe&Token=b", "eu-west-1", false, "") {
		t.Error("SubscribeURL rule")
	}
}

// TestSNSCertificateChecks: what an SNS host serves is used only if it is a
// certificate SNS signs with.
func TestSNSCertificateChecks(t *testing.T) {
	f := newSNSFixture(t)
	_, _, der, _ := parseSNSKey(mustSNSKey(t))
	good, _ := x509.ParseCertificate(der)
	now := time.Now()
	if err := checkSNSCert(good, "us-east-1", now); err != nil {
		t.Fatalf("sample certificate: %v", err)
	}
	if err := checkSNSCert(good, "us-east-1", now.Add(2*365*24*time.Hour)); err == nil {
		t.Error("expired certificate accepted")
	}
	other := selfSigned(t, f, "evil.example.com")
	if err := checkSNSCert(other, "us-east-1", now); err == nil {
		t.Error("certificate for another name accepted")
	}
	for region, name := range map[string]string{"ap-east-1": "sns-signing.ap-east-1.amazonaws.com", "cn-north-1": "sns-cn-north-1.amazonaws.com.cn"} {
		if err := checkSNSCert(selfSigned(t, f, name), region, now); err != nil {
			t.Errorf("%s in %s: %v", name, region, err)
		}
	}
}

func mustSNSKey(t *testing.T) string {
	t.Helper()
	_, key, err := snsKeys()
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func selfSigned(t *testing.T, f snsFixture, name string) *x509.Certificate {
	t.Helper()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &f.priv.PublicKey, f.priv)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return cert
}

func TestSNSStaleAndFailedFetches(t *testing.T) {
	standIn := useSNSStandIn(t)
	f := newSNSFixture(t)
	s := f.scheme(t)
	now := time.Now()
	stale := f.message(t, f.notification(now.Add(-2*time.Hour)), "2", "")
	if _, err := s.Verify(&Request{Body: stale, Now: now}); !errors.Is(err, ErrStaleTimestamp) {
		t.Errorf("two hours old: %v", err)
	}
	if standIn.certs.Load() != 0 {
		t.Error("a certificate was fetched for a stale message")
	}
	// What an SNS URL serves that is no certificate is remembered: the
	// next message naming it is refused without a fetch.
	missing := standIn.URL + "/SimpleNotificationService-00.pem"
	for range 3 {
		if _, err := s.Verify(&Request{Body: f.message(t, f.notification(now), "2", missing), Now: now}); !errors.Is(err, ErrInvalidSignature) {
			t.Fatalf("missing certificate: %v", err)
		}
	}
	if n := standIn.certs.Load(); n != 1 {
		t.Errorf("missing certificate fetched %d times, want 1", n)
	}
}

// TestRemoteCache: misses spend the caller's budget and never push out a
// good entry; a spent budget or a failed fetch is ErrKeyUnavailable, a
// final answer is not; a good entry past its refresh age serves while it is
// fetched again.
func TestRemoteCache(t *testing.T) {
	c := newRemoteCache[int](2, time.Hour, time.Minute)
	now := time.Now()
	loads := 0
	good := func() (int, error) { loads++; return loads, nil }
	missing := func() (int, error) { loads++; return 0, gone{errors.New("404")} }
	down := func() (int, error) { loads++; return 0, errors.New("connection refused") }
	budget := newFetchLimiter(3, time.Hour)
	if v, err := c.get("a", now, budget, good); v != 1 || err != nil {
		t.Fatalf("a: %d %v", v, err)
	}
	if _, err := c.get("bogus", now, budget, missing); err == nil || errors.Is(err, ErrKeyUnavailable) {
		t.Fatalf("a final miss: %v", err)
	}
	if _, err := c.get("unreachable", now, budget, down); !errors.Is(err, ErrKeyUnavailable) {
		t.Fatalf("a failed fetch: %v", err)
	}
	if _, err := c.get("d", now, budget, good); !errors.Is(err, ErrKeyUnavailable) || !errors.Is(err, errFetchLimited) || loads != 3 {
		t.Fatalf("over budget: %v after %d loads", err, loads)
	}
	// Remembered misses cost nothing, and a good entry is still served.
	if _, err := c.get("bogus", now, budget, missing); err == nil || loads != 3 {
		t.Fatalf("remembered miss: %v, %d loads", err, loads)
	}
	if v, err := c.get("a", now, budget, good); err != nil || v != 1 {
		t.Fatalf("cached a: %d %v", v, err)
	}
	// A flood of misses on another budget leaves the good entry in place.
	flood := newFetchLimiter(1<<20, time.Nanosecond)
	for i := range 5000 {
		c.get(fmt.Sprint("kid-", i), now, flood, missing)
	}
	if v, err := c.get("a", now, nil, missing); err != nil || v != 1 {
		t.Fatalf("a after a flood of misses: %d %v", v, err)
	}
	if len(c.bad) > maxBadEntries {
		t.Fatalf("%d bad entries kept, bound %d", len(c.bad), maxBadEntries)
	}
	// Good entries evict only each other, least recently used first.
	c.get("b", now.Add(time.Second), nil, good)
	c.get("a", now.Add(2*time.Second), nil, good)
	c.get("c", now.Add(3*time.Second), nil, good)
	if _, ok := c.good["b"]; ok || c.good["a"] == nil || c.good["c"] == nil {
		t.Fatalf("good entries %v", c.good)
	}
	// Past its refresh age, a good entry serves while it is fetched again.
	renewed := make(chan struct{})
	slow := func() (int, error) { <-renewed; return 42, nil }
	late := now.Add(2 * time.Hour)
	if v, err := c.get("a", late, nil, slow); err != nil || v != 1 {
		t.Fatalf("stale a: %d %v", v, err)
	}
	close(renewed)
	waitUntil(t, func() bool { v, _ := c.get("a", late, nil, slow); return v == 42 })
	// A transient failure is remembered briefly, then fetched again.
	c.get("flaky", now, nil, down)
	before := loads
	c.get("flaky", now.Add(time.Second), nil, down)
	c.get("flaky", now.Add(transientFailures+time.Second), nil, down)
	if loads != before+1 {
		t.Fatalf("transient failure fetched %d more times, want 1", loads-before)
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
	}
}

func confirmationMessage(f snsFixture, typ string, now time.Time, subscribeURL, token string) map[string]string {
	return map[string]string{"Type": typ, "MessageId": "165545c9-2a5c-472c-8df2-7ff2be2b3b1b", "TopicArn": f.topic, "Token": token,
		"Message": "You have chosen to subscribe to the topic " + f.topic, "SubscribeURL": subscribeURL,
		"Timestamp": now.UTC().Format("2006-01-02T15:04:05.000Z")}
}

// followup answers a confirmation as the pipeline does once its record is
// stored.
func followup(t *testing.T, body []byte) *HandshakeResponse {
	t.Helper()
	resp, ok := snsConfirmation.Answer(&HandshakeRequest{Method: "POST", Header: http.Header{}, Body: body})
	if !ok || resp.Followup == nil || resp.Record == "" {
		t.Fatalf("answer %v %+v", ok, resp)
	}
	return resp.Followup(context.Background())
}

func TestSNSSubscriptionConfirmation(t *testing.T) {
	standIn := useSNSStandIn(t)
	f := newSNSFixture(t)
	s := f.scheme(t)
	now := time.Now()
	token := "2336412f37" + randomHex(16)
	confirmURL := standIn.URL + "/?Action=ConfirmSubscription&TopicArn=" + f.topic + "&Token=" + token
	body := f.message(t, confirmationMessage(f, "SubscriptionConfirmation", now, confirmURL, token), "1", "")
	if _, err := s.Verify(&Request{Body: body, Now: now}); err != nil {
		t.Fatalf("confirmation rejected: %v", err)
	}
	// Nothing is visited until the record is stored.
	resp, ok := snsConfirmation.Answer(&HandshakeRequest{Method: "POST", Header: http.Header{}, Body: body})
	if !ok || resp.Status != http.StatusOK || !strings.Contains(resp.Record, f.topic) || standIn.confirms.Load() != 0 {
		t.Fatalf("answer %v %+v, %d confirmations", ok, resp, standIn.confirms.Load())
	}
	if got := resp.Followup(context.Background()); got.Status != http.StatusOK || !strings.Contains(got.Reason, f.topic+":sub-1") {
		t.Fatalf("followup %+v", got)
	}
	// The same confirmation, sent again, is confirmed once.
	for range 5 {
		if got := followup(t, body); got.Status != http.StatusOK {
			t.Fatalf("again: %+v", got)
		}
	}
	if standIn.confirms.Load() != 1 {
		t.Fatalf("%d confirmations, want 1", standIn.confirms.Load())
	}
	// A SubscribeURL off the SNS host of the topic's region is never visited.
	for _, u := range []string{"https://evil.example/?Action=ConfirmSubscription", "https://sns.eu-west-1.amazonaws.com/?Action=ConfirmSubscription&Token=x"} {
		evil := f.message(t, confirmationMessage(f, "SubscriptionConfirmation", now, u, randomHex(8)), "2", "")
		if got := followup(t, evil); got.Status < 500 {
			t.Fatalf("foreign SubscribeURL %s: %+v", u, got)
		}
	}
	// An unsubscribe is recorded, never visited (that would subscribe again).
	unsub := f.message(t, confirmationMessage(f, "UnsubscribeConfirmation", now, confirmURL, token), "2", "")
	resp, ok = snsConfirmation.Answer(&HandshakeRequest{Method: "POST", Header: http.Header{}, Body: unsub})
	if !ok || resp.Status != http.StatusOK || !strings.HasPrefix(resp.Record, "aws-sns UnsubscribeConfirmation") || resp.Followup != nil || standIn.confirms.Load() != 1 {
		t.Fatalf("unsubscribe: %+v, %d confirmations", resp, standIn.confirms.Load())
	}
	// A notification is no handshake.
	if _, ok := snsConfirmation.Answer(&HandshakeRequest{Method: "POST", Body: f.message(t, f.notification(now), "2", "")}); ok {
		t.Fatal("a notification answered as a handshake")
	}
}

func TestXCRC(t *testing.T) {
	// The consumer secret and token of X's published CRC examples
	// (gist.github.com/jcipriano/46c4b3f379d214d57a9ddfa70dba49fe).
	secret := "z3ZX4v7mAAUGykl3EcmkqbartmuW8VFOOzCloLx9Q45P0hLrFu"
	req := &HandshakeRequest{Method: http.MethodGet, Query: map[string][]string{"crc_token": {"9b4507b3-9040-4669-9ca3-6b94edb50553"}}, Secrets: []string{secret}}
	resp, ok := xCRC.Answer(req)
	if !ok || resp.Status != http.StatusOK || resp.ContentType != "application/json" {
		t.Fatalf("answer %v %+v", ok, resp)
	}
	var got map[string]string
	json.Unmarshal(resp.Body, &got)
	// Recomputed with Python's hmac/hashlib/base64 from the gist's code.
	if want := "sha256=Cytd4Sq+NvEcV3MMrXxWJGJx5A+y/lXzzU2Maartkx8="; got["response_token"] != want {
		t.Fatalf("response_token %q, want %q", got["response_token"], want)
	}
	req.Method = http.MethodPost
	if _, ok := xCRC.Answer(req); ok {
		t.Error("a POST answered as a CRC")
	}
	// The answer MACs the token as the event signature MACs a body: only
	// tokens no event body can be are answered.
	req.Method = http.MethodGet
	for _, token := range []string{`{"for_user_id":"1"}`, `[1]`, "a b", strings.Repeat("A", 257), ""} {
		req.Query = map[string][]string{"crc_token": {token}}
		if _, ok := xCRC.Answer(req); ok {
			t.Errorf("crc_token %q answered", token)
		}
	}
}

// A confirmation that fails says why in the log, without the Token its URL
// carries.
func TestSNSConfirmFailureHidesToken(t *testing.T) {
	standIn := useSNSStandIn(t)
	standIn.Close() // SNS unreachable
	f := newSNSFixture(t)
	token := "secret-token-" + randomHex(8)
	body := f.message(t, confirmationMessage(f, "SubscriptionConfirmation", time.Now(), standIn.URL+"/?Action=ConfirmSubscription&Token="+token, token), "2", "")
	if resp := followup(t, body); resp.Status != http.StatusServiceUnavailable || resp.Reason == "" || strings.Contains(resp.Reason, token) {
		t.Fatalf("answer %+v", resp)
	}
}

// TestSNSFieldInjection: a message whose fields move into one another's
// value verifies as the original under name\nvalue\n canonicalisation; each
// such shape is refused, and the dedup key names what was signed.
func TestSNSFieldInjection(t *testing.T) {
	useSNSStandIn(t)
	f := newSNSFixture(t)
	s := f.scheme(t)
	now := time.Now()
	orig := f.notification(now)
	body := f.message(t, orig, "2", "")
	res, err := s.Verify(&Request{Body: body, Now: now})
	if err != nil || !strings.HasPrefix(res.DedupKey, "aws-sns:") {
		t.Fatalf("original: %v %q", err, res.DedupKey)
	}
	var signed map[string]any
	json.Unmarshal(body, &signed)
	edit := func(change func(m map[string]any)) []byte {
		m := map[string]any{}
		for k, v := range signed {
			m[k] = v
		}
		change(m)
		b, _ := json.Marshal(m)
		return b
	}
	for name, forged := range map[string][]byte{
		// The Subject moved into the MessageId: the same string to sign.
		"subject in the message id": edit(func(m map[string]any) {
			m["MessageId"] = m["MessageId"].(string) + "\nSubject\n" + m["Subject"].(string)
			delete(m, "Subject")
		}),
		"object subject":        edit(func(m map[string]any) { m["Subject"] = map[string]any{"x": 1} }),
		"number message id":     edit(func(m map[string]any) { m["MessageId"] = 7 }),
		"unknown type":          edit(func(m map[string]any) { m["Type"] = "Notice" }),
		"timestamp not RFC3339": edit(func(m map[string]any) { m["Timestamp"] = now.UTC().Format(time.RFC1123) }),
		"message id not a UUID": edit(func(m map[string]any) { m["MessageId"] = "not-a-uuid" }),
	} {
		if _, err := s.Verify(&Request{Body: forged, Now: now}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// The signed string of the injection really is the original's, so the
	// refusal above is what stops it.
	m := &snsMessage{fields: map[string]string{}, present: map[string]bool{}}
	for k, v := range orig {
		m.fields[k], m.present[k] = v, true
	}
	want, _ := snsStringToSign(m)
	m.fields["MessageId"] += "\nSubject\n" + m.fields["Subject"]
	delete(m.fields, "Subject")
	delete(m.present, "Subject")
	var b strings.Builder
	for _, k := range snsSigned("Notification") {
		if m.present[k] {
			b.WriteString(k + "\n" + m.fields[k] + "\n")
		}
	}
	if b.String() != string(want) {
		t.Fatal("the injected message does not sign as the original: the test proves nothing")
	}
	// Unsigned fields added to a captured message leave its dedup key.
	extra := edit(func(m map[string]any) {
		m["MessageAttributes"] = map[string]any{"k": map[string]string{"Type": "String", "Value": "v"}}
		m["UnsubscribeURL"] = "https://evil.example/"
	})
	res2, err := s.Verify(&Request{Body: extra, Now: now})
	if err != nil || res2.DedupKey != res.DedupKey {
		t.Fatalf("unsigned fields added: %v, key %q, want %q", err, res2.DedupKey, res.DedupKey)
	}
}

// TestFetchFailuresAreUnavailable: a certificate or key that cannot be
// fetched, or a spent budget, is ErrKeyUnavailable (503), never a forgery.
func TestFetchFailuresAreUnavailable(t *testing.T) {
	standIn := useSNSStandIn(t)
	f := newSNSFixture(t)
	now := time.Now()
	standIn.Close()
	if _, err := f.scheme(t).Verify(&Request{Body: f.message(t, f.notification(now), "2", ""), Now: now}); !errors.Is(err, ErrKeyUnavailable) || errors.Is(err, ErrInvalidSignature) {
		t.Fatalf("SNS unreachable: %v", err)
	}
	budget := snsFetchBudget
	snsFetchBudget = func() *fetchLimiter { return newFetchLimiter(0, time.Hour) }
	t.Cleanup(func() { snsFetchBudget = budget })
	useSNSStandIn(t)
	g := newSNSFixture(t)
	if _, err := g.scheme(t).Verify(&Request{Body: g.message(t, g.notification(now), "2", ""), Now: now}); !errors.Is(err, ErrKeyUnavailable) {
		t.Fatalf("budget spent: %v", err)
	}
}
