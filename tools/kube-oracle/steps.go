package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

// The condition kube's pod group cycle writes (schedule_one_podgroup.go updatePodGroupCondition).
const podGroupInitiallyScheduled = "PodGroupInitiallyScheduled"

var podGroupsGVR = schedulingv1beta1.SchemeGroupVersion.WithResource("podgroups")

// GroupCondition is a PodGroupInitiallyScheduled condition as the PodGroup held it after a
// status patch.
type GroupCondition struct {
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// StepPod is one created pod's outcome. Node/Message are its first decision (bound there, or
// the PodScheduled=False message), NominatedNode the status.nominatedNodeName of that first
// failure; FinalNode/FinalMessage what the API server held when the step ended (a group that
// waited on preemption binds on its retry). Decided false: gated, no decision at all.
type StepPod struct {
	Name          string `json:"name"`
	Decided       bool   `json:"decided"`
	Node          string `json:"node,omitempty"`
	Message       string `json:"message,omitempty"`
	NominatedNode string `json:"nominatedNode,omitempty"`
	FinalNode     string `json:"finalNode"`
	FinalMessage  string `json:"finalMessage,omitempty"`
	FinalNominate string `json:"finalNominatedNode,omitempty"`
}

// StepGroup is a group step's PodGroup: its last PodGroupInitiallyScheduled condition (nil:
// never patched, the gang was gated) and every one the step's patches wrote, in order.
type StepGroup struct {
	Name       string           `json:"name"`
	Condition  *GroupCondition  `json:"condition"`
	Conditions []GroupCondition `json:"conditions,omitempty"`
	Attempts   int              `json:"attempts"`
}

// StepResult is one step: its pods, its group, the pods deleted while it ran (preemption
// victims, in deletion order) and the entities the scheduler popped ("pod ns/name" or
// "group ns/name: member,...").
type StepResult struct {
	Pods     []StepPod  `json:"pods"`
	Group    *StepGroup `json:"group,omitempty"`
	Deleted  []string   `json:"deleted,omitempty"`
	Pops     []string   `json:"pops"`
	TimedOut bool       `json:"timedOut,omitempty"`
}

// StepsResult is one steps case. Flags name what made it timing-dependent (an earlier step's
// entity popped during a later step, a step that did not settle): such cases are not recorded.
type StepsResult struct {
	ID                    string       `json:"id"`
	GenericWorkload       bool         `json:"genericWorkload"`
	OpportunisticBatching bool         `json:"opportunisticBatching"`
	Steps                 []StepResult `json:"steps"`
	Flags                 []string     `json:"flags,omitempty"`
}

// stepsOptions: quiet is how long the queue must stay idle with no API write before a step
// that has not bound every pod counts as settled; stepTimeout bounds one step.
type stepsOptions struct {
	quiet       time.Duration
	stepTimeout time.Duration
}

// stepLog is everything the scheduler told the fake API server, stamped with the step that was
// running when it happened.
type stepLog struct {
	mu         sync.Mutex
	step       int
	stepOf     map[string]int // pod key -> the step that created it
	firstNode  map[string]string
	firstMsg   map[string]string
	nominated  map[string]string
	decided    map[string]bool
	deleted    [][]string                  // per step
	conditions map[string][]GroupCondition // group key -> per patch
	pops       [][]string                  // per step
	attempts   map[string][]int            // group key -> pops per step
	flags      []string
	last       time.Time
	lastPop    time.Time
	lastDelete time.Time
	unitStart  time.Time
}

func (l *stepLog) touch() { l.last = time.Now() }

// mayPop: a unit (an ordinary pod, or a group) is one pop of its entity (one Schedule
// request's worth), and one more after each
// preemption (victims deleted since the last pop: the client evicts them and sends the pods
// again). kube would also retry a failed entity on its own, on its backoff clock or right away
// when an event came in flight (a group's leftover member after its siblings bound): schedsvc
// keeps no queue, so those retries are held back and the pods deleted when the step ends.
func (l *stepLog) mayPop() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lastPop.Before(l.unitStart) || l.lastDelete.After(l.lastPop)
}

// startUnit opens one Schedule request's worth of pops: an ordinary pod, or a formed group.
func (l *stepLog) startUnit() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.unitStart = time.Now()
}

func (l *stepLog) decide(key string) {
	if _, ok := l.stepOf[key]; ok && !l.decided[key] {
		l.decided[key] = true
	}
	l.touch()
}

