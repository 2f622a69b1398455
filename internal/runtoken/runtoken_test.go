package runtoken

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// A token is taken once; Recover asks the launcher (Held) for a run this
// process holds but put no token of; a nil Book, or one without Held,
// holds nothing and recovers nothing.
func TestBook_takesOnceAndRecoversFromTheLauncher(t *testing.T) {
	task := &bastionv1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: "p", Name: "t", UID: "u1"}}
	b := &Book{}
	b.Put(task.UID, "minted")
	if token, ok := b.Take(task.UID); token != "minted" || !ok {
		t.Fatalf("Take = %q, %v", token, ok)
	}
	if _, ok := b.Take(task.UID); ok {
		t.Fatal("a token was taken twice")
	}
	if _, ok := b.Recover(task); ok {
		t.Fatal("Recover without Held found a token")
	}
	b.Held = func(got *bastionv1.Task) (string, bool) { return "from-the-run", got.UID == task.UID }
	if token, ok := b.Recover(task); token != "from-the-run" || !ok {
		t.Fatalf("Recover = %q, %v", token, ok)
	}
	var none *Book
	none.Put(task.UID, "x")
	none.Forget(task.UID)
	if _, ok := none.Take(task.UID); ok {
		t.Fatal("a nil Book held a token")
	}
	if _, ok := none.Recover(task); ok {
		t.Fatal("a nil Book recovered a token")
	}
}
