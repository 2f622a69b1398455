package runproto

import (
	"encoding/json"
	"strconv"

	"github.com/bastion-dev/bastion/internal/jsonw"
)

// AppendJSON appends the batch's JSON to dst: the bytes json.Marshal
// writes, with the lines written by hand (package jsonw). A runner sends
// a fast program's output at thousands of lines a second, and json.Marshal
// spent 40 % of the runner's CPU on them, checking each line's time again
// after time.Time wrote it (docs/benchmarks.md, "The output path").
func (b Batch) AppendJSON(dst []byte) ([]byte, error) {
	rest := b
	rest.Lines = nil
	tail, err := json.Marshal(rest) // {"phase":…,"commit":…,"exit":…}, or {}
	if err != nil || len(b.Lines) == 0 {
		return append(dst, tail...), err
	}
	dst = append(dst, `{"lines":[`...)
	for i, l := range b.Lines {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = l.appendJSON(dst); err != nil {
			return dst, err
		}
	}
	dst = append(dst, ']')
	if len(tail) > len("{}") {
		return append(append(dst, ','), tail[1:]...), nil
	}
	return append(dst, '}'), nil
}

// appendJSON appends the line as json.Marshal writes it; a time that
// jsonw declines goes through json.Marshal, for its bytes or its error.
func (l Line) appendJSON(dst []byte) ([]byte, error) {
	start := len(dst)
	dst = append(dst, `{"seq":`...)
	dst = strconv.AppendInt(dst, l.Seq, 10)
	dst = append(dst, `,"time":`...)
	dst, ok := jsonw.AppendTime(dst, l.Time)
	if !ok {
		data, err := json.Marshal(l)
		return append(dst[:start], data...), err
	}
	dst = append(dst, `,"output":`...)
	dst = jsonw.AppendString(dst, l.Output)
	if l.Stream != "" {
		dst = append(dst, `,"stream":`...)
		dst = jsonw.AppendString(dst, l.Stream)
	}
	return append(dst, '}'), nil
}
