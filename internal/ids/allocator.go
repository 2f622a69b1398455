// Package ids owns the integer ids of the /api contract: the counters they
// are allocated from, the label that carries them on every object, and the
// cache index that finds an object by its id.
//
// Counters live in a ConfigMap per namespace and are advanced with
// optimistic concurrency (read, increment, update with the read
// resourceVersion, retry on conflict), so any number of manager replicas
// and API servers may allocate at once without a lock. A counter only
// grows: a deleted object's id is never handed out again.
//
// Within one process, concurrent allocations of the same counter are
// coalesced: while one update is in flight the others gather, and the
// next update advances the counter by as many as gathered and shares the
// ids out in arrival order. Without that, n callers in one process fought
// each other for the ConfigMap (n-1 conflicts and backoffs a round), and
// that, not the apiserver, capped task creation (issue #11, item 5).
//
// The counters of a project's configuration objects (templates,
// inventories, keys... see blockCounters) are also taken in blocks while
// they are busy: while a counter is asked again within blockLife of its
// last id, each update takes twice as many ids as the last one
// (up to MaxBlock) and this process hands the spare ones out without
// asking the apiserver. A script creating 1,000 templates then pays one
// counter update every 64 creates instead of one each (issue #22, P3).
// An occasional create still takes exactly one id. Ids stay unique across
// processes (each block is a counter update like any other) but not
// dense: the spare ids of a counter left unasked for blockLife, or held by a
// process that stops, are never handed out (a gap, as a cancelled caller
// leaves one). Task ids keep one update per batch: their order is the
// order the tasks were made in, which the task lists show.
package ids

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	// ConfigMapName is the ConfigMap that holds a namespace's counters, one
	// data key per counter, each the last id handed out.
	ConfigMapName = "bastion-ids"
	// LabelManagedBy and ManagedBy mark the counters' ConfigMap as Bastion's.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "bastion"
)

// Backoff spaces the retries of a counter update that lost a race. With n
// writers on one counter each round lets one of them win, so the budget
// must outlast dozens of rounds; jitter spreads the writers so that the
// rounds get less crowded. Under no contention the first try succeeds.
//
// Steps is the number of tries and Cap only bounds the wait between two:
// retryRaces uses it so, unlike wait.Backoff, which ends the retries once
// the wait reaches Cap. That cut the budget to 15 tries (about 3-6 s), and
// 16 API clients creating 100 tasks a second in one project lost that many
// rounds in a row: a 409 for a task start (issue #11, load test).
var Backoff = wait.Backoff{
	Duration: 5 * time.Millisecond,
	Factor:   1.5,
	Jitter:   1.0,
	Steps:    40,
	Cap:      time.Second,
}

// Allocator hands out ids from the counters.
type Allocator struct {
	// Client reads and writes the counters' ConfigMaps. It should read from
	// the apiserver, not from a cache: a stale read is safe (the update
	// conflicts and is retried) but a lagging cache would keep conflicting.
	Client client.Client

	mu sync.Mutex
	// known is the lowest value each counter is known to hold, so that
	// Reserve need not ask the apiserver for ids the counter already passed.
	known map[counterKey]int64
	// gathering is, per counter, the batch that callers of Next join while
	// the previous batch's update is in flight; flights serialises the
	// updates of one counter.
	gathering map[counterKey]*batch
	flights   map[counterKey]*sync.Mutex
	// spare is, per block counter, the block this process took last and
	// the ids of it not handed out yet.
	spare map[counterKey]*block
}

// block is a run of ids taken from a counter by one update.
type block struct {
	next, last int64     // the ids next..last are spare
	size       int64     // how many ids the update took
	used       time.Time // when the counter was last asked for an id
}

const (
	// MaxBlock bounds a block: the ids a stopping process can leave unused
	// per counter.
	MaxBlock = 64
	// blockLife is how long a counter may go unasked before its spare ids
	// are dropped, and before its next update starts again from one id.
	// Short, so that a spare id is not kept idle for long: a replica that
	// hands out an old spare id while another replica numbers objects
	// afresh makes ids out of creation order.
	blockLife = time.Second
)

// now is the clock of blocks; tests move it.
var now = time.Now

