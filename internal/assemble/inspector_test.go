package assemble_test

import (
	"strings"
	"testing"

	"github.com/hookgate/hookgate/internal/assemble"
	"github.com/hookgate/hookgate/internal/config"
	"github.com/hookgate/hookgate/internal/ingest"
)

// TestInspectorMaskBodies: inspector.mask_bodies makes the pipeline show
// bodies whole with personal data masked (logging.mask_fields, e-mail
// addresses, phone numbers), in the source's format; without it, bodies
// are shown as stored. Unknown keys under inspector fail the load.
func TestInspectorMaskBodies(t *testing.T) {
	base := `
logging: {mask_fields: [customer_name]}
upstreams:
  legacy: {url: "http://x"}
sources:
  github: {path: /h/github, provider: github, secrets: [s-0123456789abcdef], default: [legacy]}
  twilio: {path: /h/twilio, provider: twilio, secrets: [s-0123456789abcdef], default: [legacy]}
`
	load := func(extra string) *assemble.Parts {
		t.Helper()
		cfg, err := config.Parse("routes.yaml", []byte(base+extra), config.Options{})
		if err != nil {
			t.Fatal(err)
		}
		parts, err := assemble.Config(cfg, ingest.Hooks{})
		if err != nil {
			t.Fatal(err)
		}
		return parts
	}
	body := []byte(`{"customer_name":"Jane Roe","note":"mail jane@example.com or call +1 415 555 0100","pad":"` + strings.Repeat("x", 5000) + `","n":1}`)
	if _, ok := load("").Pipeline.ShownBody("github", body); ok {
		t.Error("bodies masked without inspector.mask_bodies")
	}
	p := load("inspector: {mask_bodies: true}\n").Pipeline
	shown, ok := p.ShownBody("github", body)
	if !ok {
		t.Fatal("inspector.mask_bodies: body not masked")
	}
	for _, personal := range []string{"Jane Roe", "jane@example.com", "555 0100"} {
		if strings.Contains(string(shown), personal) {
			t.Errorf("%q shown in %.200s", personal, shown)
		}
	}
	if !strings.Contains(string(shown), `"customer_name":"[masked]"`) || !strings.Contains(string(shown), strings.Repeat("x", 5000)+`"`) || !strings.Contains(string(shown), `"n":1`) {
		t.Errorf("shown body lost what is not personal, or was cut: %.300s…", shown)
	}
	form, _ := p.ShownBody("twilio", []byte("From=%2B14155550100&Body=hi"))
	if strings.Contains(string(form), "4155550100") || !strings.Contains(string(form), `"Body":"hi"`) {
		t.Errorf("form body shown as %s", form)
	}
	if _, err := config.Parse("routes.yaml", []byte(base+"inspector: {mask_body: true}\n"), config.Options{}); err == nil || !strings.Contains(err.Error(), "mask_body") {
		t.Errorf("unknown inspector key: %v", err)
	}
}
