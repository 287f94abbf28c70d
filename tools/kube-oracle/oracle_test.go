package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// node and pod builders, in the JSON the case files carry.
func nodeJSON(name, cpu string) string {
	return fmt.Sprintf(`{"metadata":{"name":%q,"labels":{"kubernetes.io/hostname":%q}},
		"status":{"allocatable":{"cpu":%q,"memory":"8Gi","pods":"110"},"capacity":{"cpu":%q,"memory":"8Gi","pods":"110"}}}`,
		name, name, cpu, cpu)
}

func podJSON(name, cpu string, priority int, nodeName string) string {
	node := ""
	if nodeName != "" {
		node = fmt.Sprintf(`"nodeName":%q,`, nodeName)
	}
	return fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"default","uid":"uid-%s"},
		"spec":{%s"schedulerName":"default-scheduler","priority":%d,
		"containers":[{"name":"c","resources":{"requests":{"cpu":%q,"memory":"1Gi"}}}]},
		"status":{"startTime":"2026-01-01T00:00:00Z"}}`, name, name, node, priority, cpu)
}

// caseLine assembles one case and compacts it onto one line, as the files hold them.
func caseLine(id string, nodes, pods []string, pod string, extra string) string {
	s := fmt.Sprintf(`{"id":%q,"nodes":[%s],"pods":[%s],"pod":%s,"percentageOfNodesToScore":100%s}`,
		id, strings.Join(nodes, ","), strings.Join(pods, ","), pod, extra)
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		panic(err)
	}
	return b.String()
}

func runScoreLines(t *testing.T, lines ...string) ([]ScoreLine, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run([]string{"score"}, strings.NewReader(strings.Join(lines, "\n")+"\n"), &out, &errb)
	var res []ScoreLine
	dec := json.NewDecoder(&out)
	for dec.More() {
		var l ScoreLine
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("decoding output: %v", err)
		}
		res = append(res, l)
	}
	return res, errb.String(), code
}

func TestScore(t *testing.T) {
	tests := []struct {
		name  string
		line  string
		check func(t *testing.T, e *Expected)
	}{
		{
			name: "a node without enough cpu is rejected by NodeResourcesFit with Insufficient cpu, the other scores",
			line: caseLine("cpu", []string{nodeJSON("n0", "1"), nodeJSON("n1", "4")}, nil, podJSON("p", "2", 0, ""), ""),
			check: func(t *testing.T, e *Expected) {
				n0, n1 := e.Nodes[0], e.Nodes[1]
				if n0.Feasible || n0.Plugin != "NodeResourcesFit" || n0.Stage != "Filter" ||
					!reflect.DeepEqual(n0.Reasons, []string{"Insufficient cpu"}) {
					t.Errorf("n0 = %+v, want rejected by NodeResourcesFit with [Insufficient cpu]", n0)
				}
				// Requests above allocatable are unresolvable (no preemption can help).
				if n0.Code != "UnschedulableAndUnresolvable" {
					t.Errorf("n0 code = %s", n0.Code)
				}
				if !n1.Feasible || n1.Total == nil || e.FeasibleCount != 1 || !e.KubeSkipsScoring {
					t.Errorf("n1 = %+v, feasibleCount %d, kubeSkipsScoring %v", n1, e.FeasibleCount, e.KubeSkipsScoring)
				}
				if !reflect.DeepEqual(e.MaxNodes, []string{"n1"}) {
					t.Errorf("maxNodes = %v", e.MaxNodes)
				}
				if e.FitError != "" {
					t.Errorf("unexpected fitError %q", e.FitError)
				}
			},
		},
		{
			name: "nothing fits: kube's FitError text",
			line: caseLine("none", []string{nodeJSON("n0", "1"), nodeJSON("n1", "1")}, nil, podJSON("p", "2", 0, ""), ""),
			check: func(t *testing.T, e *Expected) {
				if want := "0/2 nodes are available: 2 Insufficient cpu."; e.FitError != want {
					t.Errorf("fitError = %q, want %q", e.FitError, want)
				}
				if !reflect.DeepEqual(e.UnschedulablePlugins, []string{"NodeResourcesFit"}) {
					t.Errorf("unschedulablePlugins = %v", e.UnschedulablePlugins)
				}
			},
		},
		{
			name: "v1.37 BalancedAllocation scores the change in balance: an empty node scores 75 minus half the imbalance added",
			// Pod 2 cpu / 1Gi on 4 cpu / 8Gi: fractions 0.5 and 0.125, std 0.1875, with-pod
			// score 81; without the pod 100; 50 + (50 + 81 - 100) / 2 = 65 (v1.35 gave 81).
			line: caseLine("balanced", []string{nodeJSON("n0", "4"), nodeJSON("n1", "4")}, nil, podJSON("p", "2", 0, ""), ""),
			check: func(t *testing.T, e *Expected) {
				got := e.Nodes[0].Scores["NodeResourcesBalancedAllocation"]
				if got.Score != 65 || got.Weight != 1 {
					t.Errorf("NodeResourcesBalancedAllocation = %+v, want score 65 weight 1", got)
				}
			},
		},
		{
			name: "preemption dry run: the low-priority pod on n1 is the victim and n1 is nominated",
			line: caseLine("pre",
				[]string{nodeJSON("n0", "1"), nodeJSON("n1", "2")},
				[]string{podJSON("low", "2", 0, "n1")},
				podJSON("p", "2", 100, ""), `,"preemption":true`),
			check: func(t *testing.T, e *Expected) {
				p := e.Preemption
				if p == nil || !p.Eligible || p.NominatedNode != "n1" || len(p.Candidates) != 1 {
					t.Fatalf("preemption = %+v", p)
				}
				if v := p.Candidates[0].Victims; len(v) != 1 || v[0].UID != "uid-low" || v[0].Name != "default/low" {
					t.Errorf("victims = %+v", v)
				}
				want := "0/2 nodes are available: 2 Insufficient cpu. preemption: found a potential placement for pod on node n1, preempting 1 victims"
				if e.FitErrorWithPreemption != want {
					t.Errorf("fitErrorWithPreemption = %q, want %q", e.FitErrorWithPreemption, want)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, stderr, code := runScoreLines(t, tc.line)
			if code != 0 || len(res) != 1 {
				t.Fatalf("exit %d, %d lines, stderr %s", code, len(res), stderr)
			}
			tc.check(t, res[0].Expected)
		})
	}
}

func TestBadInputIsExit2NamingTheProblem(t *testing.T) {
	good := caseLine("ok", []string{nodeJSON("n0", "4")}, nil, podJSON("p", "1", 0, ""), "")
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"not JSON", []string{good, "{nope"}, []string{":2:", "not a JSON case object"}},
		{"missing nodes", []string{`{"id":"x","pod":{}}`}, []string{"case x", `missing "nodes"`}},
		{"missing pod", []string{`{"id":"y","nodes":[]}`}, []string{"case y", `missing "pod"`}},
		{"unknown kind", []string{caseLine("z", []string{nodeJSON("n0", "4")}, nil, podJSON("p", "1", 0, ""),
			`,"objects":[{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"}}]`)},
			[]string{"case z", "objects[0]", `unknown kind "Widget"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runScoreLines(t, tc.lines...)
			if code != 2 {
				t.Fatalf("exit code %d, want 2 (stderr %q)", code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q does not contain %q", stderr, w)
				}
			}
		})
	}
}

func TestSequenceOnePerNode(t *testing.T) {
	c, err := generate(genOptions{kind: "one-per-node", nodes: 3, pods: 4})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig("")
	if err != nil {
		t.Fatal(err)
	}
	res, err := runSequenceCase(context.Background(), cfg, c, seqOptions{timeout: time.Minute, printPods: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Scheduled != 3 || res.Unschedulable != 1 || res.NodesUsed != 3 || res.TimedOut {
		t.Fatalf("result = %+v", res)
	}
	for _, p := range res.Pods {
		if p.Node == "" && !strings.HasPrefix(p.Message, "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules.") {
			t.Errorf("unschedulable message = %q", p.Message)
		}
	}
}

// The deployments workload of schedsvc's bench: Deployments in turns, runs of runLength pods,
// on nodes and pods of the sizes asked for.
func TestGenerateInterleavedDeployments(t *testing.T) {
	c, err := generate(genOptions{kind: "deployment", nodes: 2, pods: 7, deployments: 2, runLength: 2,
		nodeCPU: "4", podCPU: "3"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"web-0-abc", "web-0-abc", "web-1-abc", "web-1-abc", "web-0-abc", "web-0-abc", "web-1-abc"}
	for i, p := range c.PodsToSchedule {
		if got := p.OwnerReferences[0].Name; got != want[i] {
			t.Errorf("pod %d owned by %s, want %s", i, got, want[i])
		}
		if got := p.Spec.Containers[0].Resources.Requests.Cpu().String(); got != "3" {
			t.Errorf("pod %d cpu %s", i, got)
		}
	}
	if got := c.Nodes[0].Status.Allocatable.Cpu().String(); got != "4" || len(c.Objects) != 4 {
		t.Errorf("node cpu %s, %d objects", got, len(c.Objects))
	}
	if _, err := generate(genOptions{kind: "plain", podCPU: "lots"}); err == nil {
		t.Error("a bad quantity must be an error")
	}
}
