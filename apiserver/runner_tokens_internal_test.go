package apiserver

import (
	"testing"

	"github.com/bastion-dev/bastion/internal/runtoken"
)

// A task whose runner never reported (it failed to start, it was stopped
// first) leaves no token behind: the endpoint forgets a task when the
// cache sees it end or go (forgetEnded), and its token with it.
func TestRunnerEvents_forgettingATaskDropsTheTokenHandedOver(t *testing.T) {
	book := &runtoken.Book{}
	e := newRunnerEvents(Options{RunTokens: book})
	book.Put("never-reported", "token")
	book.Put("still-running", "token")
	e.forget("never-reported")
	if _, ok := book.Take("never-reported"); ok {
		t.Fatal("the token of a forgotten task is still held")
	}
	if _, ok := book.Take("still-running"); !ok {
		t.Fatal("forgetting one task dropped another's token")
	}
}
