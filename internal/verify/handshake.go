package verify

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// HandshakeRequest is what a handshake looks at.
type HandshakeRequest struct {
	Method string
	Header http.Header
	Query  url.Values
	Body   []byte
	// Secrets are the source's configured secrets.
	Secrets []string
	// VerifyToken is the source's verify_token, for Meta's subscription check.
	VerifyToken string
	// KnownSecrets counts the source's configured secrets. A learned one is
	// not counted: the store's create-if-absent decides whether a handshake
	// may establish it.
	KnownSecrets int
}

// HandshakeResponse is the synchronous answer a provider requires.
type HandshakeResponse struct {
	Status      int
	ContentType string
	Body        []byte
	Header      http.Header
	// Learn is a secret the handshake proposes to establish. The response
	// is sent only if the store took it; otherwise the answer is 403.
	Learn string
	// Record marks a handshake kept as a record (an SNS subscription
	// confirmation): the pipeline stores the request as an event marked
	// with this text, delivers it nowhere, and answers once it is stored.
	Record string
	// Reason says why a refusing answer refused, for the log; never a
	// secret.
	Reason string
	// Followup, with Record, is what the answer waits for that must happen
	// only once the record is stored (SNS's subscription GET): it returns
	// the answer to send. It runs for a duplicate record too, since the
	// first one's may have failed; the handshake keeps the work itself to
	// at most once.
	Followup func(ctx context.Context) *HandshakeResponse
}

// Handshake answers a provider's endpoint check. It is never stored or
// delivered as an event.
type Handshake struct {
	// Name identifies the handshake in `hookgate providers`.
	Name string `json:"name"`
	// Unsigned handshakes arrive without a signature and are answered before
	// verification; the rest are answered only once the signature verifies.
	Unsigned bool `json:"unsigned,omitempty"`
	// Answer returns the response when the request is this handshake.
	Answer func(r *HandshakeRequest) (*HandshakeResponse, bool) `json:"-"`
}

// maxChallenge bounds an echoed challenge, so a handshake cannot be used to
// reflect large content.
const maxChallenge = 1024

// challengeToken is the shape of the challenges a handshake MACs with the
// source's secret (X's crc_token, Zoom's plainToken): base64 or base64url
// text, or a UUID. No content a scheme signs for an event has this shape.
var challengeToken = regexp.MustCompile(`^[A-Za-z0-9+/_=\-]{1,256}$`)

// echoable reports whether a challenge a handshake sends back as it came
// is printable text of bounded length.
func echoable(s string) bool {
	return s != "" && len(s) <= maxChallenge && !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

func plainText(s string) *HandshakeResponse {
	return &HandshakeResponse{Status: http.StatusOK, ContentType: "text/plain; charset=utf-8", Body: []byte(s)}
}

func jsonResponse(v any) *HandshakeResponse {
	b, _ := json.Marshal(v)
	return &HandshakeResponse{Status: http.StatusOK, ContentType: "application/json", Body: b}
}

// jsonFields decodes the top-level object of a body, or nil.
func jsonFields(body []byte) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return nil
	}
	return m
}

