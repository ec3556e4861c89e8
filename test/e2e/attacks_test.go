package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/samples"
	"github.com/hookgate/hookgate/internal/verify"
)

// The attacks of docs/security.md's "Findings of the third review", each
// made against the real binary.

// TestXCRCIsNoSigningOracle: X's CRC answer is the HMAC the event
// signature uses. Asked for the CRC of an event body, the gateway must
// not answer, and an event signed with any CRC answer must be refused.
func TestXCRCIsNoSigningOracle(t *testing.T) {
	up := newRecorder(t, "", nil)
	secret := "x-consumer-secret-0123456789abcdef"
	dir, port, admin := newGatewayDir(t, fmt.Sprintf("upstreams:\n  legacy:\n    url: http://%s\nsources:\n  x:\n    path: /hooks/x\n    provider: x\n    secrets: [%q]\n    default: [legacy]\n", up.addr, secret), up.addr)
	g := startGateway(t, dir, port, admin)
	crc := func(token string) (int, string) {
		resp, err := http.Get(g.url("/hooks/x?crc_token=" + url.QueryEscape(token)))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var answer struct {
			ResponseToken string `json:"response_token"`
		}
		json.Unmarshal(b, &answer)
		return resp.StatusCode, answer.ResponseToken
	}
	forged := []string{
		`{"for_user_id":"2244994945","tweet_create_events":[{"id_str":"1","text":"forged"}]}`,
		` {"for_user_id":"1"}`,
		`[{"for_user_id":"1"}]`,
	}
	for _, body := range forged {
		status, token := crc(body)
		if token != "" {
			t.Errorf("CRC of an event body answered %d with a response_token", status)
		}
		if status := postSigned(t, g, "/hooks/x", "X-Twitter-Webhooks-Signature", token, body); status != http.StatusUnauthorized {
			t.Errorf("event signed with the CRC answer for it: %d, want 401", status)
		}
	}
	// A token of X's shape is answered, but is no event.
	for _, token := range []string{"crc-e2e-token", "MjAxNy0wNy0xMiAxODo1NzoyNy40MTMwMTA=", "9b4507b3-9040-4669-9ca3-6b94edb50553"} {
		status, answer := crc(token)
		if status != 200 || answer == "" {
			t.Fatalf("CRC of %q: %d %q", token, status, answer)
		}
		if status := postSigned(t, g, "/hooks/x", "X-Twitter-Webhooks-Signature", answer, token); status != http.StatusUnauthorized {
			t.Errorf("token %q as an event body, signed with its CRC answer: %d, want 401", token, status)
		}
	}
	time.Sleep(300 * time.Millisecond)
	if got := up.all(); len(got) != 0 {
		t.Fatalf("%d forged events delivered", len(got))
	}
}

// postSigned posts body with one signature header and returns the status.
func postSigned(t *testing.T, g *gateway, path, header, value, body string) int {
	t.Helper()
	h := http.Header{}
	if value != "" {
		h.Set(header, value)
	}
	status, _, _ := g.post(path, h, []byte(body))
	return status
}

