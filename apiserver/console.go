package apiserver

import (
	"bytes"
	"errors"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
)

// consoleHandler serves the single-page console: files as they are, assets
// with long cache lifetimes (their names carry a content hash) and in gzip
// when the build wrote one (console/vite.config.ts) and the browser takes
// it, and
// index.html for every other path so that client routes such as
// /project/1/history survive a reload.
type consoleHandler struct {
	files fs.FS
	index []byte
}

func newConsoleHandler(files fs.FS) http.Handler {
	if files == nil {
		return consoleNotBuilt{}
	}
	index, err := fs.ReadFile(files, "index.html")
	if err != nil {
		return consoleNotBuilt{}
	}
	return &consoleHandler{files: files, index: index}
}

func (h *consoleHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		fail(w, http.StatusMethodNotAllowed, "method "+r.Method+" is not allowed on "+r.URL.Path)
		return
	}
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")

	// A missing asset must be a 404: answering index.html would hand the
	// browser HTML where it expects a script, which fails obscurely.
	if name == "assets" || strings.HasPrefix(name, "assets/") {
		if !h.isFile(name) {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		w.Header().Add("Vary", "Accept-Encoding")
		if acceptsGzip(r) && h.isFile(name+".gz") {
			h.serveGzipped(w, r, name)
			return
		}
		http.ServeFileFS(w, r, h.files, name)
		return
	}
	if name != "" && name != "index.html" && !strings.HasPrefix(path.Base(name), ".") && h.isFile(name) {
		w.Header().Set("Cache-Control", "no-cache")
		http.ServeFileFS(w, r, h.files, name)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(h.index)
}

// serveGzipped sends name's gzip file, which the build compressed once at
// the highest level, rather than compressing on every request. The type is
// the original file's: sniffing would see gzip.
func (h *consoleHandler) serveGzipped(w http.ResponseWriter, r *http.Request, name string) {
	body, err := fs.ReadFile(h.files, name+".gz")
	if err != nil {
		http.ServeFileFS(w, r, h.files, name)
		return
	}
	contentType := mime.TypeByExtension(path.Ext(name))
	if contentType == "" {
		contentType = "application/octet-stream"
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Encoding", "gzip")
	// Embedded files carry no modification time; the hashed name is the version.
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(body))
}

func (h *consoleHandler) isFile(name string) bool {
	st, err := fs.Stat(h.files, name)
	return err == nil && !st.IsDir()
}

// consoleNotBuilt answers when the binary was built without the console,
// for example by a bare `go build` on a fresh clone.
type consoleNotBuilt struct{}

var errConsoleNotBuilt = errors.New("the console is not built into this binary: run `make build` (which builds console/dist) and start it again")

func (consoleNotBuilt) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = w.Write([]byte(errConsoleNotBuilt.Error() + "\n"))
}
