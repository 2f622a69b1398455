package alert

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"strconv"
	"strings"
	"time"
)

// SMTP security modes.
const (
	SecurityNone     = "none"     // plain text (a login is refused unless the server is on loopback)
	SecurityTLS      = "tls"      // TLS from the first byte (port 465)
	SecurityStartTLS = "starttls" // plain, then STARTTLS before anything else (port 587)
)

// SMTP is a mail server to send through.
type SMTP struct {
	Host     string
	Port     int
	Security string
	// Username, when set, logs in (AUTH PLAIN) with Password.
	Username string
	Password Secret
	// From is the sender address, e.g. "Bastion <bastion@example.com>".
	From string
	// TLSConfig overrides the TLS settings (a private CA); nil verifies the
	// server against the system's roots under Host.
	TLSConfig *tls.Config
}

func (s *SMTP) validate() error {
	if s.Host == "" {
		return errors.New("SMTP: a host is required")
	}
	if s.Port < 1 || s.Port > 65535 {
		return fmt.Errorf("SMTP: port %d is not a TCP port", s.Port)
	}
	switch s.Security {
	case SecurityNone, SecurityTLS, SecurityStartTLS:
	default:
		return fmt.Errorf("SMTP: security %q is not one of none, tls, starttls", s.Security)
	}
	if _, err := mail.ParseAddress(s.From); err != nil {
		return fmt.Errorf("SMTP: the sender address %q is not an address: %w", s.From, err)
	}
	if s.Username != "" && !s.Password.Set() {
		return errors.New("SMTP: a login needs a password file")
	}
	return nil
}

type smtpSender struct{ cfg SMTP }

func (s *smtpSender) kind() string { return "email" }

func (s *smtpSender) send(ctx context.Context, to string, m message) error {
	password := ""
	if s.cfg.Username != "" {
		var err error
		if password, err = s.cfg.Password.Read(); err != nil {
			return fmt.Errorf("SMTP password: %w", err)
		}
	}
	// A server that echoed the AUTH PLAIN line back would echo it encoded.
	plain := ""
	if password != "" {
		plain = base64.StdEncoding.EncodeToString([]byte("\x00" + s.cfg.Username + "\x00" + password))
	}
	return scrub(s.exchange(ctx, to, password, m), password, plain)
}

// exchange is one SMTP conversation, cut off when ctx ends.
func (s *smtpSender) exchange(ctx context.Context, to, password string, m message) error {
	rcpt, err := mail.ParseAddress(to)
	if err != nil {
		return fmt.Errorf("recipient: %w", err)
	}
	from, _ := mail.ParseAddress(s.cfg.From) // checked by validate
	addr := net.JoinHostPort(s.cfg.Host, strconv.Itoa(s.cfg.Port))
	var dialer net.Dialer
	conn, err := dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	if s.cfg.Security == SecurityTLS {
		conn = tls.Client(conn, s.tlsConfig())
	}
	c, err := smtp.NewClient(conn, s.cfg.Host)
	if err != nil {
		_ = conn.Close()
		return err
	}
	defer c.Close()
	if s.cfg.Security == SecurityStartTLS {
		if ok, _ := c.Extension("STARTTLS"); !ok {
			return errors.New("the server does not offer STARTTLS")
		}
		if err := c.StartTLS(s.tlsConfig()); err != nil {
			return err
		}
	}
	if s.cfg.Username != "" {
		// PlainAuth itself refuses to send the password over a connection
		// without TLS, unless the server is on loopback.
		if err := c.Auth(smtp.PlainAuth("", s.cfg.Username, password, s.cfg.Host)); err != nil {
			return fmt.Errorf("login: %w", err)
		}
	}
	if err := c.Mail(from.Address); err != nil {
		return err
	}
	if err := c.Rcpt(rcpt.Address); err != nil {
		return err
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(composeMail(from.String(), rcpt.String(), m)); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return c.Quit()
}

func (s *smtpSender) tlsConfig() *tls.Config {
	if s.cfg.TLSConfig != nil {
		cfg := s.cfg.TLSConfig.Clone()
		if cfg.ServerName == "" {
			cfg.ServerName = s.cfg.Host
		}
		return cfg
	}
	return &tls.Config{ServerName: s.cfg.Host, MinVersion: tls.VersionTLS12}
}

// composeMail is a plain-text UTF-8 message. The subject is encoded when it
// holds anything but printable ASCII, which also keeps a project name with
// a line break from adding headers.
func composeMail(from, to string, m message) []byte {
	var b bytes.Buffer
	header := func(k, v string) { b.WriteString(k + ": " + v + "\r\n") }
	header("From", from)
	header("To", to)
	header("Subject", mime.QEncoding.Encode("utf-8", m.Subject))
	header("Date", time.Now().Format(time.RFC1123Z))
	header("Message-ID", messageID(from))
	header("MIME-Version", "1.0")
	header("Content-Type", "text/plain; charset=utf-8")
	header("Content-Transfer-Encoding", "quoted-printable")
	header("Auto-Submitted", "auto-generated")
	b.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&b)
	_, _ = qp.Write([]byte(m.Body))
	_ = qp.Close()
	return b.Bytes()
}

func messageID(from string) string {
	domain := "bastion.invalid"
	if a, err := mail.ParseAddress(from); err == nil {
		if at := strings.LastIndexByte(a.Address, '@'); at >= 0 {
			domain = a.Address[at+1:]
		}
	}
	id := make([]byte, 12)
	_, _ = rand.Read(id)
	return "<" + hex.EncodeToString(id) + "@" + domain + ">"
}

func (s *smtpSender) label(to string) string { return to }
