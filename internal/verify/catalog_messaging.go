package verify

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"time"
)

// Providers of messaging: SMS and voice, chat, realtime, e-mail and
// notifications.

func init() {
	register(
		Preset{
			Name:        "telnyx",
			Checked:     "sdk: telnyx@7.24.0",
			Description: "Telnyx: telnyx-signature-ed25519 over timestamp|body, Ed25519 base64; secrets are base64 public keys",
			Spec: Spec{
				Algorithm: "ed25519", Header: "telnyx-signature-ed25519", Encoding: "base64", Content: "{timestamp}|{body}",
				TimestampHeader: "telnyx-timestamp", SecretEncoding: "base64", Tolerance: 5 * time.Minute,
			},
			Docs: "https://developers.telnyx.com/docs/development/sdk/node/webhooks",
			// meta.attempt changes between attempts; the event id does not.
			Dedup: Dedup{Key: `body.data.id`},
			Keys:  Keys{Describe: "public key (base64)", Kind: SecretPublicKey},
			Delivery: Delivery{Retries: "up to 3 attempts per URL, then the failover URL", Timeout: Span(2 * time.Second),
				Docs: "https://developers.telnyx.com/docs/messaging/messages/receiving-webhooks"},
		},
		Preset{
			Name:        "plivo",
			Checked:     "sdk: plivo@4.79.0",
			Description: "Plivo: X-Plivo-Signature-V3 over the URL, sorted parameters and nonce, HMAC-SHA256 base64 (the auth token; set public_url)",
			Format:      FormatForm,
			Docs:        "https://docs.plivo.com/docs/voice/xml/request/validation",
			Bespoke: Bespoke{
				Build:    newPlivo,
				Describe: "hmac-sha256 base64 over {url}?{sorted query}.{sorted POST name+value}.{nonce} (Plivo's V3); X-Plivo-Signature-V3 or -Ma-V3, comma-separated",
				Headers:  []string{"X-Plivo-Signature-V3", "X-Plivo-Signature-Ma-V3", "X-Plivo-Signature-V3-Nonce"},
				SignsURL: true,
				Signer:   &plivoV3{},
			},
			Dedup: Dedup{Key: `(body.MessageUUID ?? body.CallUUID ?? "") + ":" + (body.Status ?? body.Event ?? body.CallStatus ?? "")`},
			Delivery: Delivery{Retries: "messaging: 3 retries after 60 s, 120 s and 240 s; voice: as the URL's #rc fragment says", RetryWindow: Span(7 * time.Minute),
				Timeout: Span(8 * time.Second), Docs: "https://docs.plivo.com/docs/voice/concepts/callback-configurations"},
		},
		Preset{
			Name:        "vonage",
			Checked:     "sdk: @vonage/jwt@1.17.1",
			Description: "Vonage signed webhooks: Authorization Bearer JWT HS256 (the signature secret) whose payload_hash is the body's hex SHA-256",
			Docs:        "https://developer.vonage.com/en/messages/concepts/signed-webhooks",
			Bespoke: Bespoke{
				Build:          vonageJWT.build,
				Signer:         &bearerJWT{bearerConfig: vonageJWT},
				Describe:       "JWT HS256 in Authorization: Bearer, iss Vonage, iat within 5m0s, payload_hash = hex sha256 of the body",
				Headers:        []string{"Authorization"},
				SignsFreshness: true,
			},
			Dedup: Dedup{Key: `(body.message_uuid ?? body.uuid) + ":" + body.status + ":" + body.timestamp`},
			Delivery: Delivery{Retries: "on 429 and 5xx: from 5 s, doubling to every 15 min, for 24 h", RetryWindow: Span(24 * time.Hour), Timeout: Span(15 * time.Second),
				Docs: "https://api.support.vonage.com/hc/en-us/articles/360028543292"},
		},
		Preset{
			Name:        "pusher",
			Checked:     "sdk: pusher@5.3.4",
			Description: "Pusher Channels: X-Pusher-Signature over the body, HMAC-SHA256 hex with the app secret X-Pusher-Key names; secrets are APP_KEY:APP_SECRET",
			Docs:        "https://pusher.com/docs/channels/server_api/webhooks/",
			Bespoke: Bespoke{
				NewKeys:  keyAndSecret,
				Build:    newKeyedHMAC("X-Pusher-Key", "X-Pusher-Signature", false),
				Describe: "hmac-sha256 hex over {body} with the secret of the app X-Pusher-Key names",
				Headers:  []string{"X-Pusher-Key", "X-Pusher-Signature"},
				Signer:   &keyedHMAC{keyHeader: "X-Pusher-Key", sigHeader: "X-Pusher-Signature"},
			},
			Keys: Keys{Describe: "APP_KEY:APP_SECRET"},
			// No event id; time_ms is set once, so a retry is the same body.
			Delivery: Delivery{Retries: "exponential backoff for 5 min", RetryWindow: Span(5 * time.Minute), Docs: "https://pusher.com/docs/channels/server_api/webhooks/"},
		},
		alias(standardWebhooks("liveblocks", "Liveblocks: Standard Webhooks through Svix (webhook-id/-timestamp/-signature v1,…), HMAC-SHA256 base64, whsec_ key", "webhook",
			"https://liveblocks.io/docs/platform/webhooks", "sdk: @liveblocks/node@3.24.2"), svixRetries),
		Preset{
			Name:        "stream",
			Checked:     "sdk: stream-chat@9.53.0",
			Description: "Stream (chat, video): X-Signature over the uncompressed body, HMAC-SHA256 hex with the secret of X-Api-Key; secrets are API_KEY:API_SECRET",
			Docs:        "https://getstream.io/chat/docs/node/webhooks_overview/",
			Bespoke: Bespoke{
				NewKeys:  keyAndSecret,
				Build:    newKeyedHMAC("X-Api-Key", "X-Signature", true),
				Describe: "hmac-sha256 hex over the body, inflated first when it is gzip, with the secret of the app X-Api-Key names",
				Headers:  []string{"X-Api-Key", "X-Signature"},
				Signer:   &keyedHMAC{keyHeader: "X-Api-Key", sigHeader: "X-Signature", gzipped: true},
			},
			Keys:  Keys{Describe: "API_KEY:API_SECRET"},
			Dedup: Dedup{Key: `headers["x-webhook-id"]`},
			Trust: Trust{Unsigned: []string{`X-Webhook-Id: not signed; the body's digest is a second key (Replayable), so a replay with a new id is still one event`}},
			Delivery: Delivery{Retries: "up to 3 attempts on timeouts, 408, 429 and 5xx, all within 15 s", RetryWindow: Span(15 * time.Second), Timeout: Span(6 * time.Second),
				Docs: "https://getstream.io/chat/docs/node/webhooks_overview/"},
		},
		Preset{
			Name:        "livekit",
			Checked:     "sdk: livekit-server-sdk@2.19.2",
			Description: "LiveKit: Authorization JWT HS256 (no Bearer) issued by the API key, whose sha256 claim is the body's base64 SHA-256; secrets are API_KEY:API_SECRET",
			Docs:        "https://docs.livekit.io/home/server/webhooks/",
			Bespoke: Bespoke{
				NewKeys:        keyAndSecret,
				Build:          livekitJWT.build,
				Signer:         &bearerJWT{bearerConfig: livekitJWT},
				Describe:       "JWT HS256 in Authorization, iss = API key, exp required, sha256 = base64 sha256 of the body",
				Headers:        []string{"Authorization"},
				SignsFreshness: true,
			},
			Keys:     Keys{Describe: "API_KEY:API_SECRET"},
			Dedup:    Dedup{Key: `body.id`},
			Delivery: Delivery{Retries: "a few retries with backoff; events older than 30 s are dropped", Docs: "https://docs.livekit.io/home/server/webhooks/"},
		},
		Preset{
			Name:        "line",
			Checked:     "sdk: @line/bot-sdk@11.2.0",
			Description: "LINE Messaging API: x-line-signature over the body, HMAC-SHA256 base64 (the channel secret); the console's verify request answered",
			Spec:        bodyHMAC("hmac-sha256", "x-line-signature", "", "base64"),
			Handshakes:  []*Handshake{lineVerify},
			Docs:        "https://developers.line.biz/en/docs/messaging-api/verify-webhook-signature/",
			Dedup:       Dedup{Key: `join(map(body.events, {.webhookEventId}), ",")`},
			Delivery: Delivery{Retries: "none unless webhook redelivery is turned on for the channel", Timeout: Span(2 * time.Second),
				Docs: "https://developers.line.biz/en/docs/messaging-api/receiving-messages/"},
		},
		Preset{
			Name:        "telegram",
			Checked:     "docs",
			Description: "Telegram Bot API: X-Telegram-Bot-Api-Secret-Token equal to the webhook's secret_token; the body is not signed",
			Spec:        Spec{Algorithm: "token", Header: "X-Telegram-Bot-Api-Secret-Token"},
			Docs:        "https://core.telegram.org/bots/api#setwebhook",
			Dedup:       Dedup{Key: `string(body.update_id)`},
			Keys:        Keys{Describe: "secret_token (1-256 of A-Z a-z 0-9 _ -)", Kind: SecretToken},
			Trust:       Trust{BodyUnsigned: true},
			Delivery: Delivery{Retries: "repeated until a reasonable number of attempts; updates wait up to 24 h", RetryWindow: Span(24 * time.Hour),
				IPRanges: []string{"telegram"}, Docs: "https://core.telegram.org/bots/webhooks"},
		},
		Preset{
			Name:        "ms-teams",
			Checked:     "docs",
			Description: "Microsoft Teams outgoing webhooks: Authorization HMAC <base64> over the body, HMAC-SHA256 with the base64 security token",
			Spec:        Spec{Algorithm: "hmac-sha256", Header: "Authorization", Prefix: "HMAC ", Encoding: "base64", SecretEncoding: "base64"},
			Docs:        "https://learn.microsoft.com/en-us/microsoftteams/platform/webhooks-and-connectors/how-to/add-outgoing-webhook",
			Dedup:       Dedup{Key: `body.id`},
			Delivery:    Delivery{Retries: "none: a synchronous request that times out after 5 s", Timeout: Span(5 * time.Second), Docs: "https://learn.microsoft.com/en-us/microsoftteams/platform/webhooks-and-connectors/how-to/add-outgoing-webhook"},
		},
		Preset{
			Name:        "mandrill",
			Checked:     "docs",
			Description: "Mandrill (Mailchimp Transactional): X-Mandrill-Signature over the URL and sorted POST fields, HMAC-SHA1 base64 (set public_url); HEAD check answered",
			Format:      FormatForm,
			Docs:        "https://mandrill.zendesk.com/hc/en-us/articles/360039232513-How-to-Authenticate-Webhook-Requests",
			Bespoke: Bespoke{
				Build:    newSortedForm("X-Mandrill-Signature"),
				Describe: "hmac-sha1 base64 over {url} + sorted POST name+value pairs",
				Headers:  []string{"X-Mandrill-Signature"},
				SignsURL: true,
				Signer:   &sortedForm{header: "X-Mandrill-Signature"},
			},
			Handshakes: []*Handshake{headCheck, mandrillTest},
			// A batch of up to 1000 events, the same bytes when retried.
			Delivery: Delivery{Retries: "failed batches are retried; a batch can be given up in the dashboard", Redeliver: "",
				Docs: "https://mandrill.zendesk.com/hc/en-us/articles/205583217-Introduction-to-Webhooks"},
		},
		Preset{
			Name:        "mailersend",
			Checked:     "docs",
			Description: "MailerSend: Signature over the body, HMAC-SHA256 hex (the webhook's signing secret)",
			Spec:        bodyHMAC("hmac-sha256", "Signature", "", "hex"),
			Docs:        "https://developers.mailersend.com/api/v1/webhooks.html",
			Dedup:       Dedup{Key: `body.data.id`},
			Delivery:    Delivery{Retries: "retried after failures, 3 times", Docs: "https://developers.mailersend.com/api/v1/webhooks.html"},
		},
		Preset{
			Name:        "knock",
			Checked:     "docs",
			Description: "Knock: x-knock-signature t=…,s=… over t.body, HMAC-SHA256 base64, millisecond timestamp",
			Spec: Spec{
				Algorithm: "hmac-sha256", Header: "x-knock-signature", SignatureKey: "s", TimestampKey: "t", Encoding: "base64",
				Content: "{timestamp}.{body}", TimestampUnit: "ms", Tolerance: 5 * time.Minute,
			},
			Docs:     "https://docs.knock.app/developer-tools/outbound-webhooks/overview",
			Dedup:    Dedup{Key: `body.type + ":" + body.data.id + ":" + body.created_at`},
			Delivery: Delivery{Retries: "8 attempts with backoff, then discarded", IPRanges: []string{"knock"}, Docs: "https://docs.knock.app/developer-tools/outbound-webhooks/overview"},
		},
		Preset{
			Name:        "nylas",
			Checked:     "docs",
			Description: "Nylas v3: x-nylas-signature over the body, HMAC-SHA256 hex (the webhook secret); GET challenge answered",
			Spec:        bodyHMAC("hmac-sha256", "x-nylas-signature", "", "hex"),
			Handshakes:  []*Handshake{queryChallenge},
			Docs:        "https://developer.nylas.com/docs/v3/notifications/webhooks/",
			Dedup:       Dedup{Key: `body.id`},
			Delivery:    Delivery{Retries: "failed notifications are queued and retried", Timeout: Span(10 * time.Second), Docs: "https://developer.nylas.com/docs/v3/notifications/webhooks/"},
		},
	)
}

// vonageJWT is Vonage's signed-webhook token.
var vonageJWT = bearerConfig{
	header: "Authorization", prefix: "Bearer ", alg: "HS256", issuers: []string{"Vonage"},
	bodyClaim: "payload_hash", bodyEncoding: "hex", maxAge: 5 * time.Minute,
	sign: func(msg Message, _ string) map[string]any {
		return map[string]any{"iat": msg.Time.Unix(), "jti": uuid(), "iss": "Vonage", "payload_hash": sha256Hex(msg.Body), "api_key": "abcd1234"}
	},
}

// livekitJWT is LiveKit's webhook token.
var livekitJWT = bearerConfig{
	header: "Authorization", alg: "HS256", issuerIsKey: true, requireExp: true,
	bodyClaim: "sha256", bodyEncoding: "base64",
	sign: func(msg Message, keyID string) map[string]any {
		sum := sha256.Sum256(msg.Body)
		return map[string]any{"iss": keyID, "nbf": msg.Time.Unix(), "iat": msg.Time.Unix(), "exp": msg.Time.Add(5 * time.Minute).Unix(),
			"sha256": base64.StdEncoding.EncodeToString(sum[:])}
	},
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
