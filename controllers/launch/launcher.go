// Package launch starts and watches task runs. Two launchers implement one
// interface: JobLauncher runs a batch/v1 Job in the project's namespace;
// LocalLauncher runs `bastion runner` as a child process, for `bastion dev`
// and the end-to-end tests on machines without a kubelet. Both hand the
// runner the same inputs (see internal/runspec).
package launch

import (
	"context"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// Run identifies one run of a task and what it needs.
type Run struct {
	// Task is the task being run.
	Task *bastionv1.Task
	// App selects the runner image (ansible when empty).
	App bastionv1.TemplateApp
	// Name of the run: the Job's name, unique per task.
	Name string
	// InputSecret names the Secret with the task's runspec files.
	InputSecret string
	// Input is that Secret's data when the reconciler has just made it,
	// so that a launcher that copies it (LocalLauncher) need not read it
	// back from the apiserver; nil: the launcher reads the Secret. It
	// holds the runner's token: a Run is never logged.
	Input map[string][]byte
	// Secrets names every other Secret the task needs (keys, the
	// environment's secret), and only those.
	Secrets []string
	// Pod is where the run's pod goes and with what: the project's task
	// pod settings merged with the template's (taskpods.Merge), checked
	// against the cluster admin's lists. A LocalLauncher has no pod and
	// ignores them.
	Pod bastionv1.TaskPodSettings
	// Image is the image Pod.RunnerImage names; "" is the app's image.
	Image string
}

// Phase is the state of a run as the launcher sees it.
type Phase string

// Run phases.
const (
	// PhaseNotFound: the launcher has no such run (never started, or gone).
	PhaseNotFound Phase = "NotFound"
	// PhasePending: created but not yet running (scheduling, image pull).
	PhasePending Phase = "Pending"
	// PhaseRunning: the runner process is running.
	PhaseRunning Phase = "Running"
	// PhaseSucceeded: the runner exited 0.
	PhaseSucceeded Phase = "Succeeded"
	// PhaseFailed: the runner failed, or the run could not start; Reason
	// and Message say why.
	PhaseFailed Phase = "Failed"
)

// State is a run's observed state.
type State struct {
	Phase   Phase
	Reason  string
	Message string
}

// Launcher starts, observes and stops runs.
type Launcher interface {
	// Start starts the run. Starting a run that exists is not an error.
	Start(ctx context.Context, run Run) error
	// Observe reports the run's state.
	Observe(ctx context.Context, run Run) (State, error)
	// Stop ends the run: gracefully (the runner gets SIGTERM and a grace
	// period) or, with force, at once.
	Stop(ctx context.Context, run Run, force bool) error
	// Release frees what the run held once the task is finished (local
	// files; a Job is left for its TTL so `kubectl logs` still works).
	Release(ctx context.Context, run Run) error
}
