package hookgate

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestModuleGraphHoldsNoTestTools: a build that adds Hookgate to Caddy
// (xcaddy build --with github.com/hookgate/hookgate) takes this module's
// requirements into its own version selection, so the browser driver, the
// load generator and xcaddy stay in the test, bench and tools modules.
func TestModuleGraphHoldsNoTestTools(t *testing.T) {
	cmd := exec.Command("go", "list", "-m", "all")
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list -m all: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "github.com/caddyserver/caddy/v2 ") {
		t.Fatalf("the module graph does not list Caddy: the listing is not what this test reads:\n%s", out)
	}
	for _, tool := range []string{"github.com/chromedp/", "github.com/tsenart/vegeta", "github.com/caddyserver/xcaddy"} {
		for line := range strings.SplitSeq(string(out), "\n") {
			if strings.HasPrefix(line, tool) {
				t.Errorf("the root module's graph holds %s", line)
			}
		}
	}
}
