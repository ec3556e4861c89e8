package verify

import (
	"os"
	"strings"
	"testing"
)

// TestProvidersDocIsGenerated keeps docs/providers.md equal to what the
// preset definitions generate; regenerate with
// `hookgate providers --markdown > docs/providers.md`.
func TestProvidersDocIsGenerated(t *testing.T) {
	doc, err := os.ReadFile("../../docs/providers.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(doc) != MarkdownTable() {
		t.Fatal("docs/providers.md is out of date: run `go run ./cmd/hookgate providers --markdown > docs/providers.md`")
	}
	for _, p := range Presets() {
		if !strings.Contains(string(doc), "| `"+p.Name+"` |") {
			t.Errorf("preset %s missing from the table", p.Name)
		}
	}
}

// TestTheNamedPresetsExist: the names users and tests rely on, and the
// size of the catalog.
func TestTheNamedPresetsExist(t *testing.T) {
	for _, name := range strings.Fields(`razorpay braintree workos telnyx gocardless recurly sanity dropbox-sign qstash plivo pusher
		liveblocks onfido box stream livekit cloudinary imagekit vonage openai replicate paypal google-pubsub azure-event-grid zendesk
		telegram docusign notion trello mandrill xero dropbox checkout-com mollie apple-app-store webflow airtable monday clickup heroku
		circleci buildkite gitea line netlify ms-teams customer-io front segment persona revolut paystack quickbooks launchdarkly calcom
		tally figma patreon terraform-cloud stripe github slack shopify twilio`) {
		if _, ok := Lookup(name); !ok {
			t.Errorf("no preset %s", name)
		}
	}
	if n := len(Presets()); n < 120 {
		t.Errorf("%d presets, want at least 120", n)
	}
}
