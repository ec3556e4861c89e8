package verify

import (
	"crypto/rsa"
	"encoding/json"
	"errors"
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
	f := newSNSFixture(t)
	s := f.scheme(t)
	now := time.Now()
	path := "/SimpleNotificationService-0123456789abcdef0123456789abcdef.pem"
	for _, u := range []string{
		"http://sns.us-east-1.amazonaws.com" + path,
		"https://sns.us-east-1.amazonaws.com.evil.com" + path,
		"https://evil.com/sns.us-east-1.amazonaws.com" + path,
		"https://sns.us-east-1.amazonaws.com:8443" + path,
		"https://user@sns.us-east-1.amazonaws.com" + path,
		"https://sns.us-east-1.amazonaws.com/cert.txt",
		"https://s3.amazonaws.com" + path,
		"https://sns.x.amazonaws.com" + path,
		standIn.URL + "evil/x.pem",
	} {
		body := f.message(t, f.notification(now), "2", u)
		if _, err := s.Verify(&Request{Body: body, Now: now}); !errors.Is(err, ErrInvalidSignature) {
			t.Errorf("%s: %v", u, err)
		}
	}
	if n := standIn.certs.Load(); n != 0 {
		t.Errorf("%d fetches for foreign certificate URLs", n)
	}
	for _, u := range []string{"https://sns.us-east-1.amazonaws.com" + path, "https://sns.cn-north-1.amazonaws.com.cn" + path, "https://sns.us-gov-west-1.amazonaws.com" + path} {
		if !snsURLAllowed(u, true, "") {
			t.Errorf("%s refused", u)
		}
	}
	if snsURLAllowed(standIn.URL+path, true, "") {
		t.Error("the stand-in allowed without the test variable")
	}
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
	// A URL that answers 404 is remembered: the next message naming it is
	// refused without a fetch.
	missing := standIn.URL + "/SimpleNotificationService-!!.pem"
	for range 3 {
		if _, err := s.Verify(&Request{Body: f.message(t, f.notification(now), "2", missing), Now: now}); !errors.Is(err, ErrInvalidSignature) {
			t.Fatalf("missing certificate: %v", err)
		}
	}
	if n := standIn.certs.Load(); n != 1 {
		t.Errorf("missing certificate fetched %d times, want 1", n)
	}
}

func TestSNSFetchBudget(t *testing.T) {
	c := newRemoteCache[int](4, time.Minute, newFetchLimiter(2, time.Hour))
	now := time.Now()
	loads := 0
	load := func() (int, error) { loads++; return loads, nil }
	for _, k := range []string{"a", "b", "c", "a"} {
		c.get(k, now, 0, load)
	}
	if _, err := c.get("d", now, 0, load); !errors.Is(err, errFetchLimited) || loads != 2 {
		t.Fatalf("over budget: %v after %d loads", err, loads)
	}
	if v, err := c.get("a", now, 0, load); err != nil || v != 1 {
		t.Fatalf("cached a: %d %v", v, err)
	}
	// Bounded: entries beyond max evict the oldest.
	big := newRemoteCache[int](2, time.Minute, nil)
	for i, k := range []string{"a", "b", "c"} {
		big.get(k, now.Add(time.Duration(i)*time.Second), 0, load)
	}
	if len(big.entries) != 2 || big.entries["a"] != nil {
		t.Fatalf("entries %v", big.entries)
	}
}

func confirmationMessage(f snsFixture, typ string, now time.Time, subscribeURL string) map[string]string {
	return map[string]string{"Type": typ, "MessageId": "165545c9-2a5c-472c-8df2-7ff2be2b3b1b", "TopicArn": f.topic, "Token": "2336412f37",
		"Message": "You have chosen to subscribe to the topic " + f.topic, "SubscribeURL": subscribeURL,
		"Timestamp": now.UTC().Format("2006-01-02T15:04:05.000Z")}
}

func TestSNSSubscriptionConfirmation(t *testing.T) {
	standIn := useSNSStandIn(t)
	f := newSNSFixture(t)
	s := f.scheme(t)
	now := time.Now()
	confirmURL := standIn.URL + "/?Action=ConfirmSubscription&TopicArn=" + f.topic + "&Token=2336412f37"
	body := f.message(t, confirmationMessage(f, "SubscriptionConfirmation", now, confirmURL), "1", "")
	if _, err := s.Verify(&Request{Body: body, Now: now}); err != nil {
		t.Fatalf("confirmation rejected: %v", err)
	}
	resp, ok := snsConfirmation.Answer(&HandshakeRequest{Method: "POST", Header: http.Header{}, Body: body})
	if !ok || resp.Status != http.StatusOK || !strings.Contains(resp.Record, f.topic+":sub-1") {
		t.Fatalf("answer %v %+v", ok, resp)
	}
	if standIn.confirms.Load() != 1 {
		t.Fatalf("%d confirmations, want 1", standIn.confirms.Load())
	}
	// A SubscribeURL off SNS's hosts is never visited.
	evil := f.message(t, confirmationMessage(f, "SubscriptionConfirmation", now, "https://evil.example/?Action=ConfirmSubscription"), "2", "")
	resp, ok = snsConfirmation.Answer(&HandshakeRequest{Method: "POST", Header: http.Header{}, Body: evil})
	if !ok || resp.Status < 500 || resp.Record != "" {
		t.Fatalf("foreign SubscribeURL: %+v", resp)
	}
	// An unsubscribe is recorded, never visited (that would subscribe again).
	unsub := f.message(t, confirmationMessage(f, "UnsubscribeConfirmation", now, confirmURL), "2", "")
	resp, ok = snsConfirmation.Answer(&HandshakeRequest{Method: "POST", Header: http.Header{}, Body: unsub})
	if !ok || resp.Status != http.StatusOK || !strings.HasPrefix(resp.Record, "aws-sns UnsubscribeConfirmation") || standIn.confirms.Load() != 1 {
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
	body := f.message(t, confirmationMessage(f, "SubscriptionConfirmation", time.Now(), standIn.URL+"/?Action=ConfirmSubscription&Token=secret-token-42"), "2", "")
	resp, ok := snsConfirmation.Answer(&HandshakeRequest{Method: "POST", Body: body})
	if !ok || resp.Status != http.StatusServiceUnavailable || resp.Reason == "" || strings.Contains(resp.Reason, "secret-token-42") {
		t.Fatalf("answer %+v", resp)
	}
}