// recordPop notes an entity the scheduler popped, and flags the case when it holds a pod of an
// earlier step: that retry's timing against the later step's events is not deterministic.
func (l *stepLog) recordPop(e framework.QueuedEntityInfo) {
	if e == nil {
		return
	}
	var keys []string
	e.ForEachPodInfo(func(pi *framework.QueuedPodInfo) bool {
		keys = append(keys, pi.Pod.Namespace+"/"+pi.Pod.Name)
		return true
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	l.touch()
	l.lastPop = l.last
	desc := "pod " + strings.Join(keys, ",")
	if g, ok := e.(*framework.QueuedPodGroupInfo); ok {
		gk := g.GetNamespace() + "/" + g.GetName()
		desc = "group " + gk + ": " + strings.Join(keys, ",")
		a := l.attempts[gk]
		for len(a) <= l.step {
			a = append(a, 0)
		}
		a[l.step]++
		l.attempts[gk] = a
	}
	l.pops[l.step] = append(l.pops[l.step], desc)
	for _, k := range keys {
		if s, ok := l.stepOf[k]; ok && s < l.step {
			l.flags = append(l.flags, fmt.Sprintf("requeued-later: step %d's %s popped during step %d", s, k, l.step))
		}
	}
}

// stepRunner drives one case's steps through a running scheduler.
type stepRunner struct {
	ctx     context.Context
	client  *fake.Clientset
	sched   *scheduler.Scheduler
	log     *stepLog
	popGate *sync.Mutex // held: the scheduler pops nothing (a group forms)
	opts    stepsOptions
	classes map[string]int32
}

func runStepsCase(parent context.Context, cfg *config.KubeSchedulerConfiguration, c *Case, opts stepsOptions) (*StepsResult, error) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	total := 0
	for _, st := range c.Steps {
		total += len(st.Pods)
	}
	watch.DefaultChanSize = int32(32*total + 2*len(c.Pods) + 2*len(c.Nodes) + 10000)
	classes := priorityClasses(c)
	client, err := newFakeCluster(c, classes)
	if err != nil {
		return nil, err
	}
	log := &stepLog{stepOf: map[string]int{}, firstNode: map[string]string{}, firstMsg: map[string]string{},
		nominated: map[string]string{}, decided: map[string]bool{}, conditions: map[string][]GroupCondition{},
		attempts: map[string][]int{}, deleted: make([][]string, len(c.Steps)), pops: make([][]string, len(c.Steps))}
	addStepReactors(client, log)
	sched, informerFactory, err := newScheduler(ctx, cfg, c, client)
	if err != nil {
		return nil, err
	}
	r := &stepRunner{ctx: ctx, client: client, sched: sched, log: log, popGate: &sync.Mutex{}, opts: opts, classes: classes}
	r.gatePops()
	runDone := runScheduler(ctx, sched, informerFactory)
	if runDone == nil {
		return nil, fmt.Errorf("waiting for the scheduler's handlers: context ended")
	}
	res := &StepsResult{ID: c.ID,
		GenericWorkload:       utilfeature.DefaultFeatureGate.Enabled(features.GenericWorkload),
		OpportunisticBatching: utilfeature.DefaultFeatureGate.Enabled(features.OpportunisticBatching)}
	for i, st := range c.Steps {
		sr, err := r.runStep(i, st)
		if err != nil {
			cancel()
			<-runDone
			return nil, fmt.Errorf("steps[%d]: %w", i, err)
		}
		res.Steps = append(res.Steps, *sr)
	}
	cancel()
	<-runDone
	log.mu.Lock()
	defer log.mu.Unlock()
	res.Flags = append(res.Flags, log.flags...)
	for i := range res.Steps {
		res.Steps[i].Deleted = log.deleted[i]
		res.Steps[i].Pops = log.pops[i]
		if res.Steps[i].Pops == nil {
			res.Steps[i].Pops = []string{}
		}
	}
	return res, nil
}

// gatePops wraps the scheduler's NextEntity so that it pops only when activeQ holds an entity,
// popGate is free and the step may pop again (mayPop). kube's own Pop blocks on an empty queue and wakes on the first member a
// PodGroup's arrival moves into activeQ, racing AddPodGroup's move of the others; polling under
// the gate lets a group form whole before anything is popped. Entities in backoffQ reach
// activeQ through kube's own flush (BackoffComplete, every second).
func (r *stepRunner) gatePops() {
	inner := r.sched.NextEntity
	r.sched.NextEntity = func(logger klog.Logger) (framework.QueuedEntityInfo, error) {
		for r.ctx.Err() == nil {
			r.popGate.Lock()
			if active, _ := r.queueLens(); active > 0 && r.log.mayPop() {
				e, err := inner(logger)
				r.popGate.Unlock()
				r.log.recordPop(e)
				return e, err
			}
			r.popGate.Unlock()
			time.Sleep(500 * time.Microsecond)
		}
		return nil, nil
	}
}

// queueLens reads activeQ's and backoffQ's lengths from PendingPods' summary.
func (r *stepRunner) queueLens() (int, int) {
	_, summary := r.sched.SchedulingQueue.PendingPods()
	var active, backoff int
	if _, err := fmt.Sscanf(summary, "activeQ:%d; backoffQ:%d", &active, &backoff); err != nil {
		return 0, 0
	}
	return active, backoff
}

func podKey(p *v1.Pod) string { return p.Namespace + "/" + p.Name }

// runStep creates the step's objects and waits until it settles. Ordinary pods (and, with
// GenericWorkload off, a group's pods) are created one at a time, each settled before the next;
// a group's pods are created while the scheduler pops nothing, then its PodGroup, so kube's queue
// holds the group whole, in creation order, when the first pop comes.
func (r *stepRunner) runStep(i int, st Step) (*StepResult, error) {
	pods := make([]*v1.Pod, len(st.Pods))
	r.log.mu.Lock()
	r.log.step = i
	for j, p := range st.Pods {
		p = p.DeepCopy()
		admit(p, r.classes)
		pods[j] = p
		if _, dup := r.log.stepOf[podKey(p)]; dup {
			r.log.mu.Unlock()
			return nil, fmt.Errorf("pods[%d]: duplicate pod %s", j, podKey(p))
		}
		r.log.stepOf[podKey(p)] = i
	}
	r.log.mu.Unlock()
	sr := &StepResult{}
	grouped := utilfeature.DefaultFeatureGate.Enabled(features.GenericWorkload) && pods[0].Spec.SchedulingGroup != nil
	if grouped {
		if err := r.formGroup(pods, st.PodGroup); err != nil {
			return nil, err
		}
		sr.TimedOut = !r.settle(pods)
	} else {
		if st.PodGroup != nil {
			if err := r.createPodGroup(st.PodGroup); err != nil {
				return nil, err
			}
		}
		for _, p := range pods {
			r.log.startUnit()
			if err := r.createPod(p); err != nil {
				return nil, err
			}
			if !r.settle([]*v1.Pod{p}) {
				sr.TimedOut = true
			}
		}
	}
	if sr.TimedOut {
		r.log.mu.Lock()
		r.log.flags = append(r.log.flags, fmt.Sprintf("timed-out: step %d did not settle", i))
		r.log.mu.Unlock()
	}
	out, err := r.collect(i, st, pods, sr)
	if err != nil {
		return nil, err
	}
	return out, r.cleanup(pods)
}

func (r *stepRunner) createPod(p *v1.Pod) error {
	if _, err := r.client.CoreV1().Pods(p.Namespace).Create(r.ctx, p, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating pod %s: %w", podKey(p), err)
	}
	return nil
}

func (r *stepRunner) createPodGroup(pg *schedulingv1beta1.PodGroup) error {
	if _, err := r.client.SchedulingV1beta1().PodGroups(pg.Namespace).Create(r.ctx, pg.DeepCopy(), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating podGroup %s/%s: %w", pg.Namespace, pg.Name, err)
	}
	return nil
}

// formGroup creates a group's pods (waiting in incompletePodGroupPods while their PodGroup is
// missing) and then the PodGroup, with pops held until every member is in the queue.
func (r *stepRunner) formGroup(pods []*v1.Pod, pg *schedulingv1beta1.PodGroup) error {
	r.popGate.Lock()
	defer r.popGate.Unlock()
	for _, p := range pods {
		if err := r.createPod(p); err != nil {
			return err
		}
	}
	if pg != nil {
		if !r.waitFor(func() bool { return countIn(r.sched.SchedulingQueue.IncompletePodGroupPodsPods(), pods) == len(pods) }) {
			return fmt.Errorf("the group's pods never all reached incompletePodGroupPods")
		}
		if err := r.createPodGroup(pg); err != nil {
			return err
		}
	}
	ok := r.waitFor(func() bool {
		if countIn(r.sched.SchedulingQueue.IncompletePodGroupPodsPods(), pods) > 0 {
			return false
		}
		pending, _ := r.sched.SchedulingQueue.PendingPods()
		return countIn(pending, pods) == len(pods)
	})
	if !ok {
		return fmt.Errorf("the group's pods never all reached the queue (is its PodGroup known?)")
	}
	time.Sleep(20 * time.Millisecond) // the PodGroup's and pods' other event handlers
	r.log.startUnit()
	return nil
}

func countIn(have []*v1.Pod, want []*v1.Pod) int {
	set := map[string]bool{}
	for _, p := range have {
		set[podKey(p)] = true
	}
	n := 0
	for _, p := range want {
		if set[podKey(p)] {
			n++
		}
	}
	return n
}

func (r *stepRunner) waitFor(cond func() bool) bool {
	deadline := time.Now().Add(r.opts.stepTimeout)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(time.Millisecond)
	}
	return false
}

