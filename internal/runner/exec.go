package runner

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// maxLine bounds one stored line; a longer one is split, never dropped.
const maxLine = 1 << 20

// drainGrace is how long output is still read after the process exited,
// for descendants that keep a pipe open (a daemon a script started).
const drainGrace = 10 * time.Second

// Sink receives each output line as it is read. Line is for stdout and
// for the runner's own lines (git's progress included: it is no failure of
// the task); StderrLine only for what the task's program wrote to its
// stderr, which the console's "First failure" jumps to.
type Sink interface {
	Line(at time.Time, text string)
	StderrLine(at time.Time, text string)
}

// process is one program to run: argv only, never a shell.
type process struct {
	path string
	args []string
	dir  string
	env  []string
	// program says this is the task's own program (ansible, bash,
	// terraform...): its stderr lines are flagged. Git's are not.
	program bool
}

// run runs p with stdout and stderr on two pipes and hands every line to
// sink. It returns only after the last byte the process wrote to either
// was read: waiting for the process and then closing the pipes, as the
// obvious code does, loses whatever was still in them when the process
// exited (Semaphore loses up to 79% of a fast script's output that way).
//
// Each pipe has its own reader and line buffer, so a partial line on one
// is never glued to the other's bytes. One lock stamps and hands on each
// line: lines reach the sink (which numbers them) in the order the runner
// read them. Within a stream that is the order written; across the two it
// is the order of arrival, which can differ from the order the program
// wrote them (docs/architecture.md, "Which stream a line came from").
func run(ctx context.Context, p process, sink Sink) (exitCode int, err error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return -1, err
	}
	defer outR.Close()
	errR, errW, err := os.Pipe()
	if err != nil {
		_ = outW.Close()
		return -1, err
	}
	defer errR.Close()
	cmd := exec.Command(p.path, p.args...)
	cmd.Dir, cmd.Env = p.dir, p.env
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = outW, errW
	// Its own group, so a stop reaches what it forks; and if the runner
	// itself is killed, the kernel kills the program too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	startErr := cmd.Start()
	// Only the child holds the write ends now: EOF comes when it (and every
	// descendant that inherited them) is gone.
	_, _ = outW.Close(), errW.Close()
	if startErr != nil {
		return -1, fmt.Errorf("starting %s: %w", p.path, unwrapExec(startErr))
	}

	var order sync.Mutex
	stderrLine := sink.Line
	if p.program {
		stderrLine = sink.StderrLine
	}
	read := make(chan error, 2)
	go func() { read <- readLines(outR, &order, sink.Line) }()
	go func() { read <- readLines(errR, &order, stderrLine) }()

	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	var waitErr error
	select {
	case waitErr = <-waited:
	case <-ctx.Done():
		stopGroup(cmd.Process.Pid, waited)
		waitErr = ctx.Err()
	}

	if err := drain(read, cmd.Process.Pid, outR, errR); err != nil {
		return -1, fmt.Errorf("reading the output: %w", err)
	}

	if ctx.Err() != nil {
		return -1, ctx.Err()
	}
	var exit *exec.ExitError
	switch {
	case waitErr == nil:
		return 0, nil
	case errors.As(waitErr, &exit):
		return exit.ExitCode(), nil
	default:
		return -1, waitErr
	}
}

// drain waits for both readers to reach EOF. If a descendant still holds a
// pipe after drainGrace, it kills the group and keeps what was read.
func drain(read <-chan error, pid int, pipes ...*os.File) error {
	var first error
	grace := time.NewTimer(drainGrace)
	defer grace.Stop()
	for pending := len(pipes); pending > 0; pending-- {
		select {
		case err := <-read:
			first = cmp.Or(first, err)
		case <-grace.C:
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			for _, r := range pipes {
				_ = r.Close()
			}
			for ; pending > 0; pending-- {
				first = cmp.Or(first, <-read)
			}
			return first
		}
	}
	return first
}

// stopGroup asks the program's group to end, then makes it.
func stopGroup(pid int, waited <-chan error) {
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-waited
	}
}

// readLines splits r into lines (without the line ending) and hands each
// to emit with the time it was read, under order. A last line without a
// newline counts too.
func readLines(r io.Reader, order *sync.Mutex, emit func(at time.Time, text string)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readLine(br)
		if len(line) > 0 || (err == nil) {
			order.Lock()
			emit(time.Now(), line)
			order.Unlock()
		}
		if errors.Is(err, io.EOF) || errors.Is(err, os.ErrClosed) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// readLine reads up to a newline or maxLine bytes.
func readLine(br *bufio.Reader) (string, error) {
	chunk, err := br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return trimEOL(chunk), err // the usual line: one copy, into its string
	}
	buf := append([]byte(nil), chunk...)
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		switch {
		case err == nil:
			return trimEOL(buf), nil
		case errors.Is(err, bufio.ErrBufferFull):
			if len(buf) >= maxLine {
				return string(buf), nil
			}
		default:
			return trimEOL(buf), err
		}
	}
}

func trimEOL(b []byte) string {
	n := len(b)
	if n > 0 && b[n-1] == '\n' {
		n--
		if n > 0 && b[n-1] == '\r' {
			n--
		}
	}
	return string(b[:n])
}

func unwrapExec(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
