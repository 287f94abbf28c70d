package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
)

// Case is one line of a cases file, in the format of shared/conformance/README.md.
// Nodes, Pods, Pod and PodsToSchedule are decoded as typed objects; Objects (any kind
// client-go's scheme knows: Namespaces, ReplicaSets, Services, PodDisruptionBudgets,
// PriorityClasses, ...) go into the fake clientset behind the informers.
type Case struct {
	ID                       string
	Line                     int
	Nodes                    []*v1.Node
	Pods                     []*v1.Pod
	Pod                      *v1.Pod
	PodsToSchedule           []*v1.Pod
	Objects                  []runtime.Object
	PercentageOfNodesToScore *int32
	Preemption               bool
	Profile                  string
	// Steps (sequence mode): ordinary pods, or a pod group's members and its PodGroup, run in
	// order, each finished before the next (steps.go).
	Steps []Step
}

// Step is one entry of a case's "steps": pods to create, and for a pod group the PodGroup to
// create once they wait in the queue (nil when the group's PodGroup is in objects already, or
// the pods are ordinary).
type Step struct {
	Pods     []*v1.Pod
	PodGroup *schedulingv1beta1.PodGroup
}

type rawStep struct {
	Pods     []json.RawMessage `json:"pods"`
	PodGroup json.RawMessage   `json:"podGroup"`
}

type rawCase struct {
	ID                       json.RawMessage   `json:"id"`
	Nodes                    []json.RawMessage `json:"nodes"`
	Pods                     []json.RawMessage `json:"pods"`
	Pod                      json.RawMessage   `json:"pod"`
	PodsToSchedule           []json.RawMessage `json:"podsToSchedule"`
	Objects                  []json.RawMessage `json:"objects"`
	PercentageOfNodesToScore *int32            `json:"percentageOfNodesToScore"`
	Preemption               bool              `json:"preemption"`
	Profile                  string            `json:"profile"`
	Steps                    []rawStep         `json:"steps"`
}

// InputError is a malformed case file: it names the line, the case id and what is wrong.
// The command exits with code 2 on it; a case is never skipped silently.
type InputError struct {
	Source string
	Line   int
	ID     string
	Msg    string
}

func (e *InputError) Error() string {
	id := e.ID
	if id == "" {
		id = "?"
	}
	return fmt.Sprintf("%s:%d: case %s: %s", e.Source, e.Line, id, e.Msg)
}

// openCases opens a cases file, or stdin for "" or "-"; gzip is detected by its magic bytes.
func openCases(path string) (io.ReadCloser, string, error) {
	if path == "" || path == "-" {
		rc, err := openCasesReader(os.Stdin)
		return rc, "<stdin>", err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, path, err
	}
	rc, err := openCasesReader(f)
	if err != nil {
		f.Close()
		return nil, path, &InputError{Source: path, Msg: err.Error()}
	}
	return struct {
		io.Reader
		io.Closer
	}{rc, f}, path, nil
}

// openCasesReader wraps r, un-gzipping when its content starts with the gzip magic.
func openCasesReader(r io.Reader) (io.ReadCloser, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	magic, _ := br.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, err
		}
		return gz, nil
	}
	return io.NopCloser(br), nil
}

// forEachCase decodes the file line by line and calls fn per case; blank lines are ignored.
// A decoding error stops the iteration and is returned as an *InputError.
func forEachCase(r io.Reader, source string, requirePod bool, fn func(*Case) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		c, err := decodeCase(b, source, line, requirePod)
		if err != nil {
			return err
		}
		if err := fn(c); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return &InputError{Source: source, Line: line + 1, Msg: "reading: " + err.Error()}
	}
	return nil
}

