package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// pollEvery is how often the benchmark looks again, as a script polling
// the API would: the figures of P1 and P2 are that much coarse.
const pollEvery = 10 * time.Millisecond

type task struct {
	ID     int64  `json:"id"`
	Status string `json:"status"`
}

func started(status string) bool {
	switch status {
	case "running", "stopping", "success", "error", "stopped":
		return true
	}
	return false
}

func ended(status string) bool {
	switch status {
	case "success", "error", "stopped":
		return true
	}
	return false
}

// benchStarts is P1: n bash tasks posted at once; the time until every one
// is seen started, and until every one is seen ended.
//
// requests reads the kube-apiserver's request counters, so that the
// requests a task costs are printed too.
func benchStarts(ctx context.Context, api *apiClient, p project, reps, n int, serverCPU func() time.Duration,
	requests func(context.Context) (map[string]float64, error)) error {
	tpl, err := api.newBashTemplate(ctx, p, "Short", shortScript)
	if err != nil {
		return err
	}
	fmt.Printf("\nP1: %d bash tasks (sleep 0.02) posted at once; polled every %s\n", n, pollEvery)
	var starts, ends []time.Duration
	before, err := requests(ctx)
	if err != nil {
		return err
	}
	for rep := 1; rep <= reps; rep++ {
		cpu0 := serverCPU()
		posted, allStarted, allEnded, err := startsOnce(ctx, api, p, tpl, n)
		if err != nil {
			return err
		}
		starts, ends = append(starts, allStarted), append(ends, allEnded)
		fmt.Printf("  run %d: all started %7s (%5.1f starts/s), all ended %7s; server CPU %.1f ms per task; all %d POSTs answered %s\n",
			rep, ms(allStarted), rate(n, allStarted), ms(allEnded), perItem(serverCPU()-cpu0, n), n, ms(posted))
	}
	// The last tasks' cleanup (their input Secret, their finalizer)
	// trails their end by a little: it counts too.
	time.Sleep(time.Second)
	after, err := requests(ctx)
	if err != nil {
		return err
	}
	printRequestsPer(before, after, reps*n, "task")
	best, median := bestMedian(starts)
	bestEnd, medianEnd := bestMedian(ends)
	fmt.Printf("  best:   all started %7s (%5.1f starts/s), all ended %7s\n", ms(best), rate(n, best), ms(bestEnd))
	fmt.Printf("  median: all started %7s (%5.1f starts/s), all ended %7s\n", ms(median), rate(n, median), ms(medianEnd))
	return nil
}

// startsOnce posts n tasks at once and polls until all have ended; it
// returns when the last POST was answered, all had started and all had
// ended, each since the first POST.
func startsOnce(ctx context.Context, api *apiClient, p project, tpl int64, n int) (posted, allStarted, allEnded time.Duration, err error) {
	t0 := time.Now()
	ids := make([]int64, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var t task
			errs[i] = api.do(ctx, "POST", p.path+"/tasks", map[string]any{"template_id": tpl}, http.StatusCreated, &t)
			ids[i] = t.ID
		})
	}
	wg.Wait()
	posted = time.Since(t0)
	for _, err := range errs {
		if err != nil {
			return 0, 0, 0, err
		}
	}
	for deadline := t0.Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(pollEvery) {
		var list []task
		if err := api.do(ctx, "GET", p.path+"/tasks/last?limit=200", nil, http.StatusOK, &list); err != nil {
			return 0, 0, 0, err
		}
		byID := make(map[int64]string, len(list))
		for _, t := range list {
			byID[t.ID] = t.Status
		}
		nStarted, nEnded := 0, 0
		for _, id := range ids {
			s := byID[id]
			if s == "error" || s == "stopped" {
				return 0, 0, 0, failedTask(ctx, api, p, id, s)
			}
			if started(s) {
				nStarted++
			}
			if ended(s) {
				nEnded++
			}
		}
		if nStarted == n && allStarted == 0 {
			allStarted = time.Since(t0)
		}
		if nEnded == n {
			return posted, allStarted, time.Since(t0), nil
		}
	}
	return 0, 0, 0, fmt.Errorf("the %d tasks had not all ended after 5 minutes", n)
}

