package store

import (
	"context"
	"fmt"
	"strings"
)

// Output is stored in chunks: one row of task_chunks (migration 8) holds a
// run of a task's lines. A row per line cost SQLite about 4 µs a line to
// insert, most of a live task's cost on the manager (docs/benchmarks.md,
// "Lines in chunks"); a chunk of a thousand lines is one row.
//
// The rules that keep a chunk cheap to reason about:
//   - A chunk holds consecutive Seqs, first_seq to last_seq, every one
//     present. A task's chunks never overlap, so a Seq is stored exactly
//     when some chunk's range holds it: a resend is recognised from the
//     ranges alone, without reading a body, and the watermark's gap search
//     walks ranges.
//   - A chunk holds at most chunkMaxLines lines, and a line is added only
//     while the body stays within chunkMaxBytes (a longer line is a chunk
//     on its own), so a page's read decodes a bounded amount.
//   - The body is a format byte, then for each line: a varint of its time
//     in microseconds, as the difference from the line before (the first
//     line's from zero); a uvarint of its length times two, plus one for a
//     stderr line; its bytes. The Seqs are implicit.
//   - stderr counts the chunk's stderr lines, so that the search for them
//     skips chunks that have none.
const (
	chunkFormat   = 1
	chunkMaxLines = 1000
	chunkMaxBytes = 256 << 10
)

// chunk is one row of task_chunks. body is a string: the lines of a page
// read from it are slices of it, one copy per chunk instead of one per line.
type chunk struct {
	first, last int64
	stderr      int
	body        string
}

// seqRange is the Seqs one stored chunk holds.
type seqRange struct{ first, last int64 }

// makeChunks cuts sorted lines of distinct Seqs into chunks.
func makeChunks(lines []Line) []chunk {
	var out []chunk
	for len(lines) > 0 {
		n, size := 1, len(lines[0].Output)
		for n < len(lines) && n < chunkMaxLines && lines[n].Seq == lines[n-1].Seq+1 && size+len(lines[n].Output) <= chunkMaxBytes {
			size += len(lines[n].Output)
			n++
		}
		out = append(out, encodeChunk(lines[:n], size))
		lines = lines[n:]
	}
	return out
}

// encodeChunk encodes a run of consecutive lines holding size bytes of text.
func encodeChunk(run []Line, size int) chunk {
	var b strings.Builder
	b.Grow(1 + size + 12*len(run))
	b.WriteByte(chunkFormat)
	c := chunk{first: run[0].Seq, last: run[len(run)-1].Seq}
	var prev int64
	for _, l := range run {
		us := micros(l.Time)
		putVarint(&b, us-prev)
		prev = us
		n := uint64(len(l.Output)) << 1
		if l.Stderr {
			n |= 1
			c.stderr++
		}
		putUvarint(&b, n)
		b.WriteString(l.Output)
	}
	c.body = b.String()
	return c
}

func putUvarint(b *strings.Builder, v uint64) {
	for v >= 0x80 {
		b.WriteByte(byte(v) | 0x80)
		v >>= 7
	}
	b.WriteByte(byte(v))
}

func putVarint(b *strings.Builder, v int64) {
	putUvarint(b, uint64(v<<1)^uint64(v>>63)) // zigzag: small negatives stay short
}

// errCorruptChunk is what reading a body that does not decode returns: a
// damaged database, never a panic.
func errCorruptChunk(c chunk, why string) error {
	return fmt.Errorf("chunk %d-%d does not decode: %s", c.first, c.last, why)
}

// eachLine calls fn with the chunk's lines whose Seq is above after, in
// order, until fn returns false. A line's Output is a slice of the body.
func (c chunk) eachLine(after int64, fn func(Line) bool) error {
	if c.last < c.first || c.body == "" || c.body[0] != chunkFormat {
		return errCorruptChunk(c, "bad header")
	}
	body := c.body[1:]
	var at int64
	// Counted, not compared: a chunk ending at the highest int64 (a Seq a
	// runner may send) would otherwise never end.
	for i, n := int64(0), c.last-c.first; i <= n; i++ {
		seq := c.first + i
		delta, ok := readUvarint(&body)
		if !ok {
			return errCorruptChunk(c, "truncated time")
		}
		at += int64(delta>>1) ^ -int64(delta&1)
		n, ok := readUvarint(&body)
		if !ok || n>>1 > uint64(len(body)) {
			return errCorruptChunk(c, "truncated line")
		}
		text := body[:n>>1]
		body = body[n>>1:]
		if seq <= after {
			continue
		}
		if !fn(Line{Seq: seq, Time: fromMicros(at), Output: text, Stderr: n&1 == 1}) {
			return nil
		}
	}
	if body != "" {
		return errCorruptChunk(c, "bytes after the last line")
	}
	return nil
}

