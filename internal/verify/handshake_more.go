package verify

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
)

// Handshakes of the third round of presets.

var (
	// Front application webhooks: saving the webhook POSTs a signed
	// request with x-front-challenge, answered with the challenge.
	frontChallenge = &Handshake{Name: "front challenge", Answer: func(r *HandshakeRequest) (*HandshakeResponse, bool) {
		challenge := r.Header.Get("X-Front-Challenge")
		if challenge == "" || !echoable(challenge) {
			return nil, false
		}
		return plainText(challenge), true
	}}

	// Azure Event Grid (Event Grid schema): a SubscriptionValidationEvent,
	// answered 200 with {"validationResponse": validationCode}.
	eventGridValidation = &Handshake{Name: "azure-event-grid SubscriptionValidation", Unsigned: true, Answer: func(r *HandshakeRequest) (*HandshakeResponse, bool) {
		if r.Method != http.MethodPost || r.Header.Get("Aeg-Event-Type") != "SubscriptionValidation" {
			return nil, false
		}
		var events []struct {
			EventType string `json:"eventType"`
			Data      struct {
				ValidationCode string `json:"validationCode"`
			} `json:"data"`
		}
		if json.Unmarshal(r.Body, &events) != nil || len(events) != 1 ||
			events[0].EventType != "Microsoft.EventGrid.SubscriptionValidationEvent" || !echoable(events[0].Data.ValidationCode) {
			return nil, false
		}
		return jsonResponse(map[string]string{"validationResponse": events[0].Data.ValidationCode}), true
	}}

	// CloudEvents webhook abuse protection (Event Grid's CloudEvents
	// schema): an OPTIONS request naming its origin, answered with the
	// origin allowed.
	cloudEventsOptions = &Handshake{Name: "cloudevents OPTIONS", Unsigned: true, Answer: func(r *HandshakeRequest) (*HandshakeResponse, bool) {
		origin := r.Header.Get("WebHook-Request-Origin")
		if r.Method != http.MethodOptions || !echoable(origin) || strings.ContainsAny(origin, " ,") {
			return nil, false
		}
		h := http.Header{}
		h.Set("WebHook-Allowed-Origin", origin)
		h.Set("WebHook-Allowed-Rate", "*")
		h.Set("Allow", "POST, OPTIONS")
		return &HandshakeResponse{Status: http.StatusOK, Header: h}, true
	}}

	// Dropbox and Nylas: GET ?challenge=… answered with the challenge as
	// plain text.
	queryChallenge = &Handshake{Name: "GET challenge", Unsigned: true, Answer: func(r *HandshakeRequest) (*HandshakeResponse, bool) {
		challenge := r.Query.Get("challenge")
		if r.Method != http.MethodGet || !echoable(challenge) {
			return nil, false
		}
		resp := plainText(challenge)
		resp.Header = http.Header{"X-Content-Type-Options": {"nosniff"}}
		return resp, true
	}}

	// monday.com: the first POST of a new webhook is {"challenge": "…"},
	// answered with the same JSON.
	mondayChallenge = &Handshake{Name: "monday challenge", Unsigned: true, Answer: func(r *HandshakeRequest) (*HandshakeResponse, bool) {
		m := jsonFields(r.Body)
		challenge, ok := jsonString(m["challenge"])
		if r.Method != http.MethodPost || len(m) != 1 || !ok || !echoable(challenge) {
			return nil, false
		}
		return jsonResponse(map[string]string{"challenge": challenge}), true
	}}

	// Xero's intent to receive: signed POSTs of no events with entropy, some
	// signed wrongly. Answered once the signature verifies, 200 with an
	// empty body; the wrongly signed get 401 as any forgery does.
	xeroIntentToReceive = &Handshake{Name: "xero intent to receive", Answer: func(r *HandshakeRequest) (*HandshakeResponse, bool) {
		var itr struct {
			Events  []json.RawMessage `json:"events"`
			Entropy string            `json:"entropy"`
		}
		if json.Unmarshal(r.Body, &itr) != nil || itr.Events == nil || len(itr.Events) != 0 || itr.Entropy == "" {
			return nil, false
		}
		return &HandshakeResponse{Status: http.StatusOK}, true
	}}

	// LINE: the console's verify request is a signed POST with no events,
	// answered 200 once it verifies, and never delivered.
	lineVerify = &Handshake{Name: "line verify", Answer: func(r *HandshakeRequest) (*HandshakeResponse, bool) {
		var v struct {
			Events []json.RawMessage `json:"events"`
		}
		if json.Unmarshal(r.Body, &v) != nil || v.Events == nil || len(v.Events) != 0 {
			return nil, false
		}
		return &HandshakeResponse{Status: http.StatusOK}, true
	}}

	// Mandrill: when a HEAD fails, a webhook is tested with a POST of no
	// events signed with the public key "test-webhook": answered 200, never
	// delivered.
	mandrillTest = &Handshake{Name: "mandrill test POST", Unsigned: true, Answer: func(r *HandshakeRequest) (*HandshakeResponse, bool) {
		form, err := strictForm(r.Body)
		if r.Method != http.MethodPost || err != nil || len(form) != 1 || strings.TrimSpace(form.Get("mandrill_events")) != "[]" {
			return nil, false
		}
		return &HandshakeResponse{Status: http.StatusOK}, true
	}}

	// HCP Terraform: enabling a notification sends a signed payload whose
	// trigger is "verification", answered 200 once it verifies and never
	// delivered.
	terraformVerification = &Handshake{Name: "terraform-cloud verification", Answer: func(r *HandshakeRequest) (*HandshakeResponse, bool) {
		var v struct {
			Notifications []struct {
				Trigger string `json:"trigger"`
			} `json:"notifications"`
		}
		if json.Unmarshal(r.Body, &v) != nil || len(v.Notifications) != 1 || v.Notifications[0].Trigger != "verification" {
			return nil, false
		}
		return &HandshakeResponse{Status: http.StatusOK}, true
	}}

	// Figma: a new webhook sends a PING event carrying the passcode,
	// answered 200 once the passcode verifies, never delivered.
	figmaPing = &Handshake{Name: "figma PING", Answer: func(r *HandshakeRequest) (*HandshakeResponse, bool) {
		if t, _ := jsonString(jsonFields(r.Body)["event_type"]); t != "PING" {
			return nil, false
		}
		return &HandshakeResponse{Status: http.StatusOK}, true
	}}

	// Braintree: GET ?bt_challenge=… answered with
	// public_key|hex(HMAC-SHA1(SHA1(private_key), challenge)), which the
	// secret PUBLIC_KEY:PRIVATE_KEY makes. The answer MACs the challenge
	// as an event signature MACs bt_payload, so only challenges of
	// Braintree's shape (hex) are answered; no payload is one.
	braintreeChallenge = &Handshake{Name: "braintree bt_challenge", Unsigned: true, Answer: func(r *HandshakeRequest) (*HandshakeResponse, bool) {
		challenge := r.Query.Get("bt_challenge")
		if r.Method != http.MethodGet || len(r.Secrets) == 0 || !isHex(challenge) || len(challenge) > 64 {
			return nil, false
		}
		public, private, ok := strings.Cut(r.Secrets[0], ":")
		if !ok {
			return nil, false
		}
		return plainText(public + "|" + braintreeMAC(private, challenge)), true
	}}
)

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return s != "" && err == nil
}

// braintreeMAC is Braintree's HMAC-SHA1 keyed with the SHA-1 of the
// private key, hex.
func braintreeMAC(private, message string) string {
	key := sha1.Sum([]byte(private))
	mac := hmac.New(sha1.New, key[:])
	mac.Write([]byte(message))
	return hex.EncodeToString(mac.Sum(nil))
}
