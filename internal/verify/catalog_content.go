package verify

import "time"

// Providers of content and files: CMSs, storage, media, documents, and
// the boards and bases teams plan in.

// mondayJWT is monday.com's Authorization token (no Bearer): HS256 with the
// app's signing secret; it does not cover the body.
var mondayJWT = bearerConfig{
	header: "Authorization", alg: "HS256", requireExp: true,
	sign: func(msg Message, _ string) map[string]any {
		return map[string]any{"accountId": 1825529, "userId": 4012689, "aud": msg.URL, "iat": msg.Time.Unix(), "exp": msg.Time.Add(5 * time.Minute).Unix(), "shortLivedToken": "SLT"}
	},
}

func init() {
	register(
		Preset{
			Name:        "sanity",
			Checked:     "sdk: @sanity/webhook@4.0.4",
			Description: "Sanity: sanity-webhook-signature t=…,v1=… over t.body, HMAC-SHA256 base64url, millisecond timestamp",
			Spec: Spec{
				Algorithm: "hmac-sha256", Header: "sanity-webhook-signature", SignatureKey: "v1", TimestampKey: "t", Encoding: "base64url",
				Content: "{timestamp}.{body}", TimestampUnit: "ms", Tolerance: 5 * time.Minute,
			},
			Docs:  "https://www.sanity.io/docs/webhooks",
			Dedup: Dedup{Key: `headers["idempotency-key"]`},
			Trust: Trust{Unsigned: []string{`idempotency-key: not signed; a capture replayed with another key within the 5-minute tolerance is one more delivery of a genuine body`}},
			Delivery: Delivery{Retries: "on 429 and 5xx, twice, 30 s apart", RetryWindow: Span(time.Minute), Timeout: Span(30 * time.Second),
				Docs: "https://www.sanity.io/docs/webhooks"},
		},
		Preset{
			Name:        "dropbox-sign",
			Checked:     "sdk: @dropbox/sign@1.11.0",
			Description: "Dropbox Sign (HelloSign): event.event_hash, HMAC-SHA256 hex of event_time+event_type (the API key); the rest of the body is not signed",
			Format:      FormatEither,
			Docs:        "https://developers.hellosign.com/docs/events/overview/",
			Bespoke: Bespoke{
				Build: newDropboxSign,
				Describe: "hmac-sha256 hex of event.event_time + event.event_type in event.event_hash (JSON, or the json field of a form or multipart form); " +
					"event_time within 4 days; each hash accepted once",
				SignsFreshness: true,
			},
			Response: "Hello API Event Received",
			Dedup:    Dedup{Scheme: "the signed event_hash, so that a captured hash is accepted once"},
			Trust:    Trust{BodyUnsigned: true, SecretFields: []string{"event_hash"}},
			Delivery: Delivery{Retries: "exponential backoff over about 3 days", RetryWindow: Span(72 * time.Hour), Docs: "https://developers.hellosign.com/api/manual-reference-pages/glossary/callbacks-events"},
		},
		Preset{
			Name:        "box",
			Checked:     "sdk: box-node-sdk@10.12.0",
			Description: "Box: BOX-SIGNATURE-PRIMARY/-SECONDARY over body+BOX-DELIVERY-TIMESTAMP, HMAC-SHA256 base64; at most 10 min old, never in the future",
			Docs:        "https://developer.box.com/guides/webhooks/v2/signatures-v2/",
			Bespoke: Bespoke{
				Build:          newBox,
				Describe:       "hmac-sha256 base64 over {body}{timestamp} in BOX-SIGNATURE-PRIMARY (or -SECONDARY) with the primary or secondary key; BOX-DELIVERY-TIMESTAMP at most 10 min old and not in the future",
				Headers:        []string{"Box-Signature-Primary", "Box-Delivery-Timestamp"},
				SignsFreshness: true,
				Signer:         &box{},
			},
			// BOX-DELIVERY-ID changes on each retry; the event id does not.
			Dedup: Dedup{Key: `body.id`},
			Keys:  Keys{Describe: "primary and secondary signature keys"},
			Delivery: Delivery{Retries: "up to 10 retries, the first after 5 min, then exponential backoff", Timeout: Span(30 * time.Second),
				Docs: "https://developer.box.com/guides/webhooks/v2/"},
		},
		Preset{
			Name:        "dropbox",
			Checked:     "docs",
			Description: "Dropbox: X-Dropbox-Signature over the body, HMAC-SHA256 hex (the app secret); GET challenge answered",
			Spec:        bodyHMAC("hmac-sha256", "X-Dropbox-Signature", "", "hex"),
			Handshakes:  []*Handshake{queryChallenge},
			Docs:        "https://www.dropbox.com/developers/reference/webhooks",
			// A notification names accounts that changed; the body is the key.
			Delivery: Delivery{Retries: "exponential backoff for about 10 min", RetryWindow: Span(10 * time.Minute), Docs: "https://www.dropbox.com/developers/reference/webhooks"},
		},
		Preset{
			Name:        "cloudinary",
			Checked:     "sdk: cloudinary@2.11.0",
			Description: "Cloudinary: X-Cld-Signature, SHA-1 or SHA-256 hex of body+X-Cld-Timestamp+API secret, within 2 h",
			Docs:        "https://cloudinary.com/documentation/notification_signatures",
			Bespoke: Bespoke{
				Build:          newCloudinary,
				Describe:       "sha1 or sha256 (by length) hex over {body}{timestamp}{secret}, tolerance 2h0m0s",
				Headers:        []string{"X-Cld-Signature", "X-Cld-Timestamp"},
				SignsFreshness: true,
				Signer:         &cloudinary{},
			},
			Dedup:    Dedup{Key: `body.notification_type + ":" + (body.asset_id ?? body.public_id ?? "") + ":" + string(body.version ?? "") + ":" + (body.request_id ?? "")`},
			Delivery: Delivery{Retries: "not documented", Docs: "https://cloudinary.com/documentation/notifications"},
		},
		Preset{
			Name:        "imagekit",
			Checked:     "sdk: imagekit@6.0.0",
			Description: "ImageKit: x-ik-signature t=…,v1=… over t.body, HMAC-SHA256 hex, millisecond timestamp; the whsec_ secret is the key as written",
			Spec: Spec{
				Algorithm: "hmac-sha256", Header: "x-ik-signature", SignatureKey: "v1", TimestampKey: "t", Encoding: "hex",
				Content: "{timestamp}.{body}", TimestampUnit: "ms", Tolerance: 5 * time.Minute,
			},
			Docs:     "https://imagekit.io/docs/webhooks",
			Dedup:    Dedup{Key: `body.id`},
			Delivery: Delivery{Retries: "not documented", Docs: "https://imagekit.io/docs/webhooks"},
		},
		Preset{
			Name:        "notion",
			Checked:     "sdk: @notionhq/client@5.26.0",
			Description: "Notion: X-Notion-Signature sha256=… over the body, HMAC-SHA256 hex, under the verification_token learned from the one-time verification request",
			Handshakes:  []*Handshake{notionVerification},
			Docs:        "https://developers.notion.com/reference/webhooks",
			Bespoke: Bespoke{
				Build:    newLearnedHMAC("X-Notion-Signature", "sha256="),
				Describe: "hmac-sha256 hex over {body}; the verification_token is learned from Notion's one-time verification request inside the learn_secret window, and shown once by `hookgate secrets reveal`",
				Headers:  []string{"X-Notion-Signature"},
				Signer:   &asana{header: "X-Notion-Signature", prefix: "sha256="},
				NewKeys: func() (string, string, error) {
					k := "secret_" + randomHex(20)
					return k, k, nil
				},
			},
			// attempt_number changes on each retry; the event id does not.
			Dedup: Dedup{Key: `body.id`},
			Keys: Keys{
				Learned:  true,
				Reveal:   true,
				Describe: "the verification_token, learned from the verification request (leave secrets empty and set learn_secret), or configured",
				Kind:     SecretToken,
			},
			Delivery: Delivery{Retries: "up to 8 attempts with backoff", Docs: "https://developers.notion.com/reference/webhooks-events-delivery"},
		},
		Preset{
			Name:        "trello",
			Checked:     "docs",
			Description: "Trello: X-Trello-Webhook over body+callback URL, HMAC-SHA1 base64 (the app secret; set public_url to the callback URL); HEAD check answered",
			Spec:        Spec{Algorithm: "hmac-sha1", Header: "X-Trello-Webhook", Encoding: "base64", Content: "{body}{url}"},
			Handshakes:  []*Handshake{headCheck},
			Docs:        "https://developer.atlassian.com/cloud/trello/guides/rest-api/webhooks/",
			Dedup:       Dedup{Key: `body.action.id`},
			Delivery:    Delivery{Retries: "3 retries, then stops; a 410 answer deletes the webhook", Docs: "https://developer.atlassian.com/cloud/trello/guides/rest-api/webhooks/"},
		},
		Preset{
			Name:        "airtable",
			Checked:     "docs",
			Description: "Airtable: X-Airtable-Content-MAC hmac-sha256=… over the body, HMAC-SHA256 hex with the base64-decoded macSecretBase64",
			Spec:        Spec{Algorithm: "hmac-sha256", Header: "X-Airtable-Content-MAC", Prefix: "hmac-sha256=", Encoding: "hex", SecretEncoding: "base64"},
			Docs:        "https://airtable.com/developers/web/api/webhooks-overview",
			Dedup:       Dedup{Key: `body.webhook.id + ":" + body.timestamp`},
			Delivery:    Delivery{Retries: "retried with backoff; payloads stay listable for 7 days", Redeliver: "API: GET /v0/bases/{baseId}/webhooks/{webhookId}/payloads", Docs: "https://airtable.com/developers/web/api/webhooks-overview"},
		},
		Preset{
			Name:        "monday",
			Checked:     "docs",
			Description: "monday.com (app webhooks): Authorization JWT HS256 with the app's signing secret; challenge answered; the body is not signed",
			Handshakes:  []*Handshake{mondayChallenge},
			Docs:        "https://developer.monday.com/apps/docs/authorization-header",
			Bespoke: Bespoke{
				Build:          mondayJWT.build,
				Describe:       "JWT HS256 in Authorization (no Bearer), exp required",
				Headers:        []string{"Authorization"},
				SignsFreshness: true,
				Signer:         &bearerJWT{bearerConfig: mondayJWT},
			},
			Dedup: Dedup{Key: `body.event.originalTriggerUuid ?? body.event.triggerUuid`},
			Trust: Trust{BodyUnsigned: true},
			Delivery: Delivery{Retries: "once a minute for 30 min", RetryWindow: Span(30 * time.Minute),
				Docs: "https://developer.monday.com/api-reference/docs/webhooks"},
		},
		Preset{
			Name:        "clickup",
			Checked:     "docs",
			Description: "ClickUp: X-Signature over the body, HMAC-SHA256 hex (the webhook's secret)",
			Spec:        bodyHMAC("hmac-sha256", "X-Signature", "", "hex"),
			Docs:        "https://developer.clickup.com/docs/webhooksignature",
			Dedup:       Dedup{Key: `body.webhook_id + ":" + body.event + ":" + (body.task_id ?? "") + ":" + join(map(body.history_items ?? [], {.id}), ",")`},
			Delivery: Delivery{Retries: "up to 5 attempts, then the event is dropped; 100 failures suspend the webhook", Timeout: Span(7 * time.Second),
				Docs: "https://developer.clickup.com/docs/webhookhealth"},
		},
		Preset{
			Name:        "webflow",
			Checked:     "sdk: webflow-api@3.3.4",
			Description: "Webflow: x-webflow-signature over timestamp:body, HMAC-SHA256 hex, millisecond timestamp (the app's client secret)",
			Spec: Spec{
				Algorithm: "hmac-sha256", Header: "x-webflow-signature", Encoding: "hex", Content: "{timestamp}:{body}",
				TimestampHeader: "x-webflow-timestamp", TimestampUnit: "ms", Tolerance: 5 * time.Minute,
			},
			Docs:     "https://developers.webflow.com/data/docs/working-with-webhooks",
			Dedup:    Dedup{Key: `body.triggerType + ":" + (body.payload?.id ?? "") + ":" + (body.payload?.lastUpdated ?? body.payload?.submittedAt ?? "")`},
			Delivery: Delivery{Retries: "up to 3 attempts", Docs: "https://developers.webflow.com/changelog/webhook-retries"},
		},
		Preset{
			Name:        "figma",
			Checked:     "docs",
			Description: "Figma webhooks: the passcode set on the webhook, in each body's passcode field; the body is not signed; PING answered",
			Docs:        "https://developers.figma.com/docs/rest-api/webhooks-security",
			Bespoke: Bespoke{
				Build:    newBodyPasscode("passcode"),
				Describe: "the body's passcode equal to a secret",
			},
			Handshakes: []*Handshake{figmaPing},
			Dedup:      Dedup{Key: `body.webhook_id + ":" + body.event_type + ":" + body.timestamp + ":" + (body.file_key ?? "")`},
			Keys:       Keys{Describe: "passcode", Kind: SecretToken},
			Trust:      Trust{BodyUnsigned: true, SecretFields: []string{"passcode"}},
			Delivery:   Delivery{Retries: "3 retries with backoff", Redeliver: "API: GET /v2/webhooks/{id}/requests lists the last week", Docs: "https://developers.figma.com/docs/rest-api/webhooks"},
		},
	)
}