func readUvarint(s *string) (uint64, bool) {
	var v uint64
	for i := 0; i < len(*s) && i < 10; i++ {
		b := (*s)[i]
		v |= uint64(b&0x7f) << (7 * i)
		if b < 0x80 {
			*s = (*s)[i+1:]
			return v, true
		}
	}
	return 0, false
}

// rangesFrom reads, in order, up to n ranges of a task's stored chunks
// that end at or after a Seq, inside an append's transaction.
type rangesFrom func(from int64, n int) ([]seqRange, error)

// unstored drops from sorted lines (of distinct Seqs) those a stored chunk
// holds. It asks for the one chunk ending at or after each line that the
// last answer does not settle, so its reads are bounded by the batch's
// lines, however many chunks the task has between them.
func unstored(sorted []Line, ranges rangesFrom) ([]Line, error) {
	out := sorted[:0:0]
	var r seqRange // the zero range ends before any Seq: the first line asks
	for i, l := range sorted {
		if r.last < l.Seq {
			found, err := ranges(l.Seq, 1)
			if err != nil {
				return nil, err
			}
			if len(found) == 0 {
				return append(out, sorted[i:]...), nil // nothing stored from here on
			}
			r = found[0]
		}
		if l.Seq < r.first {
			out = append(out, l)
		}
	}
	return out, nil
}

// contiguousFrom is the highest Seq reached from a stored Seq with none
// missing: the watermark's search once a batch filled a pending gap. It
// reads the chunks after seq a page at a time and stops at the first gap,
// so over a task's life each chunk is walked once, when the watermark
// passes it.
func contiguousFrom(seq int64, ranges rangesFrom) (int64, error) {
	for {
		page, err := ranges(seq+1, chunkRowsPerRead)
		if err != nil {
			return 0, err
		}
		for _, r := range page {
			if r.first > seq+1 {
				return seq, nil
			}
			seq = r.last
		}
		if len(page) < chunkRowsPerRead {
			return seq, nil
		}
	}
}

// chunkReader is what the shared read paths need of a backend: up to n
// chunks of a task, in Seq order, that hold a Seq above after (with
// stderrOnly, only chunks holding a stderr line) and, when upTo is not
// noBound, start at or below upTo.
type chunkReader interface {
	readChunks(ctx context.Context, task TaskKey, after int64, n int, stderrOnly bool, upTo int64) ([]chunk, error)
}

// noBound is readChunks' upTo for no bound on where a chunk starts. A
// bound is asked as first_seq <= upTo and, since a chunk holds at most
// chunkMaxLines Seqs, last_seq < upTo+chunkMaxLines: that keeps the read a
// range of the primary key (first_seq alone would have the database step
// through every later chunk of the task to find none).
const noBound = 0

// A read asks for few chunks first and twice as many each time it needs
// more, up to chunkRowsPerRead: a page usually ends in the first two
// chunks (the one holding its first line, and the next), and a read of
// rows it does not use costs their bodies (SQLite reads every overflow
// page of a row it steps to; PostgreSQL sends the whole result). The
// lines still wanted bound it too, since a chunk holds one line at least.
const (
	chunkRowsFirstRead = 2
	chunkRowsPerRead   = 64
)