// benchOutput is P2: one bash task printing n lines; the time from
// POST /tasks until GET .../output holds every line, read on as it grows
// (?offset=), each line checked: none lost, none reordered.
func benchOutput(ctx context.Context, api *apiClient, p project, reps, n int, serverCPU func() time.Duration) error {
	tpl, err := api.newBashTemplate(ctx, p, "Lines", linesScript)
	if err != nil {
		return err
	}
	fmt.Printf("\nP2: one bash task printing %d lines (seq); polled every %s\n", n, pollEvery)
	var times []time.Duration
	for rep := 1; rep <= reps; rep++ {
		d, first, cpu, client, err := outputOnce(ctx, api, p, tpl, n, serverCPU)
		if err != nil {
			return err
		}
		times = append(times, d)
		fmt.Printf("  run %d: every line in /output after %7s (%8.0f lines/s end to end; the first after %s, %8.0f lines/s from there); server CPU %.1f ms per 1,000 lines, this client's %.1f ms\n",
			rep, ms(d), rate(n, d), ms(first), rate(n-1, d-first), perItem(cpu, n)*1000, perItem(client, n)*1000)
	}
	best, median := bestMedian(times)
	fmt.Printf("  best:   %7s (%8.0f lines/s)\n", ms(best), rate(n, best))
	fmt.Printf("  median: %7s (%8.0f lines/s)\n", ms(median), rate(n, median))
	return nil
}

type outputLine struct {
	Output string `json:"output"`
}

// outputOnce also gives when the script's first line was read, which
// splits the figure into the task's start and the stream, and the CPU time
// the server used until the end (the runner's included) and this client's
// own: on two cores, its reading of every record competes with the server.
func outputOnce(ctx context.Context, api *apiClient, p project, tpl int64, n int, serverCPU func() time.Duration) (total, first, cpu, client time.Duration, err error) {
	t0, cpu0, client0 := time.Now(), serverCPU(), selfCPU()
	var t task
	if err := api.do(ctx, "POST", p.path+"/tasks", map[string]any{"template_id": tpl}, http.StatusCreated, &t); err != nil {
		return 0, 0, 0, 0, err
	}
	taskPath := p.path + "/tasks/" + strconv.FormatInt(t.ID, 10)
	got, scriptLines := 0, 0 // lines read; the script's among them
	for deadline := t0.Add(5 * time.Minute); scriptLines < n; {
		if time.Now().After(deadline) {
			return 0, 0, 0, 0, fmt.Errorf("task %d: %d of %d lines after 5 minutes", t.ID, scriptLines, n)
		}
		path := taskPath + "/output"
		if got > 0 {
			path += "?offset=" + strconv.Itoa(got)
		}
		var lines []outputLine
		if err := api.do(ctx, "GET", path, nil, http.StatusOK, &lines); err != nil {
			return 0, 0, 0, 0, err
		}
		if err := checkLines(lines, &scriptLines); err != nil {
			return 0, 0, 0, 0, fmt.Errorf("task %d: %w", t.ID, err)
		}
		got += len(lines)
		if first == 0 && scriptLines > 0 {
			first = time.Since(t0)
		}
		if len(lines) == 0 {
			time.Sleep(pollEvery)
		}
	}
	total, cpu, client = time.Since(t0), serverCPU()-cpu0, selfCPU()-client0
	return total, first, cpu, client, checkWholeOutput(ctx, api, p, taskPath, n)
}

// checkWholeOutput, untimed: the task succeeded, and the whole log, read
// in one GET, is exactly the n lines.
func checkWholeOutput(ctx context.Context, api *apiClient, p project, taskPath string, n int) error {
	var t task
	for deadline := time.Now().Add(time.Minute); !ended(t.Status); time.Sleep(pollEvery) {
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: still %s a minute after its last line", taskPath, t.Status)
		}
		if err := api.do(ctx, "GET", taskPath, nil, http.StatusOK, &t); err != nil {
			return err
		}
	}
	if t.Status != "success" {
		return failedTask(ctx, api, p, t.ID, t.Status)
	}
	var lines []outputLine
	if err := api.do(ctx, "GET", taskPath+"/output", nil, http.StatusOK, &lines); err != nil {
		return err
	}
	scriptLines := 0
	if err := checkLines(lines, &scriptLines); err != nil {
		return fmt.Errorf("%s, the whole output: %w", taskPath, err)
	}
	if scriptLines != n {
		return fmt.Errorf("%s: the whole output has %d of the script's lines, want %d", taskPath, scriptLines, n)
	}
	return nil
}

// checkLines checks that the script's lines among lines continue the
// *seen before: "L <seen+1>", "L <seen+2>"... Lines without the prefix are
// the runner's own and are skipped.
func checkLines(lines []outputLine, seen *int) error {
	for _, l := range lines {
		num, ok := strings.CutPrefix(l.Output, linePrefix)
		if !ok {
			continue
		}
		if want := strconv.Itoa(*seen + 1); num != want {
			return fmt.Errorf("line %q where %q was due (lost or reordered)", l.Output, linePrefix+want)
		}
		*seen++
	}
	return nil
}

