package demorepo

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/go-logr/logr"
)

// Limits of one connection. A clone of the demo repository takes a few
// hundred bytes of request and well under a second; everything beyond
// these is a broken or hostile client.
const (
	// DefaultIdleTimeout is how long the server waits for each line.
	DefaultIdleTimeout = 10 * time.Second
	// DefaultMaxDuration bounds a whole conversation, however it trickles.
	DefaultMaxDuration = 60 * time.Second
	// DefaultMaxConns is how many clients are served at once; more are
	// refused with an ERR line rather than queued.
	DefaultMaxConns = 32
	// maxRequest bounds what one client may send in all (its request line,
	// wants and haves): a clone sends about 200 bytes.
	maxRequest = 64 << 10
)

// Server serves a Repository over the git:// protocol: the request line
// of git-daemon, then git-upload-pack's protocol version 0 (which every
// git client speaks, and falls back to when it asked for version 2). It
// serves exactly one path, Path; nothing can be pushed.
type Server struct {
	Repo *Repository
	// Zero values take the defaults above.
	IdleTimeout time.Duration
	MaxDuration time.Duration
	MaxConns    int
	// Log records refused requests (at V(1): on git's public port,
	// scanners would fill the log otherwise).
	Log logr.Logger

	mu     sync.Mutex
	active map[net.Conn]struct{}
	wg     sync.WaitGroup
}

// Serve accepts connections on ln until ctx ends, then closes ln, cuts the
// connections still open and waits for their goroutines.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	maxConns := s.MaxConns
	if maxConns <= 0 {
		maxConns = DefaultMaxConns
	}
	slots := make(chan struct{}, maxConns)
	// Refusals linger a moment (see refuse); as many at once as clients
	// served, and beyond that a connection is simply closed.
	refusals := make(chan struct{}, maxConns)
	stop := context.AfterFunc(ctx, func() { _ = ln.Close() })
	defer stop()
	defer s.cutAll()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		s.track(conn, true)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.track(conn, false)
			defer conn.Close()
			s.handle(conn, slots, refusals)
		}()
	}
}

// handle serves conn if a slot is free, else refuses it: refused, not
// queued, since a queue would hold a connection open for each client that
// floods the server.
func (s *Server) handle(conn net.Conn, slots, refusals chan struct{}) {
	select {
	case slots <- struct{}{}:
		defer func() { <-slots }()
		s.serveConn(conn)
		return
	default:
	}
	select {
	case refusals <- struct{}{}:
		defer func() { <-refusals }()
		refuse(conn, "too many connections to the demo repository; try again")
		s.Log.V(1).Info("refused a demo repository connection: too many", "remote", conn.RemoteAddr().String())
	default:
	}
}

func (s *Server) track(conn net.Conn, add bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active == nil {
		s.active = map[net.Conn]struct{}{}
	}
	if add {
		s.active[conn] = struct{}{}
	} else {
		delete(s.active, conn)
	}
}

func (s *Server) cutAll() {
	s.mu.Lock()
	for conn := range s.active {
		_ = conn.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// serveConn answers one client, bounded in time and in bytes.
func (s *Server) serveConn(conn net.Conn) {
	idle := s.IdleTimeout
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	total := s.MaxDuration
	if total <= 0 {
		total = DefaultMaxDuration
	}
	end := time.Now().Add(total)
	_ = conn.SetWriteDeadline(end)
	in := &boundedReader{conn: conn, idle: idle, end: end, left: maxRequest}
	c := &conversation{repo: s.Repo, r: &pktReader{r: in}, w: bufio.NewWriter(conn)}
	err := c.run()
	if err == nil {
		return
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		err = refusef("timed out waiting for the client")
	}
	var refused *refusal
	if errors.As(err, &refused) {
		refuse(conn, refused.msg)
	}
	s.Log.V(1).Info("demo repository request failed", "remote", conn.RemoteAddr().String(), "reason", err.Error())
}

// boundedReader gives each read the idle timeout, never past the end of
// the conversation, and refuses to read more than left bytes in all.
type boundedReader struct {
	conn net.Conn
	idle time.Duration
	end  time.Time
	left int
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, refusef("the request is larger than %d KiB", maxRequest>>10)
	}
	if len(p) > b.left {
		p = p[:b.left]
	}
	deadline := time.Now().Add(b.idle)
	if deadline.After(b.end) {
		deadline = b.end
	}
	_ = b.conn.SetReadDeadline(deadline)
	n, err := b.conn.Read(p)
	b.left -= n
	return n, err
}

// Bounds of the goodbye to a refused client.
const (
	lingerTime  = 500 * time.Millisecond
	lingerBytes = 64 << 10
)

// refuse tells the client why in an ERR line, then closes gracefully:
// closing a socket with unread input makes the kernel reset the
// connection, and a reset can make the client lose the ERR line. So the
// server half-closes, then reads and drops what the client still sends,
// for a short while and a bounded number of bytes.
func refuse(conn net.Conn, msg string) {
	// A deadline of its own: the conversation's may have passed.
	_ = conn.SetWriteDeadline(time.Now().Add(time.Second))
	if writeErr(conn, msg) != nil {
		return
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.CloseWrite()
	}
	_ = conn.SetReadDeadline(time.Now().Add(lingerTime))
	_, _ = io.Copy(io.Discard, io.LimitReader(conn, lingerBytes))
}