// postPadded sends n signed GitHub events of about size bytes, from
// workers goroutines, and returns how many were ACKed; each request waits
// at most timeout.
func postPadded(t *testing.T, g *gateway, prefix string, n, size, workers int, timeout time.Duration) int {
	t.Helper()
	github := newSigner(t, "github", "gh-e2e-secret-0123456789")
	client := &http.Client{Timeout: timeout}
	var acked atomic.Int32
	var wg sync.WaitGroup
	next := atomic.Int32{}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)); i <= n; i = int(next.Add(1)) {
				body := []byte(fmt.Sprintf(`{"action":"opened","n":%d,"run":%q,"pad":%q}`, i, prefix, strings.Repeat("x", size)))
				h := github.sign(t, body, "")
				h.Set("X-GitHub-Delivery", fmt.Sprintf("%s-%d", prefix, i))
				h.Set("Content-Type", "application/json")
				req, _ := http.NewRequest(http.MethodPost, g.url("/webhooks/github"), bytes.NewReader(body))
				req.Header = h
				resp, err := client.Do(req)
				if err != nil {
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 200 {
					acked.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return int(acked.Load())
}

// TestStalledBackupDoesNotStopIntake: a backup client that stops reading
// holds no read transaction, so bbolt can still grow its map: events sent
// meanwhile are ACKed, and the store does not balloon.
func TestStalledBackupDoesNotStopIntake(t *testing.T) {
	down := fmt.Sprintf("127.0.0.1:%d", freePort(t)) // deliveries stay pending
	dir, port, admin := newGatewayDir(t, strings.Replace(routesFor(down), "max_body: 64KiB", "max_body: 1MiB", 1), down)
	g := startGateway(t, dir, port, admin)
	// Enough bodies that the archive outlasts the socket buffers.
	if n := postPadded(t, g, "fill", 1200, 8<<10, 8, 30*time.Second); n != 1200 {
		t.Fatalf("%d of 1200 events ACKed before the backup", n)
	}
	conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", admin))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(conn, "GET /hookgate/backup HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", admin)
	head := make([]byte, 1024)
	if _, err := io.ReadFull(conn, head); err != nil || !strings.HasPrefix(string(head), "HTTP/1.1 200") {
		t.Fatalf("backup: %v %q", err, head[:min(len(head), 40)])
	}
	// The backup client now reads nothing more.
	storeFile := filepath.Join(dir, "data", "hookgate.db")
	sizeBefore := fileSize(t, storeFile)
	during := envCount(t, "HOOKGATE_STALLED_BACKUP_EVENTS", 3000)
	n := postPadded(t, g, "during", during, 8<<10, 8, 10*time.Second)
	sizeAfter := fileSize(t, storeFile)
	t.Logf("with a backup client stalled: %d of %d events ACKed; store file %d KiB before, %d KiB after", n, during, sizeBefore>>10, sizeAfter>>10)
	if n != during {
		t.Fatalf("%d of %d events ACKed while a backup client stalled", n, during)
	}
	if sizeAfter > sizeBefore+64<<20 {
		t.Fatalf("store file grew from %d to %d bytes while a backup client stalled", sizeBefore, sizeAfter)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// TestBackupFollowsNoPlantedLinks: names an attacker plants beside the
// backup's target (the working copy's old names, a symlinked body folder)
// are never written through.
func TestBackupFollowsNoPlantedLinks(t *testing.T) {
	up := newRecorder(t, "", nil)
	dir, port, admin := newGatewayDir(t, routesFor(up.addr), up.addr)
	g := startGateway(t, dir, port, admin)
	if n := postPadded(t, g, "links", 20, 100, 2, 10*time.Second); n != 20 {
		t.Fatalf("%d of 20 ACKed", n)
	}
	out := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	writeFile(t, victim, "precious")
	to := filepath.Join(out, "copy.db")
	// The working names of earlier versions, planted with links to the
	// victim for every segment name a small store has.
	planted := to + ".tmp.bodies"
	if err := os.Mkdir(planted, 0o777); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		os.Symlink(victim, filepath.Join(planted, fmt.Sprintf("%016x.seg", i)))
	}
	if res, err := g.cli("backup", "--to", to); err != nil {
		t.Fatalf("backup: %v\n%s", err, res)
	}
	if got := readFile(t, victim); got != "precious" {
		t.Fatalf("the victim file was written through a planted link: %d bytes now", len(got))
	}
	// A body folder that is a link is refused, not written through.
	victimDir := t.TempDir()
	to2 := filepath.Join(out, "copy2.db")
	os.Symlink(victimDir, to2+".bodies")
	if res, err := g.cli("backup", "--to", to2); err == nil {
		t.Fatalf("backup beside a linked body folder succeeded:\n%s", res)
	}
	if entries, _ := os.ReadDir(victimDir); len(entries) != 0 {
		t.Fatalf("%d files written into the linked folder", len(entries))
	}
	leftovers, _ := filepath.Glob(filepath.Join(out, ".hookgate-backup-*"))
	if len(leftovers) != 0 {
		t.Fatalf("working copies left behind: %v", leftovers)
	}
}

// TestSecretsStayOutOfLogs: with bodies logged at DEBUG and mask_fields
// naming something else, a source's credential fields (Microsoft Graph's
// clientState, SNS's subscription URLs) are masked; an alert target whose
// path is its credential is named by scheme and host only, in logs and in
// the attempts the admin API shows.
func TestSecretsStayOutOfLogs(t *testing.T) {
	backend := newRecorder(t, "", func(int) int { return http.StatusBadRequest }) // dead at once
	const clientState = "graph-client-state-0123456789"
	const alertPath = "/services/T0/B0/alert-path-credential"
	t.Setenv("ALERT_WEBHOOK_URL", fmt.Sprintf("http://127.0.0.1:%d%s", freePort(t), alertPath)) // nothing listens
	// A literal secret would be in Caddy's own DEBUG dump of the config:
	// docs/security.md says to use placeholders.
	t.Setenv("GRAPH_CLIENT_STATE", clientState)
	routes := fmt.Sprintf(`
logging:
  bodies: true
  mask_fields: [note]
upstreams:
  legacy:
    url: http://%s
    retry:
      max_attempts: 1
sources:
  graph:
    path: /webhooks/graph
    provider: microsoft-graph
    secrets: ["{env.GRAPH_CLIENT_STATE}"]
    default: [legacy]
alerts:
  - name: ops
    to: "{env.ALERT_WEBHOOK_URL}"
    format: slack
    on:
      dead: true
`, backend.addr)
	dir, port, admin := newGatewayDir(t, routes, backend.addr)
	g := startGateway(t, dir, port, admin)
	body := fmt.Sprintf(`{"value":[{"subscriptionId":"s-1","clientState":%q,"changeType":"created","resource":"Users/1/Messages/1","note":"n"}]}`, clientState)
	if status, _, resp := g.post("/webhooks/graph", nil, []byte(body)); status != 200 {
		t.Fatalf("graph event: %d %s", status, resp)
	}
	var alertEvent string
	waitFor(t, "an attempt of the alert", 30*time.Second, func() bool {
		_, list := g.admin(http.MethodGet, "/hookgate/events?source=hookgate-alerts")
		events, _ := list["events"].([]any)
		if len(events) == 0 {
			return false
		}
		alertEvent = events[0].(map[string]any)["id"].(string)
		_, ev := g.admin(http.MethodGet, "/hookgate/events/"+alertEvent)
		ds, _ := ev["deliveries"].([]any)
		if len(ds) != 1 {
			return false
		}
		history, _ := ds[0].(map[string]any)["history"].([]any)
		return len(history) > 0
	})
	_, ev := g.admin(http.MethodGet, "/hookgate/events/"+alertEvent)
	shown, _ := json.Marshal(ev)
	if strings.Contains(string(shown), "alert-path-credential") || !strings.Contains(string(shown), "127.0.0.1") {
		t.Errorf("the alert's attempts show: %s", shown)
	}
	if log := g.log.String(); strings.Contains(log, clientState) || strings.Contains(log, "alert-path-credential") {
		t.Errorf("a secret reached the log:\n%s", log)
	}
	if !strings.Contains(g.log.String(), `\"note\":\"[masked]\"`) && !strings.Contains(g.log.String(), `"note":"[masked]"`) {
		t.Errorf("the body was not logged masked")
	}
}

// TestValidateRoutesWarnsOfLiteralSecrets: a secret written out in
// routes.yaml ends up in Caddy's configuration; validate-routes says where,
// for each one, and says nothing of placeholders or public keys.
func TestValidateRoutesWarnsOfLiteralSecrets(t *testing.T) {
	dir := t.TempDir()
	routes := filepath.Join(dir, "routes.yaml")
	writeFile(t, routes, `upstreams:
  u:
    url: http://127.0.0.1:1
sources:
  gh:
    path: /hooks/gh
    provider: github
    secrets: ["gh-literal-0123456789", "{env.HOOKGATE_TEST_GH}"]
    default: [u]
  sns:
    path: /hooks/sns
    provider: aws-sns
    secrets: ["arn:aws:sns:us-east-1:123456789012:orders"]
    default: [u]
  meta:
    path: /hooks/meta
    provider: meta
    secrets: ["{file./run/secrets/meta}"]
    verify_token: plain-verify-token
    default: [u]
alerts:
  - name: ops
    to: https://hooks.slack.com/services/T0/B0/literal
    on: {dead: true}
`)
	writeFile(t, filepath.Join(dir, "meta"), "meta-secret-0123456789")
	text, _ := os.ReadFile(routes)
	writeFile(t, routes, strings.Replace(string(text), "/run/secrets/meta", filepath.Join(dir, "meta"), 1))
	cmd := exec.Command(binary, "validate-routes", routes)
	cmd.Env = append(os.Environ(), "HOOKGATE_TEST_GH=gh-env-0123456789")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("validate-routes: %v\n%s", err, out)
	}
	for _, want := range []string{
		routes + ":8:15: warning: source gh.secrets is a literal secret",
		routes + ":19:19: warning: source meta.verify_token is a literal secret",
		routes + ":23:9: warning: alerts[0].to is a literal secret",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if n := strings.Count(string(out), "literal secret"); n != 3 {
		t.Errorf("%d warnings, want 3:\n%s", n, out)
	}
}

// TestDistinctEventsAboutOneObjectAreDelivered: Plaid, WhatsApp and
// Postmark send several events about one item or message; each is a new
// event, and a provider's retry of one is still a duplicate.
func TestDistinctEventsAboutOneObjectAreDelivered(t *testing.T) {
	up := newRecorder(t, "", nil)
	plaidPreset, _ := verify.Lookup("plaid")
	plaidPub, plaidKey, err := verify.GenerateKeys(plaidPreset)
	if err != nil {
		t.Fatal(err)
	}
	const appSecret = "whatsapp-app-secret-0123456789"
	t.Setenv("E2E_PLAID_JWK", plaidPub)
	t.Setenv("E2E_POSTMARK", "hooks:postmark-password-0123")
	t.Setenv("E2E_WHATSAPP", appSecret)
	routes := fmt.Sprintf(`upstreams:
  legacy:
    url: http://%s
sources:
  plaid:
    path: /hooks/plaid
    provider: plaid
    secrets: ["{env.E2E_PLAID_JWK}"]
    default: [legacy]
  whatsapp:
    path: /hooks/whatsapp
    provider: whatsapp
    secrets: ["{env.E2E_WHATSAPP}"]
    default: [legacy]
  postmark:
    path: /hooks/postmark
    provider: postmark
    secrets: ["{env.E2E_POSTMARK}"]
    default: [legacy]
`, up.addr)
	dir, port, admin := newGatewayDir(t, routes, up.addr)
	g := startGateway(t, dir, port, admin)
	send := func(path string, h http.Header, body []byte) (int, bool) {
		status, hdr, _ := g.post(path, h, body)
		return status, hdr.Get("Hookgate-Duplicate") == "true"
	}
	// Plaid: three updates of one item, byte for byte alike, each signed.
	plaidBody := []byte(`{"webhook_type":"TRANSACTIONS","webhook_code":"DEFAULT_UPDATE","item_id":"item-1","new_transactions":3,"environment":"sandbox","error":null}`)
	var firstPlaid http.Header
	for i := range 3 {
		h, err := samples.Sign(plaidPreset, plaidKey, samples.Sample{Body: plaidBody, Header: http.Header{}}, g.url("/hooks/plaid"), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			firstPlaid = h
		}
		if status, dup := send("/hooks/plaid", h, plaidBody); status != 200 || dup {
			t.Fatalf("plaid update %d: %d duplicate=%v", i+1, status, dup)
		}
	}
	if _, dup := send("/hooks/plaid", firstPlaid, plaidBody); !dup {
		t.Fatal("the first Plaid update sent again was not a duplicate")
	}
	// WhatsApp: sent, delivered, read of one message.
	wa := newSigner(t, "whatsapp", appSecret)
	var firstWA []byte
	for i, status := range []string{"sent", "delivered", "read"} {
		body := []byte(fmt.Sprintf(`{"object":"whatsapp_business_account","entry":[{"id":"102290129340398","changes":[{"field":"messages","value":{"messaging_product":"whatsapp","statuses":[{"id":"wamid.HBgM1","status":%q,"timestamp":"17000000%02d","recipient_id":"16315551181"}]}}]}]}`, status, i))
		if i == 0 {
			firstWA = body
		}
		if code, dup := send("/hooks/whatsapp", wa.sign(t, body, ""), body); code != 200 || dup {
			t.Fatalf("whatsapp %s: %d duplicate=%v", status, code, dup)
		}
	}
	if _, dup := send("/hooks/whatsapp", wa.sign(t, firstWA, ""), firstWA); !dup {
		t.Fatal("the first WhatsApp status sent again was not a duplicate")
	}
	// Postmark: two clicks on one message.
	auth := http.Header{"Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte("hooks:postmark-password-0123"))}}
	for i, at := range []string{"2026-12-01T10:00:00Z", "2026-12-01T10:05:00Z"} {
		body := []byte(`{"RecordType":"Click","MessageID":"883953f4-6105-42a2-a16a-77a8eac79483","ReceivedAt":"` + at + `","OriginalLink":"https://example.com"}`)
		if code, dup := send("/hooks/postmark", auth, body); code != 200 || dup {
			t.Fatalf("postmark click %d: %d duplicate=%v", i+1, code, dup)
		}
	}
	waitFor(t, "3 + 3 + 2 events delivered", 20*time.Second, func() bool { return len(up.byEvent()) >= 8 })
	time.Sleep(300 * time.Millisecond)
	if n := len(up.byEvent()); n != 8 {
		t.Fatalf("%d events delivered, want 8", n)
	}
}

// TestKeyFetchStarvationIs503: bogus certificate URLs and kids, each of the
// shape SNS's and Plaid's have, spend a source's fetch budget; a genuine
// event whose key is not cached yet then gets 503 with Retry-After (the
// provider retries), never 401 (which ends the event), and is accepted
// once the budget refills. A certificate in use is never pushed out of the
// cache by the misses.
func TestKeyFetchStarvationIs503(t *testing.T) {
	base, _ := snsStandIn(t)
	p, _ := verify.Lookup("aws-sns")
	topic, key, err := verify.GenerateKeys(p)
	if err != nil {
		t.Fatal(err)
	}
	_, rotatedKey, err := verify.GenerateKeys(p) // AWS rotated its certificate
	if err != nil {
		t.Fatal(err)
	}
	up := newRecorder(t, "", nil)
	dir, port, admin := newGatewayDir(t, fmt.Sprintf("upstreams:\n  legacy:\n    url: http://%s\nsources:\n  sns:\n    path: /hooks/sns\n    provider: aws-sns\n    secrets: [%q]\n    default: [legacy]\n", up.addr, topic), up.addr)
	g := startGateway(t, dir, port, admin)
	n := 0
	message := func(signingKey string) []byte {
		n++
		body, err := verify.SignSNSMessage(signingKey, map[string]string{"Type": "Notification", "MessageId": fmt.Sprintf("3f1c2a9e-5b7d-4e21-9c3a-%012d", n), "TopicArn": topic,
			"Message": fmt.Sprintf("order %d", n), "Timestamp": time.Now().UTC().Format("2006-01-02T15:04:05.000Z")}, "2")
		if err != nil {
			t.Fatal(err)
		}
		return body
	}
	if status, _, _ := g.post("/hooks/sns", nil, message(key)); status != 200 {
		t.Fatalf("genuine message: %d", status)
	}
	// Bogus certificate URLs of SNS's shape: each a fetch the stand-in
	// answers with no certificate.
	forged := func(i int) []byte {
		var m map[string]string
		json.Unmarshal(message(key), &m)
		m["SigningCertURL"] = fmt.Sprintf("%s/SimpleNotificationService-%032x.pem", base, i)
		b, _ := json.Marshal(m)
		return b
	}
	statuses := map[int]int{}
	for i := range 40 {
		status, _, _ := g.post("/hooks/sns", nil, forged(i))
		statuses[status]++
	}
	if statuses[200] != 0 || statuses[401] == 0 || statuses[503] == 0 {
		t.Fatalf("forged certificate URLs answered %v: want 401 while the budget lasts, then 503", statuses)
	}
	// The cached certificate still serves.
	if status, _, _ := g.post("/hooks/sns", nil, message(key)); status != 200 {
		t.Fatalf("genuine message with its certificate cached, after the flood: %d", status)
	}
	// A rotated certificate, not cached, while the budget is spent.
	rotated := message(rotatedKey)
	status, hdr, _ := g.post("/hooks/sns", nil, rotated)
	if status != 503 || hdr.Get("Retry-After") == "" {
		t.Fatalf("genuine message with a new certificate, budget spent: %d (Retry-After %q), want 503", status, hdr.Get("Retry-After"))
	}
	waitFor(t, "the provider's retry accepted once the budget refills", 30*time.Second, func() bool {
		status, _, _ := g.post("/hooks/sns", nil, rotated)
		return status == 200
	})
	t.Logf("forged certificate URLs answered %v; the genuine message with a rotated certificate got 503, then 200", statuses)
}

// TestSNSFieldInjectionAndReplays: a message whose MessageId carries its
// Subject verifies as the original under SNS's canonical string, and is
// refused; a signed SubscriptionConfirmation sent five times is one record
// and one confirmation; a certificate URL on a legacy S3 host named sns is
// refused without a fetch.
func TestSNSFieldInjectionAndReplays(t *testing.T) {
	base, confirms := snsStandIn(t)
	p, _ := verify.Lookup("aws-sns")
	topic, key, err := verify.GenerateKeys(p)
	if err != nil {
		t.Fatal(err)
	}
	up := newRecorder(t, "", nil)
	dir, port, admin := newGatewayDir(t, fmt.Sprintf("upstreams:\n  legacy:\n    url: http://%s\nsources:\n  sns:\n    path: /hooks/sns\n    provider: aws-sns\n    secrets: [%q]\n    default: [legacy]\n", up.addr, topic), up.addr)
	g := startGateway(t, dir, port, admin)
	ts := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	orig, err := verify.SignSNSMessage(key, map[string]string{"Type": "Notification", "MessageId": "0f6a5b6e-1d4c-4c8e-9a51-7d2f0b7a1e03", "TopicArn": topic,
		"Subject": "shipped", "Message": "order 7", "Timestamp": ts}, "2")
	if err != nil {
		t.Fatal(err)
	}
	if status, _, _ := g.post("/hooks/sns", nil, orig); status != 200 {
		t.Fatalf("original: %d", status)
	}
	var m map[string]string
	json.Unmarshal(orig, &m)
	m["MessageId"] += "\nSubject\n" + m["Subject"]
	delete(m, "Subject")
	injected, _ := json.Marshal(m)
	if status, _, _ := g.post("/hooks/sns", nil, injected); status != 401 {
		t.Fatalf("injected MessageId: %d, want 401", status)
	}
	// Unsigned fields added to the capture make it no new event.
	var extra map[string]any
	json.Unmarshal(orig, &extra)
	extra["MessageAttributes"] = map[string]any{"a": map[string]string{"Type": "String", "Value": "x"}}
	withAttrs, _ := json.Marshal(extra)
	if _, hdr, _ := g.post("/hooks/sns", nil, withAttrs); hdr.Get("Hookgate-Duplicate") != "true" {
		t.Fatal("the capture with MessageAttributes added was not a duplicate")
	}
	token := "2336412f37fb687f5d51e6e241d09c805a5a57b30d712f794cc5f6a988666d92"
	confirmation, err := verify.SignSNSMessage(key, map[string]string{"Type": "SubscriptionConfirmation", "MessageId": "0f6a5b6e-1d4c-4c8e-9a51-7d2f0b7a1e04", "TopicArn": topic,
		"Token": token, "Message": "confirm", "SubscribeURL": base + "/?Action=ConfirmSubscription&TopicArn=" + topic + "&Token=" + token, "Timestamp": ts}, "2")
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for range 5 {
		status, hdr, _ := g.post("/hooks/sns", nil, confirmation)
		if status != 200 {
			t.Fatalf("confirmation: %d", status)
		}
		ids[hdr.Get("Hookgate-Event-Id")] = true
	}
	if len(ids) != 1 || confirms.Load() != 1 {
		t.Fatalf("five sends of one confirmation: %d records, %d confirmation GETs; want 1 and 1", len(ids), confirms.Load())
	}
	json.Unmarshal(orig, &m)
	m["SigningCertURL"] = "https://sns.s3-us-west-2.amazonaws.com/SimpleNotificationService-0123456789abcdef0123456789abcdef.pem"
	s3, _ := json.Marshal(m)
	if status, _, _ := g.post("/hooks/sns", nil, s3); status != 401 {
		t.Fatalf("certificate on an S3 host: %d", status)
	}
	time.Sleep(300 * time.Millisecond)
	if got := len(up.all()); got != 1 {
		t.Fatalf("%d deliveries, want the original's 1", got)
	}
}
