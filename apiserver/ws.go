package apiserver

import (
	"errors"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"github.com/bastion-dev/bastion/internal/hub"
	"github.com/bastion-dev/bastion/internal/metrics"
)

// WSAuth decides, before the upgrade, whether a request may open /api/ws
// and which projects' events it receives (api-contract.md: "Events go only
// to users who may see that project"). ok false answers 401.
type WSAuth func(r *http.Request) (filter func(projectID int64) bool, ok bool)

// wsRecheck, given the handshake request, returns the check that a socket
// runs every WSOptions.Recheck: "" while the credential that opened it
// still holds as it did, else why the socket must close. nil never checks.
type wsRecheck func(r *http.Request) func() string

// WSOptions tunes /api/ws; the zero value is the production setting.
type WSOptions struct {
	// PingInterval is how often the server pings (30 s). A client that
	// answers no ping for two intervals is dropped.
	PingInterval time.Duration
	// WriteTimeout bounds each frame written to a client (10 s).
	WriteTimeout time.Duration
	// Buffer is how many messages may wait for one client (4096) before it
	// counts as fallen behind and is closed.
	Buffer int
	// Recheck is how often an open socket checks again that its session or
	// token still holds, and with the same rights (2 s): signing out, a
	// password change, deleting the user or taking admin away closes it
	// within this delay.
	Recheck time.Duration
}

// wsReadLimit: clients send nothing but control frames, whose payload is
// at most 125 bytes; anything bigger is not our protocol.
const wsReadLimit = 512

// WSHandler serves /api/ws: the live "update" and "log" messages of h,
// filtered per client by auth.
//
// Only same-origin browsers may connect: a websocket handshake is exempt
// from CORS and carries the session cookie, so without the Origin check any
// web page could read a signed-in user's task output (cross-site websocket
// hijacking). Requests without Origin come from scripts, not browsers, and
// must authenticate like any other.
func WSHandler(h *hub.Hub, auth WSAuth, opts WSOptions) http.Handler {
	return newWSHandler(h, auth, nil, originPolicy{}, opts)
}

// newWSHandler is WSHandler with the signed-in server's extras: a recheck
// of each socket's credential, and the names this server goes by behind a
// proxy.
func newWSHandler(h *hub.Hub, auth WSAuth, recheck wsRecheck, origins originPolicy, opts WSOptions) http.Handler {
	if opts.PingInterval <= 0 {
		opts.PingInterval = 30 * time.Second
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = 10 * time.Second
	}
	if opts.Buffer <= 0 {
		opts.Buffer = 4096
	}
	if opts.Recheck <= 0 {
		opts.Recheck = 2 * time.Second
	}
	return &wsHandler{hub: h, auth: auth, recheck: recheck, origins: origins, opts: opts, upgrader: websocket.Upgrader{
		HandshakeTimeout: opts.WriteTimeout,
		CheckOrigin:      origins.allows,
		Error: func(w http.ResponseWriter, _ *http.Request, code int, reason error) {
			fail(w, code, reason.Error())
		},
	}}
}

type wsHandler struct {
	hub      *hub.Hub
	auth     WSAuth
	recheck  wsRecheck
	origins  originPolicy
	opts     WSOptions
	upgrader websocket.Upgrader
}

func (h *wsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.origins.allows(r) {
		fail(w, http.StatusForbidden, "websocket refused: Origin "+r.Header.Get("Origin")+" is not this server ("+
			strings.Join(h.origins.names(r), ", ")+"); behind a proxy that rewrites Host, set --external-url")
		return
	}
	filter, ok := h.auth(r)
	if !ok {
		fail(w, http.StatusUnauthorized, "not signed in")
		return
	}
	// Subscribe before the handshake completes: a client that reads a
	// task's output right after connecting misses no event in between.
	sub := h.hub.Subscribe(filter, h.opts.Buffer)
	defer h.hub.Unsubscribe(sub)
	hijack := &hijackRecorder{ResponseWriter: w}
	conn, err := h.upgrader.Upgrade(hijack, r, nil) // answers the error itself
	if err != nil {
		return
	}
	metrics.WebsocketClients.Inc()
	defer metrics.WebsocketClients.Dec()
	c := &wsClient{conn: conn, raw: hijack.conn, sub: sub, opts: h.opts}
	if h.recheck != nil {
		c.still = h.recheck(r)
	}
	c.serve()
}

// wsClient is one connection: a reader that only processes control frames,
// a writer that drains the subscription and pings, and serve, which ends
// the connection for whichever reason comes first.
type wsClient struct {
	conn *websocket.Conn
	raw  *batchConn // the connection under conn, for sending bursts at once
	sub  *hub.Subscription
	opts WSOptions
	// still is the credential's recheck (see wsRecheck); nil never checks.
	still func() string
}

