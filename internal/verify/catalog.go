package verify

import (
	"time"
)

// The provider catalog. Each preset follows the provider's official SDK
// where docs and SDK disagree; the comments say where that matters.

// bodyHMAC is the common HMAC over the raw body, with the signature in one
// header after prefix ("X-Hub-Signature: sha256=<hex>" and its kin).
func bodyHMAC(algorithm, header, prefix, encoding string) Spec {
	return Spec{Algorithm: algorithm, Header: header, Prefix: prefix, Encoding: encoding}
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

// hubspotDedupKey names each event of a batch: eventId alone is not
// unique, so with its subscription and time. attemptNumber is left out: it
// changes on each retry.
const hubspotDedupKey = `join(map(body, {string(.subscriptionId) + ":" + string(.eventId) + ":" + string(.occurredAt)}), ",")`

// whatsappDedupKey names each message and each status change of a
// WhatsApp Cloud API request, across its entries and changes.
const whatsappDedupKey = `join(flatten(map(body.entry, {flatten(map(.changes, {concat(map(.value?.messages ?? [], {.id}), ` +
	`map(.value?.statuses ?? [], {.id + ":" + .status + ":" + .timestamp}))}))})), ",")`

// svixProvider is a provider that sends through Svix: Svix's scheme under
// the provider's name.
func svixProvider(name, provider, docs, checked string) Preset {
	return standardWebhooks(name, provider+": Svix signatures (svix-id/-timestamp/-signature v1,…), HMAC-SHA256 base64, whsec_ key", "svix", docs, checked)
}

func init() {
	register(
		Preset{
			Name:        "standard-webhooks-ed25519",
			Checked:     "vector",
			Description: "Standard Webhooks (asymmetric): webhook-signature v1a,… Ed25519 over id.timestamp.body; secrets are whpk_ public keys",
			Spec: Spec{
				Algorithm: "ed25519", Header: "webhook-signature", Separator: " ", Prefix: "v1a,", Encoding: "base64",
				Content: "{id}.{timestamp}.{body}", IDHeader: "webhook-id", TimestampHeader: "webhook-timestamp",
				SecretEncoding: "whpk", Tolerance: 5 * time.Minute,
			},
			Docs:  "https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md",
			Dedup: Dedup{Key: `headers["webhook-id"]`},
			Keys: Keys{
				Describe: "public key (whpk_…)",
				Kind:     SecretPublicKey,
			},
		},
		svixProvider("clerk", "Clerk", "https://clerk.com/docs/webhooks/sync-data", "sdk: svix@2.5.0"),
		svixProvider("resend", "Resend", "https://resend.com/docs/dashboard/webhooks/verify-webhooks-requests", "sdk: svix@2.5.0"),
		Preset{
			// python-slack-sdk rejects timestamps more than 5 minutes away in
			// either direction; bolt-js only old ones. Both directions here.
			Name:        "slack",
			Delivery:    Delivery{Retries: "no 2xx within 3s: up to 3 retries, nearly immediately, after 1 minute, after 5 minutes", RetryWindow: Span(6 * time.Minute), Timeout: Span(3 * time.Second), Docs: "https://docs.slack.dev/apis/events-api/"},
			Checked:     "sdk: @slack/bolt@5.1.0",
			Description: "Slack: X-Slack-Signature v0=… over v0:timestamp:body, HMAC-SHA256 hex",
			Spec: Spec{
				Algorithm: "hmac-sha256", Header: "X-Slack-Signature", Prefix: "v0=", Encoding: "hex",
				Content: "v0:{timestamp}:{body}", TimestampHeader: "X-Slack-Request-Timestamp", Tolerance: 5 * time.Minute,
			},
			Handshakes: []*Handshake{slackSSLCheck, slackURLVerification},
			// Events are JSON; slash commands and interactivity are forms.
			Format: FormatEither,
			Docs:   "https://api.slack.com/authentication/verifying-requests-from-slack",
			Dedup:  Dedup{Key: `body?.event_id`},
		},
		Preset{
			Name:        "shopify",
			Delivery:    Delivery{Retries: "failed delivery (non-2xx or >5s) retried 8 times over 4 hours, exponential backoff", RetryWindow: Span(4 * time.Hour), Timeout: Span(5 * time.Second), Docs: "https://shopify.dev/docs/apps/build/webhooks/troubleshooting-webhooks"},
			Checked:     "sdk: @shopify/shopify-api@15.0.0",
			Description: "Shopify webhooks: X-Shopify-Hmac-Sha256 over the body, HMAC-SHA256 base64 (app client secret)",
			Spec:        Spec{Algorithm: "hmac-sha256", Header: "X-Shopify-Hmac-Sha256", Encoding: "base64"},
			Docs:        "https://shopify.dev/docs/apps/build/webhooks/subscribe/https#step-2-validate-the-origin-of-your-webhook",
			Dedup:       Dedup{Key: `headers["x-shopify-webhook-id"]`},
		},
		Preset{
			// The Events flavour drops the X- prefix; dedup uses
			// shopify-webhook-id, which Shopify keeps when it drops
			// shopify-event-id.
			Name:        "shopify-events",
			Checked:     "sdk: @shopify/shopify-api@15.0.0",
			Description: "Shopify Events: shopify-hmac-sha256 over the body, HMAC-SHA256 base64 (unprefixed headers)",
			Spec:        Spec{Algorithm: "hmac-sha256", Header: "shopify-hmac-sha256", Encoding: "base64"},
			Docs:        "https://shopify.dev/docs/apps/build/webhooks",
			Dedup:       Dedup{Key: `headers["shopify-webhook-id"]`},
		},
		Preset{
			Name:        "twilio",
			Delivery:    Delivery{Retries: "default 1 retry on connect failure (#rc=0..5 URL fragment), all within 15s total (#tt)", RetryWindow: Span(15 * time.Second), Timeout: Span(15 * time.Second), Docs: "https://www.twilio.com/docs/usage/webhooks/webhooks-connection-overrides"},
			Checked:     "sdk: twilio@6.3.1",
			Description: "Twilio: X-Twilio-Signature, HMAC-SHA1 base64 over the URL and sorted form parameters, or the URL with bodySHA256 for JSON",
			// Forms, or JSON covered by bodySHA256.
			Format: FormatEither,
			Docs:   "https://www.twilio.com/docs/usage/webhooks/webhooks-security",
			Bespoke: Bespoke{
				Build:    newTwilio,
				Describe: "hmac-sha1 base64 over {url} + sorted form name+value pairs; JSON bodies: {url} with bodySHA256 = hex sha256(body); URL tried with and without the default port",
				Headers:  []string{"X-Twilio-Signature"},
				SignsURL: true,
				Signer:   &twilio{},
			},
			Dedup: Dedup{Key: `headers["i-twilio-idempotency-token"]`},
		},
		Preset{
			Name:        "sendgrid",
			Delivery:    Delivery{Retries: "non-2xx: POST retried at increasing intervals for up to 24h after the event", RetryWindow: Span(24 * time.Hour), Docs: "https://docs.sendgrid.com/for-developers/tracking-events/troubleshooting"},
			Checked:     "sdk: @sendgrid/eventwebhook@8.0.0",
			Description: "SendGrid Event Webhook: ECDSA P-256 over timestamp+body, base64 DER; secrets are base64 DER public keys",
			Spec: Spec{
				Algorithm: "ecdsa-p256-sha256", Header: "X-Twilio-Email-Event-Webhook-Signature", Encoding: "base64",
				Content: "{timestamp}{body}", TimestampHeader: "X-Twilio-Email-Event-Webhook-Timestamp", SecretEncoding: "der-base64",
			},
			Docs: "https://www.twilio.com/docs/sendgrid/for-developers/tracking-events/getting-started-event-webhook-security-features",
			Dedup: Dedup{
				// One request carries a batch; each event has an id.
				Key: `join(map(body, {.sg_event_id}), ",")`,
			},
			Keys: Keys{
				Describe: "public key (base64 DER)",
				Kind:     SecretPublicKey,
			},
		},
		Preset{
			Name:        "discord",
			Delivery:    Delivery{Retries: "none: no initial response within 3s invalidates the interaction token; no retry", Timeout: Span(3 * time.Second), Docs: "https://discord.com/developers/docs/interactions/receiving-and-responding"},
			Checked:     "sdk: discord-interactions@4.4.0",
			Description: "Discord interactions: X-Signature-Ed25519 over timestamp+body, Ed25519 hex; secrets are hex public keys; PING answered",
			Spec: Spec{
				Algorithm: "ed25519", Header: "X-Signature-Ed25519", Encoding: "hex",
				Content: "{timestamp}{body}", TimestampHeader: "X-Signature-Timestamp", SecretEncoding: "hex",
				Tolerance: 5 * time.Minute,
			},
			Handshakes: []*Handshake{discordPing},
			Docs:       "https://discord.com/developers/docs/interactions/overview#setting-up-an-endpoint-validating-security-request-headers",
			Dedup:      Dedup{Key: `body.id`},
			Keys: Keys{
				Describe: "public key (hex)",
				Kind:     SecretPublicKey,
			},
		},
		Preset{
			Name:        "discord-events",
			Delivery:    Delivery{Retries: "no 204 within 3s: retried several times, exponential backoff, for up to 10 minutes", RetryWindow: Span(10 * time.Minute), Timeout: Span(3 * time.Second), Docs: "https://discord.com/developers/docs/events/webhook-events"},
			Checked:     "sdk: discord-interactions@4.4.0",
			Description: "Discord webhook events: X-Signature-Ed25519 over timestamp+body, Ed25519 hex; PING (type 0) answered 204",
			Spec: Spec{
				Algorithm: "ed25519", Header: "X-Signature-Ed25519", Encoding: "hex",
				Content: "{timestamp}{body}", TimestampHeader: "X-Signature-Timestamp", SecretEncoding: "hex",
				Tolerance: 5 * time.Minute,
			},
			Handshakes: []*Handshake{discordEventsPing},
			Docs:       "https://discord.com/developers/docs/events/webhook-events",
			Keys: Keys{
				Describe: "public key (hex)",
				Kind:     SecretPublicKey,
			},
		},
		Preset{
			Name: "square",
			Delivery: Delivery{Retries: "non-2xx or >10s: retried up to 72h; 1, 2, 4, 8, 16, 32 min, then hourly", RetryWindow: Span(72 * time.Hour), Timeout: Span(10 * time.Second), IPRanges: []string{"square", "square-sandbox"}, Docs: "https://developer.squareup.com/docs/webhooks-api/delivery-sla",
				Reconcile: "POST /v2/events, SearchEvents (28 days), each missing event fetched and stored"},
			Checked:     "sdk: square@46.0.0",
			Description: "Square: x-square-hmacsha256-signature over notification URL + body, HMAC-SHA256 base64 (set public_url)",
			Spec:        Spec{Algorithm: "hmac-sha256", Header: "x-square-hmacsha256-signature", Encoding: "base64", Content: "{url}{body}"},
			Docs:        "https://developer.squareup.com/docs/webhooks/step3validate",
			Dedup:       Dedup{Key: `body.event_id`},
			Live: Live{
				Expr: `headers["square-environment"] == "Production"`,
				// Square signs the URL and body, not this header.
				Unsigned: true,
			},
		},
		Preset{
			// The SDK keeps only the last h1; any h1 may match here, as the
			// docs describe. 5 s tolerance as in the SDK and docs.
			Name: "paddle",
			Delivery: Delivery{Retries: "live: up to 60 retries over 3 days, exponential backoff; sandbox: 3 within 15 min", RetryWindow: Span(72 * time.Hour), Timeout: Span(5 * time.Second), Redeliver: "REST POST /notifications/{notification_id}/replay (delivered or failed notifications)", IPRanges: []string{"paddle", "paddle-sandbox"}, Docs: "https://developer.paddle.com/webhooks/respond-to-webhooks",
				Reconcile: "GET /notifications of the destination (90 days), each failed or missing event replayed"},
			Checked:     "sdk: @paddle/paddle-node-sdk@3.10.0",
			Description: "Paddle Billing: Paddle-Signature ts=…;h1=… over ts:body, HMAC-SHA256 hex",
			Spec: Spec{
				Algorithm: "hmac-sha256", Header: "Paddle-Signature", SignatureKey: "h1", TimestampKey: "ts", PairSeparator: ";",
				Encoding: "hex", Content: "{timestamp}:{body}", Tolerance: 5 * time.Second,
			},
			Docs:  "https://developer.paddle.com/webhooks/signature-verification",
			Dedup: Dedup{Key: `body.event_id`},
		},
		Preset{
			// Zoom's own code hashes re-serialized JSON; Hookgate verifies the
			// raw bytes as the docs say, which is identical for Zoom's compact JSON.
			Name:        "zoom",
			Delivery:    Delivery{Retries: "no 200/204 within 3s: 3 retries, 5 min, then 20 min, then 60 min after the previous", RetryWindow: Span(1*time.Hour + 25*time.Minute), Timeout: Span(3 * time.Second), Docs: "https://developers.zoom.us/blog/webhook-delays"},
			Checked:     "sdk: @zoom/rivet@0.4.0",
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
		},
		Preset{
			Name:        "linear",
			Delivery:    Delivery{Retries: "failure (down, >5s, non-200): max 3 retries, after 1 minute, 1 hour, then 6 hours", RetryWindow: Span(7*time.Hour + 1*time.Minute), Timeout: Span(5 * time.Second), Docs: "https://linear.app/developers/webhooks"},
			Checked:     "sdk: @linear/sdk@98.0.0",
			Description: "Linear: Linear-Signature over the body, HMAC-SHA256 hex; webhookTimestamp (ms) in the body within 60 s",
			Docs:        "https://linear.app/developers/webhooks#securing-webhooks",
			Bespoke: Bespoke{
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
				Describe: "hmac-sha256 hex over {body}, then body.webhookTimestamp (ms) within 60s",
				Headers:  []string{"Linear-Signature"},
			},
			Dedup: Dedup{Key: `headers["linear-delivery"]`},
		},
		Preset{
			Name:        "intercom",
			Delivery:    Delivery{Retries: "retry schedule not documented; 15-min pause after 1000 errors, suspended after 7 days", Docs: "https://developers.intercom.com/docs/webhooks/webhook-notifications"},
			Checked:     "docs",
			Description: "Intercom: X-Hub-Signature sha1=… over the body, HMAC-SHA1 hex (app client secret); HEAD check answered",
			Spec:        bodyHMAC("hmac-sha1", "X-Hub-Signature", "sha1=", "hex"),
			Handshakes:  []*Handshake{headCheck},
			Docs:        "https://developers.intercom.com/docs/webhooks/webhook-notifications",
			Dedup:       Dedup{Key: `body.id`},
		},
		Preset{
			Name:        "mailgun",
			Delivery:    Delivery{Retries: "non-200 (406 = reject, no retry): retried for 8h at 5m, 10m, 15m, 1h, 2h, 4h", RetryWindow: Span(8 * time.Hour), Docs: "https://documentation.mailgun.com/docs/mailgun/user-manual/webhooks/webhook-retries"},
			Checked:     "docs",
			Description: "Mailgun: signature.{timestamp,token,signature} in the JSON body, HMAC-SHA256 hex of timestamp+token",
			Docs:        "https://documentation.mailgun.com/docs/mailgun/user-manual/webhooks/securing-webhooks",
			Trust: Trust{
				SecretFields: []string{"signature"},
				// Mailgun signs timestamp+token, not the event: the body is not covered.
				BodyUnsigned: true,
			},
			Bespoke: Bespoke{
				SignsFreshness: true,
				Build:          newMailgun,
				Describe:       "hmac-sha256 hex over body.signature.timestamp + body.signature.token, tolerance 5m",
				Headers:        []string{},
			},
			Dedup: Dedup{Key: `body["event-data"]?.id`},
			Live: Live{
				Expr:     `body["event-data"]?.flags?.["is-test-mode"] != true`,
				Unsigned: true,
			},
		},
		Preset{
			Name:        "bitbucket",
			Delivery:    Delivery{Retries: "only 5xx responses are resent, up to two more times (no stated delay)", Timeout: Span(10 * time.Second), Docs: "https://support.atlassian.com/bitbucket-cloud/docs/troubleshoot-webhooks/"},
			Checked:     "docs",
			Description: "Bitbucket Cloud: X-Hub-Signature sha256=… over the body, HMAC-SHA256 hex",
			Spec:        bodyHMAC("hmac-sha256", "X-Hub-Signature", "sha256=", "hex"),
			Docs:        "https://support.atlassian.com/bitbucket-cloud/docs/manage-webhooks/",
			Dedup:       Dedup{Key: `headers["x-request-uuid"]`},
		},
		Preset{
			Name: "gitlab",
			Delivery: Delivery{Retries: "no automatic retry schedule documented; hook auto-disabled after 4 consecutive failures", Timeout: Span(10 * time.Second), Redeliver: "UI \"Resend Request\" in Recent events (last 2 days); REST POST /projects/:id/hooks/:hook_id/events/:hook_event_id/resend", Docs: "https://docs.gitlab.com/user/project/integrations/webhooks/",
				Reconcile: "GET {hook}/events (7 days), each failed or missing event resent"},
			Checked:     "docs",
			Description: "GitLab: X-Gitlab-Token equal to the secret token (compared in constant time)",
			Spec:        Spec{Algorithm: "token", Header: "X-Gitlab-Token"},
			Docs:        "https://docs.gitlab.com/user/project/integrations/webhooks/",
			Dedup:       Dedup{Key: `headers["idempotency-key"] ?? headers["x-gitlab-event-uuid"]`},
			Keys: Keys{
				Describe: "token",
				Kind:     SecretToken,
			},
			Trust: Trust{BodyUnsigned: true},
		},
		Preset{
			Name:        "twitch",
			Delivery:    Delivery{Retries: "resends when unsure of delivery (at-least-once); schedule not documented", Docs: "https://dev.twitch.tv/docs/eventsub/handling-webhook-events/"},
			Checked:     "docs",
			Description: "Twitch EventSub: Twitch-Eventsub-Message-Signature sha256=… over id+timestamp+body, HMAC-SHA256 hex; callback verification answered",
			Spec: Spec{
				Algorithm: "hmac-sha256", Header: "Twitch-Eventsub-Message-Signature", Prefix: "sha256=", Encoding: "hex",
				Content: "{id}{timestamp}{body}", IDHeader: "Twitch-Eventsub-Message-Id",
				TimestampHeader: "Twitch-Eventsub-Message-Timestamp", TimestampUnit: "rfc3339", Tolerance: 10 * time.Minute,
			},
			Handshakes: []*Handshake{twitchCallbackVerification},
			Docs:       "https://dev.twitch.tv/docs/eventsub/handling-webhook-events/#verifying-the-event-message",
			Dedup:      Dedup{Key: `headers["twitch-eventsub-message-id"]`},
		},
		Preset{
			Name:        "typeform",
			Delivery:    Delivery{Retries: "429/408/503/423: every 2-3 min for 10h; other errors backoff; 404/410 disable hook", RetryWindow: Span(10 * time.Hour), Timeout: Span(30 * time.Second), Docs: "https://www.typeform.com/developers/webhooks/"},
			Checked:     "docs",
			Description: "Typeform: Typeform-Signature sha256=… over the body, HMAC-SHA256 base64",
			Spec:        Spec{Algorithm: "hmac-sha256", Header: "Typeform-Signature", Prefix: "sha256=", Encoding: "base64"},
			Docs:        "https://www.typeform.com/developers/webhooks/secure-your-webhooks/",
			Dedup:       Dedup{Key: `body.event_id`},
		},
		Preset{
			Name:        "calendly",
			Delivery:    Delivery{Retries: "on 3xx/4xx/5xx retries with exponential backoff for 24h; then webhook disabled", RetryWindow: Span(24 * time.Hour), Docs: "https://developer.calendly.com/api-docs/overview/webhooks/webhook-errors"},
			Checked:     "docs",
			Description: "Calendly: Calendly-Webhook-Signature t=…,v1=… over t.body, HMAC-SHA256 hex",
			Spec:        timestampedPairs("Calendly-Webhook-Signature", 3*time.Minute),
			Docs:        "https://developer.calendly.com/api-docs/4c305798a61d3-webhook-signatures",
			Dedup:       Dedup{Key: `body.event + ":" + (body.payload?.uri ?? "") + ":" + body.created_at`},
		},
		Preset{
			Name:        "hubspot-v1",
			Delivery:    Delivery{Retries: "up to 10 retries spread over the next 24h (connect fail, >5s, 4xx/5xx), randomized", RetryWindow: Span(24 * time.Hour), Timeout: Span(5 * time.Second), Docs: "https://developers.hubspot.com/docs/api/webhooks"},
			Checked:     "sdk: @hubspot/api-client@14.0.1",
			Description: "HubSpot v1: X-HubSpot-Signature, SHA-256 (a plain hash, not an HMAC) of client secret + body, hex",
			Spec:        Spec{Algorithm: "hash-sha256", Header: "X-HubSpot-Signature", Encoding: "hex", Content: "{secret}{body}"},
			Docs:        "https://developers.hubspot.com/docs/api/webhooks/validating-requests",
			Dedup:       Dedup{Key: hubspotDedupKey},
		},
		Preset{
			Name:        "hubspot-v2",
			Delivery:    Delivery{Retries: "up to 10 retries spread over the next 24h (connect fail, >5s, 4xx/5xx), randomized", RetryWindow: Span(24 * time.Hour), Timeout: Span(5 * time.Second), Docs: "https://developers.hubspot.com/docs/api/webhooks"},
			Checked:     "sdk: @hubspot/api-client@14.0.1",
			Description: "HubSpot v2: X-HubSpot-Signature, SHA-256 of client secret + method + URL + body, hex (set public_url)",
			Spec:        Spec{Algorithm: "hash-sha256", Header: "X-HubSpot-Signature", Encoding: "hex", Content: "{secret}{method}{url}{body}"},
			Docs:        "https://developers.hubspot.com/docs/api/webhooks/validating-requests",
		},
		Preset{
			// HubSpot's docs decode some %xx in the URI; its SDKs sign the URL
			// as called, which is what Hookgate does.
			Name:        "hubspot-v3",
			Delivery:    Delivery{Retries: "up to 10 retries spread over the next 24h (connect fail, >5s, 4xx/5xx), randomized", RetryWindow: Span(24 * time.Hour), Timeout: Span(5 * time.Second), Docs: "https://developers.hubspot.com/docs/api/webhooks"},
			Checked:     "sdk: @hubspot/api-client@14.0.1",
			Description: "HubSpot v3: X-HubSpot-Signature-v3 over method+URL+body+timestamp, HMAC-SHA256 base64; ms timestamp within 5 min (set public_url)",
			Spec: Spec{
				Algorithm: "hmac-sha256", Header: "X-HubSpot-Signature-v3", Encoding: "base64",
				Content: "{method}{url}{body}{timestamp}", TimestampHeader: "X-HubSpot-Request-Timestamp", TimestampUnit: "ms",
				Tolerance: 5 * time.Minute,
			},
			Docs:  "https://developers.hubspot.com/docs/api/webhooks/validating-requests",
			Dedup: Dedup{Key: hubspotDedupKey},
		},
		Preset{
			Name:        "adyen",
			Delivery:    Delivery{Retries: "3 quick retries (9s/18s/27s), then retry queue at 2m..8h intervals for up to 30 days", RetryWindow: Span(720 * time.Hour), Timeout: Span(10 * time.Second), Redeliver: "Customer Area: Developers > Webhooks > endpoint > Troubleshoot, \"Retry\" (or \"Ignore notification\") per queued message", Docs: "https://docs.adyen.com/development-resources/webhooks/troubleshoot"},
			Checked:     "sdk: @adyen/api-library@32.1.0",
			Description: "Adyen: additionalData.hmacSignature of every notification item, HMAC-SHA256 base64 under the hex HMAC key",
			Response:    "[accepted]",
			Docs:        "https://docs.adyen.com/development-resources/webhooks/secure-webhooks/verify-hmac-signatures/",
			Bespoke: Bespoke{
				Build:    newAdyen,
				Describe: "hmac-sha256 base64 over pspReference:originalReference:merchantAccountCode:merchantReference:value:currency:eventCode:success, per item; hex key",
				Headers:  []string{},
				NewKeys:  hexKeys,
			},
			Dedup: Dedup{
				// Every item of the batch: a reference, its event and outcome.
				Key: `join(map(body.notificationItems, {.NotificationRequestItem.pspReference + ":" + .NotificationRequestItem.eventCode + ":" + .NotificationRequestItem.success}), ",")`,
			},
			Live: Live{
				Expr: `body.live == "true"`,
				// The HMAC covers each item's fields, not the top-level live flag.
				Unsigned: true,
			},
			Keys: Keys{
				Describe: "HMAC key (hex)",
				Kind:     SecretMACKeyHex,
			},
		},
		Preset{
			Name:        "vercel",
			Delivery:    Delivery{Retries: "retry behaviour not documented", Docs: "https://vercel.com/docs/webhooks"},
			Checked:     "docs",
			Description: "Vercel: x-vercel-signature over the body, HMAC-SHA1 hex",
			Spec:        Spec{Algorithm: "hmac-sha1", Header: "x-vercel-signature", Encoding: "hex"},
			Docs:        "https://vercel.com/docs/webhooks/webhooks-api#securing-webhooks",
			Dedup:       Dedup{Key: `body.id`},
		},
		Preset{
			Name:        "sentry",
			Delivery:    Delivery{Retries: "no retry documented; 1000 timeouts within 24h unsubscribes the webhook", Timeout: Span(1 * time.Second), IPRanges: []string{"sentry"}, Docs: "https://docs.sentry.io/organization/integrations/integration-platform/webhooks/"},
			Checked:     "docs",
			Description: "Sentry integrations: Sentry-Hook-Signature over the body, HMAC-SHA256 hex (client secret)",
			Spec:        Spec{Algorithm: "hmac-sha256", Header: "Sentry-Hook-Signature", Encoding: "hex"},
			Docs:        "https://docs.sentry.io/organization/integrations/integration-platform/webhooks/",
			Dedup:       Dedup{Key: `headers["request-id"]`},
		},
		Preset{
			Name:        "postmark",
			Delivery:    Delivery{Retries: "inbound hook: 10 retries over ~10.5h (1m, 5m, 10m x3, 15m, 30m, 1h, 2h, 6h); 403 stops", RetryWindow: Span(10*time.Hour + 30*time.Minute), Redeliver: "UI: retry a failed inbound message (Inbound Error) from the Postmark account", Docs: "https://postmarkapp.com/support/article/understanding-inbound-webhook-retries-in-postmark"},
			Checked:     "docs",
			Description: "Postmark: HTTP basic auth from the webhook URL; secrets are \"user:password\"",
			Spec:        Spec{Algorithm: "basic", Header: "Authorization"},
			Docs:        "https://postmarkapp.com/developer/webhooks/webhooks-overview",
			Keys: Keys{
				// No event id: MessageID and RecordType name a message, which
				// has many opens and clicks; the body's digest is the key.
				Describe: "user:password",
				Kind:     SecretToken,
			},
			Trust: Trust{BodyUnsigned: true},
		},
		Preset{
			Name:        "basic-auth",
			Checked:     "docs",
			Description: "Any provider that calls a URL with basic auth credentials; secrets are \"user:password\"",
			Spec:        Spec{Algorithm: "basic", Header: "Authorization"},
			Format:      FormatEither,
			Keys: Keys{
				Describe: "user:password",
				Kind:     SecretToken,
			},
			Trust: Trust{BodyUnsigned: true},
		},
		Preset{
			Name:        "woocommerce",
			Delivery:    Delivery{Retries: "none: sent once; webhook disabled after more than 5 consecutive failures", Timeout: Span(1 * time.Minute), Docs: "https://github.com/woocommerce/woocommerce/blob/trunk/plugins/woocommerce/includes/class-wc-webhook.php"},
			Checked:     "docs",
			Description: "WooCommerce: X-WC-Webhook-Signature over the body, HMAC-SHA256 base64; the unsigned creation ping answered",
			Spec:        Spec{Algorithm: "hmac-sha256", Header: "X-WC-Webhook-Signature", Encoding: "base64"},
			// The delivery id is a hash of the webhook and the second, shared
			// by every event of that second; WooCommerce does not retry. The
			// body's digest is the key.
			Handshakes: []*Handshake{wooCommercePing},
			Docs:       "https://woocommerce.github.io/woocommerce-rest-api-docs/#webhooks",
		},
		Preset{
			Name:        "mux",
			Delivery:    Delivery{Retries: "non-2xx: retried for the next 24 hours with increasing delays", RetryWindow: Span(24 * time.Hour), Timeout: Span(5 * time.Second), Docs: "https://www.mux.com/docs/core/listen-for-webhooks"},
			Checked:     "sdk: @mux/mux-node@15.3.0",
			Description: "Mux: Mux-Signature t=…,v1=… over t.body, HMAC-SHA256 hex",
			Spec:        timestampedPairs("Mux-Signature", 5*time.Minute),
			Docs:        "https://docs.mux.com/core/verify-webhook-signatures",
			Dedup:       Dedup{Key: `body.id`},
		},
		Preset{
			Name:        "lemonsqueezy",
			Delivery:    Delivery{Retries: "non-200: up to 3 more retries, exponential backoff (e.g. 5s, 25s, 125s), then failed", RetryWindow: Span(2*time.Minute + 35*time.Second), Docs: "https://docs.lemonsqueezy.com/help/webhooks/webhook-requests"},
			Checked:     "docs",
			Description: "Lemon Squeezy: X-Signature over the body, HMAC-SHA256 hex",
			Spec:        Spec{Algorithm: "hmac-sha256", Header: "X-Signature", Encoding: "hex"},
			Docs:        "https://docs.lemonsqueezy.com/help/webhooks/signing-requests",
			Dedup:       Dedup{Key: `body.meta.event_name + ":" + string(body.data.id) + ":" + body.data.attributes.updated_at`},
			Live:        Live{Expr: `body.meta.test_mode != true`},
		},
		Preset{
			Name:        "coinbase-commerce",
			Delivery:    Delivery{Retries: "no 200 ack: exponential backoff for up to three days, max retry interval 1 hour", RetryWindow: Span(72 * time.Hour), Docs: "https://docs.cdp.coinbase.com/commerce/api-arcitecture/webhooks-overview"},
			Checked:     "sdk: coinbase-commerce-node@1.0.4",
			Description: "Coinbase Commerce: X-CC-Webhook-Signature over the body, HMAC-SHA256 hex",
			Spec:        Spec{Algorithm: "hmac-sha256", Header: "X-CC-Webhook-Signature", Encoding: "hex"},
			Docs:        "https://docs.cdp.coinbase.com/commerce-onchain/docs/webhooks-security",
			Dedup:       Dedup{Key: `body.event.id`},
		},
		Preset{
			Name:        "contentful",
			Delivery:    Delivery{Retries: "default: up to 2 more attempts 30s apart (3 in ~1 min); EAP maxRetries up to 99 (~24h)", RetryWindow: Span(1 * time.Minute), Docs: "https://www.contentful.com/developers/docs/webhooks/retry-policy/"},
			Checked:     "sdk: @contentful/node-apps-toolkit@3.16.1",
			Description: "Contentful signed requests: x-contentful-signature over method, path, signed headers and body, HMAC-SHA256 hex; ms timestamp within 30 s",
			Docs:        "https://www.contentful.com/developers/docs/webhooks/request-verification/",
			Bespoke: Bespoke{
				SignsFreshness: true,
				Build:          newContentful,
				Describe:       "hmac-sha256 hex over method\\npath\\nsigned headers\\nbody (node-apps-toolkit canonical request), tolerance 30s",
				Headers:        []string{"x-contentful-signature", "x-contentful-signed-headers", "x-contentful-timestamp"},
				SignsURL:       true,
				Signer:         &contentful{},
			},
			Dedup: Dedup{Key: `headers["x-contentful-idempotency-key"]`},
			Trust: Trust{
				Unsigned: []string{"x-contentful-idempotency-key: signed only when listed in x-contentful-signed-headers; " +
					"a capture sent again within the 30 s tolerance under another key would be delivered again"},
			},
		},
		Preset{
			Name:        "jira",
			Delivery:    Delivery{Retries: "retries on 408/409/425/429/5xx, connect failure or timeout; may arrive up to ~30 min late", RetryWindow: Span(30 * time.Minute), Docs: "https://developer.atlassian.com/cloud/jira/platform/webhooks/#retry-policy"},
			Checked:     "docs",
			Description: "Jira Cloud admin webhooks: X-Hub-Signature sha256=… over the body, HMAC-SHA256 hex",
			Spec:        bodyHMAC("hmac-sha256", "X-Hub-Signature", "sha256=", "hex"),
			Docs:        "https://developer.atlassian.com/cloud/jira/platform/webhooks/#secure-admin-webhooks",
			Dedup:       Dedup{Key: `headers["x-atlassian-webhook-identifier"]`},
		},
		Preset{
			Name:        "asana",
			Delivery:    Delivery{Retries: "no 2xx within 10s: Asana tries to resend for up to 24 hours, then gives up", RetryWindow: Span(24 * time.Hour), Timeout: Span(10 * time.Second), Docs: "https://developers.asana.com/docs/webhooks-guide"},
			Checked:     "docs",
			Description: "Asana: X-Hook-Signature over the body, HMAC-SHA256 hex, under the secret from the X-Hook-Secret handshake",
			Handshakes:  []*Handshake{asanaHookSecret},
			Docs:        "https://developers.asana.com/docs/webhooks-guide",
			Bespoke: Bespoke{
				Build:    newAsana,
				Describe: "hmac-sha256 hex over {body}; the secret is learned from one X-Hook-Secret handshake inside the learn_secret window and stored",
				Headers:  []string{"X-Hook-Signature", "X-Hook-Secret"},
				Signer:   &asana{header: "X-Hook-Signature"},
			},
			Keys: Keys{
				Learned:  true,
				Describe: "learned from the handshake (leave secrets empty; set public_url and learn_secret)",
				Kind:     SecretToken,
			},
		},
		Preset{
			Name:        "okta",
			Delivery:    Delivery{Retries: "at most one retry (5xx/timeout); 4xx responses are never retried", Timeout: Span(3 * time.Second), Docs: "https://developer.okta.com/docs/concepts/event-hooks/"},
			Checked:     "docs",
			Description: "Okta event hooks: Authorization header equal to the secret; one-time verification answered",
			Spec:        Spec{Algorithm: "token", Header: "Authorization"},
			Handshakes:  []*Handshake{oktaVerification},
			Docs:        "https://developer.okta.com/docs/concepts/event-hooks/",
			Dedup: Dedup{
				// eventId names the hook call; data.events[].uuid the events it
				// carries, as Okta says duplicates are told apart.
				Key: `join(map(body.data.events, {.uuid}), ",")`,
			},
			Keys: Keys{
				Describe: "token",
				Kind:     SecretToken,
			},
			Trust: Trust{BodyUnsigned: true},
		},
		Preset{
			Name:        "microsoft-graph",
			Delivery:    Delivery{Retries: "no 2xx within 3s: resent multiple times (exponential backoff) for up to 4h, then dropped", RetryWindow: Span(4 * time.Hour), Timeout: Span(3 * time.Second), Docs: "https://learn.microsoft.com/en-us/graph/change-notifications-delivery-webhooks"},
			Checked:     "docs",
			Description: "Microsoft Graph change notifications: clientState of every notification equal to the secret; validationToken answered",
			Handshakes:  []*Handshake{graphValidation},
			Docs:        "https://learn.microsoft.com/en-us/graph/change-notifications-delivery-webhooks",
			Trust: Trust{
				SecretFields: []string{"clientState"},
				BodyUnsigned: true,
			},
			Bespoke: Bespoke{
				Build:    newGraphClientState,
				Describe: "every value[].clientState equal to a secret (constant time)",
				Headers:  []string{},
			},
			Keys: Keys{
				Describe: "clientState",
				Kind:     SecretToken,
			},
		},
		Preset{
			Name:        "meta",
			Delivery:    Delivery{Retries: "retry immediately, then a few more times with decreasing frequency over 36 hours", RetryWindow: Span(36 * time.Hour), Docs: "https://developers.facebook.com/docs/graph-api/webhooks/getting-started"},
			Checked:     "docs",
			Description: "Meta (Facebook, Instagram, Messenger): X-Hub-Signature-256 sha256=… over the body, HMAC-SHA256 hex (app secret); hub.challenge answered",
			Spec:        bodyHMAC("hmac-sha256", "X-Hub-Signature-256", "sha256=", "hex"),
			Handshakes:  []*Handshake{metaSubscribe},
			Docs:        "https://developers.facebook.com/docs/graph-api/webhooks/getting-started",
		},
		Preset{
			Name:        "whatsapp",
			Delivery:    Delivery{Retries: "non-200 or undeliverable: retried with decreasing frequency for up to 7 days", RetryWindow: Span(168 * time.Hour), Docs: "https://developers.facebook.com/docs/whatsapp/cloud-api/guides/set-up-webhooks"},
			Checked:     "docs",
			Description: "WhatsApp Cloud API: X-Hub-Signature-256 sha256=… over the body, HMAC-SHA256 hex (app secret); hub.challenge answered",
			Spec:        bodyHMAC("hmac-sha256", "X-Hub-Signature-256", "sha256=", "hex"),
			Handshakes:  []*Handshake{metaSubscribe},
			Docs:        "https://developers.facebook.com/docs/whatsapp/cloud-api/guides/set-up-webhooks",
			Dedup: Dedup{
				// A message id names a message, not an event: each status
				// (sent, delivered, read) is one, and a request may batch many.
				Key: whatsappDedupKey,
			},
		},
		Preset{
			Name:        "pagerduty",
			Delivery:    Delivery{Retries: "timeout/5xx/429/connect/DNS errors retried periodically for up to 48h; 4xx dropped", RetryWindow: Span(48 * time.Hour), Timeout: Span(5 * time.Second), IPRanges: []string{"pagerduty"}, Docs: "https://developer.pagerduty.com/docs/webhooks/webhook-behavior"},
			Checked:     "docs",
			Description: "PagerDuty v3: X-PagerDuty-Signature v1=…[,v1=…] over the body, HMAC-SHA256 hex (one value per active secret)",
			Spec:        Spec{Algorithm: "hmac-sha256", Header: "X-PagerDuty-Signature", Separator: ",", Prefix: "v1=", Encoding: "hex"},
			Docs:        "https://developer.pagerduty.com/docs/webhooks/webhook-signatures/",
			Dedup:       Dedup{Key: `body.event.id`},
		},
		Preset{
			// SNS signs every topic with the same certificate: a source is
			// bound to its topics, or anyone's SNS topic would pass.
			Name:        "aws-sns",
			Delivery:    Delivery{Retries: "default HTTP/S policy: 3 retries 20s apart; custom delivery policy, max 3600s total", RetryWindow: Span(1 * time.Minute), Docs: "https://docs.aws.amazon.com/sns/latest/dg/sns-message-delivery-retries.html"},
			Checked:     "sdk: sns-validator@0.3.5",
			Description: "Amazon SNS HTTP(S): RSA signature (SignatureVersion 1 SHA1, 2 SHA256) in the JSON body, certificate fetched from an SNS host; secrets are the accepted TopicArns; subscriptions confirmed",
			Handshakes:  []*Handshake{snsConfirmation},
			Docs:        "https://docs.aws.amazon.com/sns/latest/dg/sns-verify-signature-of-message.html",
			Bespoke: Bespoke{
				SignsFreshness: true,
				Build:          newSNS,
				Describe:       "SHA1withRSA / SHA256withRSA over the canonical name\\nvalue\\n fields per Type, certificate from SigningCertURL (https, sns.<region>.amazonaws.com[.cn], cached), TopicArn among the secrets, Timestamp within 1h",
				Headers:        []string{},
				NewKeys:        snsKeys,
			},
			Dedup: Dedup{Scheme: "sha256 of the string to sign, so unsigned fields cannot make a copy new"},
			Keys: Keys{
				Describe: "TopicArn (arn:aws:sns:<region>:<account>:<topic>)",
				Kind:     SecretToken,
				Public:   true,
			},
			Trust: Trust{
				// Token and SubscribeURL confirm, UnsubscribeURL ends, a subscription.
				SecretFields: []string{"Signature", "Token", "SubscribeURL", "UnsubscribeURL"},
				Unsigned: []string{"SigningCertURL: fetched only as SNS's certificate file on the topic's region's SNS host, the certificate checked to be SNS's",
					"SignatureVersion, Signature: the signature itself", "UnsubscribeURL, MessageAttributes and the x-amz-sns-* headers: never read"},
			},
		},
		Preset{
			Name:        "x",
			Delivery:    Delivery{Retries: "enterprise tier only: non-200 or no reply in 3s, up to 3 retries over 5 minutes", RetryWindow: Span(5 * time.Minute), Timeout: Span(3 * time.Second), Redeliver: "Account Activity Replay API POST /2/account_activity/replay/webhooks/{webhook_id}/subscriptions/all (events up to 5 days old)", Docs: "https://developer.x.com/en/docs/x-api/enterprise/account-activity-api/guides/activity-retries"},
			Checked:     "docs",
			Description: "X (Twitter) Account Activity API: x-twitter-webhooks-signature sha256=… over the body, HMAC-SHA256 base64 (consumer secret); CRC answered",
			Spec:        Spec{Algorithm: "hmac-sha256", Header: "x-twitter-webhooks-signature", Prefix: "sha256=", Encoding: "base64"},
			Handshakes:  []*Handshake{xCRC},
			Docs:        "https://docs.x.com/x-api/webhooks/introduction",
			Trust: Trust{
				// The CRC answer MACs a token with the event key; no token is
				// an object (see xCRC).
				ObjectBodies: true,
			},
		},
		Preset{
			Name:        "plaid",
			Delivery:    Delivery{Retries: "non-200 or no reply in 10s: retried up to 24h, delay starts 30s and grows 4x each", RetryWindow: Span(24 * time.Hour), Timeout: Span(10 * time.Second), Docs: "https://plaid.com/docs/api/webhooks/"},
			Checked:     "vector",
			Description: "Plaid: Plaid-Verification JWT (ES256) whose request_body_sha256 claim is the body's SHA-256; secrets are JWK public keys",
			Docs:        "https://plaid.com/docs/api/webhooks/webhook-verification/",
			Bespoke: Bespoke{
				SignsFreshness: true,
				Build:          newPlaid,
				Describe:       "ES256 JWT, key chosen by kid among the configured JWKs or fetched from /webhook_verification_key/get (provider_options), iat within 5m, request_body_sha256 = hex sha256(body)",
				Headers:        []string{"Plaid-Verification"},
				Signer:         &plaid{},
				NewKeys:        plaidKeys,
			},
			Dedup: Dedup{
				// No event id, and one item's updates can be byte for byte alike:
				// the signed token, issued for each delivery, names one.
				Scheme: "sha256 of the Plaid-Verification token",
			},
			Live: Live{Expr: `body.environment == "production"`},
			Keys: Keys{
				Describe: "JWK public key (JSON); optional with provider_options client_id and secret",
				Kind:     SecretPublicKey,
				Options: []ProviderOption{
					{Name: "client_id", Doc: "Plaid API client_id, to fetch keys by kid", Example: "5f3e2a9c8b7d6e5f4a3b2c1d"},
					{Name: "secret", Doc: "Plaid API secret of that environment", Example: "{env.PLAID_SECRET}"},
					{Name: "environment", Doc: "production (default) or sandbox: the API host keys are fetched from", Example: "sandbox"},
				},
			},
		},
	)
}