// readLines reads up to limit lines after a Seq, skipping skip of them; a
// non-zero budget ends the page early once that many bytes are held.
//
// After the first read, a read asks only for chunks that start within the
// Seqs the page still needs (chunks hold runs of consecutive Seqs): a
// page that began in one-line chunks must not fetch up to
// chunkRowsPerRead chunks of a thousand lines each when it needs a few.
// A bounded read that comes back short has met the end of the output or
// a gap in it (lines not stored yet), and the next read, unbounded, tells
// which.
func readLines(ctx context.Context, r chunkReader, task TaskKey, after int64, skip, limit, budget int) ([]Line, error) {
	lines := []Line{}
	held, chunks := 0, 0
	upTo := int64(noBound) // the first read is not bounded
	for rows := chunkRowsFirstRead; ; rows = min(2*rows, chunkRowsPerRead) {
		// No more rows than lines still wanted (skip is capped first: an
		// offset far past the end must not overflow), nor, with a byte
		// budget, than the chunks read so far say it will take.
		want := min(rows, min(limit-len(lines), rows)+min(skip, rows))
		if budget > 0 && held > 0 {
			want = min(want, (budget-held)/max(1, held/chunks)+1)
		}
		cs, err := r.readChunks(ctx, task, after, want, false, upTo)
		if err != nil {
			return nil, err
		}
		full := false
		for _, c := range cs {
			chunks++
			err := c.eachLine(after, func(l Line) bool {
				if skip > 0 {
					skip--
					return true
				}
				lines = append(lines, l)
				held += len(l.Output)
				full = len(lines) == limit || budget > 0 && held >= budget
				return !full
			})
			if err != nil || full {
				return lines, err
			}
			after = c.last
		}
		switch {
		case len(cs) == want:
			// The Seqs still needed: those to skip, then the page's rest.
			upTo = MaxSeq
			if need := min(int64(skip), MaxSeq) + int64(limit-len(lines)); need < MaxSeq-after {
				upTo = after + need
			}
		case upTo == noBound:
			return lines, nil // want is at least 1, so an empty read ends here
		default:
			upTo = noBound
		}
	}
}

// readStderrSeqs reads the Seqs of stderr lines after a Seq: up to limit
// of them, from at most chunkRowsPerRead chunks (a long log with sparse
// stderr lines would otherwise decode thousands of chunks for one page).
// It returns where it stopped, and done once nothing is stored past there.
func readStderrSeqs(ctx context.Context, r chunkReader, task TaskKey, after int64, limit int) (seqs []int64, next int64, done bool, err error) {
	seqs = []int64{}
	read := 0
	for rows := chunkRowsFirstRead; read < chunkRowsPerRead; rows = min(2*rows, chunkRowsPerRead-read) {
		cs, err := r.readChunks(ctx, task, after, rows, true, noBound)
		if err != nil {
			return nil, after, false, err
		}
		for _, c := range cs {
			err := c.eachLine(after, func(l Line) bool {
				if l.Stderr {
					seqs = append(seqs, l.Seq)
				}
				return len(seqs) < limit
			})
			if err != nil {
				return nil, after, false, err
			}
			if len(seqs) == limit {
				return seqs, seqs[len(seqs)-1], false, nil
			}
			after = c.last
		}
		read += len(cs)
		if len(cs) < rows {
			return seqs, after, true, nil
		}
	}
	return seqs, after, false, nil
}

// taskLine is a line of task_lines, read by the migration to chunks.
type taskLine struct {
	task TaskKey
	Line
}

// linesToChunks is the migration that moved output from task_lines (a row
// a line) into task_chunks: once its SQL has made task_chunks, each
// backend copies the lines over with convertLines, then drops task_lines.
const linesToChunks = 8

// convertLinesPage is how many rows of task_lines the migration reads at a
// time, so that converting a large database holds little in memory: the
// manager takes lines of at most 64 KiB, so a page is 64 MiB at most.
const convertLinesPage = 1000

// convertLines copies task_lines into chunks. page reads the lines after a
// key in key order; store writes one task's chunks. A run of lines cut by
// a page's end becomes two chunks side by side, which is as valid as one.
func convertLines(page func(after taskLine, n int) ([]taskLine, error), store func(TaskKey, []chunk) error) error {
	var after taskLine
	for {
		rows, err := page(after, convertLinesPage)
		if err != nil {
			return fmt.Errorf("read task_lines: %w", err)
		}
		read := len(rows)
		for len(rows) > 0 {
			n := 1
			for n < len(rows) && rows[n].task == rows[0].task {
				n++
			}
			run := make([]Line, n)
			for i, r := range rows[:n] {
				run[i] = r.Line
			}
			if err := store(rows[0].task, makeChunks(run)); err != nil {
				return fmt.Errorf("write task_chunks: %w", err)
			}
			after = rows[n-1]
			rows = rows[n:]
		}
		if read < convertLinesPage {
			return nil
		}
	}
}
