// Command benchapi measures Bastion through /api as a script would, on a
// `bastion dev` of its own (issue #22, docs/benchmarks.md):
//
//   - P1: 20 bash tasks of ~20 ms posted at once: time until all have
//     started, and until all have ended;
//   - P2: one bash task printing 200,000 lines: time from POST /tasks until
//     GET .../output holds every line, in order;
//   - P3: 1,000 templates created one after another by one client, then
//     GET templates on 4 connections;
//   - P3 floor: as many templates created straight through the
//     kube-apiserver, as kubectl would (after P3, whose templates it copies);
//   - P5: bastion dev's own memory (the manager's) after the runs.
//
// It is a benchmark, not a test: it prints figures. `make bench-api` runs it.
// The dev server is stopped at the end, on failure and on Ctrl-C.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

func main() {
	bin := flag.String("bastion", "bin/bastion", "the bastion binary to run as `bastion dev`")
	reps := flag.Int("reps", 3, "repetitions of P1 and P2")
	tasks := flag.Int("p1-tasks", 20, "P1: tasks posted at once")
	lines := flag.Int("p2-lines", 200000, "P2: lines the task prints")
	templates := flag.Int("p3-templates", 1000, "P3: templates created one after another")
	reads := flag.Int("p3-reads", 4000, "P3: GET templates requests, over 4 connections")
	only := flag.String("only", "p1,p2,p3,p3floor", "which measures to run, comma-separated")
	keep := flag.Bool("keep", false, "keep the temporary directory (data dir, dev log) for inspection")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *bin, *keep, plan{only: *only, reps: *reps, tasks: *tasks, lines: *lines, templates: *templates, reads: *reads}); err != nil {
		fmt.Fprintln(os.Stderr, "bench-api:", err)
		os.Exit(1)
	}
}

type plan struct {
	only                                 string
	reps, tasks, lines, templates, reads int
}

func run(ctx context.Context, bin string, keep bool, p plan) (err error) {
	tmp, err := os.MkdirTemp("", "bench-api-")
	if err != nil {
		return err
	}
	// Runs may be other users (bastion dev as root runs each as its own
	// user): they must pass through this directory to the repository,
	// never list it; the data dir stays the server's own (0700).
	if err := os.Chmod(tmp, 0o711); err != nil {
		return err
	}
	if keep {
		fmt.Printf("temporary directory kept: %s\n", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	repo, err := makeRepo(filepath.Join(tmp, "repo"), p.lines)
	if err != nil {
		return fmt.Errorf("making the git repository: %w", err)
	}
	dev, err := startDev(ctx, bin, filepath.Join(tmp, "data"))
	if err != nil {
		return err
	}
	defer func() {
		if stopErr := dev.stop(); stopErr != nil && err == nil {
			err = stopErr
		}
	}()
	fmt.Printf("bastion dev at %s (data dir %s)\n", dev.url, dev.dataDir)

	api, err := signIn(ctx, dev.url, "admin", dev.password)
	if err != nil {
		return err
	}
	// P3 has a project of its own, so that its list holds exactly its
	// templates.
	proj, err := api.newLocalProject(ctx, "bench-api", repo)
	if err != nil {
		return err
	}
	proj3, err := api.newLocalProject(ctx, "bench-api-p3", repo)
	if err != nil {
		return err
	}
	steps := map[string]func() error{
		"p1": func() error {
			return benchStarts(ctx, api, proj, p.reps, p.tasks, dev.cpu, func(ctx context.Context) (map[string]float64, error) {
				return apiserverRequests(ctx, filepath.Join(dev.dataDir, "kubeconfig"))
			})
		},
		"p2": func() error { return benchOutput(ctx, api, proj, p.reps, p.lines, dev.cpu) },
		"p3": func() error { return benchTemplates(ctx, api, proj3, p.templates, p.reads, dev.cpu) },
		"p3floor": func() error {
			return benchFloor(ctx, filepath.Join(dev.dataDir, "kubeconfig"), p.templates, dev.cpu)
		},
	}
	for _, name := range []string{"p1", "p2", "p3", "p3floor"} {
		if !slices.Contains(strings.Split(p.only, ","), name) {
			continue
		}
		if err := steps[name](); err != nil {
			if ctx.Err() != nil {
				return errors.New("interrupted")
			}
			return err
		}
	}
	// P5: the manager runs inside bastion dev's own process (its etcd and
	// kube-apiserver are processes of their own, not counted).
	if rss := rssMiB(dev.cmd.Process.Pid); rss > 0 {
		fmt.Printf("\nP5: bastion dev's own memory after the runs above (the manager; RSS): %.0f MiB\n", rss)
	}
	return nil
}
