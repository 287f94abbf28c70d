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

	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes/fake"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/kubernetes/pkg/features"
)

// memberJSON is a pod of pod group group (podJSON plus spec.schedulingGroup).
func memberJSON(name, cpu string, priority int, group, nodeName string) string {
	p := podJSON(name, cpu, priority, nodeName)
	return strings.Replace(p, `"spec":{`, fmt.Sprintf(`"spec":{"schedulingGroup":{"podGroupName":%q},`, group), 1)
}

// podGroupJSON is a scheduling.k8s.io/v1beta1 PodGroup: gang with minCount, or basic for 0.
func podGroupJSON(name string, minCount, priority int, disruption string) string {
	policy := `{"basic":{}}`
	if minCount > 0 {
		policy = fmt.Sprintf(`{"gang":{"minCount":%d}}`, minCount)
	}
	return fmt.Sprintf(`{"apiVersion":"scheduling.k8s.io/v1beta1","kind":"PodGroup",
		"metadata":{"name":%q,"namespace":"default","uid":"uid-pg-%s"},
		"spec":{"schedulingPolicy":%s,"priority":%d,"disruptionMode":{%q:{}}}}`, name, name, policy, priority, disruption)
}

func members(group, cpu string, priority, n int) []string {
	var out []string
	for i := 0; i < n; i++ {
		out = append(out, memberJSON(fmt.Sprintf("%s-%d", group, i), cpu, priority, group, ""))
	}
	return out
}

func stepsCase(id string, nodes, bound []string, steps ...string) *Case {
	s := fmt.Sprintf(`{"id":%q,"nodes":[%s],"pods":[%s],"steps":[%s]}`,
		id, strings.Join(nodes, ","), strings.Join(bound, ","), strings.Join(steps, ","))
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		panic(err)
	}
	c, err := decodeCase(b.Bytes(), "test", 1, false)
	if err != nil {
		panic(err)
	}
	return c
}

func groupStep(pg string, pods []string) string {
	return fmt.Sprintf(`{"podGroup":%s,"pods":[%s]}`, pg, strings.Join(pods, ","))
}

func runSteps(t *testing.T, c *Case) *StepsResult {
	t.Helper()
	cfg, err := loadConfig("")
	if err != nil {
		t.Fatal(err)
	}
	res, err := runStepsCase(context.Background(), cfg, c, stepsOptions{quiet: 200 * time.Millisecond, stepTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Flags) > 0 {
		t.Fatalf("flags: %v", res.Flags)
	}
	return res
}

func nodesOf(s StepResult) (first, final []string) {
	for _, p := range s.Pods {
		first = append(first, p.Node)
		final = append(final, p.FinalNode)
	}
	return first, final
}

// Expected values from kube v1.37.2's source: gangscheduling.go PlacementFeasible's "minCount
// (%d) cannot be satisfied: %d scheduled, %d remaining", schedule_one_podgroup.go's
// errPodGroupUnschedulable ("pod group is unschedulable") on the members that fit, the condition
// PodGroupInitiallyScheduled with reason Scheduled or Unschedulable.
func TestStepsPodGroups(t *testing.T) {
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.GenericWorkload, true)
	nodes := []string{nodeJSON("n0", "4"), nodeJSON("n1", "5"), nodeJSON("n2", "3500m")}
	noVictims := "pod group preemption: No preemption victims found for incoming preemptor"

	t.Run("a gang that fits binds every member in one pop and is Scheduled", func(t *testing.T) {
		res := runSteps(t, stepsCase("fit", nodes, nil, groupStep(podGroupJSON("g", 3, 0, "single"), members("g", "3", 0, 3))))
		s := res.Steps[0]
		first, final := nodesOf(s)
		if !reflect.DeepEqual(first, final) || strings.Join(final, ",") == "" || countNonEmpty(final) != 3 {
			t.Errorf("first %v, final %v: want all three bound at once", first, final)
		}
		if s.Group == nil || s.Group.Condition == nil || *s.Group.Condition != (GroupCondition{"True", "Scheduled", ""}) || s.Group.Attempts != 1 {
			t.Errorf("group = %+v", s.Group)
		}
	})

	t.Run("a gang that cannot reach minCount places nothing; members that fit carry the group message", func(t *testing.T) {
		res := runSteps(t, stepsCase("nofit", nodes, nil, groupStep(podGroupJSON("g", 4, 0, "single"), members("g", "3", 0, 4))))
		s := res.Steps[0]
		group := "minCount (4) cannot be satisfied: 3 scheduled, 0 remaining, " + noVictims
		for i, p := range s.Pods[:3] {
			if p.FinalNode != "" || p.Message != "pod group is unschedulable, "+group {
				t.Errorf("pod %d = %+v", i, p)
			}
		}
		if p := s.Pods[3]; p.Message != "0/3 nodes are available: 3 Insufficient cpu." {
			t.Errorf("pod 3 = %+v", p)
		}
		if c := s.Group.Condition; c == nil || *c != (GroupCondition{"False", "Unschedulable", group}) {
			t.Errorf("condition = %+v", c)
		}
	})

	t.Run("a gang below minCount is gated: no decision, no condition", func(t *testing.T) {
		res := runSteps(t, stepsCase("gated", nodes, nil, groupStep(podGroupJSON("g", 4, 0, "single"), members("g", "1", 0, 3))))
		s := res.Steps[0]
		for _, p := range s.Pods {
			if p.Decided || p.FinalNode != "" {
				t.Errorf("pod = %+v", p)
			}
		}
		if s.Group.Condition != nil || len(s.Pops) != 0 {
			t.Errorf("group %+v, pops %v", s.Group, s.Pops)
		}
	})

	t.Run("bound members count toward minCount", func(t *testing.T) {
		bound := []string{memberJSON("g-b0", "1", 0, "g", "n0"), memberJSON("g-b1", "1", 0, "g", "n1")}
		c := stepsCase("bound", nodes, bound, groupStep(podGroupJSON("g", 3, 0, "single"), members("g", "1", 0, 1)))
		// the PodGroup exists with its bound members: load it up front, the step only adds a pod
		c.Objects = append(c.Objects, c.Steps[0].PodGroup)
		c.Steps[0].PodGroup = nil
		s := runSteps(t, c).Steps[0]
		if s.Pods[0].FinalNode == "" || s.Group.Condition == nil || s.Group.Condition.Status != "True" {
			t.Errorf("step = %+v, group %+v", s.Pods, s.Group)
		}
	})

	t.Run("a leftover member after the group is Scheduled fails alone and the condition stays True", func(t *testing.T) {
		s := runSteps(t, stepsCase("partial", nodes, nil, groupStep(podGroupJSON("g", 2, 0, "single"), members("g", "3", 0, 4)))).Steps[0]
		_, final := nodesOf(s)
		if countNonEmpty(final) != 3 || s.Pods[3].Message != "0/3 nodes are available: 3 Insufficient cpu." {
			t.Errorf("pods = %+v", s.Pods)
		}
		if len(s.Group.Conditions) != 1 || s.Group.Condition.Status != "True" || len(s.Pops) != 1 {
			t.Errorf("group = %+v, pops %v", s.Group, s.Pops)
		}
	})

	t.Run("a gang that fits only by preempting waits on preemption, then binds on its retry", func(t *testing.T) {
		bound := []string{podJSON("low0", "2", 0, "n0"), podJSON("low1", "3", 0, "n1")}
		s := runSteps(t, stepsCase("preempt", nodes, bound, groupStep(podGroupJSON("g", 3, 100, "single"), members("g", "3", 100, 3)))).Steps[0]
		if !reflect.DeepEqual(s.Deleted, []string{"default/low0", "default/low1"}) && !reflect.DeepEqual(s.Deleted, []string{"default/low1", "default/low0"}) {
			t.Errorf("deleted = %v", s.Deleted)
		}
		for _, p := range s.Pods {
			if p.Node != "" || p.NominatedNode == "" || p.FinalNode == "" {
				t.Errorf("pod = %+v: want nominated first, bound on the retry", p)
			}
		}
		cs := s.Group.Conditions
		if len(cs) != 2 || cs[0].Reason != "Unschedulable" ||
			!strings.HasSuffix(cs[0].Message, "pod group preemption: found a placement for podgroup, preempting 2 victims") ||
			cs[1] != (GroupCondition{"True", "Scheduled", ""}) || s.Group.Attempts != 2 {
			t.Errorf("group = %+v", s.Group)
		}
	})
}