// benchTemplates is P3: n templates created one after another by one
// client, then `reads` GETs of the list spread over 4 connections.
//
// serverCPU reads the CPU time the server has used so far (its etcd and
// kube-apiserver included): a figure the neighbours of a loaded machine
// change less than the wall time.
func benchTemplates(ctx context.Context, api *apiClient, p project, n, reads int, serverCPU func() time.Duration) error {
	fmt.Printf("\nP3 writes: %d templates created one after another by one client\n", n)
	lat := make([]time.Duration, 0, n)
	cpu0 := serverCPU()
	t0 := time.Now()
	for i := range n {
		start := time.Now()
		if _, err := api.newBashTemplate(ctx, p, fmt.Sprintf("Template %04d", i+1), shortScript); err != nil {
			return err
		}
		lat = append(lat, time.Since(start))
	}
	total := time.Since(t0)
	// What the controllers do after each create (its finalizer, its
	// status) trails the last answer by a little: it counts too.
	time.Sleep(time.Second)
	cpu := serverCPU() - cpu0
	slices.Sort(lat)
	fmt.Printf("  %d creates in %s: %.0f creates/s; per create p50 %s, p90 %s, p99 %s, max %s\n", n, ms(total), rate(n, total),
		ms(pct(lat, 50)), ms(pct(lat, 90)), ms(pct(lat, 99)), ms(lat[len(lat)-1]))
	if cpu > 0 {
		fmt.Printf("  server CPU (bastion dev, etcd, kube-apiserver): %s, %.1f ms per create\n", ms(cpu), perItem(cpu, n))
	}

	var list []idOnly
	if err := api.do(ctx, "GET", p.path+"/templates", nil, http.StatusOK, &list); err != nil {
		return err
	}
	if len(list) != n {
		return fmt.Errorf("GET templates lists %d templates right after %d creates", len(list), n)
	}
	d, err := readTemplates(ctx, api, p, reads)
	if err != nil {
		return err
	}
	fmt.Printf("\nP3 reads: GET templates (%d templates), %d requests over 4 connections\n", n, reads)
	fmt.Printf("  %s: %.0f req/s\n", ms(d), rate(reads, d))
	return nil
}

// readTemplates sends `reads` GETs of the template list from 4 workers,
// each on its own connection (the transport allows 4 per host).
func readTemplates(ctx context.Context, api *apiClient, p project, reads int) (time.Duration, error) {
	const conns = 4
	// No Accept-Encoding: a script's client (curl, a load tool) does not ask
	// for gzip unless told to. Go's asks by default and then inflates every
	// answer of 1,000 templates on the same two cores as the server, which
	// measures the client as much as the server (docs/benchmarks.md).
	client := &http.Client{Jar: api.c.Jar, Timeout: time.Minute, Transport: &http.Transport{
		MaxConnsPerHost: conns, MaxIdleConnsPerHost: conns, DisableCompression: true,
	}}
	next := make(chan struct{}, reads)
	for range reads {
		next <- struct{}{}
	}
	close(next)
	errs := make(chan error, conns)
	t0 := time.Now()
	var wg sync.WaitGroup
	for range conns {
		wg.Go(func() {
			for range next {
				if err := getDiscard(ctx, client, api.base+p.path+"/templates"); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	d := time.Since(t0)
	close(errs)
	return d, <-errs
}

func getDiscard(ctx context.Context, c *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %d", url, resp.StatusCode)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

func bestMedian(ds []time.Duration) (best, median time.Duration) {
	s := slices.Sorted(slices.Values(ds))
	return s[0], s[len(s)/2]
}

func pct(sorted []time.Duration, p int) time.Duration {
	return sorted[(len(sorted)-1)*p/100]
}

func rate(n int, d time.Duration) float64 { return float64(n) / d.Seconds() }

func ms(d time.Duration) string { return d.Round(time.Millisecond).String() }

// failedTask is the error for a task that did not succeed, with the end of
// its output, which says why.
func failedTask(ctx context.Context, api *apiClient, p project, id int64, status string) error {
	var lines []outputLine
	path := p.path + "/tasks/" + strconv.FormatInt(id, 10) + "/output"
	if err := api.do(ctx, "GET", path, nil, http.StatusOK, &lines); err != nil {
		return fmt.Errorf("task %d ended %s (its output: %v)", id, status, err)
	}
	var out []string
	for _, l := range lines[max(0, len(lines)-10):] {
		out = append(out, l.Output)
	}
	return fmt.Errorf("task %d ended %s; its output ends:\n%s", id, status, strings.Join(out, "\n"))
}

// perItem is d per item in milliseconds.
func perItem(d time.Duration, n int) float64 { return float64(d.Microseconds()) / 1000 / float64(n) }
