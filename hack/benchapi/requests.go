package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// apiserverRequests reads the kube-apiserver's request counters
// (apiserver_request_total on /metrics) of the plane behind kubeconfig, by
// "VERB resource[/subresource]", the failed ones (4xx, 5xx) counted apart
// as "VERB resource ✗code".
func apiserverRequests(ctx context.Context, kubeconfig string) (map[string]float64, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	raw, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "apiserver_request_total{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if !ok {
			continue
		}
		n, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		l := map[string]string{}
		for _, kv := range strings.Split(labels, ",") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				l[k] = strings.Trim(v, `"`)
			}
		}
		if l["verb"] == "WATCH" || l["verb"] == "CONNECT" {
			continue // long-lived: counted once, not per request
		}
		key := l["verb"] + " " + l["resource"]
		if l["subresource"] != "" {
			key += "/" + l["subresource"]
		}
		if code := l["code"]; code >= "400" {
			key += " ✗" + code
		}
		out[key] += n
	}
	return out, sc.Err()
}

// printRequestsPer prints the requests between two readings, per item,
// the most frequent first.
func printRequestsPer(before, after map[string]float64, items int, what string) {
	delta := map[string]float64{}
	total := 0.0
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			delta[k] = d / float64(items)
			total += d / float64(items)
		}
	}
	keys := slices.SortedFunc(maps.Keys(delta), func(a, b string) int {
		if delta[a] != delta[b] {
			if delta[a] > delta[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, k := range keys {
		if delta[k] >= 0.05 {
			parts = append(parts, fmt.Sprintf("%s %.1f", k, delta[k]))
		}
	}
	fmt.Printf("  kube-apiserver requests per %s: %.1f (%s)\n", what, total, strings.Join(parts, ", "))
}
