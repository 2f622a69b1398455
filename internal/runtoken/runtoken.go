// Package runtoken hands the token a task's runner will present from the
// reconciler that minted it to the runner endpoint of the same process.
//
// The token also lives in the task's input Secret, which is where any
// replica can check it. Reading it back from there cost every task a read
// around the cache (Secrets are never cached); the replica that starts a
// run, which in a single-replica install is the one its runner reports
// to, knows it already.
package runtoken

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// Book holds the tokens of runs this process started, by task uid, until
// the runner endpoint takes one or the task ends. A nil Book holds
// nothing: every check then reads the input Secret.
type Book struct {
	mu     sync.Mutex
	tokens map[types.UID]string
}

// Put records the token of the task's run, before the run starts.
func (b *Book) Put(task types.UID, token string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tokens == nil {
		b.tokens = map[types.UID]string{}
	}
	b.tokens[task] = token
}

// Take removes and returns the task's token, if this process put one.
func (b *Book) Take(task types.UID) (string, bool) {
	if b == nil {
		return "", false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	token, ok := b.tokens[task]
	delete(b.tokens, task)
	return token, ok
}

// Forget drops the task's token: the task ended, or its run never will
// report (its token opens nothing any more).
func (b *Book) Forget(task types.UID) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.tokens, task)
}
