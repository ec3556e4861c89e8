package e2e

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/verify"
)

// TestSendEveryPreset configures one source per preset, then has
// `hookgate send` sign a sample for each: every one must be accepted by the
// running gateway and reach the upstream.
func TestSendEveryPreset(t *testing.T) {
	// aws-sns samples name their certificate on the SNS stand-in, which
	// both the gateway and `hookgate send` find through the environment.
	snsStandIn(t)
	up := newRecorder(t, "", nil)
	passthrough := newRecorder(t, "", nil)
	var routes strings.Builder
	fmt.Fprintf(&routes, "upstreams:\n  legacy:\n    url: http://%s\nsources:\n", up.addr)
	signingKeys := map[string]string{}
	presets := verify.Presets()
	for _, p := range presets {
		secret, signingKey, err := verify.GenerateKeys(p)
		if err != nil {
			t.Fatal(err)
		}
		signingKeys[p.Name] = signingKey
		fmt.Fprintf(&routes, "  %s:\n    path: /hooks/%s\n    provider: %s\n    secrets: [%q]\n    default: [legacy]\n", p.Name, p.Name, p.Name, secret)
		// Test keys of fetched-key schemes are verified with what the
		// source pins instead (a JWKS, a root, a certificate).
		if opts := verify.TestKeyOptions(signingKey); opts != nil {
			routes.WriteString("    provider_options:\n")
			for k, v := range opts {
				fmt.Fprintf(&routes, "      %s: %q\n", k, v)
			}
		}
	}
	dir, port, admin := newGatewayDir(t, routes.String(), passthrough.addr)
	g := startGateway(t, dir, port, admin)
	for _, p := range presets {
		out, err := exec.Command(binary, "send", "--provider", p.Name, "--secret", signingKeys[p.Name],
			"--url", fmt.Sprintf("http://127.0.0.1:%d/hooks/%s", g.port, p.Name)).CombinedOutput()
		if err != nil || !strings.Contains(string(out), " 200 OK") {
			t.Errorf("send %s: %v\n%s", p.Name, err, out)
		}
	}
	waitFor(t, "a delivery per preset", 30*time.Second, func() bool { return len(up.all()) >= len(presets) })
	seen := map[string]bool{}
	for _, r := range up.all() {
		seen[strings.TrimPrefix(r.URI, "/hooks/")] = true
	}
	for _, p := range presets {
		if !seen[p.Name] {
			t.Errorf("no delivery for %s", p.Name)
		}
	}
}
