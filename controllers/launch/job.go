package launch

import (
	"cmp"
	"context"
	"fmt"
	"path"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/runspec"
	"github.com/bastion-dev/bastion/internal/taskpods"
)

const (
	// LabelTask marks a Job (and so its Pod) with the name of its Task.
	LabelTask = "automation.bastion.dev/task"
	// LabelRunner and RunnerName mark every runner Job and Pod; the
	// manager caches only those.
	LabelRunner = "app.kubernetes.io/name"
	RunnerName  = "bastion-runner"
)

// JobOptions configure the Jobs a JobLauncher creates.
type JobOptions struct {
	// Images maps an app to its runner image; "" is ansible.
	Images map[bastionv1.TemplateApp]string
	// ImagePullPolicy of the runner container.
	ImagePullPolicy corev1.PullPolicy
	// ActiveDeadline bounds a run; the Job is failed after it.
	ActiveDeadline time.Duration
	// TTLAfterFinished keeps a finished Job (and its pod's log) this long.
	TTLAfterFinished time.Duration
	// StopGracePeriod is how long a gracefully stopped runner has to exit.
	StopGracePeriod time.Duration
	// Resources of the runner container (--task-cpu-request and the
	// other --task-* resource flags; the chart's tasks.resources). Limits
	// keep one task from starving the node's other pods.
	Resources corev1.ResourceRequirements
}

// DefaultJobOptions are the manager's defaults.
func DefaultJobOptions() JobOptions {
	return JobOptions{
		Images: map[bastionv1.TemplateApp]string{
			bastionv1.AppAnsible:   "bastion-runner-ansible:latest",
			bastionv1.AppTerraform: "bastion-runner-terraform:latest",
			bastionv1.AppTofu:      "bastion-runner-terraform:latest",
			bastionv1.AppBash:      "bastion-runner-bash:latest",
		},
		ImagePullPolicy:  corev1.PullIfNotPresent,
		ActiveDeadline:   6 * time.Hour,
		TTLAfterFinished: time.Hour,
		StopGracePeriod:  30 * time.Second,
		Resources:        DefaultResources(),
	}
}

// JobLauncher runs each task as a batch/v1 Job in the task's namespace.
type JobLauncher struct {
	Client  client.Client
	Options JobOptions
}

var _ Launcher = (*JobLauncher)(nil)

// runnerUID is the unprivileged user the runner images run as.
const runnerUID = 65532

// Start creates the run's Job.
func (l *JobLauncher) Start(ctx context.Context, run Run) error {
	job, err := l.BuildJob(run)
	if err != nil {
		return err
	}
	if err := l.Client.Create(ctx, job); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating job %s: %w", job.Name, err)
	}
	return nil
}

// BuildJob returns the Job for a run. It is exported for its golden test.
func (l *JobLauncher) BuildJob(run Run) (*batchv1.Job, error) {
	app := run.App
	if app == "" {
		app = bastionv1.AppAnsible
	}
	image := cmp.Or(run.Image, l.Options.Images[app])
	if image == "" {
		return nil, fmt.Errorf("no runner image is configured for app %q", app)
	}
	labels := map[string]string{
		LabelTask:                      run.Task.Name,
		LabelRunner:                    RunnerName,
		"app.kubernetes.io/managed-by": "bastion",
	}

	readOnly := int32(0o440)
	volumes := []corev1.Volume{
		secretVolume("input", run.InputSecret, readOnly),
		{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	mounts := []corev1.VolumeMount{
		{Name: "input", MountPath: runspec.InputDir, ReadOnly: true},
		{Name: "work", MountPath: runspec.WorkDir},
		{Name: "tmp", MountPath: "/tmp"},
	}
	for i, name := range run.Secrets {
		vol := fmt.Sprintf("secret-%d", i)
		volumes = append(volumes, secretVolume(vol, name, readOnly))
		mounts = append(mounts, corev1.VolumeMount{Name: vol, MountPath: path.Join(runspec.SecretsDir, name), ReadOnly: true})
	}

	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: run.Name, Namespace: run.Task.Namespace, Labels: labels},
		Spec: batchv1.JobSpec{
			// A task runs once: a retry would run a playbook twice.
			BackoffLimit:            ptr.To[int32](0),
			ActiveDeadlineSeconds:   ptr.To(int64(l.Options.ActiveDeadline.Seconds())),
			TTLSecondsAfterFinished: ptr.To(int32(l.Options.TTLAfterFinished.Seconds())),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					// The runner talks to the manager, not to the
					// Kubernetes API, unless the project chose a service
					// account the cluster admin allowed: then its token is
					// what the run is for (kubectl, helm, a cloud's
					// workload identity).
					ServiceAccountName:            run.Pod.ServiceAccountName,
					AutomountServiceAccountToken:  ptr.To(run.Pod.ServiceAccountName != ""),
					NodeSelector:                  run.Pod.NodeSelector,
					Tolerations:                   run.Pod.Tolerations,
					EnableServiceLinks:            ptr.To(false),
					TerminationGracePeriodSeconds: ptr.To(int64(l.Options.StopGracePeriod.Seconds())),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ptr.To(true),
						RunAsUser:      ptr.To[int64](runnerUID),
						RunAsGroup:     ptr.To[int64](runnerUID),
						FSGroup:        ptr.To[int64](runnerUID),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name:            "runner",
						Image:           image,
						ImagePullPolicy: l.Options.ImagePullPolicy,
						Args:            []string{"runner", "--input", runspec.InputDir, "--secrets", runspec.SecretsDir, "--work", runspec.WorkDir},
						Env: []corev1.EnvVar{
							{Name: "HOME", Value: path.Join(runspec.WorkDir, "home")},
							{Name: "TMPDIR", Value: "/tmp"},
						},
						WorkingDir:   runspec.WorkDir,
						VolumeMounts: mounts,
						Resources:    taskpods.Resources(l.Options.Resources, run.Pod.Resources),
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: ptr.To(false),
							ReadOnlyRootFilesystem:   ptr.To(true),
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
					}},
					Volumes: volumes,
				},
			},
		},
	}
	if err := controllerutil.SetControllerReference(run.Task, job, l.Client.Scheme()); err != nil {
		return nil, err
	}
	return job, nil
}

