package caddymodule

import (
	"embed"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"time"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"
)

// The event inspector: plain HTML, CSS and JavaScript embedded in the
// binary, served by the admin API, nothing fetched from elsewhere.
//
//go:embed ui
var uiFiles embed.FS

var uiRoot, _ = fs.Sub(uiFiles, "ui")

func serveUI(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return apiError(http.StatusMethodNotAllowed, "the inspector is read with GET")
	}
	name := strings.TrimPrefix(r.URL.Path, "/hookgate/ui")
	if name == "" {
		http.Redirect(w, r, "/hookgate/ui/", http.StatusMovedPermanently)
		return nil
	}
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; script-src 'self'; img-src 'self' data:")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-cache")
	r2 := r.Clone(r.Context())
	r2.URL.Path = name
	http.FileServerFS(uiRoot).ServeHTTP(w, r2)
	return nil
}

func timeline(w http.ResponseWriter, r *http.Request, g *liveGateway) error {
	minutes := 60
	if v := r.URL.Query().Get("minutes"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 24*60 {
			return apiError(http.StatusBadRequest, "minutes: want 1 to 1440, got %q", v)
		}
		minutes = n
	}
	points, truncated, err := g.handle.store.Timeline(time.Now().Add(-time.Duration(minutes-1) * time.Minute))
	if err != nil {
		return err
	}
	return writeJSON(w, map[string]any{"points": points, "truncated": truncated})
}

// inspectServer serves the inspector on a loopback address and forwards
// its API calls to Caddy's admin endpoint. Caddy's admin endpoint refuses
// browser navigations, which carry neither Origin nor Referer (its
// cross-site protection), so a browser reaches the page through here; the
// forwarded calls carry the admin endpoint's own origin.
func inspectServer(admin string) http.Handler {
	target := &url.URL{Scheme: "http", Host: admin}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = admin
			pr.Out.Header.Set("Origin", "http://"+admin)
			pr.Out.Header.Del("Referer")
		},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/hookgate/ui/", http.StatusFound)
	})
	mux.HandleFunc("/hookgate/ui/", func(w http.ResponseWriter, r *http.Request) {
		if err := serveUI(w, r); err != nil {
			http.Error(w, err.Error(), http.StatusMethodNotAllowed)
		}
	})
	mux.Handle("/hookgate/", proxy)
	return mux
}

func init() {
	caddycmd.RegisterCommand(caddycmd.Command{
		Name:  "inspect",
		Usage: "[--address localhost:2019] [--listen 127.0.0.1:2020]",
		Short: "Serves the event inspector page for a browser, on loopback",
		Long: `
Serves the event inspector (events, details, attempts, replay, a chart of the
last hour) and forwards its calls to Caddy's admin endpoint. It listens on
loopback only unless told otherwise; anyone who can reach it can replay
events.`,
		CobraFunc: func(cmd *cobra.Command) {
			addAdminFlags(cmd)
			cmd.Flags().String("listen", "127.0.0.1:2020", "address to serve the page on")
			cmd.RunE = func(cmd *cobra.Command, _ []string) error {
				admin, _ := cmd.Flags().GetString("address")
				admin = strings.TrimPrefix(strings.TrimPrefix(admin, "http://"), "https://")
				listen, _ := cmd.Flags().GetString("listen")
				ln, err := net.Listen("tcp", listen)
				if err != nil {
					return err
				}
				fmt.Printf("event inspector: http://%s/hookgate/ui/ (admin API at %s)\n", ln.Addr(), admin)
				srv := &http.Server{Handler: inspectServer(admin), ReadHeaderTimeout: 10 * time.Second}
				return srv.Serve(ln)
			}
		},
	})
}
