package samples

import (
	"net/http"
	"strconv"
)

// Kits of the work-tool presets: support, CRM, recruiting, identity
// checks, forms, scheduling and customer data.

func init() {
	register("onfido", Kit{
		New: func(in Input) (Sample, error) {
			// Check Object starts, then completes.
			object := obj{"id": uuidOf(in.Object), "status": in.pick("in_progress", "complete"), "href": "https://api.eu.onfido.com/v3.6/checks/" + uuidOf(in.Object)}
			if in.Step > 0 {
				object["completed_at_iso8601"] = in.RFC3339()
			}
			return jsonSample(obj{"payload": obj{"resource_type": "check", "action": in.pick("check.started", "check.completed"), "object": object}})
		},
		Sends: []string{"Content-Type", "X-SHA2-Signature"},
	})
	register("persona", Kit{
		New: func(in Input) (Sample, error) {
			status := in.pick("completed", "approved")
			inquiry := obj{"type": "inquiry", "id": "inq_" + in.Object, "attributes": obj{"status": status, "reference-id": "user-42"}}
			return jsonSample(obj{"data": obj{"type": "event", "id": "evt_" + in.ID, "attributes": obj{"name": "inquiry." + status, "payload": obj{"data": inquiry}, "created-at": in.RFC3339()}}},
				"Persona-Webhook-Attempts-Made", "1", "Persona-Webhook-Attempts-Left", "7", "Persona-Webhook-First-Attempted-At", strconv.FormatInt(in.Now.Unix(), 10))
		},
		Sends: []string{"Content-Type", "Persona-Signature", "Persona-Webhook-Attempts-Made", "Persona-Webhook-Attempts-Left", "Persona-Webhook-First-Attempted-At"},
	})
	register("zendesk", Kit{
		New: func(in Input) (Sample, error) {
			ticket := strconv.FormatInt(in.ObjectNumber(), 10)
			return jsonSample(obj{"type": "zen:event-type:ticket." + in.pick("created", "status_changed"), "id": uuidOf(in.ID), "subject": "zen:ticket:" + ticket + ":" + in.Object,
				"time": in.RFC3339(), "account_id": 123456, "zendesk_event_version": "2022-11-06", "detail": obj{"id": ticket, "status": in.pick("NEW", "OPEN")}, "event": obj{}},
				"X-Zendesk-Account-Id", "123456", "X-Zendesk-Webhook-Id", "01GHS7VKT4JAG4XA7P1SD9ZKQG", "X-Zendesk-Webhook-Invocation-Id", strconv.FormatInt(in.EventNumber(), 10))
		},
		Sends: []string{"Content-Type", "X-Zendesk-Account-Id", "X-Zendesk-Webhook-Id", "X-Zendesk-Webhook-Invocation-Id", "X-Zendesk-Webhook-Signature", "X-Zendesk-Webhook-Signature-Timestamp"},
	})
	register("docusign", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"event": in.pick("envelope-sent", "envelope-completed"), "apiVersion": "v2.1", "uri": "/restapi/v2.1/accounts/a1/envelopes/" + uuidOf(in.Object),
				"retryCount": 0, "configurationId": 10418, "generatedDateTime": in.Now.UTC().Format("2006-01-02T15:04:05.0000000Z"),
				"data": obj{"accountId": "a1", "userId": "u1", "envelopeId": uuidOf(in.Object)}})
		},
		Sends: []string{"Content-Type", "X-DocuSign-Signature-1", "X-Authorization-Digest"},
	})
	register("customer-io", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"data": obj{"customer_id": "42", "delivery_id": in.Object, "identifiers": obj{"id": "42"}, "recipient": "jane@example.com", "subject": "Welcome"},
				"event_id": "01E4C4C6P79C12J5A6" + in.ID[:8], "object_type": "email", "metric": in.pick("sent", "delivered"), "timestamp": in.Now.Unix()})
		},
		Sends: []string{"Content-Type", "X-CIO-Signature", "X-CIO-Timestamp"},
	})
	register("front", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"type": in.pick("inbound_received", "tag"), "authorization": obj{"id": "cmp_1"},
				"payload": obj{"id": "evt_" + in.ID, "type": in.pick("inbound", "tag"), "emitted_at": in.Now.Unix(), "conversation": obj{"id": "cnv_" + in.Object, "status": "unassigned"}}})
		},
		Sends: []string{"Content-Type", "X-Front-Signature", "X-Front-Request-Timestamp"},
	})
	register("segment", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"type": "track", "event": in.pick("Order Completed", "Order Refunded"), "messageId": "ajs-next-" + in.ID, "userId": "user-42",
				"properties": obj{"order_id": in.Object, "total": 25}, "timestamp": in.RFC3339(), "sentAt": in.RFC3339()}, "User-Agent", "Segment.io/1.0")
		},
		Sends: []string{"Content-Type", "User-Agent", "X-Signature"},
	})
	register("calcom", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"triggerEvent": in.pick("BOOKING_CREATED", "BOOKING_CANCELLED"), "createdAt": in.Now.UTC().Format("2006-01-02T15:04:05.000Z"),
				"payload": obj{"uid": "bk_" + in.Object, "bookingId": in.ObjectNumber(), "title": "30 min meeting", "startTime": in.RFC3339(), "status": in.pick("ACCEPTED", "CANCELLED")}},
				"X-Cal-Webhook-Version", "2021-10-20")
		},
		Sends: []string{"Content-Type", "X-Cal-Signature-256", "X-Cal-Webhook-Version"},
	})
	register("tally", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"eventId": uuidOf(in.ID), "eventType": "FORM_RESPONSE", "createdAt": in.RFC3339(),
				"data": obj{"responseId": in.pick("2wgx4n", "3xyz5p"), "formId": "VwbNEw", "formName": "Feedback " + in.Object, "fields": []obj{{"key": "question_1", "label": "Name", "type": "INPUT_TEXT", "value": in.pick("Jane", "John")}}}})
		},
		Sends: []string{"Content-Type", "Tally-Signature"},
	})
	register("patreon", Kit{
		New: func(in Input) (Sample, error) {
			event := in.pick("members:pledge:create", "members:update")
			return jsonSample(obj{"data": obj{"type": "member", "id": uuidOf(in.Object), "attributes": obj{"patron_status": "active_patron", "currently_entitled_amount_cents": in.pick("500", "1000")}},
				"links": obj{"self": "https://www.patreon.com/api/oauth2/v2/members/" + uuidOf(in.Object)}}, "X-Patreon-Event", event)
		},
		Sends: []string{"Content-Type", "X-Patreon-Event", "X-Patreon-Signature"},
	})
	register("attio", Kit{
		New: func(in Input) (Sample, error) {
			event := obj{"event_type": in.pick("record.created", "record.updated"), "id": obj{"workspace_id": "14beef7a-99f7-4534-a87e-70b564330a4c", "object_id": "97052eb9-e65e-443f-a297-f2d9a4a7f795", "record_id": uuidOf(in.Object)},
				"actor": obj{"type": "workspace-member", "id": "50cf242c-7fa3-4cad-87d0-75b1af71c57b"}}
			return jsonSample(obj{"webhook_id": "1f9a7c2e-3d4b-4e5f-8a6b-7c8d9e0f1a2b", "events": []obj{event}}, "Idempotency-Key", uuidOf(in.ID))
		},
		Sends: []string{"Content-Type", "Attio-Signature", "Idempotency-Key"},
	})
	register("greenhouse", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"action": "candidate_stage_change", "payload": obj{"application": obj{"id": in.ObjectNumber(), "candidate": obj{"id": 60304594, "first_name": "Ada"},
				"current_stage": obj{"name": in.pick("Phone Screen", "Onsite")}}}}, "Greenhouse-Event-ID", uuidOf(in.ID))
		},
		Sends: []string{"Content-Type", "Signature", "Greenhouse-Event-ID"},
	})
	register("ashby", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"action": in.pick("applicationSubmit", "applicationUpdate"), "data": obj{"application": obj{"id": uuidOf(in.Object), "status": in.pick("Active", "Hired"),
				"candidate": obj{"id": "5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9", "name": "Grace Hopper"}}}})
		},
		Sends: []string{"Content-Type", "Ashby-Signature"},
	})
	register("close", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"subscription_id": "whsub_4kXz0q2Yc8mN1pR7", "event": obj{"id": "ev_" + in.ID, "date_created": in.Now.UTC().Format("2006-01-02T15:04:05.000000"),
				"object_type": "lead", "object_id": "lead_" + in.Object, "action": in.pick("created", "updated"), "lead_id": "lead_" + in.Object, "data": obj{"id": "lead_" + in.Object, "display_name": "Acme Corp"}}})
		},
		Sends: []string{"Content-Type", "close-sig-hash", "close-sig-timestamp"},
	})
}

// formHeader is the header of a form body.
var formHeader = http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
