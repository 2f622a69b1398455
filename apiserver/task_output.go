package apiserver

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/bastion-dev/bastion/internal/jsonw"
	"github.com/bastion-dev/bastion/internal/store"
)

// outputJSON is one line of a task's output (api-contract.md, "task
// output"). task is the name of the playbook task Semaphore's clients
// expect; Bastion does not split output by playbook task, so it is "".
type outputJSON struct {
	TaskID int64     `json:"task_id"`
	Task   string    `json:"task"`
	Time   time.Time `json:"time"`
	Output string    `json:"output"`
	// Stream is "stderr" on a line the program wrote to its stderr, and
	// absent on every other, which keeps Semaphore's shape.
	Stream string `json:"stream,omitempty"`
}

// appendOutputJSON appends one record of /output to b: the bytes
// json.Marshal gives for the line's outputJSON, written without reflection
// (package jsonw says why). A time json.Marshal would refuse goes through
// json.Marshal itself, for its error.
func appendOutputJSON(b []byte, taskID int64, l store.Line) ([]byte, error) {
	start := len(b)
	b = append(b, `{"task_id":`...)
	b = strconv.AppendInt(b, taskID, 10)
	b = append(b, `,"task":"","time":`...)
	b, ok := jsonw.AppendTime(b, l.Time)
	if !ok {
		data, err := json.Marshal(outputJSON{TaskID: taskID, Time: l.Time, Output: l.Output, Stream: l.Stream()})
		return append(b[:start], data...), err
	}
	b = append(b, `,"output":`...)
	b = jsonw.AppendString(b, l.Output)
	if l.Stderr {
		b = append(b, `,"stream":"stderr"`...)
	}
	return append(b, '}'), nil
}

// maxOutputPage bounds ?limit= of /output: a page is held in memory,
// unlike the whole log, which is streamed.
const maxOutputPage = 10000

// outputPage is how many lines each read of an ?offset= stream brings.
const outputPage = 1000

// taskOutput serves GET tasks/{id}/output: the lines in order, all of
// them unless ?offset= and ?limit= ask for a page. The whole log is
// streamed from the store to the client, never held in memory.
func (s *Server) taskOutput(w http.ResponseWriter, r *http.Request) {
	offset, limit, err := outputQuery(r)
	if err != nil {
		failErr(w, r, err)
		return
	}
	key := s.taskKey(r)
	out := &lineWriter{w: w, contentType: "application/json; charset=utf-8", open: "[", close: "]\n"}
	write := func(l store.Line) error {
		return out.write(func(b *bufio.Writer) error {
			if out.lines > 0 {
				b.WriteByte(',')
			}
			data, err := appendOutputJSON(b.AvailableBuffer(), key.TaskID, l)
			if err == nil {
				_, err = b.Write(data)
			}
			return err
		})
	}
	s.streamOutput(w, r, key, offset, limit, out, write)
}