// blockCounters are the counters taken in blocks while busy: the
// configuration objects of a project, which a script may create by the
// thousand and whose order nothing shows.
var blockCounters = map[string]bool{
	CounterTemplate: true, CounterSchedule: true, CounterInventory: true, CounterEnvironment: true,
	CounterRepository: true, CounterView: true, CounterIntegration: true, CounterIntegrationAlias: true,
	CounterKey: true, CounterIntegrationMatcher: true, CounterIntegrationValue: true,
}

type counterKey struct{ namespace, counter string }

// leadTimeout bounds one batch's update, which no caller can cancel: a
// hung apiserver must not hold the counter's later batches for ever.
const leadTimeout = time.Minute

// batch is a group of Next calls served by one counter update.
type batch struct {
	size  int64
	done  chan struct{}
	first int64 // the first id of the batch, once done
	err   error
}

// Next allocates the next id of counter in namespace. The first id is 1.
//
// The caller that opens a batch leads it: it waits for the counter's
// previous update to finish (while others join), then advances the
// counter by the batch's size for everyone. Its own cancellation does not
// fail the others: the update runs detached from it and is bounded by the
// retry budget. A caller that gives up leaves a gap, which is harmless.
func (a *Allocator) Next(ctx context.Context, namespace, counter string) (int64, error) {
	key := counterKey{namespace, counter}
	a.mu.Lock()
	if a.gathering == nil {
		a.gathering, a.flights, a.spare = map[counterKey]*batch{}, map[counterKey]*sync.Mutex{}, map[counterKey]*block{}
	}
	if id, ok := a.takeSpareLocked(key); ok {
		a.mu.Unlock()
		return id, nil
	}
	b, joined := a.gathering[key]
	if !joined {
		b = &batch{done: make(chan struct{})}
		a.gathering[key] = b
	}
	index := b.size
	b.size++
	flight := a.flights[key]
	if flight == nil {
		flight = &sync.Mutex{}
		a.flights[key] = flight
	}
	a.mu.Unlock()

	if !joined {
		go a.lead(context.WithoutCancel(ctx), key, b, flight)
	}
	select {
	case <-b.done:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	if b.err != nil {
		return 0, b.err
	}
	return b.first + index, nil
}

// lead runs batch b once the counter's previous update is done, closing
// the batch to newcomers at that moment.
func (a *Allocator) lead(ctx context.Context, key counterKey, b *batch, flight *sync.Mutex) {
	ctx, cancel := context.WithTimeout(ctx, leadTimeout)
	defer cancel()
	flight.Lock()
	defer flight.Unlock()
	defer close(b.done)
	a.mu.Lock()
	if a.gathering[key] == b {
		delete(a.gathering, key)
	}
	size := b.size
	take := a.blockSizeLocked(key, size)
	a.mu.Unlock()
	last, err := a.advance(ctx, key.namespace, key.counter, func(last int64) int64 { return last + take })
	b.first, b.err = last-take+1, err
	if err == nil && blockCounters[key.counter] {
		a.mu.Lock()
		// A batch that gathered while the previous update was in flight
		// may find that update's spare ids still there: they stay, and
		// serve the next callers.
		if !a.hasSpareLocked(key) {
			a.spare[key] = &block{next: b.first + size, last: last, size: take, used: now()}
		}
		a.mu.Unlock()
	}
}

// hasSpareLocked says whether key's block is fresh and has an id left.
func (a *Allocator) hasSpareLocked(key counterKey) bool {
	sp := a.spare[key]
	return sp != nil && sp.next <= sp.last && now().Sub(sp.used) <= blockLife
}

// takeSpareLocked hands out the next spare id of key's block, if the block
// is fresh and has one.
func (a *Allocator) takeSpareLocked(key counterKey) (int64, bool) {
	if !a.hasSpareLocked(key) {
		return 0, false
	}
	sp := a.spare[key]
	sp.next++
	sp.used = now()
	return sp.next - 1, true
}

// blockSizeLocked is how many ids the next update of key takes for a batch
// of need callers: need; or, for a block counter asked within blockLife
// that has used up its block, twice that block (up to MaxBlock). At most one
// block's spare ids are kept, so a process leaves at most MaxBlock-1
// unused per counter.
func (a *Allocator) blockSizeLocked(key counterKey, need int64) int64 {
	sp := a.spare[key]
	if !blockCounters[key.counter] || sp == nil || now().Sub(sp.used) > blockLife || sp.next <= sp.last {
		return need
	}
	return max(need, min(2*sp.size, MaxBlock))
}

// Reserve makes sure counter in namespace never hands out id: objects that
// arrive with an id (restored from a backup, applied with their labels)
// keep it, and later allocations must not collide with it.
//
// Spare ids of this process's block up to id are dropped: the counter may
// have passed id because of that very block.
func (a *Allocator) Reserve(ctx context.Context, namespace, counter string, id int64) error {
	a.dropSpareUpTo(counterKey{namespace, counter}, id)
	if a.knownAtLeast(namespace, counter, id) {
		return nil
	}
	_, err := a.advance(ctx, namespace, counter, func(last int64) int64 { return max(last, id) })
	return err
}

// advance moves a counter from its last value to next(last) and returns the
// new value. It writes only when the value changes.
func (a *Allocator) advance(ctx context.Context, namespace, counter string, next func(last int64) int64) (int64, error) {
	var value int64
	err := retryRaces(ctx, func() error {
		cm := &corev1.ConfigMap{}
		err := a.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ConfigMapName}, cm)
		if apierrors.IsNotFound(err) {
			value = next(0)
			// Another writer may create it first: AlreadyExists retries
			// and then takes the update path.
			return a.Client.Create(ctx, newConfigMap(namespace, counter, value))
		}
		if err != nil {
			return err
		}
		last, err := lastValue(cm, counter)
		if err != nil {
			return err
		}
		value = next(last)
		if value == last {
			return nil
		}
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data[counter] = strconv.FormatInt(value, 10)
		// The read resourceVersion travels with the update, so a concurrent
		// writer makes this fail with a conflict instead of being overwritten.
		return a.Client.Update(ctx, cm)
	})
	if err != nil {
		return 0, fmt.Errorf("advancing id counter %q in namespace %s: %w", counter, namespace, err)
	}
	a.remember(namespace, counter, value)
	return value, nil
}