func secretVolume(name, secret string, mode int32) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: secret, DefaultMode: ptr.To(mode),
	}}}
}

// Observe maps the Job's and its Pod's status onto a run state.
func (l *JobLauncher) Observe(ctx context.Context, run Run) (State, error) {
	job := &batchv1.Job{}
	if err := l.Client.Get(ctx, client.ObjectKey{Namespace: run.Task.Namespace, Name: run.Name}, job); err != nil {
		if apierrors.IsNotFound(err) {
			return State{Phase: PhaseNotFound}, nil
		}
		return State{}, err
	}
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete, batchv1.JobSuccessCriteriaMet:
			return State{Phase: PhaseSucceeded}, nil
		case batchv1.JobFailed, batchv1.JobFailureTarget:
			return State{Phase: PhaseFailed, Reason: c.Reason, Message: c.Message}, nil
		}
	}
	if job.Status.Succeeded > 0 {
		return State{Phase: PhaseSucceeded}, nil
	}
	if job.Status.Failed > 0 {
		return State{Phase: PhaseFailed, Reason: "RunnerFailed", Message: "the runner exited with an error"}, nil
	}

	pods := &corev1.PodList{}
	if err := l.Client.List(ctx, pods, client.InNamespace(run.Task.Namespace), client.MatchingLabels{LabelTask: run.Task.Name}); err != nil {
		return State{}, err
	}
	state := State{Phase: PhasePending}
	for i := range pods.Items {
		if s := podState(&pods.Items[i]); s.Phase != PhasePending || s.Reason != "" {
			state = s
		}
	}
	return state, nil
}

// Pod waiting reasons that will not resolve by themselves: the task fails
// with the reason instead of waiting for the active deadline.
var fatalWaitingReasons = map[string]bool{
	"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true,
	"CreateContainerConfigError": true, "CreateContainerError": true,
}

func podState(pod *corev1.Pod) State {
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		return State{Phase: PhaseSucceeded}
	case corev1.PodFailed:
		return State{Phase: PhaseFailed, Reason: nonEmpty(pod.Status.Reason, "RunnerFailed"), Message: nonEmpty(pod.Status.Message, "the runner pod failed")}
	case corev1.PodRunning:
		return State{Phase: PhaseRunning}
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && fatalWaitingReasons[w.Reason] {
			return State{Phase: PhaseFailed, Reason: w.Reason, Message: fmt.Sprintf("the runner cannot start: %s: %s", w.Reason, w.Message)}
		}
	}
	return State{Phase: PhasePending}
}

func nonEmpty(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

// Stop deletes the Job with its pods: with a grace period (SIGTERM first)
// or, with force, at once.
func (l *JobLauncher) Stop(ctx context.Context, run Run, force bool) error {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: run.Task.Namespace, Name: run.Name}}
	opts := []client.DeleteOption{client.PropagationPolicy(metav1.DeletePropagationBackground)}
	if force {
		opts = append(opts, client.GracePeriodSeconds(0))
	}
	if err := l.Client.Delete(ctx, job, opts...); client.IgnoreNotFound(err) != nil {
		return err
	}
	// The pods go with the Job through the garbage collector; delete them
	// too so a stop takes effect where no collector runs.
	podOpts := []client.DeleteAllOfOption{client.InNamespace(run.Task.Namespace), client.MatchingLabels{LabelTask: run.Task.Name}}
	if force {
		podOpts = append(podOpts, client.GracePeriodSeconds(0))
	}
	return client.IgnoreNotFound(l.Client.DeleteAllOf(ctx, &corev1.Pod{}, podOpts...))
}

// Release leaves the Job to its TTL, so its log stays readable for a while.
func (l *JobLauncher) Release(context.Context, Run) error { return nil }