func jsonString(raw json.RawMessage) (string, bool) {
	var s string
	if raw == nil || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

var (
	// Slack Events API: {"type":"url_verification","challenge":"…"}.
	slackURLVerification = &Handshake{Name: "slack url_verification", Answer: func(r *HandshakeRequest) (*HandshakeResponse, bool) {
		m := jsonFields(r.Body)
		if t, _ := jsonString(m["type"]); t != "url_verification" {
			return nil, false
		}
		challenge, ok := jsonString(m["challenge"])
		if !ok || !echoable(challenge) {
			return nil, false
		}
		return plainText(challenge), true
	}}

	// Zoom: {"event":"endpoint.url_validation","payload":{"plainToken":"…"}}
	// answered with the token and its HMAC-SHA256 under the secret token.
	zoomURLValidation = &Handshake{Name: "zoom endpoint.url_validation", Answer: func(r *HandshakeRequest) (*HandshakeResponse, bool) {
		m := jsonFields(r.Body)
		if e, _ := jsonString(m["event"]); e != "endpoint.url_validation" || len(r.Secrets) == 0 {
			return nil, false
		}
		var payload struct {
			PlainToken string `json:"plainToken"`
		}
		// The answer MACs the token as the event signature MACs
		// "v0:{timestamp}:{body}": only tokens of Zoom's shape are answered.
		if json.Unmarshal(m["payload"], &payload) != nil || !challengeToken.MatchString(payload.PlainToken) {
			return nil, false
		}
		mac := hmac.New(sha256.New, []byte(r.Secrets[0]))
		mac.Write([]byte(payload.PlainToken))
		return jsonResponse(map[string]string{
			"plainToken":     payload.PlainToken,
			"encryptedToken": hex.EncodeToString(mac.Sum(nil)),
		}), true
	}}

	// Twitch EventSub: a webhook_callback_verification message, answered
	// with the raw challenge.
	twitchCallbackVerification = &Handshake{Name: "twitch webhook_callback_verification", Answer: func(r *HandshakeRequest) (*HandshakeResponse, bool) {
		if r.Header.Get("Twitch-Eventsub-Message-Type") != "webhook_callback_verification" {
			return nil, false
		}
		challenge, ok := jsonString(jsonFields(r.Body)["challenge"])
		if !ok || !echoable(challenge) {
			return nil, false
		}
		return plainText(challenge), true
	}}

	// Discord interactions: a PING (type 1) is answered with a PONG.
	discordPing = &Handshake{Name: "discord ping", Answer: func(r *HandshakeRequest) (*HandshakeResponse, bool) {
		var t int
		if json.Unmarshal(jsonFields(r.Body)["type"], &t) != nil || t != 1 {
			return nil, false
		}
		return jsonResponse(map[string]int{"type": 1}), true
	}}

	// Meta (Facebook, Instagram, WhatsApp): GET ?hub.mode=subscribe&
	// hub.verify_token=…&hub.challenge=…, answered with the challenge when the
	// verify token is the configured one.
	metaSubscribe = &Handshake{Name: "meta hub.challenge", Unsigned: true, Answer: func(r *HandshakeRequest) (*HandshakeResponse, bool) {
		if r.Method != http.MethodGet || r.Query.Get("hub.mode") != "subscribe" {
			return nil, false
		}
		challenge := r.Query.Get("hub.challenge")
		if r.VerifyToken == "" || !echoable(challenge) ||
			subtle.ConstantTimeCompare([]byte(r.Query.Get("hub.verify_token")), []byte(r.VerifyToken)) != 1 {
			return &HandshakeResponse{Status: http.StatusForbidden, ContentType: "text/plain; charset=utf-8", Body: []byte("forbidden")}, true
		}
		return plainText(challenge), true
	}}

	// Microsoft Graph: a POST with ?validationToken=… is answered with the
	// token as plain text within ten seconds.
	graphValidation = &Handshake{Name: "microsoft graph validationToken", Unsigned: true, Answer: func(r *HandshakeRequest) (*HandshakeResponse, bool) {
		token := r.Query.Get("validationToken")
		if !echoable(token) {
			return nil, false
		}
		return plainText(token), true
	}}

	// X (Twitter) Account Activity CRC: a GET with ?crc_token=… answered
	// with {"response_token": "sha256=<base64 HMAC-SHA256(consumer secret,
	// crc_token)>"}. Unsigned, as X sends it; the answer proves the secret.
	//
	// The answer is the HMAC the event signature uses, over a token the
	// sender picks: a token that could be an event body would make this a
	// signing oracle. So only tokens of the shape X sends (base64 or a
	// UUID) are answered, and X event bodies must be JSON objects
	// (Preset.ObjectBodies), which no such token is.
	xCRC = &Handshake{Name: "x crc_token", Unsigned: true, Answer: func(r *HandshakeRequest) (*HandshakeResponse, bool) {
		token := r.Query.Get("crc_token")
		if r.Method != http.MethodGet || !challengeToken.MatchString(token) || len(r.Secrets) == 0 {
			return nil, false
		}
		mac := hmac.New(sha256.New, []byte(r.Secrets[0]))
		mac.Write([]byte(token))
		return jsonResponse(map[string]string{"response_token": "sha256=" + base64.StdEncoding.EncodeToString(mac.Sum(nil))}), true
	}}

	// Okta event hooks: a one-time GET carrying x-okta-verification-challenge,
	// answered with {"verification": challenge}. Echoing the challenge proves
	// control of the endpoint and reveals nothing, so it needs no secret.
	oktaVerification = &Handshake{Name: "okta one-time verification", Unsigned: true, Answer: func(r *HandshakeRequest) (*HandshakeResponse, bool) {
		challenge := r.Header.Get("X-Okta-Verification-Challenge")
		if r.Method != http.MethodGet || !echoable(challenge) {
			return nil, false
		}
		return jsonResponse(map[string]string{"verification": challenge}), true
	}}
)

var (
	// Slack slash commands: a form POST with ssl_check=1, unsigned, answered
	// 200 with an empty body (as Bolt does).
	slackSSLCheck = &Handshake{Name: "slack ssl_check", Unsigned: true, Answer: func(r *HandshakeRequest) (*HandshakeResponse, bool) {
		if r.Method != http.MethodPost || !isForm(r.Header) {
			return nil, false
		}
		form, err := url.ParseQuery(string(r.Body))
		if err != nil || form.Get("ssl_check") != "1" {
			return nil, false
		}
		return &HandshakeResponse{Status: http.StatusOK, ContentType: "text/plain; charset=utf-8"}, true
	}}

	// Discord webhook events: a PING (type 0) is answered 204 without a body.
	discordEventsPing = &Handshake{Name: "discord events ping", Answer: func(r *HandshakeRequest) (*HandshakeResponse, bool) {
		var t int
		if json.Unmarshal(jsonFields(r.Body)["type"], &t) != nil || t != 0 {
			return nil, false
		}
		return &HandshakeResponse{Status: http.StatusNoContent}, true
	}}

	// A HEAD request checking that the endpoint exists (Intercom).
	headCheck = &Handshake{Name: "HEAD check", Unsigned: true, Answer: func(r *HandshakeRequest) (*HandshakeResponse, bool) {
		if r.Method != http.MethodHead {
			return nil, false
		}
		return &HandshakeResponse{Status: http.StatusOK, ContentType: "text/plain; charset=utf-8"}, true
	}}

	// WooCommerce: on creation it POSTs webhook_id=<id>, unsigned, and needs
	// exactly 200.
	wooCommercePing = &Handshake{Name: "woocommerce ping", Unsigned: true, Answer: func(r *HandshakeRequest) (*HandshakeResponse, bool) {
		if r.Method != http.MethodPost || r.Header.Get("X-WC-Webhook-Signature") != "" {
			return nil, false
		}
		form, err := url.ParseQuery(string(r.Body))
		if err != nil || len(form) != 1 || form.Get("webhook_id") == "" {
			return nil, false
		}
		if _, err := strconv.Atoi(form.Get("webhook_id")); err != nil {
			return nil, false
		}
		return &HandshakeResponse{Status: http.StatusOK, ContentType: "text/plain; charset=utf-8"}, true
	}}
)
