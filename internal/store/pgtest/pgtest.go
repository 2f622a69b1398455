// Package pgtest runs a throwaway PostgreSQL server for tests: the Debian
// binaries (apt-get install postgresql), a cluster in a temp dir, listening
// on 127.0.0.1 on a free port and nowhere else. Fault tests stop, kill and
// restart it; the data survives until Close.
//
// PostgreSQL refuses to run as root, so when the tests run as root the
// server runs as the user postgres (or nobody) and the temp dir is given to
// it. The server gets SIGKILL if the test binary dies, so a crashed test
// run leaves no server behind.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bastion-dev/bastion/internal/testport"
)

// Server is one PostgreSQL cluster. Its methods are not safe for concurrent
// use; a test package drives it from TestMain and one test at a time.
type Server struct {
	dir, bin string
	port     int
	cred     *syscall.Credential // nil unless running as root
	cmd      *exec.Cmd
	exited   chan struct{}
	dbs      atomic.Int64
}

// startTimeout bounds how long a start may take before the test fails with
// the server's log.
const startTimeout = 60 * time.Second

// Start creates a cluster in a new temp dir and starts it.
func Start() (*Server, error) {
	bin, err := findBin()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "bastion-pg-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	s := &Server{dir: dir, bin: bin}
	if err := s.init(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// The free port is found by binding and closing it, so another process
	// may take it before the server binds; a few tries make that harmless.
	for try := 1; ; try++ {
		err = s.start()
		if err == nil {
			return s, nil
		}
		if try == 3 || !strings.Contains(err.Error(), "could not bind") {
			os.RemoveAll(dir)
			return nil, err
		}
		s.port = 0
	}
}

// BinDirEnv names a directory holding initdb and postgres, for machines
// where they are neither in $PATH nor where Debian puts them.
const BinDirEnv = "PGTEST_BIN_DIR"

var errNotInstalled = errors.New("pgtest: PostgreSQL binaries (initdb, postgres) not found in $" + BinDirEnv +
	", $PATH or /usr/lib/postgresql/*/bin: run `apt-get install postgresql` (.ci/run installs it)")

// findBin finds the directory holding initdb and postgres: $PGTEST_BIN_DIR
// if set, else $PATH, else Debian's /usr/lib/postgresql/<version>/bin,
// newest version first.
func findBin() (string, error) {
	if d := os.Getenv(BinDirEnv); d != "" {
		for _, name := range []string{"initdb", "postgres"} {
			if _, err := os.Stat(filepath.Join(d, name)); err != nil {
				return "", fmt.Errorf("%w (%s)", errNotInstalled, err)
			}
		}
		return d, nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if _, err := os.Stat(filepath.Join(filepath.Dir(p), "postgres")); err == nil {
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "postgres")); err == nil {
			return d, nil
		}
	}
	return "", errNotInstalled
}

func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

// init runs initdb as the user the server will run as, without syncing:
// the cluster is thrown away, and tests should not wait on disks.
func (s *Server) init() error {
	if os.Geteuid() == 0 {
		cred, err := unprivileged()
		if err != nil {
			return err
		}
		s.cred = cred
		if err := os.Chown(s.dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return fmt.Errorf("pgtest: give %s to the server's user: %w", s.dir, err)
		}
	}
	out, err := s.command("initdb", "-D", s.dataDir(), "-U", "postgres", "--auth=trust",
		"--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions").CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	return nil
}

// unprivileged picks the user to run PostgreSQL as when the tests are root.
func unprivileged() (*syscall.Credential, error) {
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.ParseUint(u.Uid, 10, 32)
		gid, _ := strconv.ParseUint(u.Gid, 10, 32)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, errors.New("pgtest: running as root and neither user postgres nor nobody exists to run PostgreSQL as")
}

func (s *Server) dataDir() string { return filepath.Join(s.dir, "data") }
func (s *Server) logPath() string { return filepath.Join(s.dir, "postgres.log") }

func (s *Server) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(s.bin, name), args...)
	cmd.Dir = s.dir // the unprivileged user may not be able to enter ours
	cmd.Env = []string{"PATH=" + s.bin + ":/usr/bin:/bin", "LC_ALL=C", "TZ=UTC"}
	// Pdeathsig: if the test binary dies (a panic, a timeout, kill -9), the
	// kernel kills the postmaster, and its backends exit when they see it
	// gone. Go sets it after switching user, so the switch does not clear it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Pdeathsig: syscall.SIGKILL}
	return cmd
}

// start runs the server in the foreground of a child process (not pg_ctl,
// which would detach it) and waits until it accepts connections.
func (s *Server) start() error {
	if s.port == 0 {
		port, err := freePort()
		if err != nil {
			return err
		}
		s.port = port
	}
	logFile, err := os.OpenFile(s.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	defer logFile.Close()
	cmd := s.command("postgres", "-D", s.dataDir(),
		"-c", "listen_addresses=127.0.0.1", "-p", strconv.Itoa(s.port),
		// TCP only: a socket path longer than 107 bytes (a long $TMPDIR)
		// would stop the server, and no client here needs a socket.
		"-c", "unix_socket_directories=",
		// fsync and full-page writes guard against an OS crash, which no
		// test causes. synchronous_commit stays on: with it off, a killed
		// server loses commits it already acknowledged, and fault tests
		// kill the server to prove acknowledged lines survive.
		"-c", "fsync=off", "-c", "full_page_writes=off",
		"-c", "max_connections=300")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgtest: start postgres: %w", err)
	}
	s.cmd, s.exited = cmd, make(chan struct{})
	go func() { cmd.Wait(); close(s.exited) }()
	if err := s.waitReady(); err != nil {
		s.kill()
		s.cmd = nil
		return err
	}
	return nil
}

