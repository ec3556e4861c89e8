package alert

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/http"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"net/url"
	"sort"
	"strings"
	"time"
)

// FormatEmail sends each alert as a plain-text e-mail over SMTP: to is
// smtp://[user:password@]host[:port] (STARTTLS when the server offers it,
// port 587 by default) or smtps://… (TLS from the start, port 465).
// Messages about one condition share a References header, so a mail
// client threads a firing with its resolution.
const FormatEmail = "email"

// Mailer sends alert messages through one SMTP server. Its RoundTrip lets
// the delivery engine carry e-mail alerts like any other: stored first,
// retried on a temporary failure (SMTP 4xx, a network error), dead on a
// permanent one (5xx).
type Mailer struct {
	// Server is the smtp:// or smtps:// URL, credentials included.
	Server *url.URL
	// From and To are the envelope and header addresses.
	From string
	To   []string
	// TLS, when set, replaces the default TLS settings (tests trust their
	// own CA with it).
	TLS *tls.Config
	// Timeout bounds one send; default 30 s.
	Timeout time.Duration
}

// Address returns the server with its credentials dropped, to show and
// to give the delivery engine.
func (m *Mailer) Address() *url.URL {
	u := *m.Server
	u.User = nil
	return &u
}

// message renders a as an RFC 5322 message from m.
func (m *Mailer) message(a Alert) []byte {
	var b bytes.Buffer
	h := textproto.MIMEHeader{}
	h.Set("From", m.From)
	h.Set("To", strings.Join(m.To, ", "))
	subject := a.title()
	if a.Source != "" || a.Upstream != "" {
		var about []string
		if a.Source != "" {
			about = append(about, "source "+a.Source)
		}
		if a.Upstream != "" {
			about = append(about, "upstream "+a.Upstream)
		}
		subject += " (" + strings.Join(about, ", ") + ")"
	}
	h.Set("Subject", mime.QEncoding.Encode("utf-8", subject))
	h.Set("Date", a.At.Format(time.RFC1123Z))
	h.Set("Message-Id", fmt.Sprintf("<%s.%s.%d@hookgate>", a.ID, a.State, a.At.UnixNano()))
	h.Set("References", "<"+a.ID+"@hookgate>")
	h.Set("Mime-Version", "1.0")
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Transfer-Encoding", "quoted-printable")
	h.Set("Auto-Submitted", "auto-generated")
	h.Set("X-Hookgate-Alert", string(a.Kind))
	h.Set("X-Hookgate-State", a.State)
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(&b, "%s: %s\r\n", k, h.Get(k))
	}
	b.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&b)
	text := a.Message + "\n\n"
	details := a.details()
	keys := make([]string, 0, len(details))
	for k := range details {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		text += k + ": " + details[k] + "\n"
	}
	text += "at: " + a.At.UTC().Format(time.RFC3339) + "\n"
	qp.Write([]byte(strings.ReplaceAll(text, "\n", "\r\n")))
	qp.Close()
	return b.Bytes()
}

// smtpFailure is a send that failed: with the server's reply (a 5xx one
// is permanent), or without one (the network, a TLS handshake).
type smtpFailure struct {
	err              error
	reply, permanent bool
}

func (f *smtpFailure) Error() string { return f.err.Error() }

// Send delivers msg to every recipient.
func (m *Mailer) Send(msg []byte) error {
	timeout := m.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	host := m.Server.Hostname()
	port := m.Server.Port()
	implicit := m.Server.Scheme == "smtps"
	if port == "" {
		port = "587"
		if implicit {
			port = "465"
		}
	}
	tlsConfig := &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	if m.TLS != nil {
		tlsConfig = m.TLS.Clone()
		if tlsConfig.ServerName == "" {
			tlsConfig.ServerName = host
		}
	}
	addr := net.JoinHostPort(host, port)
	dialer := &net.Dialer{Timeout: timeout}
	var conn net.Conn
	var err error
	if implicit {
		conn, err = tls.DialWithDialer(dialer, "tcp", addr, tlsConfig)
	} else {
		conn, err = dialer.Dial("tcp", addr)
	}
	if err != nil {
		return &smtpFailure{err: fmt.Errorf("connecting to the mail server %s: %w", addr, err)}
	}
	conn.SetDeadline(time.Now().Add(timeout))
	c, err := smtp.NewClient(conn, host)
	if err != nil {
		conn.Close()
		return classify("greeting", err)
	}
	defer c.Close()
	if err := c.Hello("hookgate"); err != nil {
		return classify("EHLO", err)
	}
	if !implicit {
		if ok, _ := c.Extension("STARTTLS"); ok {
			if err := c.StartTLS(tlsConfig); err != nil {
				return classify("STARTTLS", err)
			}
		}
	}
	if u := m.Server.User; u != nil {
		password, _ := u.Password()
		// PlainAuth refuses to send the password over a connection that
		// is not TLS, except to localhost.
		if err := c.Auth(smtp.PlainAuth("", u.Username(), password, host)); err != nil {
			return classify("AUTH", err)
		}
	}
	if err := c.Mail(m.From); err != nil {
		return classify("MAIL FROM", err)
	}
	for _, to := range m.To {
		if err := c.Rcpt(to); err != nil {
			return classify("RCPT TO "+to, err)
		}
	}
	w, err := c.Data()
	if err != nil {
		return classify("DATA", err)
	}
	if _, err := w.Write(msg); err != nil {
		return classify("DATA", err)
	}
	if err := w.Close(); err != nil {
		return classify("DATA", err)
	}
	return c.Quit()
}

// classify names the SMTP step that failed; a 5xx reply is permanent.
func classify(step string, err error) error {
	var reply *textproto.Error
	if errors.As(err, &reply) {
		return &smtpFailure{err: fmt.Errorf("the mail server refused %s: %d %s", step, reply.Code, reply.Msg), reply: true, permanent: reply.Code >= 500}
	}
	return &smtpFailure{err: fmt.Errorf("mail server, %s: %w", step, err)}
}

// RoundTrip sends the request's body, an alert message, as e-mail: the
// delivery engine's attempt. A permanent refusal (SMTP 5xx) is answered
// 400, which the engine does not retry, a temporary one (4xx) 503, with
// the server's reply as the body; a failure without a reply is an error,
// retried as a network error is.
func (m *Mailer) RoundTrip(req *http.Request) (*http.Response, error) {
	msg, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	err = m.Send(msg)
	status, text := http.StatusOK, "sent\n"
	var f *smtpFailure
	switch {
	case errors.As(err, &f) && f.permanent:
		status, text = http.StatusBadRequest, f.Error()+"\n"
	case errors.As(err, &f) && f.reply:
		status, text = http.StatusServiceUnavailable, f.Error()+"\n"
	case err != nil:
		return nil, err
	}
	return &http.Response{StatusCode: status, Status: http.StatusText(status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"text/plain; charset=utf-8"}}, Body: io.NopCloser(strings.NewReader(text)),
		ContentLength: int64(len(text)), Request: req}, nil
}

// CheckAddress refuses an address that is not one bare mailbox.
func CheckAddress(s string) error {
	a, err := mail.ParseAddress(s)
	if err != nil {
		return err
	}
	if a.Name != "" || a.Address != s {
		return fmt.Errorf("%q: want a bare address such as ops@example.com", s)
	}
	return nil
}
