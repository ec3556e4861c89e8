package hookgatecmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/hookgate/hookgate/caddymodule"
	"github.com/hookgate/hookgate/internal/samples"
	"github.com/hookgate/hookgate/internal/verify"
)

func listenCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "listen --from <url> --source <name> --to <local url> [--since 1h] [--secret <s>]",
		Short: "Streams a gateway's events for one source to a local app, signed again",
		Long: `
Streams the events a gateway stores for one source, as they arrive, and
delivers each to a local URL, as 'stripe listen' does: for a developer whose
gateway runs elsewhere. --from is the base URL that serves
/hookgate/listen/<source>: the admin endpoint (over an SSH tunnel, say), or a
site that routes it to the hookgate_listen handler. The token is one of the
source's listen_tokens (--token, or HOOKGATE_LISTEN_TOKEN).

Each event is signed again with the provider's scheme and --secret, the
local app's own secret, so its verification passes; --no-sign delivers the
events unsigned. --since replays stored events from a time (RFC 3339) or a
duration ago before the new ones. A dropped stream is resumed after the last
event delivered, so nothing is lost or repeated; an event the local app
cannot be reached for is tried again until it can.`,
		Example: `  hookgate listen --from https://gw.example.com --source stripe --to http://localhost:3000/webhooks --secret whsec_local_0123456789`,
		Args:    args(cobra.NoArgs),
		RunE:    run(runListen),
	}
	cmd.Flags().String("from", "", "base URL serving /hookgate/listen/<source>")
	cmd.Flags().String("source", "", "the source whose events to stream")
	cmd.Flags().String("to", "", "the local URL each event is POSTed to")
	cmd.Flags().String("token", "", "a listen token of the source (or HOOKGATE_LISTEN_TOKEN)")
	cmd.Flags().String("since", "", "first replay the events stored since this time or duration ago")
	cmd.Flags().String("secret", "", "the local app's signing secret for the provider")
	cmd.Flags().String("secret-file", "", "read the signing secret from this file")
	cmd.Flags().String("secret-env", "", "read the signing secret from this environment variable")
	cmd.Flags().Bool("no-sign", false, "deliver without a signature")
	exclusive(cmd, "secret", "secret-file", "secret-env", "no-sign")
	return cmd
}

// listener is one hookgate listen run.
type listener struct {
	stream, to string
	token      string
	since      string
	secret     string
	sign       bool
	out        io.Writer
	client     *http.Client
	// last is the id of the last event delivered: a new connection
	// resumes after it.
	last string
}

func runListen(cmd *cobra.Command, _ []string) error {
	fl := cmd.Flags()
	from, _ := fl.GetString("from")
	source, _ := fl.GetString("source")
	to, _ := fl.GetString("to")
	if from == "" || source == "" || to == "" {
		return usageError("need --from, --source and --to")
	}
	if u, err := url.Parse(to); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageError("--to: want an http(s) URL, got %q", to)
	}
	base, err := url.Parse(strings.TrimSuffix(from, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return usageError("--from: want an http(s) URL, got %q", from)
	}
	l := &listener{stream: base.String() + "/hookgate/listen/" + url.PathEscape(source), to: to, out: cmd.OutOrStdout(),
		client: &http.Client{Timeout: 30 * time.Second}}
	l.token, _ = fl.GetString("token")
	if l.token == "" {
		l.token = os.Getenv("HOOKGATE_LISTEN_TOKEN")
	}
	if l.token == "" {
		return usageError("need a listen token: --token or HOOKGATE_LISTEN_TOKEN")
	}
	l.since, _ = fl.GetString("since")
	noSign, _ := fl.GetBool("no-sign")
	if l.secret, err = secretFlag(cmd); err != nil {
		return err
	}
	l.sign = !noSign
	if l.sign && l.secret == "" {
		return usageError("need the local app's signing secret (--secret, --secret-file or --secret-env), or --no-sign")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return l.run(ctx)
}

// run connects, delivers what the stream brings and connects again when
// it drops, until ctx ends.
func (l *listener) run(ctx context.Context) error {
	wait := time.Second
	for {
		connected, err := l.connect(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var fatal *Error
		if errors.As(err, &fatal) {
			return err
		}
		if connected {
			wait = time.Second
		}
		fmt.Fprintf(l.out, "stream lost (%v); connecting again in %s\n", err, wait)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = min(2*wait, 30*time.Second)
	}
}

// connect reads one stream until it ends; connected says it was opened.
func (l *listener) connect(ctx context.Context) (connected bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.stream, nil)
	if err != nil {
		return false, exitWith(ExitUsage, err)
	}
	req.Header.Set("Authorization", "Bearer "+l.token)
	req.Header.Set("Accept", "text/event-stream")
	if l.last != "" {
		req.Header.Set("Last-Event-ID", l.last)
	} else if l.since != "" {
		q := req.URL.Query()
		q.Set("since", l.since)
		req.URL.RawQuery = q.Encode()
	}
	// The stream has no deadline of its own; pings every 15 s say it lives.
	resp, err := (&http.Client{}).Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusBadRequest:
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return false, exitWith(ExitRefused, fmt.Errorf("the gateway refused the stream: %s %s", resp.Status, bytes.TrimSpace(msg)))
	case resp.StatusCode != http.StatusOK:
		return false, fmt.Errorf("the gateway answered %s", resp.Status)
	}
	if l.last == "" {
		fmt.Fprintf(l.out, "listening to %s, delivering to %s\n", l.stream, l.to)
	} else {
		fmt.Fprintf(l.out, "resumed after %s\n", l.last)
	}
	return true, l.read(ctx, resp.Body)
}

