package demorepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// wantCommit is the demo commit's hash. It changes only when the embedded
// files do: update it then, and never otherwise (a task's history names
// the commit it ran).
const wantCommit = "7e3417dd451ce9a8ec22cbefc3af0fab3b4cb1a3"

// serve starts a Server on a free loopback port and returns its address.
func serve(t *testing.T, s *Server) string {
	t.Helper()
	if s.Repo == nil {
		repo, err := Build()
		if err != nil {
			t.Fatal(err)
		}
		s.Repo = repo
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve returned %v", err)
		}
	})
	return ln.Addr().String()
}

// git runs the git from PATH with no user or system configuration, in C
// messages, and returns its combined output.
func git(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(t)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func gitEnv(t *testing.T) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LC_ALL=C",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0",
	}
}

func TestRepository_commitHashIsStable(t *testing.T) {
	a, err := Build()
	if err != nil {
		t.Fatal(err)
	}
	b, err := Build()
	if err != nil {
		t.Fatal(err)
	}
	if a.Commit != b.Commit || !bytes.Equal(a.pack, b.pack) {
		t.Fatalf("two builds differ: %s and %s", a.Commit, b.Commit)
	}
	if a.Commit != wantCommit {
		t.Fatalf("commit %s, want %s (did the embedded files change? then update wantCommit)", a.Commit, wantCommit)
	}

	// git itself, committing the same files as the same author at the same
	// time, makes the same commit.
	dir := t.TempDir()
	err = fs.WalkDir(Files(), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(Files(), name)
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if fileMode(name) == "100755" {
			mode = 0o755
		}
		return os.WriteFile(filepath.Join(dir, name), data, mode)
	})
	if err != nil {
		t.Fatal(err)
	}
	date := "@1735689600 +0000"
	for _, args := range [][]string{
		{"init", "--quiet", "--initial-branch=" + Branch},
		{"add", "--all"},
		{"-c", "user.name=Bastion", "-c", "user.email=demo@bastion.dev", "commit", "--quiet", "-m", "Bastion demo project"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(gitEnv(t), "GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if out, _ := git(t, dir, "rev-parse", "HEAD"); strings.TrimSpace(out) != wantCommit {
		t.Fatalf("git made commit %s from the same files, Build made %s", strings.TrimSpace(out), wantCommit)
	}
}

// A real `git clone git://…/demo.git` gets every embedded file byte for
// byte, scripts executable, on main, at the pinned commit, and git's
// strictest check finds nothing wrong with the objects.
func TestServer_cloneGetsEveryFileByteForByte(t *testing.T) {
	addr := serve(t, &Server{})
	dir := filepath.Join(t.TempDir(), "clone")
	if out, err := git(t, "", "clone", "git://"+addr+Path, dir); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}

	want := map[string]bool{}
	err := fs.WalkDir(Files(), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		want[name] = true
		embedded, err := fs.ReadFile(Files(), name)
		if err != nil {
			return err
		}
		cloned, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		if !bytes.Equal(embedded, cloned) {
			return fmt.Errorf("%s differs:\n%s\nwant:\n%s", name, cloned, embedded)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(want) < 5 {
		t.Fatalf("only %d embedded files: %v", len(want), want)
	}
	tracked, _ := git(t, dir, "ls-files", "-s")
	for _, line := range strings.Split(strings.TrimSpace(tracked), "\n") {
		fields := strings.Fields(line) // mode id stage path
		if !want[fields[3]] {
			t.Errorf("the clone has %s, which is not embedded", fields[3])
		}
		if wantMode := fileMode(fields[3]); fields[0] != wantMode {
			t.Errorf("%s has mode %s, want %s", fields[3], fields[0], wantMode)
		}
	}
	if strings.Count(tracked, "\n") != len(want) {
		t.Errorf("the clone tracks:\n%swant the %d embedded files", tracked, len(want))
	}

	for args, want := range map[string]string{
		"rev-parse HEAD":                 wantCommit,
		"rev-parse --abbrev-ref HEAD":    Branch,
		"rev-parse origin/main":          wantCommit,
		"log -1 --format=%an|%ae|%at|%s": "Bastion|demo@bastion.dev|1735689600|Bastion demo project",
	} {
		out, err := git(t, dir, strings.Fields(args)...)
		if err != nil || strings.TrimSpace(out) != want {
			t.Errorf("git %s = %q (%v), want %q", args, strings.TrimSpace(out), err, want)
		}
	}
	if out, err := git(t, dir, "fsck", "--strict", "--full"); err != nil || strings.TrimSpace(out) != "" {
		t.Fatalf("git fsck --strict: %v\n%s", err, out)
	}
}

// git asks a git:// server for protocol version 2 in the request line's
// extra parameters; the server answers version 0 and git falls back.
func TestServer_cloneThatAsksForProtocolV2FallsBackToV0(t *testing.T) {
	addr := serve(t, &Server{})
	dir := filepath.Join(t.TempDir(), "clone")
	trace := filepath.Join(t.TempDir(), "trace")
	cmd := exec.Command("git", "-c", "protocol.version=2", "clone", "--branch", Branch, "git://"+addr+Path, dir)
	cmd.Env = append(gitEnv(t), "GIT_TRACE_PACKET="+trace)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	sent, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(sent, []byte("version=2")) {
		t.Fatalf("git did not ask for version 2; the test proves nothing:\n%s", sent)
	}
	if out, _ := git(t, dir, "rev-parse", "HEAD"); strings.TrimSpace(out) != wantCommit {
		t.Fatalf("HEAD is %q", out)
	}
}

// ls-remote (which sends no wants) and a fetch into an up-to-date clone
// end cleanly.
func TestServer_listsRefsAndFetchesNothingNew(t *testing.T) {
	addr := serve(t, &Server{})
	out, err := git(t, "", "ls-remote", "--symref", "git://"+addr+Path)
	want := fmt.Sprintf("ref: refs/heads/main\tHEAD\n%s\tHEAD\n%s\trefs/heads/main\n", wantCommit, wantCommit)
	if err != nil || out != want {
		t.Fatalf("ls-remote = %v\n%s\nwant:\n%s", err, out, want)
	}
	dir := filepath.Join(t.TempDir(), "clone")
	if out, err := git(t, "", "clone", "git://"+addr+Path, dir); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	if out, err := git(t, dir, "fetch", "origin"); err != nil {
		t.Fatalf("git fetch: %v\n%s", err, out)
	}
}

func TestServer_refusesOtherPathsAndPushes(t *testing.T) {
	addr := serve(t, &Server{})
	out, err := git(t, "", "clone", "git://"+addr+"/other.git", filepath.Join(t.TempDir(), "clone"))
	if err == nil || !strings.Contains(out, `fatal: remote error: no repository at "/other.git": this server has only /demo.git`) {
		t.Fatalf("clone of another path: %v\n%s", err, out)
	}

	dir := filepath.Join(t.TempDir(), "clone")
	if out, err := git(t, "", "clone", "git://"+addr+Path, dir); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	out, err = git(t, dir, "push", "origin", "HEAD:refs/heads/other")
	if err == nil || !strings.Contains(out, "remote error: git-receive-pack is not served: the demo repository can only be cloned and fetched") {
		t.Fatalf("push: %v\n%s", err, out)
	}
}

// talk sends what to a raw connection and returns everything the server
// answered until it closed the connection, and how long that took.
func talk(t *testing.T, addr, what string, limit time.Duration) (string, time.Duration) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	_ = conn.SetDeadline(start.Add(limit))
	if what != "" {
		if _, err := io.WriteString(conn, what); err != nil {
			t.Fatal(err)
		}
	}
	got, err := io.ReadAll(conn)
	if err != nil {
		t.Fatalf("the server did not close the connection within %s: %v (read %q)", limit, err, got)
	}
	return string(got), time.Since(start)
}

func pkt(line string) string { return fmt.Sprintf("%04x%s", len(line)+4, line) }

const request = "git-upload-pack /demo.git\x00host=127.0.0.1\x00"

func TestServer_cutsOffSilentSlowAndHostileClients(t *testing.T) {
	s := &Server{IdleTimeout: 300 * time.Millisecond, MaxDuration: 1500 * time.Millisecond}
	addr := serve(t, s)

	t.Run("silent", func(t *testing.T) {
		got, took := talk(t, addr, "", 5*time.Second)
		if got != pkt("ERR timed out waiting for the client\n") || took > 2*time.Second {
			t.Fatalf("after %s: %q", took, got)
		}
	})
	t.Run("garbage", func(t *testing.T) {
		got, _ := talk(t, addr, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 5*time.Second)
		if got != pkt("ERR not a git request: a line must start with four hex digits giving its length\n") {
			t.Fatalf("%q", got)
		}
	})
	t.Run("a line too long", func(t *testing.T) {
		got, _ := talk(t, addr, "fff0"+strings.Repeat("x", 100), 5*time.Second)
		if got != pkt("ERR a line of 65516 bytes is longer than the 1024 this server reads\n") {
			t.Fatalf("%q", got)
		}
	})
	t.Run("a request too large", func(t *testing.T) {
		repo, _ := Build()
		var flood strings.Builder
		flood.WriteString(pkt(request))
		flood.WriteString(pkt("want " + repo.Commit + "\n"))
		flood.WriteString("0000")
		for flood.Len() < maxRequest+1000 {
			flood.WriteString(pkt("have " + strings.Repeat("1", 40) + "\n"))
		}
		got, _ := talk(t, addr, flood.String(), 5*time.Second)
		if !strings.HasSuffix(got, pkt("ERR the request is larger than 64 KiB\n")) {
			t.Fatalf("%q", got)
		}
	})
	t.Run("a client that trickles", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		start := time.Now()
		// One byte every 100ms keeps each read under the idle timeout;
		// the conversation's limit cuts it off all the same.
		trickle := pkt(request)
		var writeErr error
		for i := 0; writeErr == nil && time.Since(start) < 5*time.Second; i++ {
			_ = conn.SetWriteDeadline(time.Now().Add(time.Second))
			_, writeErr = conn.Write([]byte{trickle[i%len(trickle)]})
			if writeErr == nil {
				_ = conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
				var one [1]byte
				if _, err := conn.Read(one[:]); err != nil && !isTimeout(err) {
					writeErr = err // closed (or an ERR arrived): cut off
				}
			}
		}
		if took := time.Since(start); writeErr == nil || took < s.MaxDuration || took > s.MaxDuration+time.Second {
			t.Fatalf("trickling client: %v after %s, want cut at %s", writeErr, took, s.MaxDuration)
		}
	})
	t.Run("a bad want", func(t *testing.T) {
		got, _ := talk(t, addr, pkt(request)+pkt("want "+strings.Repeat("a", 40)+" agent=x\n")+"0000", 5*time.Second)
		if !strings.HasSuffix(got, pkt("ERR upload-pack: not our ref "+strings.Repeat("a", 40)+"\n")) {
			t.Fatalf("%q", got)
		}
	})
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Beyond MaxConns a client is refused at once, not queued; ending Serve's
// context closes the connections still open.
func TestServer_refusesClientsBeyondTheLimitAndStopsCleanly(t *testing.T) {
	repo, err := Build()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Repo: repo, MaxConns: 1}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	defer cancel()

	// The first client reads the advertisement, so it holds the one slot.
	first, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	_ = first.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(first, pkt(request)); err != nil {
		t.Fatal(err)
	}
	advert := make([]byte, len(pkt(repo.Commit+" HEAD\x00"+capabilities+"\n")))
	if _, err := io.ReadFull(first, advert); err != nil || !strings.Contains(string(advert), repo.Commit+" HEAD") {
		t.Fatalf("advertisement %q: %v", advert, err)
	}

	got, _ := talk(t, ln.Addr().String(), pkt(request), 5*time.Second)
	if got != pkt("ERR too many connections to the demo repository; try again\n") {
		t.Fatalf("second client got %q", got)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve returned %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
	if rest, err := io.ReadAll(first); err != nil || !strings.HasSuffix(string(rest), "0000") {
		t.Fatalf("the first client was not closed cleanly: %q %v", rest, err)
	}
}

// The negotiation git uses when a fetching client has commits of its own
// (without multi_ack): NAK each flush until a common commit, ACK the first
// one, and after done send the pack with no further NAK.
func TestServer_negotiatesHavesAsUploadPackDoes(t *testing.T) {
	addr := serve(t, &Server{})
	repo, _ := Build()
	advert := pkt(repo.Commit+" HEAD\x00"+capabilities+"\n") + pkt(repo.Commit+" refs/heads/main\n") + "0000"
	unknown := strings.Repeat("b", 40)
	got, _ := talk(t, addr, pkt(request)+pkt("want "+repo.Commit+" agent=test\n")+"0000"+
		pkt("have "+unknown+"\n")+"0000"+
		pkt("have "+repo.Commit+"\n")+pkt("have "+repo.Commit+"\n")+"0000"+
		pkt("done\n"), 5*time.Second)
	want := advert + pkt("NAK\n") + pkt("ACK "+repo.Commit+"\n") + string(repo.pack)
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}
