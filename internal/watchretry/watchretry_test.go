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
	"k8s.io/client-go/util/watchlist"
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
// and returns at once.
func wrapped(a *answers, slept *[]time.Duration) toolscache.ListerWatcherWithContext {
	r := Wrap(a, "test").(*retrying)
	r.sleep = func(_ context.Context, d time.Duration) bool {
		*slept = append(*slept, d)
		return true
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
		"list": func(lw toolscache.ListerWatcherWithContext) (any, error) {
			return lw.ListWithContext(context.Background(), metav1.ListOptions{})
		},
		"watch": func(lw toolscache.ListerWatcherWithContext) (any, error) {
			return lw.WatchWithContext(context.Background(), metav1.ListOptions{})
		},
	} {
		t.Run(name, func(t *testing.T) {
			a, slept := &answers{errs: away}, []time.Duration{}
			got, err := call(wrapped(a, &slept))
			if err != nil || got == nil {
				t.Fatalf("got %v, %v; want an answer once the kube-apiserver is back", got, err)
			}
			if a.calls != len(away)+1 || !reflect.DeepEqual(slept, want) {
				t.Errorf("%d calls, waits %v; want %d calls, waits %v", a.calls, slept, len(away)+1, want)
			}
		})
	}

	t.Run("a 429 gets the delay it asks for, up to 30 s", func(t *testing.T) {
		a, slept := &answers{errs: []error{
			apierrors.NewTooManyRequests("later", 1), apierrors.NewTooManyRequests("shedding load", 20),
			apierrors.NewTooManyRequests("much later", 600),
		}}, []time.Duration{}
		if _, err := wrapped(a, &slept).ListWithContext(context.Background(), metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
		if want := []time.Duration{time.Second, 20 * time.Second, MaxServerDelay}; !reflect.DeepEqual(slept, want) {
			t.Errorf("waits %v, want %v as the 429s asked, within 30 s", slept, want)
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
			if _, got := wrapped(a, &slept).WatchWithContext(context.Background(), metav1.ListOptions{}); got != err {
				t.Errorf("got %v, want the reflector to get %v at once", got, err)
			}
			if a.calls != 1 || len(slept) != 0 {
				t.Errorf("%d calls and waits %v, want one call and no wait", a.calls, slept)
			}
		})
	}

	t.Run("the context's end stops the retries", func(t *testing.T) {
		never := make([]error, 100)
		for i := range never {
			never[i] = refused(t)
		}
		a := &answers{errs: never}
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		began := time.Now()
		_, err := Wrap(a, "test").(toolscache.ListerWatcherWithContext).WatchWithContext(ctx, metav1.ListOptions{})
		took := time.Since(began)
		if err == nil || a.calls > 3 || took > 2*time.Second {
			t.Errorf("got %v after %d calls in %s; want the last error once the context ended (300 ms)", err, a.calls, took)
		}
	})
}

// unsupported is a ListerWatcher that says it cannot stream its initial
// list (watch-list).
type unsupported struct{ answers }

func (unsupported) IsWatchListSemanticsUnSupported() bool { return true }

func TestWrap_passesOnWhetherTheWrappedCallsSupportWatchList(t *testing.T) {
	if !watchlist.DoesClientNotSupportWatchListSemantics(Wrap(&unsupported{}, "test")) {
		t.Error("a ListerWatcher that cannot stream its initial list reads as one that can, once wrapped")
	}
	if watchlist.DoesClientNotSupportWatchListSemantics(Wrap(&answers{}, "test")) {
		t.Error("a ListerWatcher that says nothing reads as one that cannot stream, once wrapped")
	}
}