func countNonEmpty(ss []string) int {
	n := 0
	for _, s := range ss {
		if s != "" {
			n++
		}
	}
	return n
}

// The reactor applies the scheduler's podgroups/status patch itself (to log the result); it must
// store what the fake tracker's own patch handling stores.
func TestPodGroupStatusPatchAsTheTrackerAppliesIt(t *testing.T) {
	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: "g", Namespace: "default"},
		Spec: schedulingv1beta1.PodGroupSpec{SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{Basic: &schedulingv1beta1.BasicSchedulingPolicy{}}},
		Status: schedulingv1beta1.PodGroupStatus{Conditions: []metav1.Condition{
			{Type: "Other", Status: metav1.ConditionTrue, Reason: "X"},
			{Type: podGroupInitiallyScheduled, Status: metav1.ConditionFalse, Reason: "Unschedulable", Message: "old"}}}}
	patch := []byte(`{"status":{"conditions":[{"type":"PodGroupInitiallyScheduled","status":"True","reason":"Scheduled","message":""}]}}`)

	plain := fake.NewSimpleClientset(pg.DeepCopy()) //nolint:staticcheck
	want, err := plain.SchedulingV1beta1().PodGroups("default").Patch(context.Background(), "g", types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatal(err)
	}
	ours := fake.NewSimpleClientset(pg.DeepCopy()) //nolint:staticcheck
	log := &stepLog{conditions: map[string][]GroupCondition{}, deleted: [][]string{nil}, pops: [][]string{nil}}
	addStepReactors(ours, log)
	if _, err := ours.SchedulingV1beta1().PodGroups("default").Patch(context.Background(), "g", types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	got, err := ours.SchedulingV1beta1().PodGroups("default").Get(context.Background(), "g", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Status, want.Status) || len(got.Status.Conditions) != 2 {
		t.Errorf("status = %+v, the tracker's = %+v", got.Status, want.Status)
	}
	if c := log.conditions["default/g"]; len(c) != 1 || c[0] != (GroupCondition{"True", "Scheduled", ""}) {
		t.Errorf("logged %+v", c)
	}
}

func TestStepsBadInput(t *testing.T) {
	line := `{"id":"x","nodes":[],"steps":[{"podGroup":` + strings.Join(strings.Fields(podGroupJSON("g", 2, 0, "single")), " ") +
		`,"pods":[` + strings.Join(strings.Fields(podJSON("p", "1", 0, "")), " ") + `]}]}`
	_, err := decodeCase([]byte(line), "in", 3, false)
	if err == nil || !strings.Contains(err.Error(), `steps[0].pods[0]: not a member of podGroup "g"`) {
		t.Errorf("err = %v", err)
	}
}
