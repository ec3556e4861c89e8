package e2e

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/http"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// mailbox is an SMTP server (go-smtp) on loopback that takes AUTH PLAIN
// with one user and keeps what it is sent. Its first DATA is refused with
// a 451, as a busy server's is.
type mailbox struct {
	mu       sync.Mutex
	messages []received
	refused  int
	addr     string
}

type received struct {
	from string
	to   []string
	msg  *mail.Message
	body string
}

type mailSession struct {
	box    *mailbox
	authed bool
	from   string
	to     []string
}

func (s *mailSession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *mailSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(identity, user, password string) error {
		if user != "alerts" || password != "app-password-0123" {
			return errors.New("invalid credentials")
		}
		s.authed = true
		return nil
	}), nil
}

func (s *mailSession) Mail(from string, _ *smtp.MailOptions) error {
	if !s.authed {
		return smtp.ErrAuthRequired
	}
	s.from = from
	return nil
}

func (s *mailSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.to = append(s.to, to)
	return nil
}

func (s *mailSession) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.box.mu.Lock()
	defer s.box.mu.Unlock()
	if s.box.refused == 0 {
		s.box.refused++
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try again later"}
	}
	msg, err := mail.ReadMessage(strings.NewReader(string(raw)))
	if err != nil {
		return err
	}
	body, err := io.ReadAll(quotedprintable.NewReader(msg.Body))
	if err != nil {
		return err
	}
	s.box.messages = append(s.box.messages, received{from: s.from, to: s.to, msg: msg, body: string(body)})
	return nil
}

func (s *mailSession) Reset()        { s.from, s.to = "", nil }
func (s *mailSession) Logout() error { return nil }

func newMailbox(t *testing.T) *mailbox {
	box := &mailbox{}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &mailSession{box: box}, nil }))
	srv.Domain, srv.AllowInsecureAuth = "localhost", true
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	box.addr = ln.Addr().String()
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return box
}

func (b *mailbox) all() []received {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]received(nil), b.messages...)
}

// TestAlertsByEmail: an alert target of format email sends each alert as
// a message over SMTP, authenticated, retried after the server's 451, and
// the resolved message follows in the same thread.
func TestAlertsByEmail(t *testing.T) {
	box := newMailbox(t)
	backend := newRecorder(t, "", nil)
	routes := fmt.Sprintf(`upstreams:
  legacy:
    url: http://%s
sources:
  github:
    path: /webhooks/github
    provider: github
    secrets: ["gh-e2e-secret-0123456789"]
    default: [legacy]
alerts:
  - name: mail
    to: "smtp://alerts:{env.SMTP_PASSWORD}@%s"
    format: email
    email: {from: hookgate@example.com, to: [ops@example.com, oncall@example.com]}
    inspector_url: https://ops.example.com/hookgate/ui/
    on:
      rejected: {ratio: 0.5, min: 20, window: 5m}
`, backend.addr, box.addr)
	t.Setenv("SMTP_PASSWORD", "app-password-0123")
	dir, port, adminPort := newGatewayDir(t, routes, "127.0.0.1:1")
	g := startGateway(t, dir, port, adminPort)

	forger := newSigner(t, "github", "not-the-secret-0123456789")
	for i := range 20 {
		body := []byte(fmt.Sprintf(`{"forged":%d}`, i))
		if status, _, _ := g.post("/webhooks/github", forger.sign(t, body, ""), body); status != http.StatusUnauthorized {
			t.Fatalf("forged request %d: %d", i, status)
		}
	}
	waitFor(t, "the alert by e-mail", 30*time.Second, func() bool { return len(box.all()) >= 1 })
	first := box.all()[0]
	subject, _ := new(mime.WordDecoder).DecodeHeader(first.msg.Header.Get("Subject"))
	if first.from != "hookgate@example.com" || strings.Join(first.to, ",") != "ops@example.com,oncall@example.com" ||
		subject != "Hookgate rejected (source github)" || first.msg.Header.Get("X-Hookgate-State") != "firing" ||
		first.msg.Header.Get("To") != "ops@example.com, oncall@example.com" {
		t.Fatalf("the firing message: from %s to %v, subject %q, headers %v", first.from, first.to, subject, first.msg.Header)
	}
	if !strings.Contains(first.body, "source github refused 20 of 20 requests") || !strings.Contains(first.body, "link: https://ops.example.com/hookgate/ui/") {
		t.Fatalf("the firing message's text:\n%s", first.body)
	}
	// The 451 was an attempt the engine retried.
	_, list := g.admin(http.MethodGet, "/hookgate/events?source=hookgate-alerts")
	events, _ := list["events"].([]any)
	if len(events) != 1 {
		t.Fatalf("alert events: %v", list)
	}
	id := events[0].(map[string]any)["id"].(string)
	_, ev := g.admin(http.MethodGet, "/hookgate/events/"+id)
	history := ev["deliveries"].([]any)[0].(map[string]any)["history"].([]any)
	if len(history) != 2 || history[0].(map[string]any)["status"] != 503.0 || !strings.Contains(fmt.Sprint(history[0].(map[string]any)["response"]), "451") ||
		history[1].(map[string]any)["status"] != 200.0 {
		t.Fatalf("the alert's attempts: %v", history)
	}
	if raw := fmt.Sprint(ev); strings.Contains(raw, "app-password") {
		t.Fatalf("the alert's record shows the SMTP password: %s", raw)
	}

	// Genuine requests bring the share under the ratio: resolved, in the
	// firing message's thread.
	g.ackGitHubEvents(t, "mail-over", 21)
	waitFor(t, "the resolved message", 30*time.Second, func() bool { return len(box.all()) >= 2 })
	second := box.all()[1]
	subject, _ = new(mime.WordDecoder).DecodeHeader(second.msg.Header.Get("Subject"))
	if subject != "Hookgate resolved, rejected (source github)" || second.msg.Header.Get("References") != first.msg.Header.Get("References") ||
		second.msg.Header.Get("Message-Id") == first.msg.Header.Get("Message-Id") || !strings.Contains(second.body, "refuses few of its requests again") {
		t.Fatalf("the resolved message: %q %v\n%s", subject, second.msg.Header, second.body)
	}
	if strings.Contains(g.log.String(), "app-password") {
		t.Fatal("the gateway logged the SMTP password")
	}
}
