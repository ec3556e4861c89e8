package verify

import "time"

// Providers of work tools: support, CRM, recruiting, identity checks,
// forms and scheduling, customer data.

func init() {
	register(
		Preset{
			Name:        "onfido",
			Checked:     "sdk: @onfido/api@6.2.0",
			Description: "Onfido: X-SHA2-Signature over the body, HMAC-SHA256 hex (the webhook token)",
			Spec:        bodyHMAC("hmac-sha256", "X-SHA2-Signature", "", "hex"),
			Docs:        "https://documentation.identity.entrust.com/api/manual-webhook-signature-verification/",
			// No event id: the body, which names the resource and its
			// action, is the key.
			Delivery: Delivery{Redeliver: "API: POST /v3.6/webhooks/resend", Docs: "https://documentation.identity.entrust.com/api/latest/#resend-webhooks"},
		},
		Preset{
			Name:        "persona",
			Checked:     "docs",
			Description: "Persona: Persona-Signature t=…,v1=… (a set per secret while rotating) over t.body, HMAC-SHA256 hex",
			Spec: Spec{
				Algorithm: "hmac-sha256", Header: "Persona-Signature", SignatureKey: "v1", TimestampKey: "t", Separator: " ",
				Encoding: "hex", Content: "{timestamp}.{body}", Tolerance: 5 * time.Minute,
			},
			Docs:  "https://docs.withpersona.com/docs/webhooks-best-practices",
			Dedup: Dedup{Key: `body.data.id`},
			Delivery: Delivery{Retries: "up to 5 retries, after 3 s, 18 s, 83 s and 258 s", Redeliver: "dashboard: Retry",
				IPRanges: []string{"persona"}, Docs: "https://docs.withpersona.com/docs/webhooks"},
		},
		Preset{
			Name:        "zendesk",
			Checked:     "docs",
			Description: "Zendesk: X-Zendesk-Webhook-Signature over timestamp+body, HMAC-SHA256 base64; RFC 3339 timestamp",
			Spec: Spec{
				Algorithm: "hmac-sha256", Header: "X-Zendesk-Webhook-Signature", Encoding: "base64", Content: "{timestamp}{body}",
				TimestampHeader: "X-Zendesk-Webhook-Signature-Timestamp", TimestampUnit: "rfc3339", Tolerance: 5 * time.Minute,
			},
			Docs: "https://developer.zendesk.com/documentation/webhooks/verifying/",
			// Event-subscription webhooks carry an event id; trigger
			// webhooks have a body the account writes, so its invocation
			// id, kept on each attempt, names them.
			Dedup: Dedup{Key: `body?.id ?? headers["x-zendesk-webhook-invocation-id"]`},
			Trust: Trust{Unsigned: []string{`x-zendesk-webhook-invocation-id: read only for trigger webhooks, whose signed timestamp bounds a replay to the tolerance`}},
			Delivery: Delivery{Retries: "retried on 409, and on 429 and 503 with Retry-After", Timeout: Span(12 * time.Second),
				Redeliver: "API: GET /api/v2/webhooks/{id}/invocations lists attempts", Docs: "https://developer.zendesk.com/documentation/webhooks/troubleshooting/"},
		},
		Preset{
			Name:        "docusign",
			Checked:     "docs",
			Description: "DocuSign Connect: X-DocuSign-Signature-1… (one per key) over the body, HMAC-SHA256 base64",
			Docs:        "https://developers.docusign.com/platform/webhooks/connect/validate",
			Bespoke: Bespoke{
				Build:    newNumberedHeaders("X-DocuSign-Signature-"),
				Describe: "hmac-sha256 base64 over {body}, in X-DocuSign-Signature-1 to -100, one per active Connect key",
				Headers:  []string{"X-DocuSign-Signature-1"},
				Signer:   numberedSigner{prefix: "X-DocuSign-Signature-"},
			},
			// retryCount changes between retries, so the body's digest
			// cannot name one event: the envelope, its event and when
			// DocuSign generated it do.
			Dedup: Dedup{Key: `body.event + ":" + (body.data?.envelopeId ?? "") + ":" + string(body.data?.recipientId ?? "") + ":" + body.generatedDateTime`},
			Delivery: Delivery{Retries: "retried from the Connect failure queue, at least once a day", Redeliver: "API: PUT /restapi/v2.1/accounts/{accountId}/connect/envelopes/retry_queue",
				Timeout: Span(100 * time.Second), Docs: "https://developers.docusign.com/platform/webhooks/connect/architecture/"},
		},
		Preset{
			Name:        "customer-io",
			Checked:     "sdk: customerio-node@5.2.0",
			Description: "Customer.io reporting webhooks: X-CIO-Signature over v0:timestamp:body, HMAC-SHA256 hex",
			Spec: Spec{
				Algorithm: "hmac-sha256", Header: "X-CIO-Signature", Encoding: "hex", Content: "v0:{timestamp}:{body}",
				TimestampHeader: "X-CIO-Timestamp", Tolerance: 5 * time.Minute,
			},
			Docs:  "https://docs.customer.io/api/webhooks/",
			Dedup: Dedup{Key: `body.event_id`},
			Delivery: Delivery{Retries: "exponential backoff for 7 days; later events wait behind a failed one", RetryWindow: Span(7 * 24 * time.Hour),
				Timeout: Span(4 * time.Second), IPRanges: []string{"customer-io"}, Docs: "https://docs.customer.io/api/webhooks/"},
		},
		Preset{
			Name:        "front",
			Checked:     "docs",
			Description: "Front application webhooks: X-Front-Signature over timestamp:body, HMAC-SHA256 base64, millisecond timestamp; challenge answered",
			Spec: Spec{
				Algorithm: "hmac-sha256", Header: "X-Front-Signature", Encoding: "base64", Content: "{timestamp}:{body}",
				TimestampHeader: "X-Front-Request-Timestamp", TimestampUnit: "ms", Tolerance: 5 * time.Minute,
			},
			Handshakes: []*Handshake{frontChallenge},
			Docs:       "https://dev.frontapp.com/docs/application-webhooks",
			Dedup:      Dedup{Key: `body.payload?.id ?? (body.type + ":" + body.authorization.id)`},
			Delivery:   Delivery{Retries: "up to 3 retries", Docs: "https://dev.frontapp.com/docs/application-webhooks"},
		},
		Preset{
			Name:        "segment",
			Checked:     "docs",
			Description: "Segment webhooks destination: X-Signature over the body, HMAC-SHA1 hex (single events; batches sign only their first event and are refused)",
			Spec:        bodyHMAC("hmac-sha1", "X-Signature", "", "hex"),
			Docs:        "https://segment.com/docs/connections/destinations/catalog/actions-webhook/",
			Dedup:       Dedup{Key: `body.messageId`},
			Trust:       Trust{ObjectBodies: true},
			Delivery:    Delivery{Retries: "retried on 5xx and 429 with backoff, up to 4 h", RetryWindow: Span(4 * time.Hour), Timeout: Span(10 * time.Second), Docs: "https://segment.com/docs/connections/destinations/#retries-between-segment-and-destinations"},
		},
		Preset{
			Name:        "calcom",
			Checked:     "docs",
			Description: "Cal.com: X-Cal-Signature-256 over the body, HMAC-SHA256 hex",
			Spec:        bodyHMAC("hmac-sha256", "X-Cal-Signature-256", "", "hex"),
			Docs:        "https://cal.com/docs/developing/guides/automation/webhooks",
			// No event id: the trigger, booking and time name one.
			Dedup:    Dedup{Key: `body.triggerEvent + ":" + (body.payload?.uid ?? "") + ":" + body.createdAt`},
			Delivery: Delivery{Retries: "none documented", Docs: "https://cal.com/docs/developing/guides/automation/webhooks"},
		},
		Preset{
			Name:        "tally",
			Checked:     "docs",
			Description: "Tally: Tally-Signature over the body, HMAC-SHA256 base64",
			Spec:        bodyHMAC("hmac-sha256", "Tally-Signature", "", "base64"),
			Docs:        "https://tally.so/help/webhooks",
			Dedup:       Dedup{Key: `body.eventId`},
			Delivery: Delivery{Retries: "up to 5 retries after 5 min, 30 min, 1 h, 6 h and 24 h", RetryWindow: Span(31*time.Hour + 35*time.Minute),
				Redeliver: "API: POST /webhooks/{webhookId}/events/{eventId}", Docs: "https://developers.tally.so/api-reference/endpoint/webhooks/events/retry"},
		},
		Preset{
			Name:        "patreon",
			Checked:     "docs",
			Description: "Patreon: X-Patreon-Signature over the body, HMAC-MD5 hex",
			Spec:        bodyHMAC("hmac-md5", "X-Patreon-Signature", "", "hex"),
			Docs:        "https://docs.patreon.com/#webhooks",
			// No event id; the body, which carries the member's state, is
			// the key.
			Delivery: Delivery{Retries: "retried until the webhook is paused after repeated failures", Docs: "https://docs.patreon.com/#webhooks"},
		},
		Preset{
			Name:        "attio",
			Checked:     "docs",
			Description: "Attio: Attio-Signature over the body, HMAC-SHA256 hex",
			Spec:        bodyHMAC("hmac-sha256", "Attio-Signature", "", "hex"),
			Docs:        "https://docs.attio.com/rest-api/guides/webhooks",
			Dedup:       Dedup{Key: `headers["idempotency-key"]`},
			Trust:       Trust{Unsigned: []string{`Idempotency-Key: not signed; the body's digest is a second key (Replayable), so a replay with a new key is still one event`}},
			Delivery:    Delivery{Retries: "retried with exponential backoff for up to 3 days", RetryWindow: Span(72 * time.Hour), Docs: "https://docs.attio.com/rest-api/guides/webhooks"},
		},
		Preset{
			Name:        "greenhouse",
			Checked:     "docs",
			Description: "Greenhouse: Signature sha256 <hex> over the body, HMAC-SHA256; ping on setup",
			Spec:        bodyHMAC("hmac-sha256", "Signature", "sha256 ", "hex"),
			Docs:        "https://developers.greenhouse.io/webhooks.html",
			Dedup:       Dedup{Key: `headers["greenhouse-event-id"]`},
			Trust:       Trust{Unsigned: []string{`Greenhouse-Event-ID: not signed; the body's digest is a second key (Replayable), so a replay with a new id is still one event`}},
			Delivery:    Delivery{Retries: "retried 7 times over 15 h", RetryWindow: Span(15 * time.Hour), Docs: "https://developers.greenhouse.io/webhooks.html"},
		},
		Preset{
			Name:        "ashby",
			Checked:     "docs",
			Description: "Ashby: Ashby-Signature sha256=… over the body, HMAC-SHA256 hex",
			Spec:        bodyHMAC("hmac-sha256", "Ashby-Signature", "sha256=", "hex"),
			Docs:        "https://developers.ashbyhq.com/docs/authenticating-webhooks",
			Delivery:    Delivery{Docs: "https://developers.ashbyhq.com/docs/setting-up-webhooks"},
		},
		Preset{
			Name:        "close",
			Checked:     "docs",
			Description: "Close: close-sig-hash over timestamp+body, HMAC-SHA256 hex with the hex signature_key",
			Spec: Spec{
				Algorithm: "hmac-sha256", Header: "close-sig-hash", Encoding: "hex", Content: "{timestamp}{body}",
				TimestampHeader: "close-sig-timestamp", SecretEncoding: "hex", Tolerance: 5 * time.Minute,
			},
			Docs:     "https://developer.close.com/topics/webhooks/",
			Dedup:    Dedup{Key: `body.event.id`},
			Delivery: Delivery{Retries: "retried with backoff for up to 72 h", RetryWindow: Span(72 * time.Hour), Docs: "https://developer.close.com/topics/webhooks/"},
		},
	)
}
