package gittest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"testing"
	"time"
)

// SSHD is a real OpenSSH server on a loopback port that lets the current
// user in with the keys it was given, so that git clones over ssh://
// exactly as it would from a forge.
type SSHD struct {
	Port int
	User string
	log  string
}

// URL is the ssh:// URL of the repository at path (absolute) on this server.
func (s *SSHD) URL(path string) string {
	return fmt.Sprintf("ssh://%s@127.0.0.1:%d%s", s.User, s.Port, path)
}

// Log is what sshd has written so far (for a failing test's message).
func (s *SSHD) Log() string {
	b, _ := os.ReadFile(s.log)
	return string(b)
}

// Keygen makes an ed25519 key pair with ssh-keygen, encrypted with
// passphrase when it is not empty, and returns the private key (OpenSSH
// PEM) and the public key line.
func Keygen(t testing.TB, passphrase string) (private, public string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "id_ed25519")
	out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", passphrase, "-C", "gittest", "-f", path).CombinedOutput()
	if err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	priv, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := os.ReadFile(path + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	return string(priv), string(pub)
}

// StartSSHD starts sshd (no PAM, keys only) for the current user with the
// given authorized public keys; it stops when the test ends.
func StartSSHD(t testing.TB, authorized ...string) *SSHD {
	t.Helper()
	bin, err := exec.LookPath("sshd")
	if err != nil {
		bin = "/usr/sbin/sshd" // often outside a user's PATH
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("sshd is not installed (apt-get install openssh-server): %v", err)
	}
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	hostKey := filepath.Join(dir, "host_key")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", hostKey).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	keys := ""
	for _, k := range authorized {
		keys += k
		if len(k) > 0 && k[len(k)-1] != '\n' {
			keys += "\n"
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "authorized_keys"), []byte(keys), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	config := fmt.Sprintf("Port %d\nListenAddress 127.0.0.1\nHostKey %s\nAuthorizedKeysFile %s\nPidFile %s\n"+
		"StrictModes no\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n",
		port, hostKey, filepath.Join(dir, "authorized_keys"), filepath.Join(dir, "sshd.pid"))
	if err := os.WriteFile(filepath.Join(dir, "sshd_config"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = os.MkdirAll("/run/sshd", 0o755) // privilege separation directory, when root
	s := &SSHD{Port: port, User: me.Username, log: filepath.Join(dir, "sshd.log")}
	logFile, err := os.Create(s.log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-D", "-e", "-f", filepath.Join(dir, "sshd_config"))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); logFile.Close() })
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("sshd did not start:\n%s", s.Log())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