func decodeCase(b []byte, source string, line int, requirePod bool) (*Case, error) {
	fail := func(id, format string, args ...any) error {
		return &InputError{Source: source, Line: line, ID: id, Msg: fmt.Sprintf(format, args...)}
	}
	var rc rawCase
	if err := json.Unmarshal(b, &rc); err != nil {
		return nil, fail("", "not a JSON case object: %v", err)
	}
	c := &Case{Line: line, PercentageOfNodesToScore: rc.PercentageOfNodesToScore, Preemption: rc.Preemption, Profile: rc.Profile}
	if len(rc.ID) > 0 {
		var s string
		if err := json.Unmarshal(rc.ID, &s); err != nil {
			c.ID = string(rc.ID) // a numeric id is kept as written
		} else {
			c.ID = s
		}
	}
	if rc.Nodes == nil {
		return nil, fail(c.ID, "missing \"nodes\"")
	}
	if requirePod && len(rc.Pod) == 0 {
		return nil, fail(c.ID, "missing \"pod\"")
	}
	if !requirePod && len(rc.Pod) == 0 && rc.PodsToSchedule == nil && rc.Steps == nil {
		return nil, fail(c.ID, "missing \"podsToSchedule\" (or \"pod\" or \"steps\")")
	}
	for i, raw := range rc.Nodes {
		n := &v1.Node{}
		if err := decodeTyped(raw, "Node", n); err != nil {
			return nil, fail(c.ID, "nodes[%d]: %v", i, err)
		}
		if n.Name == "" {
			return nil, fail(c.ID, "nodes[%d]: no metadata.name", i)
		}
		c.Nodes = append(c.Nodes, n)
	}
	for i, raw := range rc.Pods {
		p := &v1.Pod{}
		if err := decodeTyped(raw, "Pod", p); err != nil {
			return nil, fail(c.ID, "pods[%d]: %v", i, err)
		}
		c.Pods = append(c.Pods, p)
	}
	if len(rc.Pod) > 0 && string(rc.Pod) != "null" {
		p := &v1.Pod{}
		if err := decodeTyped(rc.Pod, "Pod", p); err != nil {
			return nil, fail(c.ID, "pod: %v", err)
		}
		c.Pod = p
	} else if requirePod {
		return nil, fail(c.ID, "missing \"pod\"")
	}
	for i, raw := range rc.PodsToSchedule {
		p := &v1.Pod{}
		if err := decodeTyped(raw, "Pod", p); err != nil {
			return nil, fail(c.ID, "podsToSchedule[%d]: %v", i, err)
		}
		c.PodsToSchedule = append(c.PodsToSchedule, p)
	}
	for i, rs := range rc.Steps {
		st, err := decodeStep(rs)
		if err != nil {
			return nil, fail(c.ID, "steps[%d].%v", i, err)
		}
		c.Steps = append(c.Steps, st)
	}
	for i, raw := range rc.Objects {
		obj, err := decodeObject(raw)
		if err != nil {
			return nil, fail(c.ID, "objects[%d]: %v", i, err)
		}
		if pvc, ok := obj.(*v1.PersistentVolumeClaim); ok && pvc.UID == "" {
			// the API server gives every object a uid; VolumeBinding's static binding copies
			// the claim's into the PV's claimRef, and kube's PreBind fails on an empty one
			pvc.UID = types.UID("uid-pvc-" + pvc.Namespace + "-" + pvc.Name)
		}
		c.Objects = append(c.Objects, obj)
	}
	return c, nil
}

// decodeStep reads one step: its pods (typed, like podsToSchedule) and its PodGroup, a full
// scheduling.k8s.io/v1beta1 object.
func decodeStep(rs rawStep) (Step, error) {
	var st Step
	if len(rs.Pods) == 0 {
		return st, fmt.Errorf("pods: a step needs at least one pod")
	}
	for i, raw := range rs.Pods {
		p := &v1.Pod{}
		if err := decodeTyped(raw, "Pod", p); err != nil {
			return st, fmt.Errorf("pods[%d]: %v", i, err)
		}
		st.Pods = append(st.Pods, p)
	}
	if len(rs.PodGroup) == 0 || string(rs.PodGroup) == "null" {
		return st, nil
	}
	obj, err := decodeObject(rs.PodGroup)
	if err != nil {
		return st, fmt.Errorf("podGroup: %v", err)
	}
	pg, ok := obj.(*schedulingv1beta1.PodGroup)
	if !ok {
		return st, fmt.Errorf("podGroup: want a scheduling.k8s.io/v1beta1 PodGroup, got %T", obj)
	}
	if pg.Namespace == "" {
		pg.Namespace = metav1.NamespaceDefault
	}
	for i, p := range st.Pods {
		sg := p.Spec.SchedulingGroup
		if sg == nil || sg.PodGroupName == nil || *sg.PodGroupName != pg.Name {
			return st, fmt.Errorf("pods[%d]: not a member of podGroup %q (spec.schedulingGroup.podGroupName)", i, pg.Name)
		}
	}
	st.PodGroup = pg
	return st, nil
}

// decodeTyped reads a Node or Pod, which the case files write without apiVersion/kind;
// when they are present they must name the expected kind.
func decodeTyped(raw json.RawMessage, kind string, into any) error {
	var tm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(raw, &tm); err != nil {
		return fmt.Errorf("not a JSON object: %v", err)
	}
	if tm.Kind != "" && (tm.Kind != kind || (tm.APIVersion != "" && tm.APIVersion != "v1")) {
		return fmt.Errorf("expected a v1 %s, got apiVersion %q kind %q", kind, tm.APIVersion, tm.Kind)
	}
	if err := json.Unmarshal(raw, into); err != nil {
		return fmt.Errorf("decoding %s: %v", kind, err)
	}
	return nil
}

// decodeObject decodes a full apiVersion/kind object with client-go's scheme. A kind the
// scheme does not register is an error naming the kind.
func decodeObject(raw json.RawMessage) (runtime.Object, error) {
	var tm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(raw, &tm); err != nil {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	if tm.Kind == "" || tm.APIVersion == "" {
		return nil, fmt.Errorf("object without apiVersion/kind (apiVersion %q, kind %q)", tm.APIVersion, tm.Kind)
	}
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(raw, nil, nil)
	if err != nil {
		if strings.Contains(err.Error(), "no kind") || runtime.IsNotRegisteredError(err) {
			return nil, fmt.Errorf("unknown kind %q (apiVersion %q): %v", tm.Kind, tm.APIVersion, err)
		}
		return nil, fmt.Errorf("decoding %s %s: %v", tm.APIVersion, tm.Kind, err)
	}
	return obj, nil
}
