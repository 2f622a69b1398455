package watchretry

import (
	"context"
	"errors"
	"net"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
)

// refused is a real "connection refused": a dial to a port that was just
// closed.
func refused(t *testing.T) error {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c, err := net.Dial("tcp", addr)
	if err == nil {
		c.Close()
		t.Fatal("dialled a closed port")
	}
	return err
}

// answers is a ListerWatcher whose calls fail with errs in turn, then
// succeed; calls counts them.
type answers struct {
	errs  []error
	calls int
}

func (a *answers) next() error {
	a.calls++
	if a.calls <= len(a.errs) {
		return a.errs[a.calls-1]
	}
	return nil
}

func (a *answers) List(metav1.ListOptions) (runtime.Object, error) {
	if err := a.next(); err != nil {
		return nil, err
	}
	return &corev1.PodList{}, nil
}

func (a *answers) Watch(metav1.ListOptions) (watch.Interface, error) {
	if err := a.next(); err != nil {
		return nil, err
	}
	return watch.NewEmptyWatch(), nil
}

// wrapped is Wrap(a) with a sleep that records what it was asked to wait
// and returns at once; it answers false (the context ended) after stopAfter
// sleeps, if stopAfter > 0.
func wrapped(a *answers, slept *[]time.Duration, stopAfter int) toolscache.ListerWatcherWithContext {
	r := Wrap(a).(*retrying)
	r.sleep = func(_ context.Context, d time.Duration) bool {
		*slept = append(*slept, d)
		return stopAfter == 0 || len(*slept) < stopAfter
	}
	return r
}

func TestWrap_listsAndWatchesRetryWhileTheKubeAPIServerIsAwayAtShortCappedIntervals(t *testing.T) {
	gr := schema.GroupResource{Resource: "tasks"}
	away := []error{
		refused(t), refused(t), refused(t),
		apierrors.NewServiceUnavailable("starting"),
		apierrors.NewTooManyRequests("storage is (re)initializing", 1), // asks for 1 s
		refused(t), refused(t),
	}
	want := []time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond,
		1600 * time.Millisecond, 2 * time.Second, 2 * time.Second, 2 * time.Second}

	for name, call := range map[string]func(toolscache.ListerWatcherWithContext) (any, error){
		"list":  func(lw toolscache.ListerWatcherWithContext) (any, error) { return lw.ListWithContext(context.Background(), metav1.ListOptions{}) },
		"watch": func(lw toolscache.ListerWatcherWithContext) (any, error) { return lw.WatchWithContext(context.Background(), metav1.ListOptions{}) },
	} {
		t.Run(name, func(t *testing.T) {
			a, slept := &answers{errs: away}, []time.Duration{}
			got, err := call(wrapped(a, &slept, 0))
			if err != nil || got == nil {
				t.Fatalf("got %v, %v; want an answer once the kube-apiserver is back", got, err)
			}
			if a.calls != len(away)+1 || !reflect.DeepEqual(slept, want) {
				t.Errorf("%d calls, waits %v; want %d calls, waits %v", a.calls, slept, len(away)+1, want)
			}
		})
	}

	t.Run("a 429 asks for longer than the next wait", func(t *testing.T) {
		a, slept := &answers{errs: []error{apierrors.NewTooManyRequests("later", 1)}}, []time.Duration{}
		if _, err := wrapped(a, &slept, 0).ListWithContext(context.Background(), metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(slept, []time.Duration{time.Second}) {
			t.Errorf("waits %v, want [1s] as the 429 asked", slept)
		}
	})

	for name, err := range map[string]error{
		"forbidden":             apierrors.NewForbidden(gr, "", errors.New("no")),
		"expired version (410)": apierrors.NewResourceExpired("too old resource version"),
		"not found":             apierrors.NewNotFound(gr, ""),
		"internal error":        apierrors.NewInternalError(errors.New("boom")),
	} {
		t.Run("not retried: "+name, func(t *testing.T) {
			a, slept := &answers{errs: []error{err}}, []time.Duration{}
			if _, got := wrapped(a, &slept, 0).WatchWithContext(context.Background(), metav1.ListOptions{}); got != err {
				t.Errorf("got %v, want the reflector to get %v at once", got, err)
			}
			if a.calls != 1 || len(slept) != 0 {
				t.Errorf("%d calls and waits %v, want one call and no wait", a.calls, slept)
			}
		})
	}

	t.Run("the context's end stops the retries", func(t *testing.T) {
		a, slept := &answers{errs: []error{refused(t), refused(t), refused(t), refused(t)}}, []time.Duration{}
		_, err := wrapped(a, &slept, 2).ListWithContext(context.Background(), metav1.ListOptions{})
		if err == nil || a.calls != 2 || len(slept) != 2 {
			t.Errorf("got %v after %d calls and %d waits; want the last error after 2 calls", err, a.calls, len(slept))
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if sleep(ctx, time.Hour) {
			t.Error("sleep waited out an hour on an ended context")
		}
	})
}