// taskRaw serves GET tasks/{id}/raw: the output as a text file, each line
// byte for byte and ended by a newline, streamed.
func (s *Server) taskRaw(w http.ResponseWriter, r *http.Request) {
	key := s.taskKey(r)
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="task-%d.log"`, key.TaskID))
	out := &lineWriter{w: w, contentType: "text/plain; charset=utf-8"}
	write := func(l store.Line) error {
		return out.write(func(b *bufio.Writer) error {
			b.WriteString(l.Output)
			return b.WriteByte('\n')
		})
	}
	s.streamOutput(w, r, key, 0, 0, out, write)
}

// taskStderr serves GET tasks/{id}/stderr: the numbers of the lines the
// task's program wrote to its stderr (1 is the first line of /raw), in
// order, as a JSON array, streamed. The console reads a long log as plain
// text (/raw, which stays plain text) and marks these lines with it.
func (s *Server) taskStderr(w http.ResponseWriter, r *http.Request) {
	key := s.taskKey(r)
	out := &lineWriter{w: w, contentType: "application/json; charset=utf-8", open: "[", close: "]\n"}
	err := s.opts.Store.StderrSeqs(r.Context(), key, func(seqs []int64) error {
		return out.write(func(b *bufio.Writer) error {
			for i, seq := range seqs {
				if out.lines > 0 || i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(strconv.FormatInt(seq, 10))
			}
			return nil
		})
	})
	endStream(w, r, key, out, err)
}

func (s *Server) taskKey(r *http.Request) store.TaskKey {
	return store.TaskKey{ProjectID: projectOf(r).id, TaskID: taskOf(r).id}
}

// streamOutput feeds write the lines asked for: a page (limit > 0), the
// lines from offset on, or the whole log.
func (s *Server) streamOutput(w http.ResponseWriter, r *http.Request, key store.TaskKey, offset, limit int, out *lineWriter, write func(store.Line) error) {
	ctx := r.Context()
	var err error
	switch {
	case limit > 0:
		var lines []store.Line
		if lines, err = s.opts.Store.Lines(ctx, key, offset, limit); err == nil {
			for _, l := range lines {
				if err = write(l); err != nil {
					break
				}
			}
		}
	case offset > 0:
		for {
			var lines []store.Line
			if lines, err = s.opts.Store.Lines(ctx, key, offset, outputPage); err != nil {
				break
			}
			for _, l := range lines {
				if err = write(l); err != nil {
					break
				}
			}
			if err != nil || len(lines) < outputPage {
				break
			}
			offset += len(lines)
		}
	default:
		err = s.opts.Store.StreamLines(ctx, key, write)
	}
	endStream(w, r, key, out, err)
}

// endStream ends a streamed answer: an error before it began is an error
// answer; one after it began cuts it short, which the client sees as
// broken JSON or a short file.
func endStream(w http.ResponseWriter, r *http.Request, key store.TaskKey, out *lineWriter, err error) {
	if err != nil && !out.started {
		failErr(w, r, err)
		return
	}
	if err != nil {
		logAPI().Error(err, "streaming task output", "project", key.ProjectID, "task", key.TaskID)
		return
	}
	out.finish()
}

// outputQuery reads ?offset= and ?limit=; limit 0 means all lines.
func outputQuery(r *http.Request) (offset, limit int, err error) {
	q := r.URL.Query()
	if raw := q.Get("offset"); raw != "" {
		if offset, err = strconv.Atoi(raw); err != nil || offset < 0 {
			return 0, 0, invalidf("offset must be a whole number of 0 or more, not %q", raw)
		}
	}
	if raw := q.Get("limit"); raw != "" {
		if limit, err = strconv.Atoi(raw); err != nil || limit < 1 || limit > maxOutputPage {
			return 0, 0, invalidf("limit must be a whole number from 1 to %d, not %q", maxOutputPage, raw)
		}
	}
	return offset, limit, nil
}

// lineWriter writes a streamed answer through a buffer. The status and
// headers go out with the first line (or at the end), so an error before
// any line is still a proper error answer.
type lineWriter struct {
	w           http.ResponseWriter
	b           *bufio.Writer
	contentType string
	open, close string
	started     bool
	lines       int
}

func (o *lineWriter) start() {
	if o.started {
		return
	}
	o.started = true
	o.w.Header().Set("Content-Type", o.contentType)
	o.w.WriteHeader(http.StatusOK)
	o.b = bufio.NewWriterSize(o.w, 64<<10)
	o.b.WriteString(o.open)
}

func (o *lineWriter) write(fn func(*bufio.Writer) error) error {
	o.start()
	if err := fn(o.b); err != nil {
		return err
	}
	o.lines++
	return nil
}

func (o *lineWriter) finish() {
	o.start()
	o.b.WriteString(o.close)
	if err := o.b.Flush(); err != nil {
		logAPI().V(1).Info("client went away during an output download", "error", err.Error())
	}
}
