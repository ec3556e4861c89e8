package verify

import (
	"crypto/hmac"
	"crypto/md5"
	"encoding/hex"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The provider catalog. Each preset follows the provider's official SDK
// where docs and SDK disagree; the comments say where that matters.

// hubSignature is the common "X-Hub-Signature: sha256=<hex>" scheme.
func hubSignature(header, prefix, algorithm string) Spec {
	return Spec{Algorithm: algorithm, Header: header, Prefix: prefix, Encoding: "hex"}
}

// timestampedPairs is the "t=<ts>,v1=<hex>" scheme over "<ts>.<body>"
// shared by Calendly and Mux.
func timestampedPairs(header string, tolerance time.Duration) Spec {
	return Spec{
		Algorithm: "hmac-sha256", Header: header, SignatureKey: "v1", TimestampKey: "t",
		Encoding: "hex", Content: "{timestamp}.{body}", Tolerance: tolerance,
	}
}

// linearSpec is Linear's signature, over the body only; the preset also
// checks the body's webhookTimestamp.
var linearSpec = Spec{Algorithm: "hmac-sha256", Header: "Linear-Signature", Encoding: "hex"}

// Values the samples share.
const (
	shopifyUserAgent  = "Shopify-Captain-Hook"
	shopifyAPIVersion = "2026-01"
	discordUserAgent  = "Discord-Interactions/1.0 (+https://discord.com)"
)

// shopifyOrder is an orders/create body.
func shopifyOrder(in SampleInput) obj {
	id := in.ObjectNumber()
	return obj{"id": id, "admin_graphql_api_id": "gid://shopify/Order/" + strconv.FormatInt(id, 10), "email": "jon@example.com", "created_at": in.RFC3339(), "updated_at": in.RFC3339(),
		"total_price": "10.00", "currency": "USD", "financial_status": in.pick("paid", "refunded")}
}

// wooCommerceDeliveryID is X-WC-Webhook-Delivery-ID as WC_Webhook makes
// it: wp_hash (an HMAC-MD5 under the site's salt) of the webhook id and
// the current Unix second.
func wooCommerceDeliveryID(webhookID string, now time.Time) string {
	mac := hmac.New(md5.New, []byte("hookgate-sample-site-salt"))
	mac.Write([]byte(webhookID + strconv.FormatInt(now.Unix(), 10)))
	return hex.EncodeToString(mac.Sum(nil))
}

// hubspotDedupKey names each event of a batch: eventId alone is not
// unique, so with its subscription and time. attemptNumber is left out: it
// changes on each retry.
const hubspotDedupKey = `join(map(body, {string(.subscriptionId) + ":" + string(.eventId) + ":" + string(.occurredAt)}), ",")`

// whatsappDedupKey names each message and each status change of a
// WhatsApp Cloud API request, across its entries and changes.
const whatsappDedupKey = `join(flatten(map(body.entry, {flatten(map(.changes, {concat(map(.value?.messages ?? [], {.id}), ` +
	`map(.value?.statuses ?? [], {.id + ":" + .status + ":" + .timestamp}))}))})), ",")`

// shopifyTime is X-Shopify-Triggered-At: UTC with nanoseconds.
func shopifyTime(in SampleInput) string { return in.Now.UTC().Format("2006-01-02T15:04:05.000000000Z") }

func svixProvider(name, provider, docs string) Preset {
	p := standardWebhooks(name, provider+": Svix signatures (svix-id/-timestamp/-signature v1,…), HMAC-SHA256 base64, whsec_ key", "svix", docs)
	return p
}

func init() {
	register(
		Preset{
			Name:        "standard-webhooks-ed25519",
			Description: "Standard Webhooks (asymmetric): webhook-signature v1a,… Ed25519 over id.timestamp.body; secrets are whpk_ public keys",
			Spec: Spec{
				Algorithm: "ed25519", Header: "webhook-signature", Separator: " ", Prefix: "v1a,", Encoding: "base64",
				Content: "{id}.{timestamp}.{body}", IDHeader: "webhook-id", TimestampHeader: "webhook-timestamp",
				SecretEncoding: "whpk", Tolerance: 5 * time.Minute,
			},
			DedupKey:    `headers["webhook-id"]`,
			KeyKind:     "public key (whpk_…)",
			SecretKind:  SecretPublicKey,
			Docs:        "https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md",
			NewSample:   standardWebhooksHeaders{prefix: "webhook"}.sample,
			AlwaysSends: standardWebhooksHeaders{prefix: "webhook"}.sends(),
		},
		svixProvider("clerk", "Clerk", "https://clerk.com/docs/webhooks/sync-data"),
		svixProvider("resend", "Resend", "https://resend.com/docs/dashboard/webhooks/verify-webhooks-requests"),
		Preset{
			// python-slack-sdk rejects timestamps more than 5 minutes away in
			// either direction; bolt-js only old ones. Both directions here.
			Name:        "slack",
			Description: "Slack: X-Slack-Signature v0=… over v0:timestamp:body, HMAC-SHA256 hex",
			Spec: Spec{
				Algorithm: "hmac-sha256", Header: "X-Slack-Signature", Prefix: "v0=", Encoding: "hex",
				Content: "v0:{timestamp}:{body}", TimestampHeader: "X-Slack-Request-Timestamp", Tolerance: 5 * time.Minute,
			},
			DedupKey:   `body?.event_id`,
			Handshakes: []*Handshake{slackSSLCheck, slackURLVerification},
			// Events are JSON; slash commands and interactivity are forms.
			Format: FormatEither,
			Docs:   "https://api.slack.com/authentication/verifying-requests-from-slack",
			NewSample: func(in SampleInput) (Sample, error) {
				// A mention in channel Object, then a reaction to it.
				event := obj{"type": "app_mention", "user": "U061F7AUR", "text": "<@U0LAN0Z89> is it everything a river should be?", "ts": "1700000000.000200", "channel": "C" + in.Object}
				if in.Step > 0 {
					event = obj{"type": "reaction_added", "user": "U061F7AUR", "reaction": "thumbsup", "item": obj{"type": "message", "channel": "C" + in.Object, "ts": "1700000000.000200"}, "event_ts": strconv.FormatInt(in.Now.Unix(), 10) + ".000300"}
				}
				return jsonSample(obj{"token": "sample", "team_id": "T061EG9R6", "api_app_id": "A0PNCHHK2", "type": "event_callback", "event_id": "Ev" + in.ID, "event_time": in.Now.Unix(), "event": event},
					"User-Agent", "Slackbot 1.0 (+https://api.slack.com/robots)")
			},
			AlwaysSends: []string{"Content-Type", "User-Agent", "X-Slack-Signature", "X-Slack-Request-Timestamp"},
		},
		Preset{
			Name:        "shopify",
			Description: "Shopify webhooks: X-Shopify-Hmac-Sha256 over the body, HMAC-SHA256 base64 (app client secret)",
			Spec:        Spec{Algorithm: "hmac-sha256", Header: "X-Shopify-Hmac-Sha256", Encoding: "base64"},
			DedupKey:    `headers["x-shopify-webhook-id"]`,
			Docs:        "https://shopify.dev/docs/apps/build/webhooks/subscribe/https#step-2-validate-the-origin-of-your-webhook",
			NewSample: func(in SampleInput) (Sample, error) {
				// @shopify/shopify-api refuses a webhook without its topic, shop
				// domain, API version or webhook id.
				return jsonSample(shopifyOrder(in),
					"User-Agent", shopifyUserAgent, "X-Shopify-Topic", in.pick("orders/create", "orders/updated"), "X-Shopify-Shop-Domain", "example.myshopify.com", "X-Shopify-API-Version", shopifyAPIVersion,
					"X-Shopify-Webhook-Id", uuid(), "X-Shopify-Event-Id", uuid(), "X-Shopify-Triggered-At", shopifyTime(in))
			},
			AlwaysSends: []string{"Content-Type", "User-Agent", "X-Shopify-Topic", "X-Shopify-Hmac-Sha256", "X-Shopify-Shop-Domain", "X-Shopify-API-Version",
				"X-Shopify-Webhook-Id", "X-Shopify-Event-Id", "X-Shopify-Triggered-At"},
		},
		Preset{
			// The Events flavour drops the X- prefix; dedup uses
			// shopify-webhook-id, which Shopify keeps when it drops
			// shopify-event-id.
			Name:        "shopify-events",
			Description: "Shopify Events: shopify-hmac-sha256 over the body, HMAC-SHA256 base64 (unprefixed headers)",
			Spec:        Spec{Algorithm: "hmac-sha256", Header: "shopify-hmac-sha256", Encoding: "base64"},
			DedupKey:    `headers["shopify-webhook-id"]`,
			Docs:        "https://shopify.dev/docs/apps/build/webhooks",
			NewSample: func(in SampleInput) (Sample, error) {
				return jsonSample(shopifyOrder(in),
					"User-Agent", shopifyUserAgent, "shopify-topic", in.pick("orders/create", "orders/updated"), "shopify-shop-domain", "example.myshopify.com", "shopify-api-version", shopifyAPIVersion,
					"shopify-webhook-id", uuid(), "shopify-handle", "hookgate-orders", "shopify-action", in.pick("create", "update"), "shopify-triggered-at", shopifyTime(in))
			},
			AlwaysSends: []string{"Content-Type", "User-Agent", "shopify-topic", "shopify-hmac-sha256", "shopify-shop-domain", "shopify-api-version",
				"shopify-webhook-id", "shopify-handle", "shopify-action", "shopify-triggered-at"},
		},
		Preset{
			Name:           "twilio",
			Description:    "Twilio: X-Twilio-Signature, HMAC-SHA1 base64 over the URL and sorted form parameters, or the URL with bodySHA256 for JSON",
			Build:          newTwilio,
			Bespoke:        "hmac-sha1 base64 over {url} + sorted form name+value pairs; JSON bodies: {url} with bodySHA256 = hex sha256(body); URL tried with and without the default port",
			BespokeHeaders: []string{"X-Twilio-Signature"},
			DedupKey:       `headers["i-twilio-idempotency-token"]`,
			// Forms, or JSON covered by bodySHA256.
			Format:          FormatEither,
			Docs:            "https://www.twilio.com/docs/usage/webhooks/webhooks-security",
			BespokeSignsURL: true,
			Signer:          &twilio{},
			NewSample: func(in SampleInput) (Sample, error) {
				// Message Object's status callbacks: sent, then delivered.
				sid := "SM" + in.Object + "00000000"
				form := url.Values{"MessageSid": {sid}, "SmsSid": {sid}, "SmsMessageSid": {sid}, "AccountSid": {"AC5ef8732a3c49700934481addd5ce1659"}, "From": {"+14158675309"}, "To": {"+18005551212"},
					"MessageStatus": {in.pick("sent", "delivered")}, "SmsStatus": {in.pick("sent", "delivered")}, "ApiVersion": {"2010-04-01"}}
				return Sample{Body: []byte(form.Encode()), Header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "User-Agent": {"TwilioProxy/1.1"},
					"I-Twilio-Idempotency-Token": {uuid()}, "X-Home-Region": {"us1"}}}, nil
			},
			AlwaysSends: []string{"Content-Type", "User-Agent", "X-Twilio-Signature", "I-Twilio-Idempotency-Token", "X-Home-Region"},
		},
		Preset{
			Name:        "sendgrid",
			Description: "SendGrid Event Webhook: ECDSA P-256 over timestamp+body, base64 DER; secrets are base64 DER public keys",
			Spec: Spec{
				Algorithm: "ecdsa-p256-sha256", Header: "X-Twilio-Email-Event-Webhook-Signature", Encoding: "base64",
				Content: "{timestamp}{body}", TimestampHeader: "X-Twilio-Email-Event-Webhook-Timestamp", SecretEncoding: "der-base64",
			},
			// One request carries a batch; each event has an id.
			DedupKey:   `join(map(body, {.sg_event_id}), ",")`,
			KeyKind:    "public key (base64 DER)",
			SecretKind: SecretPublicKey,
			Docs:       "https://www.twilio.com/docs/sendgrid/for-developers/tracking-events/getting-started-event-webhook-security-features",
			NewSample: func(in SampleInput) (Sample, error) {
				body := append(mustJSON([]obj{{"email": "jane@example.com", "event": in.pick("delivered", "open"), "sg_event_id": in.ID, "sg_message_id": "msg." + in.Object, "timestamp": in.Now.Unix()}}), '\r', '\n')
				return Sample{Body: body, Header: http.Header{"Content-Type": {"application/json"}, "User-Agent": {"SendGrid Event API"}}}, nil
			},
			AlwaysSends: []string{"Content-Type", "User-Agent", "X-Twilio-Email-Event-Webhook-Signature", "X-Twilio-Email-Event-Webhook-Timestamp"},
		},
		Preset{
			Name:        "discord",
			Description: "Discord interactions: X-Signature-Ed25519 over timestamp+body, Ed25519 hex; secrets are hex public keys; PING answered",
			Spec: Spec{
				Algorithm: "ed25519", Header: "X-Signature-Ed25519", Encoding: "hex",
				Content: "{timestamp}{body}", TimestampHeader: "X-Signature-Timestamp", SecretEncoding: "hex",
				Tolerance: 5 * time.Minute,
			},
			DedupKey:   `body.id`,
			Handshakes: []*Handshake{discordPing},
			KeyKind:    "public key (hex)",
			SecretKind: SecretPublicKey,
			Docs:       "https://discord.com/developers/docs/interactions/overview#setting-up-an-endpoint-validating-security-request-headers",
			NewSample: func(in SampleInput) (Sample, error) {
				// A command in channel Object, then a click on its button.
				data := obj{"name": "hookgate"}
				if in.Step > 0 {
					data = obj{"custom_id": "approve", "component_type": 2}
				}
				return jsonSample(obj{"id": strconv.FormatInt(in.EventNumber(), 10), "application_id": "1", "type": 2 + in.Step, "channel_id": strconv.FormatInt(in.ObjectNumber(), 10), "data": data, "token": in.ID, "version": 1},
					"User-Agent", discordUserAgent)
			},
			AlwaysSends: []string{"Content-Type", "User-Agent", "X-Signature-Ed25519", "X-Signature-Timestamp"},
		},
		Preset{
			Name:        "discord-events",
			Description: "Discord webhook events: X-Signature-Ed25519 over timestamp+body, Ed25519 hex; PING (type 0) answered 204",
			Spec: Spec{
				Algorithm: "ed25519", Header: "X-Signature-Ed25519", Encoding: "hex",
				Content: "{timestamp}{body}", TimestampHeader: "X-Signature-Timestamp", SecretEncoding: "hex",
				Tolerance: 5 * time.Minute,
			},
			Handshakes: []*Handshake{discordEventsPing},
			KeyKind:    "public key (hex)",
			SecretKind: SecretPublicKey,
			Docs:       "https://discord.com/developers/docs/events/webhook-events",
			NewSample: func(in SampleInput) (Sample, error) {
				return jsonSample(obj{"version": 1, "application_id": "1", "type": 1, "event": obj{"type": in.pick("APPLICATION_AUTHORIZED", "ENTITLEMENT_CREATE"), "timestamp": in.RFC3339(),
					"data": obj{"user": obj{"id": strconv.FormatInt(in.ObjectNumber(), 10)}}}},
					"User-Agent", discordUserAgent)
			},
			AlwaysSends: []string{"Content-Type", "User-Agent", "X-Signature-Ed25519", "X-Signature-Timestamp"},
		},
		Preset{
			Name:        "square",
			Description: "Square: x-square-hmacsha256-signature over notification URL + body, HMAC-SHA256 base64 (set public_url)",
			Spec:        Spec{Algorithm: "hmac-sha256", Header: "x-square-hmacsha256-signature", Encoding: "base64", Content: "{url}{body}"},
			DedupKey:    `body.event_id`,
			Live:        `headers["square-environment"] == "Production"`,
			// Square signs the URL and body, not this header.
			LiveUnsigned: true,
			Docs:         "https://developer.squareup.com/docs/webhooks/step3validate",
			NewSample: func(in SampleInput) (Sample, error) {
				return jsonSample(obj{"merchant_id": "MLEFBHHSJGVHD", "type": in.pick("payment.created", "payment.updated"), "event_id": uuid(), "created_at": in.RFC3339(), "data": obj{"type": "payment", "id": in.Object}},
					"square-environment", "Sandbox", "square-initial-delivery-timestamp", in.RFC3339())
			},
			AlwaysSends: []string{"Content-Type", "x-square-hmacsha256-signature", "square-environment", "square-initial-delivery-timestamp"},
		},
		Preset{
			// The SDK keeps only the last h1; any h1 may match here, as the
			// docs describe. 5 s tolerance as in the SDK and docs.
			Name:        "paddle",
			Description: "Paddle Billing: Paddle-Signature ts=…;h1=… over ts:body, HMAC-SHA256 hex",
			Spec: Spec{
				Algorithm: "hmac-sha256", Header: "Paddle-Signature", SignatureKey: "h1", TimestampKey: "ts", PairSeparator: ";",
				Encoding: "hex", Content: "{timestamp}:{body}", Tolerance: 5 * time.Second,
			},
			DedupKey: `body.event_id`,
			Docs:     "https://developer.paddle.com/webhooks/signature-verification",
			NewSample: func(in SampleInput) (Sample, error) {
				return jsonSample(obj{"event_id": "evt_" + in.ID, "event_type": in.pick("transaction.paid", "transaction.completed"), "occurred_at": in.RFC3339(), "notification_id": "ntf_" + in.ID,
					"data": obj{"id": "txn_" + in.Object, "status": in.pick("paid", "completed"), "currency_code": "USD", "origin": "web", "collection_mode": "automatic", "items": []any{}, "payments": []any{},
						"created_at": in.RFC3339(), "updated_at": in.RFC3339(), "billed_at": in.RFC3339()}})
			},
			AlwaysSends: []string{"Content-Type", "Paddle-Signature"},
		},
		Preset{
			// Zoom's own code hashes re-serialized JSON; Hookgate verifies the
			// raw bytes as the docs say, which is identical for Zoom's compact JSON.
			Name:        "zoom",
			Description: "Zoom: x-zm-signature v0=… over v0:timestamp:body, HMAC-SHA256 hex; endpoint.url_validation answered",
			Spec: Spec{
				Algorithm: "hmac-sha256", Header: "x-zm-signature", Prefix: "v0=", Encoding: "hex",
				Content: "v0:{timestamp}:{body}", TimestampHeader: "x-zm-request-timestamp", Tolerance: 5 * time.Minute,
			},
			// x-zm-trackingid is not signed, and what Zoom keeps of it
			// across retries is not documented; the signed body, which
			// carries event_ts, is the key.
			Handshakes: []*Handshake{zoomURLValidation},
			Docs:       "https://developers.zoom.us/docs/api/webhooks/#verify-webhook-events",
			NewSample: func(in SampleInput) (Sample, error) {
				return jsonSample(obj{"event": in.pick("meeting.started", "meeting.ended"), "event_ts": in.Now.UnixMilli(), "payload": obj{"account_id": "AAAAAA", "object": obj{"id": in.Object}}},
					"Content-Type", "application/json; charset=utf-8", "User-Agent", "Zoom Marketplace/1.0a", "clientid", "hookgateClientID",
					"x-zm-trackingid", "v=2.0;clid=aws;rid="+in.ID)
			},
			AlwaysSends: []string{"Content-Type", "User-Agent", "clientid", "x-zm-trackingid", "x-zm-signature", "x-zm-request-timestamp"},
		},
		Preset{
			Name:        "linear",
			Description: "Linear: Linear-Signature over the body, HMAC-SHA256 hex; webhookTimestamp (ms) in the body within 60 s",
			Build: func(secrets []string, opts Options) (Scheme, error) {
				inner, err := New(linearSpec, secrets)
				if err != nil {
					return nil, err
				}
				tolerance := time.Minute
				if opts.Tolerance > 0 {
					tolerance = opts.Tolerance
				}
				return &withBodyTimestamp{Scheme: inner, field: "webhookTimestamp", unit: "ms", tolerance: tolerance}, nil
			},
			Bespoke:        "hmac-sha256 hex over {body}, then body.webhookTimestamp (ms) within 60s",
			BespokeHeaders: []string{"Linear-Signature"},
			DedupKey:       `headers["linear-delivery"]`,
			Docs:           "https://linear.app/developers/webhooks#securing-webhooks",
			SampleSigner:   mustSigner(linearSpec),
			NewSample: func(in SampleInput) (Sample, error) {
				return jsonSample(obj{"action": in.pick("create", "update"), "type": "Issue", "data": obj{"id": uuidOf(in.Object), "title": in.pick("Hookgate sample", "Hookgate sample, renamed")}, "webhookTimestamp": in.Now.UnixMilli(), "webhookId": uuid()},
					"Content-Type", "application/json; charset=utf-8", "User-Agent", "Linear-Webhook", "Linear-Delivery", uuid(), "Linear-Event", "Issue")
			},
			AlwaysSends: []string{"Content-Type", "User-Agent", "Linear-Delivery", "Linear-Event", "Linear-Signature"},
		},
		Preset{
			Name:        "intercom",
			Description: "Intercom: X-Hub-Signature sha1=… over the body, HMAC-SHA1 hex (app client secret); HEAD check answered",
			Spec:        hubSignature("X-Hub-Signature", "sha1=", "hmac-sha1"),
			DedupKey:    `body.id`,
			Handshakes:  []*Handshake{headCheck},
			Docs:        "https://developers.intercom.com/docs/webhooks/webhook-notifications",
			NewSample: func(in SampleInput) (Sample, error) {
				return jsonSample(obj{"type": "notification_event", "id": "notif_" + in.ID, "topic": in.pick("conversation.user.created", "conversation.user.replied"), "created_at": in.Now.Unix(),
					"data": obj{"item": obj{"type": "conversation", "id": in.Object}}})
			},
			AlwaysSends: []string{"Content-Type", "X-Hub-Signature"},
		},
		Preset{
			Name:           "mailgun",
			SecretFields:   []string{"signature"},
			SignsFreshness: true,
			Description:    "Mailgun: signature.{timestamp,token,signature} in the JSON body, HMAC-SHA256 hex of timestamp+token",
			Build:          newMailgun,
			Bespoke:        "hmac-sha256 hex over body.signature.timestamp + body.signature.token, tolerance 5m",
			DedupKey:       `body["event-data"]?.id`,
			Live:           `body["event-data"]?.flags?.["is-test-mode"] != true`,
			LiveUnsigned:   true,
			Docs:           "https://documentation.mailgun.com/docs/mailgun/user-manual/webhooks/securing-webhooks",
			BespokeHeaders: []string{},
			// Mailgun signs timestamp+token, not the event: the body is not covered.
			BodyUnsigned: true,
			SampleSigner: signedInBody{},
			NewSample: func(in SampleInput) (Sample, error) {
				return jsonSample(obj{"signature": MailgunSignature(in.Key, randomHex(25), in.Now), "event-data": obj{"id": in.ID, "event": in.pick("delivered", "opened"), "timestamp": in.Now.Unix(), "recipient": "jane@example.com",
					"message": obj{"headers": obj{"message-id": in.Object + "@example.com"}}}})
			},
			AlwaysSends: []string{"Content-Type"},
		},
		Preset{
			Name:        "bitbucket",
			Description: "Bitbucket Cloud: X-Hub-Signature sha256=… over the body, HMAC-SHA256 hex",
			Spec:        hubSignature("X-Hub-Signature", "sha256=", "hmac-sha256"),
			DedupKey:    `headers["x-request-uuid"]`,
			Docs:        "https://support.atlassian.com/bitbucket-cloud/docs/manage-webhooks/",
			NewSample: func(in SampleInput) (Sample, error) {
				// Two pushes to repository Object.
				change := obj{"new": obj{"type": "branch", "name": "main", "target": obj{"type": "commit", "hash": in.ID}}, "created": false, "forced": false}
				return jsonSample(obj{"repository": obj{"type": "repository", "full_name": "team/repo", "uuid": "{" + uuidOf(in.Object) + "}"}, "actor": obj{"type": "user", "nickname": "jane"}, "push": obj{"changes": []obj{change}}},
					"User-Agent", "Bitbucket-Webhooks/2.0", "X-Event-Key", "repo:push", "X-Request-UUID", uuid(), "X-Hook-UUID", uuid(), "X-Attempt-Number", "1")
			},
			AlwaysSends: []string{"Content-Type", "User-Agent", "X-Event-Key", "X-Hook-UUID", "X-Request-UUID", "X-Attempt-Number", "X-Hub-Signature"},
		},
		Preset{
			Name:         "gitlab",
			Description:  "GitLab: X-Gitlab-Token equal to the secret token (compared in constant time)",
			Spec:         Spec{Algorithm: "token", Header: "X-Gitlab-Token"},
			DedupKey:     `headers["idempotency-key"] ?? headers["x-gitlab-event-uuid"]`,
			KeyKind:      "token",
			SecretKind:   SecretToken,
			Docs:         "https://docs.gitlab.com/user/project/integrations/webhooks/",
			BodyUnsigned: true,
			NewSample: func(in SampleInput) (Sample, error) {
				return jsonSample(obj{"object_kind": "push", "event_name": "push", "ref": "refs/heads/main", "checkout_sha": in.ID, "project": obj{"id": in.ObjectNumber(), "path_with_namespace": "group/project", "web_url": "https://gitlab.com/group/project"}},
					"User-Agent", "GitLab/18.6.0", "X-Gitlab-Event", "Push Hook", "X-Gitlab-Instance", "https://gitlab.com", "X-Gitlab-Webhook-UUID", uuid(),
					"Idempotency-Key", uuid(), "X-Gitlab-Event-UUID", uuid())
			},
			AlwaysSends: []string{"Content-Type", "User-Agent", "X-Gitlab-Event", "X-Gitlab-Token", "X-Gitlab-Instance", "X-Gitlab-Webhook-UUID", "X-Gitlab-Event-UUID", "Idempotency-Key"},
		},
		Preset{
			Name:        "twitch",
			Description: "Twitch EventSub: Twitch-Eventsub-Message-Signature sha256=… over id+timestamp+body, HMAC-SHA256 hex; callback verification answered",
			Spec: Spec{
				Algorithm: "hmac-sha256", Header: "Twitch-Eventsub-Message-Signature", Prefix: "sha256=", Encoding: "hex",
				Content: "{id}{timestamp}{body}", IDHeader: "Twitch-Eventsub-Message-Id",
				TimestampHeader: "Twitch-Eventsub-Message-Timestamp", TimestampUnit: "rfc3339", Tolerance: 10 * time.Minute,
			},
			DedupKey:   `headers["twitch-eventsub-message-id"]`,
			Handshakes: []*Handshake{twitchCallbackVerification},
			Docs:       "https://dev.twitch.tv/docs/eventsub/handling-webhook-events/#verifying-the-event-message",
			NewSample: func(in SampleInput) (Sample, error) {
				s, err := jsonSample(obj{"subscription": obj{"id": uuidOf(in.Object), "type": "channel.follow", "version": "2", "status": "enabled"},
					"event": obj{"user_id": in.pick("1337", "1338"), "user_login": in.pick("hookgate", "hookgate2"), "broadcaster_user_id": "12826", "followed_at": in.RFC3339()}},
					"Twitch-Eventsub-Message-Type", "notification", "Twitch-Eventsub-Message-Retry", "0",
					"Twitch-Eventsub-Subscription-Type", "channel.follow", "Twitch-Eventsub-Subscription-Version", "2")
				s.ID = uuid()
				return s, err
			},
			AlwaysSends: []string{"Content-Type", "Twitch-Eventsub-Message-Id", "Twitch-Eventsub-Message-Retry", "Twitch-Eventsub-Message-Type", "Twitch-Eventsub-Message-Signature",
				"Twitch-Eventsub-Message-Timestamp", "Twitch-Eventsub-Subscription-Type", "Twitch-Eventsub-Subscription-Version"},
		},
		Preset{
			Name:        "typeform",
			Description: "Typeform: Typeform-Signature sha256=… over the body, HMAC-SHA256 base64",
			Spec:        Spec{Algorithm: "hmac-sha256", Header: "Typeform-Signature", Prefix: "sha256=", Encoding: "base64"},
			DedupKey:    `body.event_id`,
			Docs:        "https://www.typeform.com/developers/webhooks/secure-your-webhooks/",
			NewSample: func(in SampleInput) (Sample, error) {
				return jsonSample(obj{"event_id": in.ID, "event_type": "form_response", "form_response": obj{"form_id": in.Object, "token": in.ID, "submitted_at": in.RFC3339()}},
					"User-Agent", "Typeform Webhooks")
			},
			AlwaysSends: []string{"Content-Type", "User-Agent", "Typeform-Signature"},
		},
		Preset{
			Name:        "calendly",
			Description: "Calendly: Calendly-Webhook-Signature t=…,v1=… over t.body, HMAC-SHA256 hex",
			Spec:        timestampedPairs("Calendly-Webhook-Signature", 3*time.Minute),
			DedupKey:    `body.event + ":" + (body.payload?.uri ?? "") + ":" + body.created_at`,
			Docs:        "https://developer.calendly.com/api-docs/4c305798a61d3-webhook-signatures",
			NewSample: func(in SampleInput) (Sample, error) {
				return jsonSample(obj{"event": in.pick("invitee.created", "invitee.canceled"), "created_at": in.RFC3339(), "payload": obj{"uri": "https://api.calendly.com/scheduled_events/" + in.Object + "/invitees/1", "email": "jane@example.com"}})
			},
			AlwaysSends: []string{"Content-Type", "Calendly-Webhook-Signature"},
		},
		Preset{
			Name:        "hubspot-v1",
			Description: "HubSpot v1: X-HubSpot-Signature, SHA-256 (a plain hash, not an HMAC) of client secret + body, hex",
			Spec:        Spec{Algorithm: "hash-sha256", Header: "X-HubSpot-Signature", Encoding: "hex", Content: "{secret}{body}"},
			DedupKey:    hubspotDedupKey,
			Docs:        "https://developers.hubspot.com/docs/api/webhooks/validating-requests",
			NewSample:   hubspotSample("v1"),
			AlwaysSends: []string{"Content-Type", "X-HubSpot-Signature", "X-HubSpot-Signature-Version"},
		},
		Preset{
			Name:        "hubspot-v2",
			Description: "HubSpot v2: X-HubSpot-Signature, SHA-256 of client secret + method + URL + body, hex (set public_url)",
			Spec:        Spec{Algorithm: "hash-sha256", Header: "X-HubSpot-Signature", Encoding: "hex", Content: "{secret}{method}{url}{body}"},
			Docs:        "https://developers.hubspot.com/docs/api/webhooks/validating-requests",
			NewSample:   hubspotSample("v2"),
			AlwaysSends: []string{"Content-Type", "X-HubSpot-Signature", "X-HubSpot-Signature-Version"},
		},
		Preset{
			// HubSpot's docs decode some %xx in the URI; its SDKs sign the URL
			// as called, which is what Hookgate does.
			Name:        "hubspot-v3",
			Description: "HubSpot v3: X-HubSpot-Signature-v3 over method+URL+body+timestamp, HMAC-SHA256 base64; ms timestamp within 5 min (set public_url)",
			Spec: Spec{
				Algorithm: "hmac-sha256", Header: "X-HubSpot-Signature-v3", Encoding: "base64",
				Content: "{method}{url}{body}{timestamp}", TimestampHeader: "X-HubSpot-Request-Timestamp", TimestampUnit: "ms",
				Tolerance: 5 * time.Minute,
			},
			DedupKey:    hubspotDedupKey,
			Docs:        "https://developers.hubspot.com/docs/api/webhooks/validating-requests",
			NewSample:   hubspotSample(""),
			AlwaysSends: []string{"Content-Type", "X-HubSpot-Signature-v3", "X-HubSpot-Request-Timestamp"},
		},
		Preset{
			Name:           "adyen",
			Description:    "Adyen: additionalData.hmacSignature of every notification item, HMAC-SHA256 base64 under the hex HMAC key",
			Build:          newAdyen,
			Bespoke:        "hmac-sha256 base64 over pspReference:originalReference:merchantAccountCode:merchantReference:value:currency:eventCode:success, per item; hex key",
			BespokeHeaders: []string{},
			// Every item of the batch: a reference, its event and outcome.
			DedupKey: `join(map(body.notificationItems, {.NotificationRequestItem.pspReference + ":" + .NotificationRequestItem.eventCode + ":" + .NotificationRequestItem.success}), ",")`,
			Live:     `body.live == "true"`,
			// The HMAC covers each item's fields, not the top-level live flag.
			LiveUnsigned: true,
			Response:     "[accepted]",
			KeyKind:      "HMAC key (hex)",
			SecretKind:   SecretMACKeyHex,
			Docs:         "https://docs.adyen.com/development-resources/webhooks/secure-webhooks/verify-hmac-signatures/",
			SampleSigner: signedInBody{},
			NewKeys:      hexKeys,
			NewSample:    adyenSample,
			AlwaysSends:  []string{"Content-Type"},
		},
		Preset{
			Name:        "vercel",
			Description: "Vercel: x-vercel-signature over the body, HMAC-SHA1 hex",
			Spec:        Spec{Algorithm: "hmac-sha1", Header: "x-vercel-signature", Encoding: "hex"},
			DedupKey:    `body.id`,
			Docs:        "https://vercel.com/docs/webhooks/webhooks-api#securing-webhooks",
			NewSample: func(in SampleInput) (Sample, error) {
				return jsonSample(obj{"id": "evt_" + in.ID, "type": in.pick("deployment.created", "deployment.succeeded"), "createdAt": in.Now.UnixMilli(), "payload": obj{"deployment": obj{"id": "dpl_" + in.Object}}})
			},
			AlwaysSends: []string{"Content-Type", "x-vercel-signature"},
		},
		Preset{
			Name:        "sentry",
			Description: "Sentry integrations: Sentry-Hook-Signature over the body, HMAC-SHA256 hex (client secret)",
			Spec:        Spec{Algorithm: "hmac-sha256", Header: "Sentry-Hook-Signature", Encoding: "hex"},
			DedupKey:    `headers["request-id"]`,
			Docs:        "https://docs.sentry.io/organization/integrations/integration-platform/webhooks/",
			NewSample: func(in SampleInput) (Sample, error) {
				return jsonSample(obj{"action": in.pick("created", "resolved"), "installation": obj{"uuid": uuid()}, "data": obj{"issue": obj{"id": in.Object}}},
					"Sentry-Hook-Resource", "issue", "Sentry-Hook-Timestamp", strconv.FormatInt(in.Now.Unix(), 10), "Request-ID", uuid())
			},
			AlwaysSends: []string{"Content-Type", "Request-ID", "Sentry-Hook-Resource", "Sentry-Hook-Timestamp", "Sentry-Hook-Signature"},
		},
		Preset{
			Name:        "postmark",
			Description: "Postmark: HTTP basic auth from the webhook URL; secrets are \"user:password\"",
			Spec:        Spec{Algorithm: "basic", Header: "Authorization"},
			// No event id: MessageID and RecordType name a message, which
			// has many opens and clicks; the body's digest is the key.
			KeyKind:      "user:password",
			SecretKind:   SecretToken,
			Docs:         "https://postmarkapp.com/developer/webhooks/webhooks-overview",
			BodyUnsigned: true,
			NewSample:    postmarkSample,
			AlwaysSends:  []string{"Content-Type", "Authorization"},
		},
		Preset{
			Name:         "basic-auth",
			Description:  "Any provider that calls a URL with basic auth credentials; secrets are \"user:password\"",
			Spec:         Spec{Algorithm: "basic", Header: "Authorization"},
			KeyKind:      "user:password",
			SecretKind:   SecretToken,
			BodyUnsigned: true,
			Format:       FormatEither,
			NewSample:    postmarkSample,
			AlwaysSends:  []string{"Content-Type", "Authorization"},
		},
		Preset{
			Name:        "woocommerce",
			Description: "WooCommerce: X-WC-Webhook-Signature over the body, HMAC-SHA256 base64; the unsigned creation ping answered",
			Spec:        Spec{Algorithm: "hmac-sha256", Header: "X-WC-Webhook-Signature", Encoding: "base64"},
			// The delivery id is a hash of the webhook and the second, shared
			// by every event of that second; WooCommerce does not retry. The
			// body's digest is the key.
			Handshakes: []*Handshake{wooCommercePing},
			Docs:       "https://woocommerce.github.io/woocommerce-rest-api-docs/#webhooks",
			NewSample: func(in SampleInput) (Sample, error) {
				// The headers WC_Webhook::deliver sets; the topic is the
				// resource and event.
				// WC_Webhook's delivery id is a hash of the webhook id and
				// the current second: two events in one second share it.
				return jsonSample(obj{"id": in.ObjectNumber(), "status": in.pick("processing", "completed"), "currency": "USD", "total": "29.35",
					"date_created_gmt": in.Now.UTC().Format("2006-01-02T15:04:05"), "date_modified_gmt": in.Now.UTC().Format("2006-01-02T15:04:05")},
					"User-Agent", "WooCommerce/10.3.0 Hookshot (WordPress/6.8.3)", "X-WC-Webhook-Source", "https://shop.example.com/",
					"X-WC-Webhook-Topic", in.pick("order.created", "order.updated"), "X-WC-Webhook-Resource", "order", "X-WC-Webhook-Event", in.pick("created", "updated"),
					"X-WC-Webhook-ID", "42", "X-WC-Webhook-Delivery-ID", wooCommerceDeliveryID("42", in.Now))
			},
			AlwaysSends: []string{"Content-Type", "User-Agent", "X-WC-Webhook-Source", "X-WC-Webhook-Topic", "X-WC-Webhook-Resource", "X-WC-Webhook-Event",
				"X-WC-Webhook-Signature", "X-WC-Webhook-ID", "X-WC-Webhook-Delivery-ID"},
		},
		Preset{
			Name:        "mux",
			Description: "Mux: Mux-Signature t=…,v1=… over t.body, HMAC-SHA256 hex",
			Spec:        timestampedPairs("Mux-Signature", 5*time.Minute),
			DedupKey:    `body.id`,
			Docs:        "https://docs.mux.com/core/verify-webhook-signatures",
			NewSample: func(in SampleInput) (Sample, error) {
				return jsonSample(obj{"type": in.pick("video.asset.created", "video.asset.ready"), "id": uuid(), "created_at": in.RFC3339(), "object": obj{"type": "asset", "id": in.Object},
					"data": obj{"id": in.Object, "status": in.pick("preparing", "ready")}})
			},
			AlwaysSends: []string{"Content-Type", "Mux-Signature"},
		},
		Preset{
			Name:        "lemonsqueezy",
			Description: "Lemon Squeezy: X-Signature over the body, HMAC-SHA256 hex",
			Spec:        Spec{Algorithm: "hmac-sha256", Header: "X-Signature", Encoding: "hex"},
			DedupKey:    `body.meta.event_name + ":" + string(body.data.id) + ":" + body.data.attributes.updated_at`,
			Live:        `body.meta.test_mode != true`,
			Docs:        "https://docs.lemonsqueezy.com/help/webhooks/signing-requests",
			NewSample: func(in SampleInput) (Sample, error) {
				event := in.pick("order_created", "order_refunded")
				return jsonSample(obj{"meta": obj{"event_name": event, "test_mode": true}, "data": obj{"type": "orders", "id": in.Object, "attributes": obj{"updated_at": in.RFC3339()}}},
					"X-Event-Name", event)
			},
			AlwaysSends: []string{"Content-Type", "X-Event-Name", "X-Signature"},
		},
		Preset{
			Name:        "coinbase-commerce",
			Description: "Coinbase Commerce: X-CC-Webhook-Signature over the body, HMAC-SHA256 hex",
			Spec:        Spec{Algorithm: "hmac-sha256", Header: "X-CC-Webhook-Signature", Encoding: "hex"},
			DedupKey:    `body.event.id`,
			Docs:        "https://docs.cdp.coinbase.com/commerce-onchain/docs/webhooks-security",
			NewSample: func(in SampleInput) (Sample, error) {
				return jsonSample(obj{"id": uuid(), "scheduled_for": in.RFC3339(), "attempt_number": 1, "event": obj{"id": uuid(), "resource": "event", "type": in.pick("charge:created", "charge:confirmed"), "api_version": "2018-03-22", "created_at": in.RFC3339(),
					"data": obj{"id": uuidOf(in.Object), "code": "HOOKGATE", "resource": "charge"}}})
			},
			AlwaysSends: []string{"Content-Type", "X-CC-Webhook-Signature"},
		},
		Preset{
			Name:           "contentful",
			SignsFreshness: true,
			Description:    "Contentful signed requests: x-contentful-signature over method, path, signed headers and body, HMAC-SHA256 hex; ms timestamp within 30 s",
			Build:          newContentful,
			Bespoke:        "hmac-sha256 hex over method\\npath\\nsigned headers\\nbody (node-apps-toolkit canonical request), tolerance 30s",
			BespokeHeaders: []string{"x-contentful-signature", "x-contentful-signed-headers", "x-contentful-timestamp"},
			DedupKey:       `headers["x-contentful-idempotency-key"]`,
			Unsigned: []string{"x-contentful-idempotency-key: signed only when listed in x-contentful-signed-headers; " +
				"a capture sent again within the 30 s tolerance under another key would be delivered again"},
			Docs:            "https://www.contentful.com/developers/docs/webhooks/request-verification/",
			BespokeSignsURL: true,
			Signer:          &contentful{},
			NewSample: func(in SampleInput) (Sample, error) {
				// Contentful's own Content-Type; the signature covers it.
				return jsonSample(obj{"sys": obj{"type": "Entry", "id": in.Object, "revision": 1 + in.Step, "space": obj{"sys": obj{"type": "Link", "linkType": "Space", "id": "hookgatespace"}}}, "fields": obj{"title": obj{"en-US": "Hookgate"}}},
					"Content-Type", "application/vnd.contentful.management.v1+json", "X-Contentful-Topic", in.pick("ContentManagement.Entry.publish", "ContentManagement.Entry.unpublish"),
					"X-Contentful-Webhook-Name", "Hookgate", "X-Contentful-Idempotency-Key", randomHex(32))
			},
			AlwaysSends: []string{"Content-Type", "X-Contentful-Topic", "X-Contentful-Webhook-Name", "x-contentful-signature", "x-contentful-signed-headers", "x-contentful-timestamp"},
		},
		Preset{
			Name:        "jira",
			Description: "Jira Cloud admin webhooks: X-Hub-Signature sha256=… over the body, HMAC-SHA256 hex",
			Spec:        hubSignature("X-Hub-Signature", "sha256=", "hmac-sha256"),
			DedupKey:    `headers["x-atlassian-webhook-identifier"]`,
			Docs:        "https://developer.atlassian.com/cloud/jira/platform/webhooks/#secure-admin-webhooks",
			NewSample: func(in SampleInput) (Sample, error) {
				return jsonSample(obj{"timestamp": in.Now.UnixMilli(), "webhookEvent": in.pick("jira:issue_created", "jira:issue_updated"), "issue_event_type_name": in.pick("issue_created", "issue_updated"), "issue": obj{"id": in.Object, "key": "HG-1"}},
					"User-Agent", "Atlassian Webhook HTTP Client", "X-Atlassian-Webhook-Identifier", in.ID)
			},
			AlwaysSends: []string{"Content-Type", "User-Agent", "X-Atlassian-Webhook-Identifier", "X-Hub-Signature"},
		},
		Preset{
			Name:           "asana",
			Description:    "Asana: X-Hook-Signature over the body, HMAC-SHA256 hex, under the secret from the X-Hook-Secret handshake",
			Build:          newAsana,
			Bespoke:        "hmac-sha256 hex over {body}; the secret is learned from one X-Hook-Secret handshake inside the learn_secret window and stored",
			BespokeHeaders: []string{"X-Hook-Signature", "X-Hook-Secret"},
			Handshakes:     []*Handshake{asanaHookSecret},
			LearnsSecret:   true,
			KeyKind:        "learned from the handshake (leave secrets empty; set public_url and learn_secret)",
			SecretKind:     SecretToken,
			Docs:           "https://developers.asana.com/docs/webhooks-guide",
			Signer:         &asana{},
			NewSample: func(in SampleInput) (Sample, error) {
				return jsonSample(obj{"events": []obj{{"action": in.pick("added", "changed"), "created_at": in.RFC3339(), "resource": obj{"gid": strconv.FormatInt(in.ObjectNumber(), 10), "resource_type": "task"}, "user": obj{"gid": "1"}}}})
			},
			AlwaysSends: []string{"Content-Type", "X-Hook-Signature"},
		},
		Preset{
			Name:        "okta",
			Description: "Okta event hooks: Authorization header equal to the secret; one-time verification answered",
			Spec:        Spec{Algorithm: "token", Header: "Authorization"},
			// eventId names the hook call; data.events[].uuid the events it
			// carries, as Okta says duplicates are told apart.
			DedupKey:     `join(map(body.data.events, {.uuid}), ",")`,
			Handshakes:   []*Handshake{oktaVerification},
			KeyKind:      "token",
			SecretKind:   SecretToken,
			Docs:         "https://developer.okta.com/docs/concepts/event-hooks/",
			BodyUnsigned: true,
			NewSample: func(in SampleInput) (Sample, error) {
				return jsonSample(obj{"eventType": "com.okta.event_hook", "eventTypeVersion": "1.0", "cloudEventsVersion": "0.1", "source": "https://example.okta.com/api/v1/eventHooks/who" + in.ID[:8],
					"eventId": uuid(), "eventTime": in.RFC3339(), "contentType": "application/json", "data": obj{"events": []obj{{"uuid": uuid(), "eventType": in.pick("user.session.start", "user.session.end"),
						"actor": obj{"id": "00u" + in.Object, "type": "User"}}}}},
					"Accept", "application/json")
			},
			AlwaysSends: []string{"Content-Type", "Accept", "Authorization"},
		},
		Preset{
			Name:           "microsoft-graph",
			SecretFields:   []string{"clientState"},
			Description:    "Microsoft Graph change notifications: clientState of every notification equal to the secret; validationToken answered",
			Build:          newGraphClientState,
			Bespoke:        "every value[].clientState equal to a secret (constant time)",
			BespokeHeaders: []string{},
			Handshakes:     []*Handshake{graphValidation},
			KeyKind:        "clientState",
			SecretKind:     SecretToken,
			Docs:           "https://learn.microsoft.com/en-us/graph/change-notifications-delivery-webhooks",
			BodyUnsigned:   true,
			SampleSigner:   signedInBody{},
			NewSample: func(in SampleInput) (Sample, error) {
				return jsonSample(obj{"value": []obj{{"subscriptionId": uuid(), "subscriptionExpirationDateTime": in.Now.Add(72 * time.Hour).UTC().Format(time.RFC3339), "clientState": in.Key,
					"changeType": in.pick("created", "updated"), "resource": "Users/" + in.Object + "/Messages/1", "tenantId": uuid()}}}, "Content-Type", "application/json; charset=utf-8")
			},
			AlwaysSends: []string{"Content-Type"},
		},
		Preset{
			Name:         "meta",
			Description:  "Meta (Facebook, Instagram, Messenger): X-Hub-Signature-256 sha256=… over the body, HMAC-SHA256 hex (app secret); hub.challenge answered",
			Spec:         hubSignature("X-Hub-Signature-256", "sha256=", "hmac-sha256"),
			Handshakes:   []*Handshake{metaSubscribe},
			Docs:         "https://developers.facebook.com/docs/graph-api/webhooks/getting-started",
			NewSample:    whatsappSample,
			SampleSigner: metaSigner,
			AlwaysSends:  []string{"Content-Type", "User-Agent", "X-Hub-Signature-256", "X-Hub-Signature"},
		},
		Preset{
			Name:        "whatsapp",
			Description: "WhatsApp Cloud API: X-Hub-Signature-256 sha256=… over the body, HMAC-SHA256 hex (app secret); hub.challenge answered",
			Spec:        hubSignature("X-Hub-Signature-256", "sha256=", "hmac-sha256"),
			// A message id names a message, not an event: each status
			// (sent, delivered, read) is one, and a request may batch many.
			DedupKey:     whatsappDedupKey,
			Handshakes:   []*Handshake{metaSubscribe},
			Docs:         "https://developers.facebook.com/docs/whatsapp/cloud-api/guides/set-up-webhooks",
			NewSample:    whatsappSample,
			SampleSigner: metaSigner,
			AlwaysSends:  []string{"Content-Type", "User-Agent", "X-Hub-Signature-256", "X-Hub-Signature"},
		},
		Preset{
			Name:        "pagerduty",
			Description: "PagerDuty v3: X-PagerDuty-Signature v1=…[,v1=…] over the body, HMAC-SHA256 hex (one value per active secret)",
			Spec:        Spec{Algorithm: "hmac-sha256", Header: "X-PagerDuty-Signature", Separator: ",", Prefix: "v1=", Encoding: "hex"},
			DedupKey:    `body.event.id`,
			Docs:        "https://developer.pagerduty.com/docs/webhooks/webhook-signatures/",
			NewSample: func(in SampleInput) (Sample, error) {
				// X-Webhook-Id is the event's id; X-Webhook-Subscription the
				// subscription in its agent.
				subscription := "PSUB" + strings.ToUpper(in.ID[:3])
				return jsonSample(obj{"event": obj{"id": in.ID, "event_type": in.pick("incident.triggered", "incident.acknowledged"), "resource_type": "incident", "occurred_at": in.RFC3339(),
					"agent": obj{"id": subscription, "type": "webhook_subscription_reference"}, "data": obj{"id": "Q" + in.Object, "type": "incident"}}},
					"User-Agent", "PagerDuty-Webhook/V3.0", "X-Webhook-Id", in.ID, "X-Webhook-Subscription", subscription)
			},
			AlwaysSends: []string{"Content-Type", "User-Agent", "X-Webhook-Id", "X-Webhook-Subscription", "X-PagerDuty-Signature"},
		},
		Preset{
			// SNS signs every topic with the same certificate: a source is
			// bound to its topics, or anyone's SNS topic would pass.
			Name:           "aws-sns",
			SignsFreshness: true,
			Description:    "Amazon SNS HTTP(S): RSA signature (SignatureVersion 1 SHA1, 2 SHA256) in the JSON body, certificate fetched from an SNS host; secrets are the accepted TopicArns; subscriptions confirmed",
			Build:          newSNS,
			Bespoke:        "SHA1withRSA / SHA256withRSA over the canonical name\\nvalue\\n fields per Type, certificate from SigningCertURL (https, sns.<region>.amazonaws.com[.cn], cached), TopicArn among the secrets, Timestamp within 1h",
			BespokeHeaders: []string{},
			SchemeDedupKey: "sha256 of the string to sign, so unsigned fields cannot make a copy new",
			Handshakes:     []*Handshake{snsConfirmation},
			KeyKind:        "TopicArn (arn:aws:sns:<region>:<account>:<topic>)",
			SecretKind:     SecretToken,
			PublicSecrets:  true,
			// Token and SubscribeURL confirm, UnsubscribeURL ends, a subscription.
			SecretFields: []string{"Signature", "Token", "SubscribeURL", "UnsubscribeURL"},
			Unsigned: []string{"SigningCertURL: fetched only as SNS's certificate file on the topic's region's SNS host, the certificate checked to be SNS's",
				"SignatureVersion, Signature: the signature itself", "UnsubscribeURL, MessageAttributes and the x-amz-sns-* headers: never read"},
			Docs:         "https://docs.aws.amazon.com/sns/latest/dg/sns-verify-signature-of-message.html",
			SampleSigner: signedInBody{},
			NewKeys:      snsKeys,
			NewSample:    snsSample,
			// https://docs.aws.amazon.com/sns/latest/dg/SendMessageToHttp.prepare.html
			AlwaysSends: []string{"Content-Type", "User-Agent", "X-Amz-Sns-Message-Type", "X-Amz-Sns-Message-Id", "X-Amz-Sns-Topic-Arn"},
		},
		Preset{
			Name:        "x",
			Description: "X (Twitter) Account Activity API: x-twitter-webhooks-signature sha256=… over the body, HMAC-SHA256 base64 (consumer secret); CRC answered",
			Spec:        Spec{Algorithm: "hmac-sha256", Header: "x-twitter-webhooks-signature", Prefix: "sha256=", Encoding: "base64"},
			Handshakes:  []*Handshake{xCRC},
			// The CRC answer MACs a token with the event key; no token is
			// an object (see xCRC).
			ObjectBodies: true,
			Docs:         "https://docs.x.com/x-api/webhooks/introduction",
			AlwaysSends:  []string{"Content-Type", "X-Twitter-Webhooks-Signature"},
			NewSample: func(in SampleInput) (Sample, error) {
				// Two likes of post Object.
				return jsonSample(obj{"for_user_id": "2244994945", "favorite_events": []obj{{"id": in.ID, "created_at": in.Now.UTC().Format(time.RubyDate),
					"timestamp_ms": in.Now.UnixMilli(), "favorited_status": obj{"id_str": strconv.FormatInt(in.ObjectNumber(), 10), "text": "Hookgate sample"},
					"user": obj{"id_str": in.pick("2244994945", "783214"), "screen_name": in.pick("XDevelopers", "X")}}}})
			},
		},
		Preset{
			Name:           "plaid",
			SignsFreshness: true,
			Description:    "Plaid: Plaid-Verification JWT (ES256) whose request_body_sha256 claim is the body's SHA-256; secrets are JWK public keys",
			Build:          newPlaid,
			Bespoke:        "ES256 JWT, key chosen by kid among the configured JWKs or fetched from /webhook_verification_key/get (provider_options), iat within 5m, request_body_sha256 = hex sha256(body)",
			BespokeHeaders: []string{"Plaid-Verification"},
			// No event id, and one item's updates can be byte for byte alike:
			// the signed token, issued for each delivery, names one.
			SchemeDedupKey: "sha256 of the Plaid-Verification token",
			Live:           `body.environment == "production"`,
			KeyKind:        "JWK public key (JSON); optional with provider_options client_id and secret",
			SecretKind:     SecretPublicKey,
			Docs:           "https://plaid.com/docs/api/webhooks/webhook-verification/",
			Options: []ProviderOption{
				{Name: "client_id", Doc: "Plaid API client_id, to fetch keys by kid", Example: "5f3e2a9c8b7d6e5f4a3b2c1d"},
				{Name: "secret", Doc: "Plaid API secret of that environment", Example: "{env.PLAID_SECRET}"},
				{Name: "environment", Doc: "production (default) or sandbox: the API host keys are fetched from", Example: "sandbox"},
			},
			SampleSigner: &plaid{},
			NewKeys:      plaidKeys,
			NewSample: func(in SampleInput) (Sample, error) {
				// Two updates of item Object, byte for byte alike, as Plaid
				// sends them: only the signed token tells them apart.
				return jsonSample(obj{"environment": "sandbox", "error": nil, "item_id": in.Object, "new_transactions": 3, "webhook_code": "DEFAULT_UPDATE", "webhook_type": "TRANSACTIONS"})
			},
			AlwaysSends: []string{"Content-Type", "Plaid-Verification"},
		},
	)
}
