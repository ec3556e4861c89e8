package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestSearchFields: a source's search fields are computed as events arrive
// and found through the index, in the admin API (search=, and name:value in
// the inspector's box) and in hookgate events list --search.
func TestSearchFields(t *testing.T) {
	up := newRecorder(t, "", nil)
	passthrough := newRecorder(t, "", nil)
	routes := fmt.Sprintf(`upstreams:
  legacy:
    url: http://%s
sources:
  github:
    path: /webhooks/github
    provider: github
    secrets: [gh-e2e-secret-0123456789]
    default: [legacy]
    search_fields:
      type: headers["x-github-event"]
      repo: body.repository.full_name
`, up.addr)
	dir, port, admin := newGatewayDir(t, routes, passthrough.addr)
	g := startGateway(t, dir, port, admin)
	github := newSigner(t, "github", "gh-e2e-secret-0123456789")
	ids := map[string]string{}
	for i, ev := range []struct{ typ, repo string }{{"push", "acme/api"}, {"push", "acme/web"}, {"issues", "acme/api"}, {"push", "acme/api"}} {
		body := []byte(fmt.Sprintf(`{"n":%d,"repository":{"full_name":%q}}`, i, ev.repo))
		h := github.sign(t, body, "")
		h.Set("X-GitHub-Delivery", fmt.Sprint("search-", i))
		h.Set("X-GitHub-Event", ev.typ)
		status, hdr, _ := g.post("/webhooks/github", h, body)
		if status != 200 {
			t.Fatalf("event %d: %d", i, status)
		}
		ids[fmt.Sprint(i)] = hdr.Get("Hookgate-Event-Id")
	}
	list := func(query string) []string {
		status, out := g.admin(http.MethodGet, "/hookgate/events?"+query)
		if status != 200 {
			t.Fatalf("GET /hookgate/events?%s: %d %v", query, status, out)
		}
		var got []string
		for _, e := range out["events"].([]any) {
			got = append(got, e.(map[string]any)["id"].(string))
		}
		return got
	}
	if got := list("search=repo:acme/api"); strings.Join(got, ",") != ids["3"]+","+ids["2"]+","+ids["0"] {
		t.Fatalf("repo:acme/api lists %v, want events 3, 2, 0", got)
	}
	if got := list("q=type:push&limit=1"); len(got) != 1 || got[0] != ids["3"] {
		t.Fatalf("type:push in the search box, first page of 1: %v", got)
	}
	if got := list("search=type:push&since=1h"); len(got) != 3 {
		t.Fatalf("type:push in the last hour: %v", got)
	}
	if status, out := g.admin(http.MethodGet, "/hookgate/events?search=colour:red"); status != 400 || !strings.Contains(fmt.Sprint(out), "no source has a search field \"colour\" (search_fields: repo, type)") {
		t.Fatalf("an unknown field: %d %v", status, out)
	}
	_, shown := g.admin(http.MethodGet, "/hookgate/events/"+ids["2"])
	if fmt.Sprint(shown["search"]) != "map[repo:acme/api type:issues]" {
		t.Fatalf("the event's search values: %v", shown["search"])
	}
	if out, err := g.cli("events", "show", ids["2"]); err != nil || !strings.Contains(out, "search repo: acme/api\nsearch type: issues\n") {
		t.Fatalf("events show: %v\n%s", err, out)
	}
	out, err := g.cli("events", "list", "--search", "type:issues")
	if err != nil || !strings.Contains(out, ids["2"]) || strings.Contains(out, ids["0"]) {
		t.Fatalf("events list --search type:issues: %v\n%s", err, out)
	}
}
