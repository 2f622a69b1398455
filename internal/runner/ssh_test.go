package runner

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bastion-dev/bastion/internal/gitremote/gittest"
	"github.com/bastion-dev/bastion/internal/runspec"
)

// sshServer is a real sshd on a loopback port, accepting one client key.
type sshServer struct {
	port int
	user string
}

func keygen(t *testing.T, dir, name, passphrase string) (private, public string) {
	t.Helper()
	path := filepath.Join(dir, name)
	out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", passphrase, "-C", name, "-f", path).CombinedOutput()
	if err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	priv, _ := os.ReadFile(path)
	pub, _ := os.ReadFile(path + ".pub")
	return string(priv), string(pub)
}

func startSSHD(t *testing.T, authorized ...string) *sshServer {
	t.Helper()
	sshd, err := exec.LookPath("sshd")
	if err != nil {
		sshd = "/usr/sbin/sshd"
	}
	if _, err := os.Stat(sshd); err != nil {
		t.Fatalf("sshd is not installed (apt-get install openssh-server): %v", err)
	}
	dir := t.TempDir()
	hostKey, _ := keygen(t, dir, "host_key", "")
	_ = hostKey
	if err := os.WriteFile(filepath.Join(dir, "authorized_keys"), []byte(strings.Join(authorized, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	config := fmt.Sprintf(`Port %d
ListenAddress 127.0.0.1
HostKey %s
AuthorizedKeysFile %s
PidFile %s
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
`, port, filepath.Join(dir, "host_key"), filepath.Join(dir, "authorized_keys"), filepath.Join(dir, "sshd.pid"))
	if err := os.WriteFile(filepath.Join(dir, "sshd_config"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = os.MkdirAll("/run/sshd", 0o755) // privilege separation, when root
	cmd := exec.Command(sshd, "-D", "-e", "-f", filepath.Join(dir, "sshd_config"))
	logFile, _ := os.Create(filepath.Join(dir, "sshd.log"))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); logFile.Close() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "sshd.log"))
			t.Fatalf("sshd did not start:\n%s", log)
		}
		time.Sleep(20 * time.Millisecond)
	}
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	return &sshServer{port: port, user: u.Username}
}

func TestRun_clonesOverSSHWithAKeyAndFailsClearlyWithAWrongOne(t *testing.T) {
	keys := t.TempDir()
	goodKey, goodPub := keygen(t, keys, "good", "")
	lockedKey, lockedPub := keygen(t, keys, "locked", "open sesame")
	wrongKey, _ := keygen(t, keys, "wrong", "")
	server := startSSHD(t, goodPub, lockedPub)

	repo := gittest.NewRepo(t)
	repo.WriteFile("run.sh", echoArgs, true)
	url := fmt.Sprintf("ssh://%s@127.0.0.1:%d%s", server.user, server.port, repo.Path)
	spec := runspec.Spec{App: "bash", Playbook: "run.sh", Arguments: []string{"over-ssh"},
		Repository: runspec.Repository{URL: url, Branch: gittest.Branch, Key: &runspec.KeyRef{Secret: "deploy", Type: "ssh"}}}

	t.Run("the right key", func(t *testing.T) {
		res, out := runTask(t, newInputs(t, spec, map[string]map[string]string{"deploy": {"ssh-privatekey": goodKey}}))
		if !res.Succeeded() || !contains(out, "arg:over-ssh") {
			t.Fatalf("%+v\n%s", res, strings.Join(out, "\n"))
		}
	})
	t.Run("a key with a passphrase", func(t *testing.T) {
		secrets := map[string]map[string]string{"deploy": {"ssh-privatekey": lockedKey, "passphrase": "open sesame"}}
		if res, out := runTask(t, newInputs(t, spec, secrets)); !res.Succeeded() || !contains(out, "arg:over-ssh") {
			t.Fatalf("%+v\n%s", res, strings.Join(out, "\n"))
		}
		secrets["deploy"]["passphrase"] = "wrong"
		if res, _ := runTask(t, newInputs(t, spec, secrets)); res.Err == nil || !strings.Contains(res.Err.Error(), "passphrase does not open") {
			t.Fatalf("wrong passphrase: %+v", res)
		}
	})
	t.Run("a wrong key", func(t *testing.T) {
		res, out := runTask(t, newInputs(t, spec, map[string]map[string]string{"deploy": {"ssh-privatekey": wrongKey}}))
		if res.Err == nil || !strings.Contains(res.Err.Error(), "git clone") {
			t.Fatalf("%+v", res)
		}
		joined := strings.Join(out, "\n") + res.Err.Error()
		if !strings.Contains(joined, "Permission denied") {
			t.Fatalf("the output does not say why:\n%s", joined)
		}
		for _, line := range strings.Split(wrongKey, "\n") {
			if len(line) > 8 && !strings.HasPrefix(line, "-----") && strings.Contains(joined, line) {
				t.Fatalf("key material reached the output: %q", line)
			}
		}
	})
}
