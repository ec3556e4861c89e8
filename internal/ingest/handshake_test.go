package ingest_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hookgate/hookgate/internal/config"
	"github.com/hookgate/hookgate/internal/verify"
)

const handshakeRoutes = `
upstreams:
  legacy:
    url: http://127.0.0.1:1
  sandbox:
    url: http://127.0.0.1:2
sources:
  slack:
    path: /slack
    provider: slack
    secrets: [slack-secret-0123456789]
    default: [legacy]
  zoom:
    path: /zoom
    provider: zoom
    secrets: [zoom-secret-0123456789]
    default: [legacy]
  twitch:
    path: /twitch
    provider: twitch
    secrets: [twitch-secret-123]
    default: [legacy]
  meta:
    path: /meta
    provider: meta
    secrets: [app-secret-0123456789]
    verify_token: my-verify-token
    default: [legacy]
  graph:
    path: /graph
    provider: microsoft-graph
    secrets: [client-state]
    default: [legacy]
  okta:
    path: /okta
    provider: okta
    secrets: [okta-token]
    default: [legacy]
  intercom:
    path: /intercom
    provider: intercom
    secrets: [ic-secret-0123456789]
    default: [legacy]
  woo:
    path: /woo
    provider: woocommerce
    secrets: [woo-secret-0123456789]
    default: [legacy]
  stripe-live:
    path: /stripe-live
    provider: stripe
    secrets: [whsec_live-0123456789]
    mode: live
    default: [legacy]
  stripe-split:
    path: /stripe-split
    provider: stripe
    secrets: [whsec_live-0123456789]
    mode: live
    other_mode_to: [sandbox]
    default: [legacy]
`

func handshakeHarness(t *testing.T) *harness {
	t.Helper()
	h, _ := routingHarness(t, handshakeRoutes)
	return h
}

func (h *harness) do(method, target string, header http.Header, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, bytes.NewReader(body))
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.p.ServeHTTP(rec, req)
	return rec
}

func signWith(t *testing.T, preset, secret string, body []byte, id string) http.Header {
	t.Helper()
	p, _ := verify.Lookup(preset)
	s, err := verify.New(p.Spec, []string{secret})
	if err != nil {
		t.Fatal(err)
	}
	hdr, err := s.Sign(secret, verify.Message{Body: body, ID: id, Time: testNow})
	if err != nil {
		t.Fatal(err)
	}
	return hdr
}

