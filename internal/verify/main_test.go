package verify

import (
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
)

// TestMain points aws-sns at a stand-in for SNS's hosts, so every preset's
// sample verifies here as it does at a gateway: the stand-in serves the
// certificate a sample names in its URL.
func TestMain(m *testing.M) {
	standIn := newSNSStandIn()
	os.Setenv(EnvTestSNSURL, standIn.URL)
	// Samples each name a new certificate: no fetch budget in tests.
	snsFetchBudget = func() *fetchLimiter { return nil }
	snsConfirmBudget = nil
	code := m.Run()
	standIn.Close()
	os.Exit(code)
}

// snsStandIn plays SNS: it serves the certificate encoded in a
// /SimpleNotificationService-<hex DER>.pem path and confirms
// subscriptions, counting requests.
type snsStandIn struct {
	*httptest.Server
	certs, confirms atomic.Int32
}

func newSNSStandIn() *snsStandIn {
	s := &snsStandIn{}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

func (s *snsStandIn) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("Action") == "ConfirmSubscription" {
		s.confirms.Add(1)
		fmt.Fprintf(w, `<ConfirmSubscriptionResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><ConfirmSubscriptionResult><SubscriptionArn>%s:sub-1</SubscriptionArn></ConfirmSubscriptionResult></ConfirmSubscriptionResponse>`,
			r.URL.Query().Get("TopicArn"))
		return
	}
	s.certs.Add(1)
	name := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/SimpleNotificationService-"), ".pem")
	der, err := hex.DecodeString(name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	pem.Encode(w, &pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// useSNSStandIn gives one test its own stand-in, to count what it fetches.
func useSNSStandIn(t *testing.T) *snsStandIn {
	t.Helper()
	s := newSNSStandIn()
	t.Cleanup(s.Close)
	t.Setenv(EnvTestSNSURL, s.URL)
	return s
}
