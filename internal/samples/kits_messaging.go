package samples

import (
	"net/http"
	"net/url"
	"strconv"
)

// Kits of the messaging presets.

func init() {
	register("telnyx", Kit{
		New: func(in Input) (Sample, error) {
			// Message Object sent, then finalized (delivered).
			status := in.pick("sent", "delivered")
			return jsonSample(obj{"data": obj{"event_type": "message." + in.pick("sent", "finalized"), "id": uuidOf(in.ID), "occurred_at": in.RFC3339(), "record_type": "event",
				"payload": obj{"id": uuidOf(in.Object), "record_type": "message", "direction": "outbound", "type": "SMS", "to": []obj{{"phone_number": "+18665550001", "status": status}}}},
				"meta": obj{"attempt": 1, "delivered_to": "https://example.com/webhooks"}})
		},
		Sends: []string{"Content-Type", "telnyx-signature-ed25519", "telnyx-timestamp"},
	})
	register("plivo", Kit{
		New: func(in Input) (Sample, error) {
			form := url.Values{"MessageUUID": {uuidOf(in.Object)}, "From": {"14155550100"}, "To": {"14155550101"}, "Type": {"sms"}, "Status": {in.pick("sent", "delivered")},
				"Units": {"1"}, "TotalRate": {"0.0035"}, "Sequence": {strconv.Itoa(in.Step + 1)}, "MessageTime": {in.Now.UTC().Format("2006-01-02 15:04:05.000000")}}
			return Sample{Body: []byte(form.Encode()), Header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "User-Agent": {"PlivoHTTP/1.0"}}}, nil
		},
		Sends: []string{"Content-Type", "User-Agent", "X-Plivo-Signature-V3", "X-Plivo-Signature-V3-Nonce"},
	})
	register("vonage", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"message_uuid": uuidOf(in.Object), "to": "447700900000", "from": "447700900001", "timestamp": in.Now.UTC().Format("2006-01-02T15:04:05.000Z"),
				"status": in.pick("submitted", "delivered"), "usage": obj{"currency": "EUR", "price": "0.0333"}, "channel": "sms"})
		},
		Sends: []string{"Content-Type", "Authorization"},
	})
	register("pusher", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"time_ms": in.Now.UnixMilli(), "events": []obj{{"name": in.pick("channel_occupied", "channel_vacated"), "channel": "private-orders-" + in.Object}}})
		},
		Sends: []string{"Content-Type", "X-Pusher-Key", "X-Pusher-Signature"},
	})
	register("liveblocks", swKit("webhook", func(in Input) obj {
		return obj{"type": in.pick("commentCreated", "commentEdited"), "data": obj{"projectId": "605a50b01a36d5ea7a2e9104", "roomId": "room-" + in.Object,
			"threadId": "th_" + in.Object, "commentId": "cm_" + in.ID, "createdAt": in.RFC3339(), "createdBy": "user-1"}}
	}))
	register("stream", Kit{
		New: func(in Input) (Sample, error) {
			message := obj{"id": uuidOf(in.Object), "text": in.pick("hi", "hi, edited"), "type": "regular", "user": obj{"id": "tommaso"}, "created_at": in.RFC3339()}
			return jsonSample(obj{"type": in.pick("message.new", "message.updated"), "cid": "messaging:general", "channel_type": "messaging", "channel_id": "general",
				"message": message, "user": obj{"id": "tommaso"}, "created_at": in.RFC3339()},
				"X-Webhook-Id", uuidOf(in.ID), "X-Webhook-Attempt", "1")
		},
		Sends: []string{"Content-Type", "X-Signature", "X-Api-Key", "X-Webhook-Id", "X-Webhook-Attempt"},
	})
	register("livekit", Kit{
		New: func(in Input) (Sample, error) {
			participant := obj{"sid": "PA_" + in.Object, "identity": "alice", "state": in.pick("ACTIVE", "DISCONNECTED")}
			s, err := jsonSample(obj{"event": in.pick("participant_joined", "participant_left"), "room": obj{"sid": "RM_nHPUfmxXrHry", "name": "demo"}, "participant": participant,
				"id": "EV_" + in.ID, "createdAt": strconv.FormatInt(in.Now.Unix(), 10)}, "User-Agent", "LiveKit")
			s.Header.Set("Content-Type", "application/webhook+json")
			return s, err
		},
		Sends: []string{"Content-Type", "User-Agent", "Authorization"},
	})
	register("line", Kit{
		New: func(in Input) (Sample, error) {
			event := obj{"type": "message", "message": obj{"type": "text", "id": strconv.FormatInt(in.ObjectNumber(), 10), "text": "Hello"}, "replyToken": in.ID}
			if in.Step > 0 {
				event = obj{"type": "unsend", "unsend": obj{"messageId": strconv.FormatInt(in.ObjectNumber(), 10)}}
			}
			event["webhookEventId"] = "01H810YECXQQZ37V" + in.ID[:10]
			event["deliveryContext"] = obj{"isRedelivery": false}
			event["timestamp"] = in.Now.UnixMilli()
			event["source"] = obj{"type": "user", "userId": "U4af4980629"}
			event["mode"] = "active"
			return jsonSample(obj{"destination": "U8e742f61d673b39c7fff3cecb7536ef0", "events": []obj{event}}, "User-Agent", "LineBotWebhook/2.0")
		},
		Sends: []string{"Content-Type", "User-Agent", "x-line-signature"},
	})
	register("telegram", Kit{
		New: func(in Input) (Sample, error) {
			message := obj{"message_id": in.ObjectNumber(), "date": in.Now.Unix(), "chat": obj{"id": 1111111, "type": "private"}, "from": obj{"id": 1111111, "is_bot": false, "first_name": "Test"}, "text": "/start"}
			update := obj{"update_id": in.EventNumber() % 1000000000}
			if in.Step > 0 {
				message["edit_date"], message["text"] = in.Now.Unix(), "/start again"
				update["edited_message"] = message
			} else {
				update["message"] = message
			}
			return jsonSample(update)
		},
		Sends: []string{"Content-Type", "X-Telegram-Bot-Api-Secret-Token"},
	})
	register("ms-teams", Kit{
		New: func(in Input) (Sample, error) {
			id := strconv.FormatInt(in.EventNumber()%10000000000000, 10)
			return jsonSample(obj{"type": "message", "id": id, "timestamp": in.Now.UTC().Format("2006-01-02T15:04:05.000Z"), "serviceUrl": "https://smba.trafficmanager.net/amer/", "channelId": "msteams",
				"from": obj{"id": "29:1abc", "name": "Megan Bowen"}, "conversation": obj{"isGroup": true, "id": "19:" + in.Object + "@thread.skype;messageid=" + id, "conversationType": "channel"},
				"text": "<at>Hook</at> " + in.pick("hello", "status?")})
		},
		Sends: []string{"Content-Type", "Authorization"},
	})
	register("mandrill", Kit{
		New: func(in Input) (Sample, error) {
			msg := obj{"ts": in.Now.Unix(), "_id": in.Object, "state": "sent", "email": "recipient@example.com", "sender": "sender@example.com", "subject": "Hi"}
			events := []obj{{"event": in.pick("send", "open"), "msg": msg, "_id": in.Object, "ts": in.Now.Unix()}}
			form := url.Values{"mandrill_events": {string(mustJSON(events))}}
			return Sample{Body: []byte(form.Encode()), Header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "User-Agent": {"Mandrill-Webhook/1.0"}}}, nil
		},
		Sends: []string{"Content-Type", "User-Agent", "X-Mandrill-Signature"},
	})
	register("mailersend", Kit{
		New: func(in Input) (Sample, error) {
			kind := in.pick("delivered", "opened")
			return jsonSample(obj{"type": "activity." + kind, "domain_id": "yzkq340nv50gd796", "created_at": in.RFC3339(), "webhook_id": "2351ndgwr4zqx8ko",
				"data": obj{"object": "activity", "id": in.ID, "type": kind, "created_at": in.RFC3339(), "email": obj{"object": "email", "id": in.Object, "status": "delivered"}}})
		},
		Sends: []string{"Content-Type", "Signature"},
	})
	register("knock", Kit{
		New: func(in Input) (Sample, error) {
			kind := in.pick("message.sent", "message.delivered")
			return jsonSample(obj{"__typename": "Event", "type": kind, "created_at": in.RFC3339(), "data": obj{"__typename": "Message", "id": in.Object, "channel_id": "c1d2", "recipient": "user_123",
				"status": in.pick("sent", "delivered"), "workflow": "welcome"}, "event_data": nil}, "x-knock-event", kind, "x-knock-environment-id", "e1f2")
		},
		Sends: []string{"Content-Type", "x-knock-signature", "x-knock-event", "x-knock-environment-id"},
	})
	register("nylas", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"specversion": "1.0", "type": in.pick("message.created", "message.updated"), "source": "/google/emails/realtime", "id": "mock-id-" + in.ID, "time": in.Now.Unix(),
				"webhook_delivery_attempt": 1, "data": obj{"application_id": "AAAA-BBBB-1111-2222", "object": obj{"id": in.Object, "grant_id": "1c2d3e4f-5a6b-7c8d-9e0f-1a2b3c4d5e6f", "object": "message"}}})
		},
		Sends: []string{"Content-Type", "x-nylas-signature"},
	})
}