func TestHandshakes(t *testing.T) {
	h := handshakeHarness(t)
	zoomMAC := hmac.New(sha256.New, []byte("zoom-secret-0123456789"))
	zoomMAC.Write([]byte("qgg8vlvZRS6UYooatFL8Aw"))
	slackChallenge := []byte(`{"token":"x","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}`)
	zoomBody := []byte(`{"payload":{"plainToken":"qgg8vlvZRS6UYooatFL8Aw"},"event_ts":1654503849680,"event":"endpoint.url_validation"}`)
	twitchBody := []byte(`{"challenge":"pogchamp-kappa-360noscope-vohiyo","subscription":{"id":"f1c2a387","status":"webhook_callback_verification_pending"}}`)
	twitchHeader := signWith(t, "twitch", "twitch-secret-123", twitchBody, "e76c6bd4-55c9-4987-8304-da1588d8988b")
	twitchHeader.Set("Twitch-Eventsub-Message-Type", "webhook_callback_verification")

	cases := []struct {
		name, method, target string
		header               http.Header
		body                 []byte
		status               int
		want                 string
	}{
		{"slack url_verification", "POST", "/slack", signWith(t, "slack", "slack-secret-0123456789", slackChallenge, ""), slackChallenge, 200, "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"},
		{"slack url_verification unsigned", "POST", "/slack", http.Header{}, slackChallenge, 401, "unauthorized\n"},
		{"slack ssl_check", "POST", "/slack", http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, []byte("ssl_check=1&token=x"), 200, ""},
		{"zoom url_validation", "POST", "/zoom", signWith(t, "zoom", "zoom-secret-0123456789", zoomBody, ""), zoomBody, 200,
			`{"encryptedToken":"` + hex.EncodeToString(zoomMAC.Sum(nil)) + `","plainToken":"qgg8vlvZRS6UYooatFL8Aw"}`},
		{"twitch callback verification", "POST", "/twitch", twitchHeader, twitchBody, 200, "pogchamp-kappa-360noscope-vohiyo"},
		{"meta subscribe", "GET", "/meta?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=my-verify-token", nil, nil, 200, "1158201444"},
		{"meta wrong token", "GET", "/meta?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=guess", nil, nil, 403, "forbidden"},
		{"meta GET without handshake", "GET", "/meta", nil, nil, 401, "unauthorized\n"},
		{"graph validation", "POST", "/graph?validationToken=Validation%3A+Testing+client+application", http.Header{"Content-Type": {"text/plain; charset=utf-8"}}, nil, 200, "Validation: Testing client application"},
		{"okta verification", "GET", "/okta", http.Header{"X-Okta-Verification-Challenge": {"sBgPsXVnR_ZJC45Jx1AN"}}, nil, 200, `{"verification":"sBgPsXVnR_ZJC45Jx1AN"}`},
		{"intercom HEAD", "HEAD", "/intercom", nil, nil, 200, ""},
		{"woocommerce ping", "POST", "/woo", http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, []byte("webhook_id=42"), 200, ""},
		{"woocommerce unsigned event", "POST", "/woo", http.Header{"Content-Type": {"application/json"}}, []byte(`{"id":1}`), 401, "unauthorized\n"},
		{"GET on a source without handshakes", "GET", "/stripe-live", nil, nil, 405, "method not allowed\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := h.do(c.method, c.target, c.header, c.body)
			if rec.Code != c.status || rec.Body.String() != c.want {
				t.Fatalf("got %d %q, want %d %q", rec.Code, rec.Body.String(), c.status, c.want)
			}
			if rec.Header().Get("Hookgate-Event-Id") != "" {
				t.Fatal("a handshake was stored as an event")
			}
		})
	}
	for _, up := range []string{"legacy", "sandbox"} {
		if n := len(h.pending(t, up)); n != 0 {
			t.Fatalf("handshakes queued %d deliveries to %s", n, up)
		}
	}
}

func TestLiveAndTestModes(t *testing.T) {
	h := handshakeHarness(t)
	live := []byte(`{"id":"evt_live","livemode":true,"type":"charge.succeeded"}`)
	test := []byte(`{"id":"evt_test","livemode":false,"type":"charge.succeeded"}`)
	send := func(path string, body []byte) int {
		hdr := signWith(t, "stripe", "whsec_live-0123456789", body, "")
		hdr.Set("Content-Type", "application/json")
		return h.do("POST", path, hdr, body).Code
	}
	if code := send("/stripe-live", live); code != 200 {
		t.Fatalf("live event to a live source: %d", code)
	}
	if code := send("/stripe-live", test); code != 401 {
		t.Fatalf("test event to a live-only source: %d, want 401", code)
	}
	if code := send("/stripe-split", test); code != 200 {
		t.Fatalf("test event with other_mode_to: %d", code)
	}
	sandbox := h.pending(t, "sandbox")
	if len(sandbox) != 1 || !strings.Contains(string(sandbox[0].Event.Body), "evt_test") {
		t.Fatalf("sandbox got %d events", len(sandbox))
	}
	for _, task := range h.pending(t, "legacy") {
		if strings.Contains(string(task.Event.Body), "evt_test") {
			t.Fatal("a test-mode event reached the live upstream")
		}
	}
}

func TestModeConfigErrors(t *testing.T) {
	cases := map[string]string{
		"    provider: github\n    secrets: [x-0123456789abcdef]\n    mode: live\n":                            "provider github does not mark test and live events",
		"    provider: stripe\n    secrets: [x-0123456789abcdef]\n    other_mode_to: [legacy]\n":               "other_mode_to needs mode",
		"    provider: stripe\n    secrets: [x-0123456789abcdef]\n    mode: staging\n":                         "mode must be live or test",
		"    provider: stripe\n    secrets: [x-0123456789abcdef]\n    mode: test\n    other_mode_to: [nope]\n": `unknown upstream "nope"`,
	}
	for src, want := range cases {
		yaml := "upstreams:\n  legacy:\n    url: http://x\nsources:\n  s:\n    path: /h\n" + src
		cfg, err := config.Parse("routes.yaml", []byte(yaml), config.Options{})
		if err == nil {
			_, err = compile(cfg)
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", src, err, want)
		}
	}
}
