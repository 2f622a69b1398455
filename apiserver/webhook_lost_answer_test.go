package apiserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/apiserver"
)

// createFault is what the next Task create does instead of the client's:
// it fails, having made the Task (its answer lost) or not (refused).
type createFault func(ctx context.Context, obj client.Object, opts ...client.CreateOption) error

// taskCreates wraps the API's client and hands the next Task create to a
// fault, once.
type taskCreates struct {
	client.Client
	next atomic.Pointer[createFault]
}

func (c *taskCreates) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if _, ok := obj.(*bastionv1.Task); ok {
		if fault := c.next.Swap(nil); fault != nil {
			return (*fault)(ctx, obj, opts...)
		}
	}
	return c.Client.Create(ctx, obj, opts...)
}

// faultyHook makes an integration with fields and matchers, and a server
// whose Task creates go through faults: it returns the integration's
// webhook URL on that server, the faults, and a count of its tasks.
func (f *hookFixture) faultyHook(t *testing.T, fields map[string]any, matchers []map[string]any) (hook string, faults *taskCreates, tasks func() int) {
	t.Helper()
	name, hook := f.integration(t, fields, matchers, nil)
	faults = &taskCreates{}
	srv := f.e.serve(t, func(_ string, o *apiserver.Options) { faults.Client = o.Client; o.Client = faults })
	u, err := url.Parse(hook)
	if err != nil {
		t.Fatal(err)
	}
	return srv + u.Path, faults, func() int { return len(f.e.tasksOf(t, f.ns, name)) }
}

// A GitHub delivery's claim (webhook_replay.go) used to be given
// back whenever starting the task failed, so a create whose answer was
// lost, though the apiserver had made the Task, was run again by GitHub's
// redelivery. Now a delivery whose create got no answer is answered 503
// saying the task may have started, keeps its claim, and its redelivery is
// answered replay: the task runs at most once. A create the apiserver
// refused made nothing, so its redelivery runs.
func TestWebhook_aGitHubDeliveryWhoseCreateGotNoAnswerRunsAtMostOnce(t *testing.T) {
	f := newHookFixture(t, startEnv(t))
	hook, faults, tasks := f.faultyHook(t, map[string]any{"name": "Lost answers", "auth_method": "github", "auth_secret_id": f.keyID}, pushMatchers[:1])
	send := func(commit string) (int, string) {
		body := []byte(strings.Replace(string(pushBody), "abc123", commit, 1))
		code, data := deliver(t, hook, body, map[string]string{"X-GitHub-Event": "push", "X-GitHub-Delivery": "delivery-" + commit,
			"X-Hub-Signature-256": "sha256=" + hmacHex(webhookCanary, body)})
		return code, string(data)
	}
	made := func(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
		return faults.Client.Create(ctx, obj, opts...)
	}

	want := 0
	for _, lost := range []struct {
		name  string
		fault createFault
	}{
		{"the connection cut after the request", func(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
			if err := made(ctx, obj, opts...); err != nil {
				return err
			}
			return fmt.Errorf("Post \"https://apiserver/apis/bastion.dev/v1alpha1/tasks\": %w", io.ErrUnexpectedEOF)
		}},
		{"the apiserver's timeout after its write", func(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
			if err := made(ctx, obj, opts...); err != nil {
				return err
			}
			return apierrors.NewTimeoutError("request did not complete within the allowed duration", 0)
		}},
	} {
		commit := fmt.Sprintf("lost%d", want)
		faults.next.Store(&lost.fault)
		code, data := send(commit)
		var msg struct{ Error string }
		_ = json.Unmarshal([]byte(data), &msg)
		if code != http.StatusServiceUnavailable || !strings.Contains(msg.Error, "it may have started") {
			t.Fatalf("%s: answered %d %s, want 503 saying the task may have started", lost.name, code, data)
		}
		if want++; tasks() != want {
			t.Fatalf("%s: %d tasks, want %d (the apiserver made this one)", lost.name, tasks(), want)
		}
		code, data = send(commit)
		if code != http.StatusOK || !strings.Contains(data, "replay") {
			t.Fatalf("%s: the redelivery answered %d %s, want 200 saying replay", lost.name, code, data)
		}
		if tasks() != want {
			t.Fatalf("%s: the redelivery ran the task again: %d tasks, want %d", lost.name, tasks(), want)
		}
	}

	refuse := createFault(func(_ context.Context, obj client.Object, _ ...client.CreateOption) error {
		return apierrors.NewForbidden(schema.GroupResource{Group: bastionv1.GroupVersion.Group, Resource: "tasks"}, obj.GetName(), errors.New("refused by the test"))
	})
	faults.next.Store(&refuse)
	if code, data := send("refused"); code == http.StatusNoContent || code == http.StatusServiceUnavailable {
		t.Fatalf("a refused create answered %d %s, want an error that does not say the task may have started", code, data)
	}
	if tasks() != want {
		t.Fatalf("a refused create made a task: %d, want %d", tasks(), want)
	}
	if code, data := send("refused"); code != http.StatusNoContent {
		t.Fatalf("the redelivery of a delivery that made nothing answered %d %s, want 204", code, data)
	}
	if want++; tasks() != want {
		t.Fatalf("%d tasks after the redelivery of the refused delivery, want %d", tasks(), want)
	}
}

