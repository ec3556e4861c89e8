package verify

import (
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

// hubspotDedupKey names each event of a batch: eventId alone is not
// unique, so with its subscription and time. attemptNumber is left out: it
// changes on each retry.
const hubspotDedupKey = `join(map(body, {string(.subscriptionId) + ":" + string(.eventId) + ":" + string(.occurredAt)}), ",")`

// whatsappDedupKey names each message and each status change of a
// WhatsApp Cloud API request, across its entries and changes.
const whatsappDedupKey = `join(flatten(map(body.entry, {flatten(map(.changes, {concat(map(.value?.messages ?? [], {.id}), ` +
	`map(.value?.statuses ?? [], {.id + ":" + .status + ":" + .timestamp}))}))})), ",")`

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
			DedupKey:   `headers["webhook-id"]`,
			KeyKind:    "public key (whpk_…)",
			SecretKind: SecretPublicKey,
			Docs:       "https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md",
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
		},
		Preset{
			Name:        "shopify",
			Description: "Shopify webhooks: X-Shopify-Hmac-Sha256 over the body, HMAC-SHA256 base64 (app client secret)",
			Spec:        Spec{Algorithm: "hmac-sha256", Header: "X-Shopify-Hmac-Sha256", Encoding: "base64"},
			DedupKey:    `headers["x-shopify-webhook-id"]`,
			Docs:        "https://shopify.dev/docs/apps/build/webhooks/subscribe/https#step-2-validate-the-origin-of-your-webhook",
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
		},
		Preset{
			Name:        "intercom",
			Description: "Intercom: X-Hub-Signature sha1=… over the body, HMAC-SHA1 hex (app client secret); HEAD check answered",
			Spec:        hubSignature("X-Hub-Signature", "sha1=", "hmac-sha1"),
			DedupKey:    `body.id`,
			Handshakes:  []*Handshake{headCheck},
			Docs:        "https://developers.intercom.com/docs/webhooks/webhook-notifications",
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
		},
		Preset{
			Name:        "bitbucket",
			Description: "Bitbucket Cloud: X-Hub-Signature sha256=… over the body, HMAC-SHA256 hex",
			Spec:        hubSignature("X-Hub-Signature", "sha256=", "hmac-sha256"),
			DedupKey:    `headers["x-request-uuid"]`,
			Docs:        "https://support.atlassian.com/bitbucket-cloud/docs/manage-webhooks/",
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
		},
		Preset{
			Name:        "typeform",
			Description: "Typeform: Typeform-Signature sha256=… over the body, HMAC-SHA256 base64",
			Spec:        Spec{Algorithm: "hmac-sha256", Header: "Typeform-Signature", Prefix: "sha256=", Encoding: "base64"},
			DedupKey:    `body.event_id`,
			Docs:        "https://www.typeform.com/developers/webhooks/secure-your-webhooks/",
		},
		Preset{
			Name:        "calendly",
			Description: "Calendly: Calendly-Webhook-Signature t=…,v1=… over t.body, HMAC-SHA256 hex",
			Spec:        timestampedPairs("Calendly-Webhook-Signature", 3*time.Minute),
			DedupKey:    `body.event + ":" + (body.payload?.uri ?? "") + ":" + body.created_at`,
			Docs:        "https://developer.calendly.com/api-docs/4c305798a61d3-webhook-signatures",
		},
		Preset{
			Name:        "hubspot-v1",
			Description: "HubSpot v1: X-HubSpot-Signature, SHA-256 (a plain hash, not an HMAC) of client secret + body, hex",
			Spec:        Spec{Algorithm: "hash-sha256", Header: "X-HubSpot-Signature", Encoding: "hex", Content: "{secret}{body}"},
			DedupKey:    hubspotDedupKey,
			Docs:        "https://developers.hubspot.com/docs/api/webhooks/validating-requests",
		},
		Preset{
			Name:        "hubspot-v2",
			Description: "HubSpot v2: X-HubSpot-Signature, SHA-256 of client secret + method + URL + body, hex (set public_url)",
			Spec:        Spec{Algorithm: "hash-sha256", Header: "X-HubSpot-Signature", Encoding: "hex", Content: "{secret}{method}{url}{body}"},
			Docs:        "https://developers.hubspot.com/docs/api/webhooks/validating-requests",
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
			DedupKey: hubspotDedupKey,
			Docs:     "https://developers.hubspot.com/docs/api/webhooks/validating-requests",
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
			NewKeys:      hexKeys,
		},
		Preset{
			Name:        "vercel",
			Description: "Vercel: x-vercel-signature over the body, HMAC-SHA1 hex",
			Spec:        Spec{Algorithm: "hmac-sha1", Header: "x-vercel-signature", Encoding: "hex"},
			DedupKey:    `body.id`,
			Docs:        "https://vercel.com/docs/webhooks/webhooks-api#securing-webhooks",
		},
		Preset{
			Name:        "sentry",
			Description: "Sentry integrations: Sentry-Hook-Signature over the body, HMAC-SHA256 hex (client secret)",
			Spec:        Spec{Algorithm: "hmac-sha256", Header: "Sentry-Hook-Signature", Encoding: "hex"},
			DedupKey:    `headers["request-id"]`,
			Docs:        "https://docs.sentry.io/organization/integrations/integration-platform/webhooks/",
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
		},
		Preset{
			Name:         "basic-auth",
			Description:  "Any provider that calls a URL with basic auth credentials; secrets are \"user:password\"",
			Spec:         Spec{Algorithm: "basic", Header: "Authorization"},
			KeyKind:      "user:password",
			SecretKind:   SecretToken,
			BodyUnsigned: true,
			Format:       FormatEither,
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
		},
		Preset{
			Name:        "mux",
			Description: "Mux: Mux-Signature t=…,v1=… over t.body, HMAC-SHA256 hex",
			Spec:        timestampedPairs("Mux-Signature", 5*time.Minute),
			DedupKey:    `body.id`,
			Docs:        "https://docs.mux.com/core/verify-webhook-signatures",
		},
		Preset{
			Name:        "lemonsqueezy",
			Description: "Lemon Squeezy: X-Signature over the body, HMAC-SHA256 hex",
			Spec:        Spec{Algorithm: "hmac-sha256", Header: "X-Signature", Encoding: "hex"},
			DedupKey:    `body.meta.event_name + ":" + string(body.data.id) + ":" + body.data.attributes.updated_at`,
			Live:        `body.meta.test_mode != true`,
			Docs:        "https://docs.lemonsqueezy.com/help/webhooks/signing-requests",
		},
		Preset{
			Name:        "coinbase-commerce",
			Description: "Coinbase Commerce: X-CC-Webhook-Signature over the body, HMAC-SHA256 hex",
			Spec:        Spec{Algorithm: "hmac-sha256", Header: "X-CC-Webhook-Signature", Encoding: "hex"},
			DedupKey:    `body.event.id`,
			Docs:        "https://docs.cdp.coinbase.com/commerce-onchain/docs/webhooks-security",
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
		},
		Preset{
			Name:        "jira",
			Description: "Jira Cloud admin webhooks: X-Hub-Signature sha256=… over the body, HMAC-SHA256 hex",
			Spec:        hubSignature("X-Hub-Signature", "sha256=", "hmac-sha256"),
			DedupKey:    `headers["x-atlassian-webhook-identifier"]`,
			Docs:        "https://developer.atlassian.com/cloud/jira/platform/webhooks/#secure-admin-webhooks",
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
		},
		Preset{
			Name:        "meta",
			Description: "Meta (Facebook, Instagram, Messenger): X-Hub-Signature-256 sha256=… over the body, HMAC-SHA256 hex (app secret); hub.challenge answered",
			Spec:        hubSignature("X-Hub-Signature-256", "sha256=", "hmac-sha256"),
			Handshakes:  []*Handshake{metaSubscribe},
			Docs:        "https://developers.facebook.com/docs/graph-api/webhooks/getting-started",
		},
		Preset{
			Name:        "whatsapp",
			Description: "WhatsApp Cloud API: X-Hub-Signature-256 sha256=… over the body, HMAC-SHA256 hex (app secret); hub.challenge answered",
			Spec:        hubSignature("X-Hub-Signature-256", "sha256=", "hmac-sha256"),
			// A message id names a message, not an event: each status
			// (sent, delivered, read) is one, and a request may batch many.
			DedupKey:   whatsappDedupKey,
			Handshakes: []*Handshake{metaSubscribe},
			Docs:       "https://developers.facebook.com/docs/whatsapp/cloud-api/guides/set-up-webhooks",
		},
		Preset{
			Name:        "pagerduty",
			Description: "PagerDuty v3: X-PagerDuty-Signature v1=…[,v1=…] over the body, HMAC-SHA256 hex (one value per active secret)",
			Spec:        Spec{Algorithm: "hmac-sha256", Header: "X-PagerDuty-Signature", Separator: ",", Prefix: "v1=", Encoding: "hex"},
			DedupKey:    `body.event.id`,
			Docs:        "https://developer.pagerduty.com/docs/webhooks/webhook-signatures/",
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
			Docs:    "https://docs.aws.amazon.com/sns/latest/dg/sns-verify-signature-of-message.html",
			NewKeys: snsKeys,
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
			Signer:  &plaid{},
			NewKeys: plaidKeys,
		},
	)
}
