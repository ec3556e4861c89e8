package samples

import (
	"encoding/hex"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/hookgate/hookgate/internal/verify"
)

// TestMain points aws-sns at a stand-in for SNS's hosts, so every preset's
// sample verifies here as it does at a gateway: the stand-in serves the
// certificate whose DER a sample's certificate URL spells in hex.
func TestMain(m *testing.M) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		der, err := hex.DecodeString(strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/SimpleNotificationService-"), ".pem"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		pem.Encode(w, &pem.Block{Type: "CERTIFICATE", Bytes: der})
	}))
	os.Setenv(verify.EnvTestSNSURL, srv.URL)
	code := m.Run()
	srv.Close()
	os.Exit(code)
}

// TestEveryPresetHasAKit: the catalog and the kit agree, so a preset added
// to one is added to the other.
func TestEveryPresetHasAKit(t *testing.T) {
	for _, p := range verify.Presets() {
		k, ok := kits[p.Name]
		if !ok || k.New == nil || len(k.Sends) == 0 {
			t.Errorf("%s: no sample kit (New and Sends)", p.Name)
		}
	}
}
