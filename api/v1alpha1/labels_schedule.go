package v1alpha1

// Labels on Tasks that a Schedule starts.
const (
	// LabelTemplate marks a Task with the name of the Template it runs, so
	// that a template's tasks can be listed by label.
	LabelTemplate = "automation.bastion.dev/template"
	// LabelTaskSecrets marks a Secret the API wrote with one task's secret
	// answers: the task reconciler deletes it when the run ends.
	LabelTaskSecrets = "automation.bastion.dev/task-secrets"
)

// Reasons of a Schedule's Ready condition, which says what the last
// reconcile made of the spec, or how the last run went. The same words are
// the reasons of the Events a Schedule records.
const (
	// ReasonInvalidCron (False): the cron format does not parse; the message
	// is the parser's, starting with "Cron: ".
	ReasonInvalidCron = "InvalidCron"
	// ReasonInactive (True): spec.active is false, so the schedule never fires.
	ReasonInactive = "Inactive"
	// ReasonScheduled (True): the schedule waits for status.nextRunTime.
	ReasonScheduled = "Scheduled"
	// ReasonTaskCreated (True): the last run created status.lastTask.
	ReasonTaskCreated = "TaskCreated"
	// ReasonNoNewCommit (True): the last run was skipped, because the
	// branch head was still status.lastCommit (runOnlyOnNewCommit).
	ReasonNoNewCommit = "NoNewCommit"
	// ReasonGitError (False): the last run was skipped, because the branch
	// head could not be read; the message says why.
	ReasonGitError = "GitError"
	// ReasonRunFailed (False): the last run created no task, because its
	// template or repository is missing or the create failed.
	ReasonRunFailed = "RunFailed"
)
