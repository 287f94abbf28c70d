package main

import (
	"context"
	"fmt"
	"math"
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	plfeature "k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	"k8s.io/kubernetes/pkg/scheduler/util"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

// preemptor is kube's DefaultPreemption plugin, built with the profile's args over the
// case's framework handle, driven as its PostFilter drives it (Evaluator.Preempt ->
// evaluate) but stopping before actuation: nothing is evicted, no API call is made.
type preemptor struct {
	env *caseEnv
	pl  *defaultpreemption.DefaultPreemption
}

// newPreemptor returns nil when the profile has no DefaultPreemption PostFilter (kube would
// then run no preemption). It must run before the informers start: the evaluator registers
// the Pod and PodDisruptionBudget listers.
func newPreemptor(e *caseEnv) (*preemptor, error) {
	enabled := false
	for _, p := range e.fw.ListPlugins().PostFilter.Enabled {
		if p.Name == names.DefaultPreemption {
			enabled = true
		}
	}
	if !enabled {
		return nil, nil
	}
	var args *config.DefaultPreemptionArgs
	for _, pc := range e.profile.PluginConfig {
		if pc.Name == names.DefaultPreemption {
			a, ok := pc.Args.(*config.DefaultPreemptionArgs)
			if !ok {
				return nil, fmt.Errorf("DefaultPreemption args of type %T", pc.Args)
			}
			args = a
		}
	}
	if args == nil {
		args = &config.DefaultPreemptionArgs{MinCandidateNodesPercentage: 10, MinCandidateNodesAbsolute: 100}
	}
	pl, err := defaultpreemption.New(e.ctx, args, e.fw, plfeature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate))
	if err != nil {
		return nil, err
	}
	return &preemptor{env: e, pl: pl}, nil
}

// run is Evaluator.evaluate step by step with kube's exported pieces. The message is the
// one kube's PostFilter returns ("preemption: " + the Evaluator's status message), which
// schedulingAlgorithm stores as the FitError's PostFilterMsg. When a node is nominated,
// v1.37's Evaluator.Preempt returns Success with "found a potential placement for pod on
// node N, preempting K victims" once actuation succeeded; this dry run reports that text.
func (p *preemptor) run(ctx context.Context, state fwk.CycleState, pod *v1.Pod, m *framework.NodeToStatus) (*PreemptionOut, error) {
	ev := p.pl.Evaluator
	out := &PreemptionOut{}
	ok, msg := p.pl.PodEligibleToPreemptOthers(ctx, pod, m.Get(pod.Status.NominatedNodeName))
	out.Eligible = ok
	if !ok {
		out.Message = "preemption: " + msg
		return out, nil
	}
	lister := p.env.fw.MutableSnapshotSharedLister().NodeInfos()
	allNodes, err := lister.List()
	if err != nil {
		return nil, err
	}
	potential, err := m.NodesForStatusCode(lister, fwk.Unschedulable)
	if err != nil {
		return nil, err
	}
	var candidates []preemption.Candidate
	statuses := framework.NewDefaultNodeToStatus()
	if len(potential) > 0 {
		pdbs, err := p.env.factory.Policy().V1().PodDisruptionBudgets().Lister().List(labels.Everything())
		if err != nil {
			return nil, err
		}
		// kube draws a random offset; the candidate set does not depend on it while every
		// potential node is tried (numCandidates = max(10%, 100) capped at the node count).
		_, numCandidates := p.pl.GetOffsetAndNumCandidates(int32(len(potential)))
		var dryErr error
		candidates, statuses, dryErr = ev.DryRunPreemption(ctx, state, pod, potential, pdbs, 0, numCandidates)
		if dryErr != nil && len(candidates) == 0 {
			return nil, dryErr
		}
	}
	if len(candidates) == 0 {
		fitErr := &framework.FitError{Pod: pod, NumAllNodes: len(allNodes), Diagnosis: framework.Diagnosis{NodeToStatus: statuses}}
		fitErr.Diagnosis.NodeToStatus.SetAbsentNodesStatus(fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "Preemption is not helpful for scheduling"))
		out.Message = "preemption: " + fitErr.Error()
		return out, nil
	}
	for _, c := range candidates {
		co := CandidateOut{Node: c.Name(), NumPDBViolations: c.Victims().NumPDBViolations, Victims: []VictimOut{}}
		for _, v := range c.Victims().Pods {
			co.Victims = append(co.Victims, VictimOut{Name: v.Namespace + "/" + v.Name, UID: string(v.UID), Priority: corev1helpers.PodPriority(v)})
		}
		out.Candidates = append(out.Candidates, co)
	}
	sort.Slice(out.Candidates, func(i, j int) bool { return out.Candidates[i].Node < out.Candidates[j].Node })
	best := ev.SelectCandidate(ctx, candidates)
	if best == nil || best.Name() == "" {
		out.Message = "preemption: no candidate node for preemption"
		return out, nil
	}
	out.NominatedNode = best.Name()
	out.NominatedNodes = tiedCandidates(p.pl.CandidatesToVictimsMap(candidates))
	out.Message = fmt.Sprintf("preemption: found a potential placement for pod on node %v, preempting %d victims", best.Name(), len(best.Victims().Pods))
	return out, nil
}

// tiedCandidates replays pickOneNodeForPreemption's default score functions and returns
// every node still tied after the last one: kube picks the first of them in map order.
func tiedCandidates(nodesToVictims map[string]*extenderv1.Victims) []string {
	all := make([]string, 0, len(nodesToVictims))
	for n := range nodesToVictims {
		all = append(all, n)
	}
	sort.Strings(all)
	funcs := []func(string) int64{
		func(n string) int64 { return -nodesToVictims[n].NumPDBViolations },
		func(n string) int64 { return -int64(corev1helpers.PodPriority(nodesToVictims[n].Pods[0])) },
		func(n string) int64 {
			var sum int64
			for _, p := range nodesToVictims[n].Pods {
				sum += int64(corev1helpers.PodPriority(p)) + int64(math.MaxInt32+1)
			}
			return -sum
		},
		func(n string) int64 { return -int64(len(nodesToVictims[n].Pods)) },
		func(n string) int64 {
			t := util.GetEarliestPodStartTime(nodesToVictims[n])
			if t == nil {
				return math.MinInt64
			}
			return t.UnixNano()
		},
	}
	for _, f := range funcs {
		var sel []string
		best := int64(math.MinInt64)
		for _, n := range all {
			s := f(n)
			if s > best {
				best, sel = s, nil
			}
			if s == best {
				sel = append(sel, n)
			}
		}
		if len(sel) == 1 {
			return sel
		}
		all = sel
	}
	return all
}