// settle waits until nothing is left to happen for the step: activeQ empty (or the step may
// not pop again), nothing in flight, no API write or pop for the quiet period (a shorter one once every pod is bound), and
// backoffQ empty unless nothing was deleted since the last pop: an entity waiting in backoffQ
// after preemption victims were deleted is retried (and binds). False on timeout.
func (r *stepRunner) settle(pods []*v1.Pod) bool {
	start := time.Now()
	return r.waitFor(func() bool {
		active, backoff := r.queueLens()
		if (active > 0 && r.log.mayPop()) || len(r.sched.SchedulingQueue.InFlightPods()) > 0 {
			return false
		}
		r.log.mu.Lock()
		last, lastPop, lastDelete := r.log.last, r.log.lastPop, r.log.lastDelete
		r.log.mu.Unlock()
		if backoff > 0 && lastDelete.After(lastPop) {
			return false
		}
		quiet := r.opts.quiet
		if r.allBound(pods) {
			quiet /= 4
		}
		if last.Before(start) {
			last = start
		}
		return time.Since(last) >= quiet
	})
}

// cleanup deletes the step's pods that are not bound, as the API server would on the client's
// delete: schedsvc remembers no pending pod between requests, so neither may kube's queue (a
// failed group would otherwise be retried, on kube's backoff clock, during a later step).
func (r *stepRunner) cleanup(pods []*v1.Pod) error {
	for _, p := range pods {
		obj, err := r.client.Tracker().Get(podsGVR, p.Namespace, p.Name)
		if err != nil || obj.(*v1.Pod).Spec.NodeName != "" {
			continue
		}
		if err := r.client.Tracker().Delete(podsGVR, p.Namespace, p.Name); err != nil {
			return fmt.Errorf("deleting pending pod %s: %w", podKey(p), err)
		}
	}
	return r.waitForGone(pods)
}