// waitReady polls with a deadline: a server starting is an external
// process, and connecting is the only way to know it is ready.
func (s *Server) waitReady() error {
	deadline := time.Now().Add(startTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, s.DSN())
		cancel()
		if err == nil {
			conn.Close(context.Background())
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("pgtest: postgres exited while starting: %s\n%s", s.cmd.ProcessState, s.logTail())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pgtest: postgres not ready after %s: %v\n%s", startTimeout, err, s.logTail())
		}
	}
}

// freePort is a port for postgres to bind, which it does a while later:
// testport keeps it out of the range where the kernel hands out ports to
// the other tests' listeners and connections meanwhile.
func freePort() (int, error) {
	return testport.Free()
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(s.logPath())
	if len(b) > 4096 {
		b = b[len(b)-4096:]
	}
	return string(b)
}

// DSN is the URL of the server's postgres database.
func (s *Server) DSN() string { return s.dsn("postgres") }

func (s *Server) dsn(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

// Port is the TCP port the server listens on; it stays the same across
// restarts.
func (s *Server) Port() int { return s.port }

// NewDatabase creates an empty database for one test and returns its DSN,
// so tests sharing the server never see each other's rows.
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("test_%d", s.dbs.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.DSN())
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	return s.dsn(name)
}

// Stop shuts the server down (fast shutdown: sessions are ended, the
// postmaster waits for its children, the data is kept) and waits for it to
// exit. Stopping a stopped server is a no-op.
func (s *Server) Stop() error {
	if s.cmd == nil {
		return nil
	}
	defer func() { s.cmd = nil }()
	select {
	case <-s.exited:
		return fmt.Errorf("pgtest: postgres had exited on its own (%s)\n%s", s.cmd.ProcessState, s.logTail())
	default:
	}
	if err := s.cmd.Process.Signal(syscall.SIGINT); err != nil {
		return fmt.Errorf("pgtest: stop postgres: %w\n%s", err, s.logTail())
	}
	select {
	case <-s.exited:
		return nil
	case <-time.After(30 * time.Second):
		err := s.kill()
		return errors.Join(fmt.Errorf("pgtest: postgres did not stop within 30s; killed\n%s", s.logTail()), err)
	}
}

// Kill ends the server with SIGKILL, as a crash would, and returns once
// none of its processes runs; the next start runs crash recovery.
func (s *Server) Kill() error {
	defer func() { s.cmd = nil }()
	return s.kill()
}

// Freeze stops the postmaster and its children (SIGSTOP): a server that
// no longer answers, its connections still open, as when its host hangs
// or a network drops packets. thaw lets them go on.
func (s *Server) Freeze() (thaw func()) {
	pm := s.cmd.Process.Pid
	syscall.Kill(pm, syscall.SIGSTOP) // first, so that it forks no child while they are listed
	kids := children(pm)
	for _, pid := range kids {
		syscall.Kill(pid, syscall.SIGSTOP)
	}
	return func() {
		for _, pid := range kids {
			syscall.Kill(pid, syscall.SIGCONT)
		}
		syscall.Kill(pm, syscall.SIGCONT)
	}
}

// kill kills the postmaster and its children. PostgreSQL gives every child
// a session of its own, so a signal to the postmaster's process group would
// miss them, and a child left running keeps the shared memory that a
// restart needs. The postmaster is frozen first so that it cannot fork
// while its children are listed.
func (s *Server) kill() error {
	if s.cmd == nil {
		return nil
	}
	pm := s.cmd.Process.Pid
	syscall.Kill(pm, syscall.SIGSTOP)
	kids := children(pm)
	s.cmd.Process.Kill()
	for _, pid := range kids {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	<-s.exited
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range kids {
		for running(pid) {
			if time.Now().After(deadline) {
				return fmt.Errorf("pgtest: postgres process %d still running 10s after SIGKILL", pid)
			}
			<-time.After(10 * time.Millisecond) // polling external processes with a deadline
		}
	}
	return nil
}

// procStat returns the fields of /proc/<pid>/stat after the command name
// (state, ppid, …); the name may hold spaces and parentheses.
func procStat(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil // gone
	}
	return strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
}

func children(ppid int) []int {
	var out []int
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		if f := procStat(p); len(f) >= 2 && f[1] == strconv.Itoa(ppid) {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			out = append(out, pid)
		}
	}
	return out
}

// running is false for a zombie: an orphan that died waits for init to
// reap it, and in a container that may take a while, yet it holds nothing.
func running(pid int) bool {
	f := procStat(fmt.Sprintf("/proc/%d/stat", pid))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// Restart stops the server if it runs and starts it again on the same port
// with the same data.
func (s *Server) Restart() error {
	if err := s.Stop(); err != nil {
		return err
	}
	return s.start()
}

// Close stops the server and removes its directory.
func (s *Server) Close() error {
	err := s.Stop()
	if rmErr := os.RemoveAll(s.dir); rmErr != nil && err == nil {
		err = fmt.Errorf("pgtest: %w", rmErr)
	}
	return err
}

// String says where the server is, for test logs.
func (s *Server) String() string {
	return strings.Join([]string{"postgres", s.bin, s.dir, strconv.Itoa(s.port)}, " ")
}
