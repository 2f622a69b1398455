package runner

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// maxLine bounds one stored line; a longer one is split, never dropped.
const maxLine = 1 << 20

// drainGrace is how long output is still read after the process exited,
// for descendants that keep the pipe open (a daemon a script started).
const drainGrace = 10 * time.Second

// Sink receives each output line as it is read.
type Sink interface {
	Line(at time.Time, text string)
}

// process is one program to run: argv only, never a shell.
type process struct {
	path string
	args []string
	dir  string
	env  []string
}

// run runs p with stdout and stderr on one pipe and hands every line to
// sink. It returns only after the last byte the process wrote was read:
// waiting for the process and then closing the pipe, as the obvious code
// does, loses whatever was still in the pipe when the process exited
// (Semaphore loses up to 79% of a fast script's output that way).
func run(ctx context.Context, p process, sink Sink) (exitCode int, err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return -1, err
	}
	defer r.Close()
	cmd := exec.Command(p.path, p.args...)
	cmd.Dir, cmd.Env = p.dir, p.env
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = w, w
	// Its own group, so a stop reaches what it forks; and if the runner
	// itself is killed, the kernel kills the program too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = w.Close()
		return -1, fmt.Errorf("starting %s: %w", p.path, unwrapExec(err))
	}
	// Only the child holds the write end now: EOF comes when it (and every
	// descendant that inherited it) is gone.
	_ = w.Close()

	read := make(chan error, 1)
	go func() { read <- readLines(r, sink) }()

	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	var waitErr error
	select {
	case waitErr = <-waited:
	case <-ctx.Done():
		stopGroup(cmd.Process.Pid, waited)
		waitErr = ctx.Err()
	}

	select {
	case err := <-read:
		if err != nil {
			return -1, fmt.Errorf("reading the output: %w", err)
		}
	case <-time.After(drainGrace):
		// A descendant holds the pipe: kill the group, keep what was read.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = r.Close()
		<-read
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

// readLines splits r into lines (without the line ending) and stamps each
// with the time it was read. A last line without a newline counts too.
func readLines(r io.Reader, sink Sink) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readLine(br)
		if len(line) > 0 || (err == nil) {
			sink.Line(time.Now(), line)
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