// waitForGone waits until the scheduler's queue no longer holds any of pods.
func (r *stepRunner) waitForGone(pods []*v1.Pod) error {
	ok := r.waitFor(func() bool {
		pending, _ := r.sched.SchedulingQueue.PendingPods()
		return countIn(pending, pods) == 0 && countIn(r.sched.SchedulingQueue.InFlightPods(), pods) == 0
	})
	if !ok {
		return fmt.Errorf("deleted pending pods stayed in the scheduling queue")
	}
	return nil
}

func (r *stepRunner) allBound(pods []*v1.Pod) bool {
	for _, p := range pods {
		obj, err := r.client.Tracker().Get(podsGVR, p.Namespace, p.Name)
		if err != nil || obj.(*v1.Pod).Spec.NodeName == "" {
			return false
		}
	}
	return true
}

// collect reads the step's outcome from the log and from the fake API server's objects.
func (r *stepRunner) collect(i int, st Step, pods []*v1.Pod, sr *StepResult) (*StepResult, error) {
	r.log.mu.Lock()
	defer r.log.mu.Unlock()
	for _, p := range pods {
		k := podKey(p)
		sp := StepPod{Name: k, Decided: r.log.decided[k], Node: r.log.firstNode[k], NominatedNode: r.log.nominated[k]}
		if sp.Node == "" {
			sp.Message = r.log.firstMsg[k]
		}
		obj, err := r.client.Tracker().Get(podsGVR, p.Namespace, p.Name)
		if err == nil {
			cur := obj.(*v1.Pod)
			sp.FinalNode = cur.Spec.NodeName
			sp.FinalNominate = cur.Status.NominatedNodeName
			if sp.FinalNode == "" {
				for _, c := range cur.Status.Conditions {
					if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse {
						sp.FinalMessage = c.Message
					}
				}
			}
		}
		sr.Pods = append(sr.Pods, sp)
	}
	if gname := groupName(st, pods); gname != "" {
		g := &StepGroup{Name: gname}
		all := r.log.conditions[gname]
		if len(all) > 0 {
			last := all[len(all)-1]
			g.Condition = &last
		}
		if a := r.log.attempts[gname]; len(a) > i {
			g.Attempts = a[i]
		}
		g.Conditions = all
		sr.Group = g
	}
	return sr, nil
}

