package alert

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/bastion-dev/bastion/internal/store"
)

// Store is what the dispatcher reads and writes in the output store: the
// output's last lines for the email, and an event when an alert fails.
type Store interface {
	LastSeq(ctx context.Context, task store.TaskKey) (int64, error)
	Lines(ctx context.Context, task store.TaskKey, offset, limit int) ([]store.Line, error)
	AddEvent(ctx context.Context, e store.Event) (int64, error)
}

// Config configures a Dispatcher. Zero durations and sizes take the
// defaults in brackets.
type Config struct {
	// PublicURL is where users reach the console; links start with it.
	PublicURL string
	Rules     Rules
	// The senders; nil ones are off.
	SMTP     *SMTP
	Telegram *Telegram
	Webhook  *Webhook

	Store Store
	Log   logr.Logger

	QueueSize  int           // alerts waiting per sender [100]
	Workers    int           // alerts sent at once per sender [2]
	Attempts   int           // tries per alert [5]
	Backoff    time.Duration // wait before the first retry, doubled each time [10s]
	MaxBackoff time.Duration // longest wait between tries [5m]
	Timeout    time.Duration // one try [30s]
}

// sender delivers one message to one destination of its kind.
type sender interface {
	kind() string
	// label names a destination in a failure event ("alert to … failed").
	label(to string) string
	send(ctx context.Context, to string, m message) error
}

// message is an alert rendered for every kind of sender.
type message struct{ Subject, Body, Chat string }

// letter is the alert of one task, rendered once (on its first try, by a
// worker, so the reconciler never waits for the output store) and shared
// by every destination.
type letter struct {
	task Task
	once sync.Once
	msg  message
}

// job is one letter to one destination.
type job struct {
	letter *letter
	to     string
}

type queue struct {
	sender sender
	jobs   chan job
}

// Dispatcher queues and sends alerts. Notify never blocks: each sender
// has a bounded queue, and an alert that finds its queue full is dropped
// with a warning. Workers retry with exponential backoff; an alert that
// still fails is recorded as a project event.
type Dispatcher struct {
	cfg   Config
	email *queue
	chats []*queue
}

// Check reports what is wrong with the senders' settings, so a command
// can refuse bad flags before it starts anything.
func (cfg Config) Check() error {
	if cfg.SMTP != nil {
		if err := cfg.SMTP.validate(); err != nil {
			return err
		}
	}
	if cfg.Telegram != nil && !cfg.Telegram.Token.Set() {
		return errors.New("Telegram: a bot token file is required")
	}
	if cfg.Webhook != nil && !cfg.Webhook.URL.Set() {
		return errors.New("chat webhook: a URL file is required")
	}
	return nil
}

// New checks the configuration and makes a Dispatcher; it sends nothing
// until Start.
func New(cfg Config) (*Dispatcher, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	if cfg.Store == nil {
		return nil, errors.New("alerts need the output store")
	}
	cfg.QueueSize = orDefault(cfg.QueueSize, 100)
	cfg.Workers = orDefault(cfg.Workers, 2)
	cfg.Attempts = orDefault(cfg.Attempts, 5)
	cfg.Backoff = orDefault(cfg.Backoff, 10*time.Second)
	cfg.MaxBackoff = orDefault(cfg.MaxBackoff, 5*time.Minute)
	cfg.Timeout = orDefault(cfg.Timeout, 30*time.Second)
	d := &Dispatcher{cfg: cfg}
	newQueue := func(s sender) *queue { return &queue{sender: s, jobs: make(chan job, cfg.QueueSize)} }
	if cfg.SMTP != nil {
		d.email = newQueue(&smtpSender{cfg: *cfg.SMTP})
	}
	if cfg.Telegram != nil {
		d.chats = append(d.chats, newQueue(&telegramSender{cfg: *cfg.Telegram}))
	}
	if cfg.Webhook != nil {
		d.chats = append(d.chats, newQueue(&webhookSender{cfg: *cfg.Webhook}))
	}
	return d, nil
}

// Enabled reports whether any sender is configured.
func (cfg Config) Enabled() bool { return cfg.SMTP != nil || cfg.Telegram != nil || cfg.Webhook != nil }

func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// delivery is one destination of a task's alert, on its sender's queue.
type delivery struct {
	q  *queue
	to string
}

// deliveries are the destinations a finished task calls for, given the
// senders this manager has.
func (d *Dispatcher) deliveries(t Task) []delivery {
	plan := Decide(t, d.cfg.Rules)
	var out []delivery
	if d.email != nil {
		for _, e := range plan.Emails {
			out = append(out, delivery{d.email, e})
		}
	}
	if plan.Chat != "" {
		for _, q := range d.chats {
			out = append(out, delivery{q, plan.Chat})
		}
	}
	return out
}

// Wants reports whether the task calls for any alert at all, so the
// caller can skip marking tasks that send nothing.
func (d *Dispatcher) Wants(t Task) bool { return len(d.deliveries(t)) > 0 }

