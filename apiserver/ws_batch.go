package apiserver

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"sync"
)

// batchConn lets the websocket writer send a burst of frames with one
// system call: gorilla/websocket writes every frame straight to the
// connection, and at hundreds of thousands of lines a second those writes
// were a quarter of the pipeline's CPU. Outside a batch every write goes
// through at once, so a ping or a close frame written from another
// goroutine is never held back.
type batchConn struct {
	net.Conn
	mu       sync.Mutex
	buf      *bufio.Writer
	batching bool
}

func (c *batchConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.batching {
		return c.buf.Write(p)
	}
	return c.Conn.Write(p)
}

// begin starts holding writes back.
func (c *batchConn) begin() {
	c.mu.Lock()
	c.batching = true
	c.mu.Unlock()
}

// end sends what was held back, in one write when it fits the buffer.
func (c *batchConn) end() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.batching = false
	return c.buf.Flush()
}

// hijackRecorder hands gorilla a batchConn when it hijacks the request's
// connection, and keeps it for the writer.
type hijackRecorder struct {
	http.ResponseWriter
	conn *batchConn
}

func (h *hijackRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := h.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("the connection cannot be taken over")
	}
	conn, rw, err := hj.Hijack()
	if err != nil {
		return nil, nil, err
	}
	h.conn = &batchConn{Conn: conn}
	h.conn.buf = bufio.NewWriterSize(connWriter{h.conn}, 64<<10)
	return h.conn, rw, nil
}

// connWriter writes to the underlying connection, past the batching.
type connWriter struct{ c *batchConn }

func (w connWriter) Write(p []byte) (int, error) { return w.c.Conn.Write(p) }
