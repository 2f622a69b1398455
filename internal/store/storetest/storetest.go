// Package storetest is the conformance suite every store.Store backend must
// pass, so that SQLite and PostgreSQL behave the same way to their callers:
// the same ordering, the same idempotence, the same errors.
package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/bastion-dev/bastion/internal/store"
)

// Open returns a new, empty store for one test and arranges for it to be
// closed when the test ends.
type Open func(t testing.TB) store.Store

// Run runs the whole suite against a backend, each case on a fresh store.
func Run(t *testing.T, open Open) {
	cases := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"AppendsAndPagesInOrder", testAppendsAndPagesInOrder},
		{"IgnoresResentLinesMixedWithNewOnes", testIgnoresResentLines},
		{"SortsOutOfOrderBatches", testSortsOutOfOrderBatches},
		{"LastSeqStopsAtAGap", testLastSeqStopsAtAGap},
		{"PagesAcrossAGap", testPagesAcrossAGap},
		{"PagesATrickleAGapAndABurst", testPagesATrickleAGapAndABurst},
		{"PagesFromAnyOffsetAsTheWholeLogReads", testPagesFromAnyOffsetAsTheWholeLogReads},
		{"HoldsTheFirstCopyOfEachSeqWhateverTheBatches", testMatchesAModel},
		{"AnswersAnOffsetFarPastTheEndAtOnce", testOffsetFarPastTheEnd},
		{"RefusesInvalidArguments", testRefusesInvalidArguments},
		{"KeepsTasksApart", testKeepsTasksApart},
		{"Streams100000LinesInOrderWithFlatMemory", testStreamsManyLines},
		{"StopsStreamingOnCallbackError", testStopsStreamingOnError},
		{"AppendsConcurrentlyToDifferentTasks", testConcurrentTasks},
		{"AppendsConcurrentResendsToOneTask", testConcurrentResends},
		{"RoundTripsUnicodeLongLinesAndRawBytes", testRoundTripsContent},
		{"KeepsTimesToTheMicrosecond", testKeepsTimes},
		{"KeepsEachLinesStream", testKeepsStreams},
		{"UpsertsAndReadsSummaries", testUpsertsSummaries},
		{"ListsSummariesNewestFirstWithFiltersAndPaging", testListsSummaries},
		{"CountsTasksByDayAndStatus", testCountsTasksByDay},
		{"DeletesTaskLinesAndSummary", testDeletesTask},
		{"ListsEventsNewestFirstPerProject", testListsEvents},
		{"PutsAndReadsCredentials", testPutsAndReadsCredentials},
		{"RefusesADuplicateCredentialHash", testRefusesADuplicateCredentialHash},
		{"ReportsMissingCredentials", testMissingCredentials},
		{"ListsCredentialsNewestFirstPerUserAndKind", testListsCredentialsNewestFirstPerUserAndKind},
		{"ExpiresCredentialsByPublicID", testExpiresCredentialsByPublicID},
		{"DeletesOneCredential", testDeletesOneCredential},
		{"DeletesAUsersOtherCredentials", testDeletesAUsersOtherCredentials},
		{"RefusesInvalidCredentialArguments", testRefusesInvalidCredentialArguments},
		{"FeedReportsEachAdvanceOnceAfterCommit", testFeedReportsEachAdvance},
		{"FeedMergesReportsForASlowWatcher", testFeedMergesForASlowWatcher},
		{"FeedCarriesTheStoredTextNotAResends", testFeedCarriesStoredText},
		{"FeedEndsWithItsContextAndTheStore", testFeedEnds},
		{"ReturnsErrorsWhenClosed", testClosed},
		{"ReturnsCredentialErrorsWhenClosed", testCredentialsWhenClosed},
		{"CountsSignInFailuresInARunAndAWindow", testCountsSignInFailuresInARunAndAWindow},
		{"EndsARunOnSignInAndRemembersTheAddress", testEndsARunOnSignInAndRemembersTheAddress},
		{"BoundsTheGuessersOfAnAccount", testBoundsTheGuessersOfAnAccount},
		{"CountsConcurrentSignInFailuresOneByOne", testCountsConcurrentSignInFailuresOneByOne},
		{"DecidesConcurrentSignInAttemptsOneByOne", testDecidesConcurrentSignInAttemptsOneByOne},
		{"PrunesSignInRecords", testPrunesSignInRecords},
		{"ClaimsADeliveryOnceADay", testClaimsADeliveryOnceADay},
		{"ClaimsADeliveryForOneOfConcurrentCallers", testClaimsADeliveryForOneOfConcurrentCallers},
		{"RefusesInvalidSharedArguments", testRefusesInvalidSharedArguments},
		{"ReturnsSharedStateErrorsWhenClosed", testSharedStateWhenClosed},
		{"VersionsATaskHistory", testVersionsATaskHistory},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.fn(t, open(t)) })
	}
}

