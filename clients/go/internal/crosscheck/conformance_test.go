package crosscheck

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"github.com/schedsvc/schedsvc/clients/go/internal/servertest"
	"github.com/schedsvc/schedsvc/clients/go/kube"
	pb "github.com/schedsvc/schedsvc/clients/go/schedsvcv1"
)

const repo = "../../../.."

// recordedCase is a line of tests/data/conformance-1.37/*.jsonl.gz (tools/conformance.py).
type recordedCase struct {
	ID      string            `json:"id"`
	Nodes   []json.RawMessage `json:"nodes"`
	Pods    []json.RawMessage `json:"pods"`
	Pod     json.RawMessage   `json:"pod"`
	Objects []json.RawMessage `json:"objects"`
}

// items is the case as tools/conformance.py's case_as_list orders it: nodes, pods, the pod
// to schedule, the other objects.
func (c *recordedCase) items() ([]kube.Item, error) {
	var out []kube.Item
	pods := append(append([]json.RawMessage(nil), c.Pods...), c.Pod)
	for _, part := range []struct {
		kind  string
		items []json.RawMessage
	}{{"NodeList", c.Nodes}, {"PodList", pods}, {"List", c.Objects}} {
		doc, err := json.Marshal(map[string]any{"kind": part.kind, "items": part.items})
		if err != nil {
			return nil, err
		}
		items, err := kube.DecodeList(doc)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
	}
	return out, nil
}

