package alerttest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Request is a request the recorder received.
type Request struct {
	Method, Path, ContentType string
	Body                      []byte
}

// Recorder is an HTTP server on loopback that keeps every request and
// answers with a fixed status and body (the Bot API's {"ok": true} by
// default).
type Recorder struct {
	URL string

	srv      *httptest.Server
	mu       sync.Mutex
	requests []Request
	status   int
	answer   string
}

// NewRecorder starts a recorder; it stops when the test ends.
func NewRecorder(t testing.TB) *Recorder {
	t.Helper()
	rec := StartRecorder()
	t.Cleanup(rec.Close)
	return rec
}

// StartRecorder starts a recorder that runs until Close (for a TestMain).
func StartRecorder() *Recorder {
	rec := &Recorder{status: http.StatusOK, answer: `{"ok":true,"result":{}}`}
	rec.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.requests = append(rec.requests, Request{Method: r.Method, Path: r.URL.Path, ContentType: r.Header.Get("Content-Type"), Body: body})
		status, answer := rec.status, rec.answer
		rec.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer)
	}))
	rec.URL = rec.srv.URL
	return rec
}

// Close stops the recorder.
func (r *Recorder) Close() { r.srv.Close() }

// Answer sets the status and body of later answers.
func (r *Recorder) Answer(status int, body string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status, r.answer = status, body
}

// Requests returns a copy of what was received.
func (r *Recorder) Requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.requests...)
}
