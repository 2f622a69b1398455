package apiserver

import (
	"errors"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

// consoleHandler serves the single-page console: files as they are, assets
// with long cache lifetimes (their names carry a content hash), and
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
