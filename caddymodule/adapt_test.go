package caddymodule

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig"
)

// updateGolden rewrites the expected JSON of the adapt tests:
// go test ./caddymodule -run TestAdaptGolden -update
var updateGolden = flag.Bool("update", false, "rewrite the expected JSON of testdata/adapt/*.caddyfiletest")

// TestAdaptGolden adapts each testdata/adapt/*.caddyfiletest (a Caddyfile,
// a line of dashes, the JSON `caddy adapt` prints) and compares, as
// Caddy's own caddyfile_adapt tests do: the inlining of routes.yaml, its
// schemas and placeholders, the short and block forms, matchers. The
// folder's absolute path is written {TESTDATA}.
// modified is a file version's modification time.
var modified = regexp.MustCompile(`modified [0-9T:.Z-]+`)

func TestAdaptGolden(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("testdata", "adapt"))
	if err != nil {
		t.Fatal(err)
	}
	// Placeholders stay as written in the JSON, and adapting resolves no
	// credential: STRIPE_WEBHOOK_SECRET is not set here.
	os.Unsetenv("STRIPE_WEBHOOK_SECRET")
	files, _ := filepath.Glob(filepath.Join(dir, "*.caddyfiletest"))
	if len(files) < 4 {
		t.Fatalf("%d adapt tests", len(files))
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".caddyfiletest"), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			input, want, ok := strings.Cut(string(raw), "----------\n")
			if !ok {
				t.Fatalf("%s has no line of dashes", file)
			}
			out, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(input), map[string]any{"filename": filepath.Join(dir, "Caddyfile")})
			if err != nil {
				t.Fatalf("adapt: %v", err)
			}
			var pretty bytes.Buffer
			if err := json.Indent(&pretty, out, "", "\t"); err != nil {
				t.Fatal(err)
			}
			got := strings.ReplaceAll(pretty.String(), dir, "{TESTDATA}") + "\n"
			// A file's modification time is the checkout's.
			got = modified.ReplaceAllString(got, "modified {MTIME}")
			if *updateGolden {
				if err := os.WriteFile(file, []byte(input+"----------\n"+got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != want {
				t.Errorf("adapted JSON differs (go test ./caddymodule -run TestAdaptGolden -update rewrites it)\ngot:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}
