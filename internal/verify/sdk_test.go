package verify

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"testing"
	"time"
)

// sdkFixture is a request signed by a provider's official SDK; see
// testdata/sdk/README.md for the command that regenerates them.
type sdkFixture struct {
	Provider  string            `json:"provider"`
	SDK       string            `json:"sdk"`
	Secret    string            `json:"secret"`
	Payload   string            `json:"payload"`
	Headers   map[string]string `json:"headers"`
	Timestamp int64             `json:"timestamp"`
}

func TestOfficialSDKSignatures(t *testing.T) {
	data, err := os.ReadFile("testdata/sdk_fixtures.json")
	if err != nil {
		t.Fatal(err)
	}
	var fixtures []sdkFixture
	if err := json.Unmarshal(data, &fixtures); err != nil {
		t.Fatal(err)
	}
	perProvider := map[string]int{}
	for _, f := range fixtures {
		t.Run(f.Provider+"/"+f.SDK, func(t *testing.T) {
			scheme := mustScheme(t, f.Provider, f.Secret)
			header := http.Header{}
			for k, v := range f.Headers {
				header.Set(k, v)
			}
			now := time.Unix(f.Timestamp, 0).Add(10 * time.Second)
			if f.Timestamp == 0 {
				now = time.Now()
			}
			req := &Request{Body: []byte(f.Payload), Header: header, Method: "POST", Now: now}
			if err := scheme.Verify(req); err != nil {
				t.Fatalf("SDK-signed request rejected: %v", err)
			}
			req.Body = append([]byte(f.Payload), ' ')
			if err := scheme.Verify(req); !errors.Is(err, ErrInvalidSignature) {
				t.Fatalf("body with a trailing space: got %v, want ErrInvalidSignature", err)
			}
		})
		perProvider[f.Provider]++
	}
	for _, p := range []string{"stripe", "github", "svix", "standard-webhooks"} {
		if perProvider[p] == 0 {
			t.Errorf("no SDK fixture for preset %s", p)
		}
	}
}