func (c *recordedCase) podUID() string {
	var pod struct {
		Metadata struct {
			UID string `json:"uid"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(c.Pod, &pod)
	return pod.Metadata.UID
}

func readCases(t *testing.T, path string) []recordedCase {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []recordedCase
	sc := bufio.NewScanner(gz)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	for sc.Scan() {
		var c recordedCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, c)
	}
	return out
}

// pythonRequests is tools/client_cases.py's output: the Python client's request per case.
func pythonRequests(t *testing.T, files []string, stride int) [][]byte {
	root, err := filepath.Abs(repo)
	if err != nil {
		t.Fatal(err)
	}
	python := filepath.Join(root, ".venv", "bin", "python")
	cmd := exec.Command(python, append([]string{"-m", "tools.client_cases", "--stride",
		strconv.Itoa(stride)}, files...)...)
	cmd.Dir = root
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tools.client_cases: %v", err)
	}
	var reqs [][]byte
	r := bytes.NewReader(out)
	for {
		var n uint32
		if err := binary.Read(r, binary.BigEndian, &n); err == io.EOF {
			return reqs
		} else if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, b)
	}
}

// answer is what the server says of one case's conversion: the snapshot pushed (bound pods),
// a dry-run placement of the pod to schedule, and Explain's per-node verdicts.
func answer(ctx context.Context, t *testing.T, stub pb.ScheduleServiceClient, cluster string,
	req *pb.UpdateSnapshotRequest, uid string) (*pb.ScheduleResponse, *pb.ExplainResponse) {
	var pending *pb.Pod
	push := proto.Clone(req).(*pb.UpdateSnapshotRequest)
	push.Cluster, push.Replace, push.UpsertPods = cluster, true, nil
	for _, p := range req.UpsertPods {
		if p.GetNodeName() != "" {
			push.UpsertPods = append(push.UpsertPods, p)
		} else if p.GetUid() == uid {
			pending = p
		}
	}
	if pending == nil {
		t.Fatalf("the pod to schedule (%s) was not read back", uid)
	}
	// a fresh cluster of the same name for each conversion: the same seed, so the same
	// tie-breaking among equally scored nodes
	if _, err := stub.DeleteCluster(ctx, &pb.DeleteClusterRequest{Cluster: cluster}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := stub.UpdateSnapshot(ctx, push); err != nil {
		t.Fatalf("update: %v", err)
	}
	placed, err := stub.Schedule(ctx, &pb.ScheduleRequest{Cluster: cluster, Pods: []*pb.Pod{pending}, DryRun: true})
	if err != nil {
		t.Fatalf("schedule: %v", err)
	}
	explained, err := stub.Explain(ctx, &pb.ExplainRequest{Cluster: cluster, Pod: pending})
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	return placed, explained
}

// tieBroken clears what kube's selectHost picks at random among equally scored nodes (the
// server's random stream is shared by its clusters, so two calls may break a tie apart): the
// placed node and Explain's chosen node, after checking that the chosen node is a feasible
// node of the top total score; the score itself, every node's verdict, the outcome and the
// messages are still compared.
func tieBroken(t *testing.T, id string, placed *pb.ScheduleResponse, explained *pb.ExplainResponse) {
	t.Helper()
	var top int64 = -1
	totals := map[string]int64{}
	for _, v := range explained.GetNodes() {
		if v.GetFeasible() {
			totals[v.GetName()] = v.GetTotalScore()
			top = max(top, v.GetTotalScore())
		}
	}
	if chosen := explained.GetChosenNode(); chosen != "" {
		if total, ok := totals[chosen]; !ok || total != top {
			t.Fatalf("case %s: Explain chose %s (score %d), not a node of the top score %d", id, chosen, total, top)
		}
	}
	for _, p := range placed.GetPlacements() {
		if p.GetOutcome() == pb.Placement_SCHEDULED && p.GetNodeName() == "" {
			t.Fatalf("case %s: scheduled nowhere", id)
		}
		p.NodeName = ""
	}
	explained.ChosenNode = ""
}

// stride is which cases the test sends: every 4th by default (305 of the 1220, about a
// minute), every case with CROSSCHECK_STRIDE=1 (about four minutes on a shared 2-core box).
func stride(t *testing.T) int {
	s := os.Getenv("CROSSCHECK_STRIDE")
	if s == "" {
		return 4
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		t.Fatalf("CROSSCHECK_STRIDE=%q: want a positive integer", s)
	}
	return n
}

// The recorded conformance cases (v1.37.2's four files), converted by each client, get the
// same placement and the same per-node verdicts from one server. Quantities may be spelled
// differently (client-go writes kube's canonical form); the answers may not differ.
func TestConformanceCasesAnswerAsThroughThePythonClient(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repo, "tests", "data", "conformance-1.37", "*.jsonl.gz"))
	if err != nil || len(files) != 4 {
		t.Fatalf("the recorded cases: %v %v", files, err)
	}
	var all, cases []recordedCase
	for _, f := range files {
		all = append(all, readCases(t, f)...)
	}
	step := stride(t)
	for i := 0; i < len(all); i += step {
		cases = append(cases, all[i])
	}
	absFiles := make([]string, len(files))
	for i, f := range files {
		absFiles[i], _ = filepath.Abs(f)
	}
	began := time.Now()
	pyReqs := pythonRequests(t, absFiles, step)
	t.Logf("the Python client converted %d cases in %v", len(pyReqs), time.Since(began))
	if len(pyReqs) != len(cases) || len(all) < 1200 {
		t.Fatalf("%d Python conversions of %d cases", len(pyReqs), len(cases))
	}
	srv := servertest.Start(t, 0)
	conn, err := grpc.NewClient(srv.Address, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stub := pb.NewScheduleServiceClient(conn)
	ctx := context.Background()
	compared, refused := 0, 0
	start := time.Now()
	for i := range cases {
		c := &cases[i]
		items, err := c.items()
		var goReq *pb.UpdateSnapshotRequest
		if err == nil {
			var cluster *kube.Cluster
			if cluster, err = kube.Convert(items, kube.Options{}); err == nil {
				goReq = cluster.UpdateSnapshotRequest()
			}
		}
		if (err != nil) != (len(pyReqs[i]) == 0) {
			t.Fatalf("case %s: Go error %v, Python refused: %v", c.ID, err, len(pyReqs[i]) == 0)
		}
		if err != nil {
			refused++ // both refused: the same answer
			continue
		}
		pyReq := &pb.UpdateSnapshotRequest{}
		if err := proto.Unmarshal(pyReqs[i], pyReq); err != nil {
			t.Fatal(err)
		}
		goPlaced, goExplained := answer(ctx, t, stub, "case", goReq, c.podUID())
		pyPlaced, pyExplained := answer(ctx, t, stub, "case", pyReq, c.podUID())
		tieBroken(t, c.ID, goPlaced, goExplained)
		tieBroken(t, c.ID, pyPlaced, pyExplained)
		if !proto.Equal(goPlaced, pyPlaced) {
			t.Fatalf("case %s: placement\n Go: %v\n Py: %v", c.ID, goPlaced, pyPlaced)
		}
		if !proto.Equal(goExplained, pyExplained) {
			t.Fatalf("case %s: explanation\n Go: %v\n Py: %v", c.ID, goExplained, pyExplained)
		}
		compared++
	}
	if compared+refused != len(cases) || compared < len(cases)/2 {
		t.Fatalf("%d of %d cases compared, %d refused by both", compared, len(cases), refused)
	}
	t.Logf("%d recorded cases: the same answers through both clients (%v)", compared, time.Since(start))
}