func (c *wsClient) serve() {
	readErr, writeErr := make(chan error, 1), make(chan error, 1)
	stop := make(chan struct{})
	go func() { readErr <- c.read() }()
	go func() { writeErr <- c.write(stop) }()

	var recheck <-chan time.Time
	if c.still != nil {
		t := time.NewTicker(c.opts.Recheck)
		defer t.Stop()
		recheck = t.C
	}
	var readFailed error
	revoked := ""
wait:
	for {
		select {
		case <-c.sub.Done():
			break wait
		case err := <-readErr:
			readErr <- err
			readFailed = err
			break wait
		case err := <-writeErr:
			writeErr <- err
			break wait
		case <-recheck:
			if revoked = c.still(); revoked != "" {
				break wait
			}
		}
	}
	close(stop)
	if code, reason := c.closeReason(readFailed, revoked); code != 0 {
		c.sendClose(code, reason, readErr)
	}
	_ = c.conn.Close() // also ends a write stuck on a client that does not read
	<-readErr
	<-writeErr
}

// closeReason is the close frame owed to the client, if any. A closed
// subscription explains the end best, whichever side noticed first.
// A revoked credential comes first: the client must not just reconnect.
func (c *wsClient) closeReason(readFailed error, revoked string) (code int, reason string) {
	var slow *hub.SlowError
	var netErr net.Error
	switch err := c.sub.Err(); {
	case revoked != "":
		return websocket.ClosePolicyViolation, revoked
	case errors.As(err, &slow):
		// 1013 "try again later": the console reconnects and re-reads /output.
		return websocket.CloseTryAgainLater, err.Error()
	case errors.Is(err, hub.ErrClosed):
		return websocket.CloseGoingAway, err.Error()
	case errors.As(readFailed, &netErr) && netErr.Timeout():
		return websocket.ClosePolicyViolation, "no answer to ping within " + (2 * c.opts.PingInterval).String()
	}
	return 0, "" // the client left, or the connection broke
}

// sendClose writes the close frame and waits for the client's. The frame
// queues behind a frame being written, so a client that does not read gets
// it only if it reads again within WriteTimeout.
func (c *wsClient) sendClose(code int, reason string, readErr chan error) {
	deadline := time.Now().Add(c.opts.WriteTimeout)
	if c.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), deadline) != nil {
		return
	}
	// Closing the socket while it holds unread data from the client would
	// reset the connection, and the client could lose the reason.
	select {
	case err := <-readErr:
		readErr <- err
	case <-time.After(time.Until(deadline)):
	}
}

// read discards whatever the client sends; it runs so that pongs, pings
// and close frames are processed. Each pong extends the read deadline, so
// a client that stops answering pings ends with a timeout.
func (c *wsClient) read() error {
	c.conn.SetReadLimit(wsReadLimit)
	extend := func(string) error {
		return c.conn.SetReadDeadline(time.Now().Add(2 * c.opts.PingInterval))
	}
	_ = extend("")
	c.conn.SetPongHandler(extend)
	for {
		if _, _, err := c.conn.NextReader(); err != nil {
			return err
		}
	}
}

// write sends every message the subscription takes, in order, one text
// frame each, and pings on a ticker.
func (c *wsClient) write(stop <-chan struct{}) error {
	ping := time.NewTicker(c.opts.PingInterval)
	defer ping.Stop()
	var batch []hub.Message
	var err error
	for {
		select {
		case <-stop:
			return nil
		case <-ping.C:
			if err := c.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(c.opts.WriteTimeout)); err != nil {
				return err
			}
		case <-c.sub.Ready():
			if batch, err = c.sub.Take(batch); err != nil {
				return err
			}
			if err := c.writeBatch(stop, batch); err != nil {
				return err
			}
		}
	}
}

// writeBatch writes the frames of one Take as one burst: the frames are
// held back and sent together when the batch ends.
func (c *wsClient) writeBatch(stop <-chan struct{}, batch []hub.Message) error {
	_ = c.conn.SetWriteDeadline(time.Now().Add(c.opts.WriteTimeout))
	c.raw.begin()
	for _, m := range batch {
		select {
		case <-stop: // leave the connection to the close frame
			return c.raw.end()
		default:
		}
		if err := c.conn.WriteMessage(websocket.TextMessage, m.Frame); err != nil {
			_ = c.raw.end()
			return err
		}
	}
	return c.raw.end()
}
