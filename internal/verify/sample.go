package verify

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Sample is a realistic test event for a preset, as `hookgate send` sends it.
type Sample struct {
	Body   []byte
	Header http.Header
	// ID is the message id for schemes that sign one.
	ID string
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func uuid() string {
	u := randomHex(16)
	return u[:8] + "-" + u[8:12] + "-" + u[12:16] + "-" + u[16:20] + "-" + u[20:]
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func jsonSample(v any, header ...string) Sample {
	h := http.Header{"Content-Type": {"application/json"}}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	return Sample{Body: mustJSON(v), Header: h}
}

type obj = map[string]any

// SampleEvent returns a fresh test event for the preset, with unique ids so
// that each is a new event for deduplication. key is the signing key, needed
// by providers that sign inside the body (Mailgun, Adyen, Microsoft Graph).
func SampleEvent(preset, key string, now time.Time) (Sample, error) {
	id := randomHex(12)
	ts := now.Unix()
	switch preset {
	case "stripe":
		return jsonSample(obj{"id": "evt_test_" + id, "object": "event", "api_version": "2024-06-20", "created": ts, "livemode": false,
			"type": "payment_intent.succeeded", "data": obj{"object": obj{"id": "pi_test_" + id, "object": "payment_intent", "amount": 2000, "currency": "usd", "status": "succeeded"}}}), nil
	case "github":
		return jsonSample(obj{"zen": "Keep it logically awesome.", "hook_id": ts, "repository": obj{"id": 1296269, "full_name": "octocat/Hello-World"}, "sender": obj{"login": "octocat"}},
			"X-GitHub-Event", "ping", "X-GitHub-Delivery", uuid()), nil
	case "standard-webhooks", "svix", "standard-webhooks-ed25519", "clerk", "resend":
		s := jsonSample(obj{"type": "user.created", "timestamp": now.UTC().Format(time.RFC3339), "data": obj{"id": "user_" + id, "email": "jane@example.com"}})
		s.ID = "msg_" + id
		return s, nil
	case "slack":
		return jsonSample(obj{"token": "sample", "team_id": "T061EG9R6", "api_app_id": "A0PNCHHK2", "type": "event_callback", "event_id": "Ev" + id, "event_time": ts,
			"event": obj{"type": "app_mention", "user": "U061F7AUR", "text": "<@U0LAN0Z89> is it everything a river should be?", "ts": strconv.FormatInt(ts, 10) + ".000200", "channel": "C0LAN2Q65"}}), nil
	case "shopify":
		return jsonSample(obj{"id": ts, "email": "jon@example.com", "total_price": "10.00", "currency": "USD"},
			"X-Shopify-Topic", "orders/create", "X-Shopify-Webhook-Id", uuid(), "X-Shopify-Shop-Domain", "example.myshopify.com"), nil
	case "shopify-events":
		return jsonSample(obj{"id": ts, "email": "jon@example.com"},
			"shopify-topic", "orders/create", "shopify-webhook-id", uuid(), "shopify-shop-domain", "example.myshopify.com"), nil
	case "twilio":
		form := url.Values{"MessageSid": {"SM" + id}, "AccountSid": {"AC" + id}, "From": {"+14158675309"}, "To": {"+18005551212"}, "Body": {"Hello from Hookgate"}, "SmsStatus": {"received"}}
		return Sample{Body: []byte(form.Encode()), Header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "I-Twilio-Idempotency-Token": {uuid()}}}, nil
	case "sendgrid":
		body := append(mustJSON([]obj{{"email": "jane@example.com", "event": "delivered", "sg_event_id": id, "sg_message_id": "msg." + id, "timestamp": ts}}), '\r', '\n')
		return Sample{Body: body, Header: http.Header{"Content-Type": {"application/json"}}}, nil
	case "discord":
		return jsonSample(obj{"id": strconv.FormatInt(ts, 10) + "000", "application_id": "1", "type": 2, "data": obj{"name": "hookgate"}, "token": id, "version": 1}), nil
	case "discord-events":
		return jsonSample(obj{"version": 1, "application_id": "1", "type": 1, "event": obj{"type": "APPLICATION_AUTHORIZED", "timestamp": now.UTC().Format(time.RFC3339), "data": obj{}}}), nil
	case "square":
		return jsonSample(obj{"merchant_id": "MLEFBHHSJGVHD", "type": "payment.updated", "event_id": uuid(), "created_at": now.UTC().Format(time.RFC3339), "data": obj{"type": "payment", "id": id}},
			"square-environment", "Sandbox"), nil
	case "paddle":
		return jsonSample(obj{"event_id": "evt_" + id, "event_type": "transaction.completed", "occurred_at": now.UTC().Format(time.RFC3339), "notification_id": "ntf_" + id, "data": obj{"id": "txn_" + id}}), nil
	case "zoom":
		return jsonSample(obj{"event": "meeting.started", "event_ts": now.UnixMilli(), "payload": obj{"account_id": "AAAAAA", "object": obj{"id": id}}},
			"x-zm-trackingid", "v=2.0;clid=aws;rid="+id), nil
	case "linear":
		return jsonSample(obj{"action": "create", "type": "Issue", "data": obj{"id": uuid(), "title": "Hookgate sample"}, "webhookTimestamp": now.UnixMilli(), "webhookId": uuid()},
			"Linear-Delivery", uuid(), "Linear-Event", "Issue"), nil
	case "intercom":
		return jsonSample(obj{"type": "notification_event", "id": "notif_" + id, "topic": "ping", "created_at": ts, "data": obj{"item": obj{"type": "ping"}}}), nil
	case "mailgun":
		return jsonSample(obj{"signature": MailgunSignature(key, randomHex(25), now), "event-data": obj{"id": id, "event": "delivered", "timestamp": ts, "recipient": "jane@example.com"}}), nil
	case "bitbucket":
		return jsonSample(obj{"repository": obj{"full_name": "team/repo"}, "push": obj{"changes": []any{}}}, "X-Event-Key", "repo:push", "X-Request-UUID", uuid(), "X-Hook-UUID", uuid()), nil
	case "gitlab":
		return jsonSample(obj{"object_kind": "push", "ref": "refs/heads/main", "project": obj{"path_with_namespace": "group/project"}}, "X-Gitlab-Event", "Push Hook", "Idempotency-Key", uuid(), "X-Gitlab-Event-UUID", uuid()), nil
	case "twitch":
		s := jsonSample(obj{"subscription": obj{"id": uuid(), "type": "channel.follow", "version": "2", "status": "enabled"}, "event": obj{"user_id": "1337", "user_login": "hookgate", "broadcaster_user_id": "12826"}},
			"Twitch-Eventsub-Message-Type", "notification", "Twitch-Eventsub-Subscription-Type", "channel.follow")
		s.ID = uuid()
		return s, nil
	case "typeform":
		return jsonSample(obj{"event_id": id, "event_type": "form_response", "form_response": obj{"form_id": "lT4Z3j", "token": id, "submitted_at": now.UTC().Format(time.RFC3339)}}), nil
	case "calendly":
		return jsonSample(obj{"event": "invitee.created", "created_at": now.UTC().Format(time.RFC3339), "payload": obj{"uri": "https://api.calendly.com/scheduled_events/" + id + "/invitees/1", "email": "jane@example.com"}}), nil
	case "hubspot-v1", "hubspot-v2", "hubspot-v3":
		return jsonSample([]obj{{"eventId": ts, "subscriptionId": 12345, "portalId": 62515, "occurredAt": now.UnixMilli(), "subscriptionType": "contact.creation", "attemptNumber": 0, "objectId": 123}}), nil
	case "adyen":
		item := &AdyenItem{PspReference: "PSP" + id, MerchantAccountCode: "HookgateECOM", MerchantReference: "order-" + id, EventCode: "AUTHORISATION", Success: "true"}
		item.Amount.Value, item.Amount.Currency = json.Number("1000"), "EUR"
		sig, err := AdyenSignature(key, item)
		if err != nil {
			return Sample{}, fmt.Errorf("adyen key: %w", err)
		}
		item.AdditionalData = map[string]string{"hmacSignature": sig}
		return jsonSample(obj{"live": "false", "notificationItems": []obj{{"NotificationRequestItem": item}}}), nil
	case "vercel":
		return jsonSample(obj{"id": "evt_" + id, "type": "deployment.created", "createdAt": now.UnixMilli(), "payload": obj{"deployment": obj{"id": "dpl_" + id}}}), nil
	case "sentry":
		return jsonSample(obj{"action": "created", "installation": obj{"uuid": uuid()}, "data": obj{"issue": obj{"id": id}}},
			"Sentry-Hook-Resource", "issue", "Sentry-Hook-Timestamp", strconv.FormatInt(ts, 10), "Request-ID", randomHex(16)), nil
	case "postmark", "basic-auth":
		return jsonSample(obj{"RecordType": "Delivery", "MessageID": uuid(), "Recipient": "jane@example.com", "DeliveredAt": now.UTC().Format(time.RFC3339)}), nil
	case "woocommerce":
		return jsonSample(obj{"id": ts, "status": "processing", "total": "29.35"}, "X-WC-Webhook-Topic", "order.created", "X-WC-Webhook-ID", "42", "X-WC-Webhook-Delivery-ID", id), nil
	case "mux":
		return jsonSample(obj{"type": "video.asset.ready", "id": uuid(), "created_at": now.UTC().Format(time.RFC3339), "data": obj{"id": id}}), nil
	case "lemonsqueezy":
		return jsonSample(obj{"meta": obj{"event_name": "order_created", "test_mode": true}, "data": obj{"type": "orders", "id": id, "attributes": obj{"updated_at": now.UTC().Format(time.RFC3339)}}},
			"X-Event-Name", "order_created"), nil
	case "coinbase-commerce":
		return jsonSample(obj{"id": uuid(), "attempt_number": 1, "event": obj{"id": uuid(), "type": "charge:created", "created_at": now.UTC().Format(time.RFC3339)}}), nil
	case "contentful":
		return jsonSample(obj{"sys": obj{"type": "Entry", "id": id, "revision": 1}, "fields": obj{"title": obj{"en-US": "Hookgate"}}},
			"X-Contentful-Topic", "ContentManagement.Entry.publish", "X-Contentful-Idempotency-Key", randomHex(32)), nil
	case "asana":
		return jsonSample(obj{"events": []obj{{"action": "changed", "created_at": now.UTC().Format(time.RFC3339), "resource": obj{"gid": id, "resource_type": "task"}, "user": obj{"gid": "1"}}}}), nil
	case "jira":
		return jsonSample(obj{"timestamp": now.UnixMilli(), "webhookEvent": "jira:issue_created", "issue": obj{"id": id, "key": "HG-1"}}, "X-Atlassian-Webhook-Identifier", id), nil
	case "okta":
		return jsonSample(obj{"eventType": "com.okta.event_hook", "eventId": uuid(), "eventTime": now.UTC().Format(time.RFC3339), "data": obj{"events": []obj{{"uuid": uuid(), "eventType": "user.session.start"}}}}), nil
	case "microsoft-graph":
		return jsonSample(obj{"value": []obj{{"subscriptionId": uuid(), "clientState": key, "changeType": "created", "resource": "Users/" + id + "/Messages/1", "tenantId": uuid()}}}), nil
	case "meta", "whatsapp":
		return jsonSample(obj{"object": "whatsapp_business_account", "entry": []obj{{"id": "102290129340398", "changes": []obj{{"field": "messages",
			"value": obj{"messaging_product": "whatsapp", "messages": []obj{{"id": "wamid." + id, "from": "16315551181", "timestamp": strconv.FormatInt(ts, 10), "type": "text", "text": obj{"body": "hello"}}}}}}}}}), nil
	case "pagerduty":
		return jsonSample(obj{"event": obj{"id": id, "event_type": "incident.triggered", "occurred_at": now.UTC().Format(time.RFC3339), "data": obj{"id": "Q" + id}}}), nil
	case "plaid":
		return jsonSample(obj{"environment": "sandbox", "error": nil, "item_id": id, "new_transactions": 3, "webhook_code": "DEFAULT_UPDATE", "webhook_type": "TRANSACTIONS"}), nil
	}
	return Sample{}, fmt.Errorf("no sample event for provider %q", preset)
}

// SignSample signs a sample as the provider would for the given target URL
// and returns the headers to send with it.
func SignSample(p Preset, key string, s Sample, target string, now time.Time) (http.Header, error) {
	msg := Message{Body: s.Body, Method: http.MethodPost, URL: target, ID: s.ID, Header: s.Header, Time: now}
	var signer interface {
		Sign(string, Message) (http.Header, error)
	}
	switch p.Name {
	case "mailgun", "adyen", "microsoft-graph":
		return http.Header{}, nil // signed inside the body by SampleEvent
	case "twilio":
		signer = &twilio{}
	case "plaid":
		signer = &plaid{}
	case "contentful":
		signer = &contentful{}
	case "asana":
		signer = &asana{}
	case "linear":
		signer = mustSigner(Spec{Algorithm: "hmac-sha256", Header: "Linear-Signature", Encoding: "hex"})
	default:
		if p.Build != nil {
			return nil, fmt.Errorf("provider %s cannot sign samples", p.Name)
		}
		signer = mustSigner(p.Spec)
	}
	return signer.Sign(key, msg)
}

// mustSigner compiles a spec with no keys: enough to sign with a given key.
func mustSigner(spec Spec) *Declarative {
	d, err := compileSpec(spec)
	if err != nil {
		panic(err)
	}
	return d
}

// SignerFor returns a signer for a preset's scheme that signs with any key
// it is given, or an error for schemes the gateway cannot sign.
func SignerFor(p Preset) (Signer, error) {
	switch p.Name {
	case "twilio":
		return &twilio{}, nil
	case "contentful":
		return &contentful{}, nil
	case "asana":
		return &asana{}, nil
	}
	if p.Build != nil {
		return nil, fmt.Errorf("provider %s cannot be signed here", p.Name)
	}
	d, err := compileSpec(p.Spec)
	if err != nil {
		return nil, err
	}
	return d, nil
}