// Any sender, whatever the integration's auth method, that sends an
// Idempotency-Key (GitLab keeps one across its retries of an event) gets
// what a GitHub delivery gets: a retry of a request whose create got no
// answer (503, the task may have started) is answered replay and runs
// nothing, as is any repeat of a key that ran; a request whose create
// was refused gives its claim back. Requests without the key are not
// remembered: each runs.
func TestWebhook_anIdempotencyKeyRunsOnceWhateverTheAuthMethod(t *testing.T) {
	f := newHookFixture(t, startEnv(t))
	hook, faults, tasks := f.faultyHook(t, map[string]any{"name": "Keyed", "auth_method": "token", "auth_secret_id": f.keyID, "auth_header": "X-Token"}, nil)
	sendAs := func(token, key string) (int, string) {
		header := map[string]string{"X-Token": token}
		if key != "" {
			header["Idempotency-Key"] = key
		}
		code, data := deliver(t, hook, pushBody, header)
		return code, string(data)
	}
	send := func(key string) (int, string) { return sendAs(webhookCanary, key) }
	expect := func(what string, code int, data string, wantCode int, wantText string, wantTasks int) {
		t.Helper()
		if code != wantCode || !strings.Contains(data, wantText) {
			t.Fatalf("%s: answered %d %s, want %d with %q", what, code, data, wantCode, wantText)
		}
		if got := tasks(); got != wantTasks {
			t.Fatalf("%s: %d tasks, want %d", what, got, wantTasks)
		}
	}

	lost := createFault(func(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
		if err := faults.Client.Create(ctx, obj, opts...); err != nil {
			return err
		}
		return apierrors.NewTimeoutError("request did not complete within the allowed duration", 0)
	})
	faults.next.Store(&lost)
	code, data := send("key-lost")
	expect("a create whose answer was lost", code, data, http.StatusServiceUnavailable, "it may have started", 1)
	code, data = send("key-lost")
	expect("its retry", code, data, http.StatusOK, `replay: Idempotency-Key \"key-lost\"`, 1)

	code, data = send("key-ran")
	expect("a delivery that runs", code, data, http.StatusNoContent, "", 2)
	code, data = send("key-ran")
	expect("its repeat", code, data, http.StatusOK, "replay", 2)

	code, data = send("")
	expect("a delivery without a key", code, data, http.StatusNoContent, "", 3)
	code, data = send("")
	expect("the same body again, without a key", code, data, http.StatusNoContent, "", 4)

	// A sender without the token spends no key: the key is claimed after
	// the authentication check, so the real sender's delivery still runs.
	if code, data := sendAs("not-the-token", "key-forged"); code == http.StatusNoContent || code == http.StatusOK || tasks() != 4 {
		t.Fatalf("an unauthenticated delivery answered %d %s with %d tasks, want a refusal and 4", code, data, tasks())
	}
	code, data = send("key-forged")
	expect("the real delivery with the key a forgery sent first", code, data, http.StatusNoContent, "", 5)

	refuse := createFault(func(_ context.Context, obj client.Object, _ ...client.CreateOption) error {
		return apierrors.NewForbidden(schema.GroupResource{Group: bastionv1.GroupVersion.Group, Resource: "tasks"}, obj.GetName(), errors.New("refused by the test"))
	})
	faults.next.Store(&refuse)
	if code, data := send("key-refused"); code == http.StatusNoContent || code == http.StatusServiceUnavailable || tasks() != 5 {
		t.Fatalf("a refused create answered %d %s with %d tasks, want an error that does not say the task may have started, and 5", code, data, tasks())
	}
	code, data = send("key-refused")
	expect("the retry of a refused create", code, data, http.StatusNoContent, "", 6)
}