// read parses server-sent events and delivers each webhook event.
func (l *listener) read(ctx context.Context, r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var id, kind string
	var data []string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if kind == "webhook" && len(data) > 0 {
				var ev caddymodule.ListenedEvent
				if err := json.Unmarshal([]byte(strings.Join(data, "\n")), &ev); err != nil {
					return fmt.Errorf("event %s: %w", id, err)
				}
				if err := l.deliver(ctx, ev); err != nil {
					return err
				}
				l.last = id
			}
			id, kind, data = "", "", nil
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "id:"):
			id = strings.TrimSpace(strings.TrimPrefix(line, "id:"))
		case strings.HasPrefix(line, "event:"):
			kind = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return io.ErrUnexpectedEOF
}

// deliver POSTs one event to the local URL, signed again, and tries again
// while the local app cannot be reached. Any answer ends it: the event was
// delivered, and what the app said is printed.
func (l *listener) deliver(ctx context.Context, ev caddymodule.ListenedEvent) error {
	body := []byte(ev.Body)
	if ev.BodyBase64 {
		var err error
		if body, err = base64.StdEncoding.DecodeString(ev.Body); err != nil {
			return fmt.Errorf("event %s: body: %w", ev.ID, err)
		}
	}
	wait := 500 * time.Millisecond
	for {
		req, err := http.NewRequestWithContext(ctx, ev.Method, l.to, bytes.NewReader(body))
		if err != nil {
			return exitWith(ExitUsage, err)
		}
		for k, v := range ev.Headers {
			switch http.CanonicalHeaderKey(k) {
			case "Content-Length", "Host", "Connection", "Transfer-Encoding", "Accept-Encoding":
				continue
			}
			req.Header[k] = v
		}
		req.Header.Set("Hookgate-Event-Id", ev.ID)
		if l.sign {
			signed, err := l.signature(ev, body)
			if err != nil {
				return exitWith(ExitUsage, fmt.Errorf("signing event %s: %w", ev.ID, err))
			}
			for k, v := range signed {
				req.Header[k] = v
			}
		}
		start := time.Now()
		resp, err := l.client.Do(req)
		if err == nil {
			io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			fmt.Fprintf(l.out, "%s  %s  %s %s → %d in %s\n", ev.ReceivedAt.Local().Format("15:04:05"), ev.ID, ev.Source, eventLabel(ev), resp.StatusCode, time.Since(start).Round(time.Millisecond))
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		fmt.Fprintf(l.out, "%s  %s: %v; trying again in %s\n", ev.ID, l.to, err, wait)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 10*time.Second)
	}
}

// signature signs the event as its provider would, for the local URL.
func (l *listener) signature(ev caddymodule.ListenedEvent, body []byte) (http.Header, error) {
	p, ok := verify.Lookup(ev.Provider)
	if !ok {
		return nil, fmt.Errorf("source %s declares its own scheme; deliver with --no-sign", ev.Source)
	}
	id := ev.ID
	for _, h := range []string{"Webhook-Id", "Svix-Id"} {
		if v := ev.Headers.Get(h); v != "" {
			id = v
		}
	}
	return samples.Sign(p, l.secret, samples.Sample{Body: body, Header: ev.Headers, ID: id}, l.to, time.Now())
}

// eventLabel names the event for the log line: a common event-type header
// or the path.
func eventLabel(ev caddymodule.ListenedEvent) string {
	for name := range ev.Headers {
		if strings.HasSuffix(strings.ToLower(name), "-event") || strings.HasSuffix(strings.ToLower(name), "-topic") {
			return ev.Headers.Get(name)
		}
	}
	return ev.Path
}
