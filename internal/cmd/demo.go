package cmd

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/bastion-dev/bastion/internal/demorepo"
)

// The manager serves the demo repository (internal/demorepo) on a listener
// of its own, over git://, and demo projects clone it from there. Its URL
// is made from the host that runners already use to reach the manager (the
// runner URL) and the listener's port, unless --demo-repo-url says
// otherwise (a Service that maps the port, a different name).

// listenDemoRepo binds the demo repository's address; "" serves nothing.
func listenDemoRepo(addr string) (net.Listener, error) {
	if addr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s for the demo repository: %w (choose another address with --demo-repo-listen, or \"\" to turn it off)", addr, unwrapSyscall(err))
	}
	return ln, nil
}

// demoRepoURL is git://<host of runnerURL>:<port of ln>/demo.git.
func demoRepoURL(runnerURL string, ln net.Listener) (string, error) {
	u, err := url.Parse(runnerURL)
	if err != nil || u.Hostname() == "" {
		return "", fmt.Errorf("cannot tell the demo repository's host from the runner URL %q; set --demo-repo-url", runnerURL)
	}
	return demorepo.URL(u.Hostname(), ln.Addr().(*net.TCPAddr).Port), nil
}

// demoRepoPortFile keeps the port `bastion dev` served the demo repository
// on, in the data dir.
const demoRepoPortFile = "demo-repo-port"

// listenDevDemoRepo binds the demo repository for `bastion dev`. An
// address, or "" (off), is taken as the manager takes it. "auto", the
// default, serves on the API's host: on the port of the last run when it
// is free, else on a free port, which it remembers. Demo projects keep
// their repository's URL in etcd, which outlives a restart; a port drawn
// anew on every start would leave them pointing at nothing.
func listenDevDemoRepo(addr, dataDir string, api net.Listener, stderr io.Writer) (net.Listener, error) {
	if addr != "auto" {
		return listenDemoRepo(addr)
	}
	host := api.Addr().(*net.TCPAddr).IP.String()
	file := filepath.Join(dataDir, demoRepoPortFile)
	if data, err := os.ReadFile(file); err == nil {
		port, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err == nil && port > 0 && port < 65536 {
			ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
			if err == nil {
				return ln, nil
			}
			fmt.Fprintf(stderr, "warning: port %d of the demo repository is taken (%v); serving it on another port. "+
				"Demo projects made before will fail to clone until their repository's URL is changed.\n", port, unwrapSyscall(err))
		}
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s for the demo repository: %w", host, unwrapSyscall(err))
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if err := os.WriteFile(file, []byte(strconv.Itoa(port)+"\n"), 0o600); err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("remembering the demo repository's port: %w", err)
	}
	return ln, nil
}

// demoRepoServer runs the demo repository on every replica, leader or
// not: the repository is the same bytes everywhere, so a Service may send
// a clone to any of them.
type demoRepoServer struct {
	ln  net.Listener
	srv *demorepo.Server
}

func newDemoRepoServer(ln net.Listener) (*demoRepoServer, error) {
	repo, err := demorepo.Build()
	if err != nil {
		return nil, fmt.Errorf("building the demo repository: %w", err)
	}
	return &demoRepoServer{ln: ln, srv: &demorepo.Server{Repo: repo, Log: ctrl.Log.WithName("demo-repo")}}, nil
}

// addDemoRepo serves the demo repository on opts.DemoRepo and fills in
// opts.DemoRepoURL unless it was given.
func addDemoRepo(mgr ctrl.Manager, runnerURL string, opts *managerOptions) error {
	srv, err := newDemoRepoServer(opts.DemoRepo)
	if err != nil {
		return err
	}
	if opts.DemoRepoURL == "" {
		if opts.DemoRepoURL, err = demoRepoURL(runnerURL, opts.DemoRepo); err != nil {
			return err
		}
	}
	return mgr.Add(srv)
}

func (d *demoRepoServer) NeedLeaderElection() bool { return false }

func (d *demoRepoServer) Start(ctx context.Context) error { return d.srv.Serve(ctx, d.ln) }

var _ manager.LeaderElectionRunnable = &demoRepoServer{}