func retriable(err error) bool {
	return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err)
}

// retryRaces runs try until it succeeds, fails otherwise than by losing a
// race, Backoff.Steps tries were made, or ctx ends. The wait grows by
// Backoff.Factor up to Backoff.Cap and stays there, each with its jitter.
func retryRaces(ctx context.Context, try func() error) error {
	delay := Backoff.Duration
	for attempt := 1; ; attempt++ {
		err := try()
		if err == nil || !retriable(err) || attempt >= Backoff.Steps {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait.Jitter(delay, Backoff.Jitter)):
		}
		delay = min(time.Duration(float64(delay)*Backoff.Factor), Backoff.Cap)
	}
}

func newConfigMap(namespace, counter string, value int64) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:      ConfigMapName,
			Namespace: namespace,
			Labels:    map[string]string{LabelManagedBy: ManagedBy},
		},
		Data: map[string]string{counter: strconv.FormatInt(value, 10)},
	}
}

// lastValue reads a counter; a missing key is a counter that never counted.
// A value that is not a number is an error, never a reset: starting again
// from 0 would hand out ids that objects still carry.
func lastValue(cm *corev1.ConfigMap, counter string) (int64, error) {
	raw, ok := cm.Data[counter]
	if !ok {
		return 0, nil
	}
	last, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || last < 0 {
		return 0, fmt.Errorf("ConfigMap %s/%s: counter %q holds %q, not a count; fix it by hand to at least the highest id in use",
			cm.Namespace, cm.Name, counter, raw)
	}
	return last, nil
}

func (a *Allocator) knownAtLeast(namespace, counter string, id int64) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.known[counterKey{namespace, counter}] >= id
}

func (a *Allocator) remember(namespace, counter string, value int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.known == nil {
		a.known = map[counterKey]int64{}
	}
	key := counterKey{namespace, counter}
	a.known[key] = max(a.known[key], value)
}

func (a *Allocator) dropSpareUpTo(key counterKey, id int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if sp := a.spare[key]; sp != nil {
		sp.next = max(sp.next, id+1)
	}
}