// groupName is "ns/name" of the step's pod group, or "" for ordinary pods.
func groupName(st Step, pods []*v1.Pod) string {
	if st.PodGroup != nil {
		return st.PodGroup.Namespace + "/" + st.PodGroup.Name
	}
	sg := pods[0].Spec.SchedulingGroup
	if sg == nil || sg.PodGroupName == nil {
		return ""
	}
	return pods[0].Namespace + "/" + *sg.PodGroupName
}

// addStepReactors makes the fake API server do what the real one does for the scheduler's
// writes, and logs them: bindings, pod status patches, deletions, PodGroup status patches.
func addStepReactors(client *fake.Clientset, log *stepLog) {
	tracker := client.Tracker()
	addBindingReactor(client, func(key, node string) {
		log.mu.Lock()
		if !log.decided[key] {
			log.firstNode[key] = node
		}
		log.decide(key)
		log.mu.Unlock()
	})
	client.PrependReactor("patch", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		pa := action.(clienttesting.PatchAction)
		if pa.GetSubresource() != "status" {
			return false, nil, nil
		}
		key := pa.GetNamespace() + "/" + pa.GetName()
		log.mu.Lock()
		defer log.mu.Unlock()
		log.touch()
		if msg, ok := unschedulableMessage(pa.GetPatch()); ok && !log.decided[key] {
			log.firstMsg[key] = msg
			log.nominated[key] = nominatedNodeName(pa.GetPatch())
			log.decide(key)
		}
		return false, nil, nil
	})
	client.PrependReactor("delete", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		da := action.(clienttesting.DeleteAction)
		log.mu.Lock()
		log.deleted[log.step] = append(log.deleted[log.step], da.GetNamespace()+"/"+da.GetName())
		log.touch()
		log.lastDelete = log.last
		log.mu.Unlock()
		return false, nil, nil
	})
	client.PrependReactor("patch", "podgroups", func(action clienttesting.Action) (bool, runtime.Object, error) {
		pa := action.(clienttesting.PatchAction)
		if pa.GetSubresource() != "status" {
			return false, nil, nil
		}
		pg, err := applyPodGroupStatusPatch(tracker, pa)
		if err != nil {
			return true, nil, err
		}
		key := pa.GetNamespace() + "/" + pa.GetName()
		log.mu.Lock()
		defer log.mu.Unlock()
		log.touch()
		for _, c := range pg.Status.Conditions {
			if c.Type == podGroupInitiallyScheduled {
				log.conditions[key] = append(log.conditions[key], GroupCondition{Status: string(c.Status), Reason: c.Reason, Message: c.Message})
			}
		}
		return true, pg, nil
	})
}

// applyPodGroupStatusPatch applies the scheduler's strategic merge patch of a PodGroup's status
// to the stored object, as the API server's status subresource does, and stores the result.
func applyPodGroupStatusPatch(tracker clienttesting.ObjectTracker, pa clienttesting.PatchAction) (*schedulingv1beta1.PodGroup, error) {
	obj, err := tracker.Get(podGroupsGVR, pa.GetNamespace(), pa.GetName())
	if err != nil {
		return nil, err
	}
	orig, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	merged, err := strategicpatch.StrategicMergePatch(orig, pa.GetPatch(), &schedulingv1beta1.PodGroup{})
	if err != nil {
		return nil, fmt.Errorf("applying the podgroups/status patch: %w", err)
	}
	pg := &schedulingv1beta1.PodGroup{}
	if err := json.Unmarshal(merged, pg); err != nil {
		return nil, err
	}
	if err := tracker.Update(podGroupsGVR, pg, pa.GetNamespace()); err != nil {
		return nil, err
	}
	return pg, nil
}

// nominatedNodeName reads status.nominatedNodeName from a pods/status patch ("" if absent).
func nominatedNodeName(patch []byte) string {
	var p struct {
		Status struct {
			NominatedNodeName string `json:"nominatedNodeName"`
		} `json:"status"`
	}
	if json.Unmarshal(patch, &p) != nil {
		return ""
	}
	return p.Status.NominatedNodeName
}
