// Package alerttest holds real servers on loopback for tests of alerts:
// an SMTP server that keeps what it receives, and an HTTP recorder for
// the Telegram Bot API and incoming webhooks.
package alerttest

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/base64"
	"io"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"
)

// Mail is a message the server accepted.
type Mail struct {
	From string
	To   []string
	// Login is the user that signed in ("" if none did).
	Login string
	// TLS is true when the message came over TLS (implicit or STARTTLS).
	TLS  bool
	Data []byte
}

// Subject is the decoded Subject header.
func (m Mail) Subject() string {
	msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
	if err != nil {
		return ""
	}
	s, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	if err != nil {
		return msg.Header.Get("Subject")
	}
	return s
}

// Body is the decoded text (quoted-printable, as the alerts send it).
func (m Mail) Body() string {
	msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
	if err != nil {
		return ""
	}
	var r io.Reader = msg.Body
	if strings.EqualFold(msg.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
		r = quotedprintable.NewReader(r)
	}
	b, _ := io.ReadAll(r)
	return strings.ReplaceAll(string(b), "\r\n", "\n")
}

// SMTPServer is a small real SMTP server (RFC 5321's commands that
// net/smtp uses, AUTH PLAIN) listening on a loopback port.
type SMTPServer struct {
	Host string
	Port int
	// Username and Password, when set, are required (AUTH PLAIN).
	Username, Password string

	ln       net.Listener
	tls      *tls.Config // set: STARTTLS is offered (or, implicit, spoken from the start)
	implicit bool
	mu       sync.Mutex
	mails    []Mail
	hang     bool
	conns    int
	held     []net.Conn
}

// NewSMTPServer starts a server; it stops when the test ends.
func NewSMTPServer(t testing.TB, username, password string) *SMTPServer {
	t.Helper()
	s, err := StartSMTPServer(username, password)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// StartSMTPServer starts a server that runs until Close (for a TestMain).
func StartSMTPServer(username, password string) (*SMTPServer, error) {
	return startSMTP(username, password, nil, false)
}

// NewTLSSMTPServer starts a server with a certificate for 127.0.0.1 that
// offers STARTTLS or, when implicit, speaks TLS from the first byte. It
// returns the TLS settings a client needs to trust it.
func NewTLSSMTPServer(t testing.TB, username, password string, implicit bool) (*SMTPServer, *tls.Config) {
	t.Helper()
	server, client, err := selfSigned()
	if err != nil {
		t.Fatal(err)
	}
	s, err := startSMTP(username, password, server, implicit)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, client
}

func startSMTP(username, password string, cfg *tls.Config, implicit bool) (*SMTPServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().(*net.TCPAddr)
	s := &SMTPServer{Host: "127.0.0.1", Port: addr.Port, Username: username, Password: password, tls: cfg, implicit: implicit}
	if implicit {
		ln = tls.NewListener(ln, cfg)
	}
	s.ln = ln
	go s.serve()
	return s, nil
}

// Close stops the server and drops held connections.
func (s *SMTPServer) Close() {
	_ = s.ln.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.held {
		_ = c.Close()
	}
	s.held = nil
}

// SetDead makes the server a dead one: it accepts connections and never
// says a word, as a hung mail server does. false brings it back.
func (s *SMTPServer) SetDead(dead bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hang = dead
	if !dead {
		for _, c := range s.held {
			_ = c.Close()
		}
		s.held = nil
	}
}

// Connections counts the connections accepted so far.
func (s *SMTPServer) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns
}

// Mails returns a copy of what was received.
func (s *SMTPServer) Mails() []Mail {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Mail(nil), s.mails...)
}

func (s *SMTPServer) serve() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns++
		hang := s.hang
		if hang {
			s.held = append(s.held, c)
		}
		s.mu.Unlock()
		if !hang {
			go s.session(c)
		}
	}
}

func (s *SMTPServer) session(c net.Conn) {
	defer func() { _ = c.Close() }()
	r := bufio.NewReader(c)
	reply := func(lines ...string) {
		for _, l := range lines {
			_, _ = io.WriteString(c, l+"\r\n")
		}
	}
	reply("220 alerttest ESMTP")
	var cur Mail
	login := ""
	secure := s.implicit
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		verb, arg, _ := strings.Cut(line, " ")
		switch strings.ToUpper(verb) {
		case "EHLO":
			lines := []string{"250-alerttest", "250-8BITMIME"}
			if s.tls != nil && !secure {
				lines = append(lines, "250-STARTTLS")
			}
			if s.Username != "" {
				lines = append(lines, "250-AUTH PLAIN")
			}
			lines[len(lines)-1] = "250 " + lines[len(lines)-1][4:]
			reply(lines...)
		case "STARTTLS":
			if s.tls == nil || secure {
				reply("502 not implemented")
				continue
			}
			reply("220 ready to start TLS")
			tc := tls.Server(c, s.tls)
			if err := tc.Handshake(); err != nil {
				return
			}
			// RFC 3207: everything known before TLS is forgotten.
			c, r, secure, login, cur = tc, bufio.NewReader(tc), true, "", Mail{}
		case "HELO", "NOOP":
			reply("250 ok")
		case "AUTH":
			mech, initial, _ := strings.Cut(arg, " ")
			if !strings.EqualFold(mech, "PLAIN") {
				reply("504 unrecognised mechanism")
				continue
			}
			if initial == "" {
				reply("334 ")
				if initial, err = r.ReadString('\n'); err != nil {
					return
				}
			}
			raw, _ := base64.StdEncoding.DecodeString(strings.TrimSpace(initial))
			parts := strings.Split(string(raw), "\x00")
			if len(parts) == 3 && parts[1] == s.Username && parts[2] == s.Password {
				login = parts[1]
				reply("235 authenticated")
			} else {
				reply("535 authentication failed")
			}
		case "MAIL":
			if s.Username != "" && login == "" {
				reply("530 authentication required")
				continue
			}
			cur = Mail{From: address(arg), Login: login, TLS: secure}
			reply("250 ok")
		case "RCPT":
			cur.To = append(cur.To, address(arg))
			reply("250 ok")
		case "DATA":
			reply("354 go ahead")
			data, err := readData(r)
			if err != nil {
				return
			}
			cur.Data = data
			s.mu.Lock()
			s.mails = append(s.mails, cur)
			s.mu.Unlock()
			cur = Mail{}
			reply("250 queued")
		case "RSET":
			cur = Mail{}
			reply("250 ok")
		case "QUIT":
			reply("221 bye")
			return
		default:
			reply("502 not implemented")
		}
	}
}

// address takes the path out of "FROM:<a@b> SIZE=…".
func address(arg string) string {
	_, rest, _ := strings.Cut(arg, ":")
	rest = strings.TrimSpace(rest)
	if i := strings.IndexByte(rest, '>'); strings.HasPrefix(rest, "<") && i > 0 {
		return rest[1:i]
	}
	return rest
}

// readData reads up to the lone "." and undoes dot-stuffing.
func readData(r *bufio.Reader) ([]byte, error) {
	var b bytes.Buffer
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		if line == ".\r\n" {
			return b.Bytes(), nil
		}
		b.WriteString(strings.TrimPrefix(line, "."))
	}
}
