package hub

import (
	"strconv"
	"sync"
	"testing"
	"time"
)

// BenchmarkHubFanout: 200 subscribers who may see everything, 10 tasks
// publishing at once. One op is one published message. Publishers go in
// rounds and wait for every subscriber to drain the round, so the figure
// is what the hub sustains without dropping anyone.
func BenchmarkHubFanout(b *testing.B) {
	const subscribers, tasks, perTaskRound = 200, 10, 100
	const round = tasks * perTaskRound // messages per round, below the buffer
	h := New()
	acks := make(chan struct{}, subscribers)
	var drainers sync.WaitGroup
	subs := make([]*Subscription, subscribers)
	for i := range subs {
		subs[i] = h.Subscribe(All, 4096)
		drainers.Go(func() {
			var batch []Message
			var err error
			n := 0
			for {
				<-subs[i].Ready()
				if batch, err = subs[i].Take(batch); err != nil {
					return
				}
				n += len(batch)
				if n >= round {
					n -= round
					acks <- struct{}{}
				}
			}
		})
	}
	line := Log(1, 1, time.Now(), "TASK [Gathering Facts] *********************************************")

	publishRound := func() {
		var publishers sync.WaitGroup
		for task := range int64(tasks) {
			publishers.Go(func() {
				m := line
				m.TaskID = task
				for range perTaskRound {
					h.Publish(m)
				}
			})
		}
		publishers.Wait()
		for range subscribers {
			<-acks
		}
	}
	// One round before the clock: each subscriber's two queues grow to what
	// a round needs, then are swapped by Take and reused. The allocations
	// reported are the steady state's, per published message.
	publishRound()
	b.ReportAllocs()
	b.ResetTimer()
	for published := 0; published < b.N; published += round {
		publishRound()
	}
	b.StopTimer()
	rounds := (b.N + round - 1) / round
	b.ReportMetric(float64(rounds*round*subscribers)/b.Elapsed().Seconds(), "deliveries/s")
	b.ReportMetric(float64(rounds*round)/b.Elapsed().Seconds(), "msgs/s")
	for _, s := range subs {
		if s.Err() != nil {
			b.Fatalf("a subscriber was dropped: %v", s.Err())
		}
	}
	h.Close()
	drainers.Wait()
}

// BenchmarkLog is the cost of encoding one output line, paid once per line
// whatever the number of clients.
func BenchmarkLog(b *testing.B) {
	at := time.Now()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_ = Log(1, 1, at, "ok: [host-"+strconv.Itoa(i&1023)+"] => (item=nginx)")
	}
}