// Notify queues the alerts of a finished task and returns at once.
func (d *Dispatcher) Notify(t Task) {
	l := &letter{task: t}
	for _, j := range d.deliveries(t) {
		select {
		case j.q.jobs <- job{letter: l, to: j.to}:
		default:
			d.cfg.Log.Info("alert queue full; alert dropped", "kind", j.q.sender.kind(),
				"project", t.ProjectID, "task", t.TaskID, "queueSize", d.cfg.QueueSize)
		}
	}
}

// Start runs the workers until ctx ends (a controller-runtime Runnable).
// Alerts still queued then are lost; see docs/architecture.md.
func (d *Dispatcher) Start(ctx context.Context) error {
	var wg sync.WaitGroup
	for _, q := range append([]*queue{d.email}, d.chats...) {
		if q == nil {
			continue
		}
		for range d.cfg.Workers {
			wg.Go(func() { d.work(ctx, q) })
		}
	}
	wg.Wait()
	return nil
}

// NeedLeaderElection is false: alerts are queued where tasks finish, on
// the leader, and must drain there; a replica that queued none idles.
func (d *Dispatcher) NeedLeaderElection() bool { return false }

func (d *Dispatcher) work(ctx context.Context, q *queue) {
	for {
		select {
		case <-ctx.Done():
			return
		case j := <-q.jobs:
			d.deliver(ctx, q.sender, j)
		}
	}
}

// deliver tries a job until it succeeds or its tries run out.
func (d *Dispatcher) deliver(ctx context.Context, s sender, j job) {
	j.letter.once.Do(func() { j.letter.msg = d.render(ctx, j.letter.task) })
	t := j.letter.task
	log := d.cfg.Log.WithValues("kind", s.kind(), "project", t.ProjectID, "task", t.TaskID)
	wait := d.cfg.Backoff
	for attempt := 1; ; attempt++ {
		tryCtx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
		err := s.send(tryCtx, j.to, j.letter.msg)
		cancel()
		if err == nil {
			log.V(1).Info("alert sent", "attempt", attempt)
			return
		}
		if ctx.Err() != nil {
			log.Info("manager stopping; alert not sent", "reason", err.Error())
			return
		}
		if attempt >= d.cfg.Attempts {
			d.failed(ctx, s, j, attempt, err)
			return
		}
		log.Info("alert failed; retrying", "attempt", attempt, "retryIn", wait.String(), "reason", err.Error())
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, d.cfg.MaxBackoff)
	}
}

// failed records the failure as a project event, which the project's
// activity list shows. Senders scrub their errors of secrets.
func (d *Dispatcher) failed(ctx context.Context, s sender, j job, attempts int, err error) {
	t := j.letter.task
	description := fmt.Sprintf("alert to %s failed: %s", s.label(j.to), err.Error())
	d.cfg.Log.Info("alert failed after retries", "kind", s.kind(), "project", t.ProjectID, "task", t.TaskID,
		"attempts", attempts, "reason", err.Error())
	_, addErr := d.cfg.Store.AddEvent(ctx, store.Event{
		ProjectID: t.ProjectID, ProjectName: t.ProjectName,
		ObjectType: "task", ObjectID: t.TaskID, ObjectName: t.TemplateName,
		Description: description,
	})
	if addErr != nil {
		d.cfg.Log.Error(addErr, "recording a failed alert", "project", t.ProjectID, "task", t.TaskID)
	}
}

// render builds the message of a task, with the last lines of its output.
func (d *Dispatcher) render(ctx context.Context, t Task) message {
	if t.Status == StatusWaitingApproval {
		// Nothing ran yet: there is no output to read.
		return message{Subject: Subject(t), Body: EmailBody(t, nil, d.cfg.PublicURL), Chat: ChatText(t, d.cfg.PublicURL)}
	}
	tail, err := d.tail(ctx, store.TaskKey{ProjectID: t.ProjectID, TaskID: t.TaskID})
	if err != nil {
		d.cfg.Log.Error(err, "reading the output for an alert", "project", t.ProjectID, "task", t.TaskID)
		tail = []string{"(the output could not be read: " + err.Error() + ")"}
	}
	return message{Subject: Subject(t), Body: EmailBody(t, tail, d.cfg.PublicURL), Chat: ChatText(t, d.cfg.PublicURL)}
}

// tail is the last TailLines lines of a task's output, each cut to a
// length a mail reader shows.
func (d *Dispatcher) tail(ctx context.Context, key store.TaskKey) ([]string, error) {
	last, err := d.cfg.Store.LastSeq(ctx, key)
	if err != nil {
		return nil, err
	}
	// Lines beyond a gap (rare: a runner that died mid-resend) are stored
	// after the watermark, so read on past it and keep the end.
	lines, err := d.cfg.Store.Lines(ctx, key, int(max(0, last-TailLines)), 10*TailLines)
	if err != nil {
		return nil, err
	}
	lines = lines[max(0, len(lines)-TailLines):]
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = cut(ansi.ReplaceAllString(l.Output, ""), 500)
	}
	return out, nil
}

// ansi matches terminal colour and cursor codes (ansible and terraform
// colour their output), which a mail reader would show as garbage.
var ansi = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