// base is a fixed instant with a sub-microsecond part, so that tests see
// the truncation to microseconds that both backends apply.
var base = time.Date(2025, 3, 14, 15, 9, 26, 535897932, time.UTC)

// lines makes lines from..to with text derived from the Seq, so that any
// copy of a line is identical and misordering is visible.
func lines(from, to int64) []store.Line {
	out := make([]store.Line, 0, to-from+1)
	for seq := from; seq <= to; seq++ {
		out = append(out, line(seq))
	}
	return out
}

func line(seq int64) store.Line {
	return store.Line{Seq: seq, Time: base.Add(time.Duration(seq) * time.Millisecond), Output: fmt.Sprintf("line %d", seq)}
}

// wantLine is line(seq) as a store returns it.
func wantLine(seq int64) store.Line {
	l := line(seq)
	l.Time = l.Time.Truncate(time.Microsecond)
	return l
}

func mustAppend(t testing.TB, s store.Store, task store.TaskKey, ls []store.Line) {
	t.Helper()
	if err := s.AppendLines(t.Context(), task, ls); err != nil {
		t.Fatalf("AppendLines(%v, %d lines): %v", task, len(ls), err)
	}
}

func allLines(t testing.TB, s store.Store, task store.TaskKey) []store.Line {
	t.Helper()
	var out []store.Line
	if err := s.StreamLines(t.Context(), task, func(l store.Line) error { out = append(out, l); return nil }); err != nil {
		t.Fatalf("StreamLines(%v): %v", task, err)
	}
	return out
}

// checkSeqs fails unless got holds exactly the lines of seqs, in order.
func checkSeqs(t testing.TB, got []store.Line, seqs ...int64) {
	t.Helper()
	if len(got) != len(seqs) {
		t.Fatalf("got %d lines %v, want %d %v", len(got), seqsOf(got), len(seqs), seqs)
	}
	for i, seq := range seqs {
		checkLine(t, got[i], wantLine(seq))
	}
}

func checkLine(t testing.TB, got, want store.Line) {
	t.Helper()
	if got.Seq != want.Seq || got.Output != want.Output || !got.Time.Equal(want.Time) {
		t.Fatalf("got line {%d %s %.60q}, want {%d %s %.60q}", got.Seq, got.Time.Format(time.RFC3339Nano), got.Output,
			want.Seq, want.Time.Format(time.RFC3339Nano), want.Output)
	}
}

func seqsOf(ls []store.Line) []int64 {
	out := make([]int64, len(ls))
	for i, l := range ls {
		out[i] = l.Seq
	}
	return out
}

func seqRange(from, to int64) []int64 {
	var out []int64
	for s := from; s <= to; s++ {
		out = append(out, s)
	}
	return out
}

func checkLastSeq(t testing.TB, s store.Store, task store.TaskKey, want int64) {
	t.Helper()
	got, err := s.LastSeq(t.Context(), task)
	if err != nil {
		t.Fatalf("LastSeq(%v): %v", task, err)
	}
	if got != want {
		t.Fatalf("LastSeq(%v) = %d, want %d", task, got, want)
	}
}

func checkErrIs(t testing.TB, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got error %v, want %v", what, err, target)
	}
}
