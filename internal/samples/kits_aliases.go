package samples

// Kits of the providers that send with a shared scheme.

// swKit is the kit of a Standard Webhooks or Svix sender: event makes the
// body, the message id is fresh, and header adds what the provider sends
// besides the scheme's headers (name, value pairs).
func swKit(prefix string, event func(Input) obj, header ...string) Kit {
	sw := standardWebhooksHeaders{prefix: prefix}
	sends := sw.sends()
	for i := 0; i+1 < len(header); i += 2 {
		sends = append(sends, header[i])
	}
	return Kit{
		New: func(in Input) (Sample, error) {
			s, err := jsonSample(event(in), header...)
			s.ID = "msg_" + in.ID
			if prefix == "svix" {
				s.Header.Set("User-Agent", svixUserAgent)
			}
			return s, err
		},
		Sends: sends,
	}
}

func init() {
	register("anthropic", swKit("webhook", func(in Input) obj {
		// A session of agent Object goes idle, then ends.
		return obj{"type": "event", "id": "whe_" + in.ID, "created_at": in.RFC3339(),
			"data": obj{"type": in.pick("session.status_idled", "session.status_terminated"), "id": "sesn_" + in.Object, "organization_id": "org_01HG7", "workspace_id": "wrkspc_01JQ"}}
	}, "User-Agent", "Anthropic-Webhooks/1.0"))
	register("incident-io", swKit("webhook", func(in Input) obj {
		status := in.pick("triage", "fixing")
		return obj{"event_type": "public_incident.incident_updated_v2", "public_incident.incident_updated_v2": obj{
			"id": "01H" + in.Object, "name": "Payments are slow", "reference": "INC-123", "incident_status": obj{"category": status, "name": status}, "updated_at": in.RFC3339()}}
	}, "User-Agent", svixUserAgent))
	register("brex", swKit("webhook", func(in Input) obj {
		return obj{"event_type": in.pick("TRANSFER_PROCESSED", "TRANSFER_FAILED"), "transfer_id": "dpt_" + in.Object, "company_id": "cuacc_01", "event_id": "evt_" + in.ID}
	}))
	register("stytch", swKit("svix", func(in Input) obj {
		return obj{"event_id": "event-live-" + uuidOf(in.ID), "project_id": "project-live-0a1b2c", "action": in.pick("CREATE", "UPDATE"), "object_type": "member",
			"source": "DIRECT", "id": "member-live-" + uuidOf(in.Object), "timestamp": in.RFC3339()}
	}))
	register("polar", swKit("webhook", func(in Input) obj {
		return obj{"type": in.pick("order.created", "order.paid"), "timestamp": in.RFC3339(), "data": obj{"id": uuidOf(in.Object), "status": in.pick("pending", "paid"), "total_amount": 2500, "currency": "usd"}}
	}, "User-Agent", "polar.sh webhooks", "webhook-api-version", "2025-10-01"))
	register("whop", swKit("webhook", func(in Input) obj {
		return obj{"id": "msg_" + in.ID, "api_version": "v1", "type": in.pick("payment.created", "payment.succeeded"), "timestamp": in.RFC3339(),
			"data": obj{"id": "pay_" + in.Object, "status": in.pick("open", "paid"), "total": 25, "currency": "usd"}}
	}))
}
