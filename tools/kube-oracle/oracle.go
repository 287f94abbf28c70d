package main

import (
	"context"
	"fmt"
	"os"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	schedscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkplugins "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodevolumelimits"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

// loadConfig reads a KubeSchedulerConfiguration file the way kube-scheduler does (decoded,
// defaulted and validated through the scheduler's own scheme), or returns kube's default
// v1 configuration when path is empty.
func loadConfig(path string) (*config.KubeSchedulerConfiguration, error) {
	if path == "" {
		return latest.Default()
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	obj, gvk, err := schedscheme.Codecs.UniversalDecoder().Decode(data, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	cfg, ok := obj.(*config.KubeSchedulerConfiguration)
	if !ok {
		return nil, fmt.Errorf("%s: not a KubeSchedulerConfiguration: %v", path, gvk)
	}
	cfg.TypeMeta.APIVersion = gvk.GroupVersion().String()
	if errs := validation.ValidateKubeSchedulerConfiguration(cfg); errs != nil {
		return nil, fmt.Errorf("%s: invalid configuration: %w", path, errs)
	}
	return cfg, nil
}

// Oracle holds the configuration and the in-tree registry; each case gets its own
// framework instance over its own fake clientset and snapshot.
type Oracle struct {
	cfg      *config.KubeSchedulerConfiguration
	registry frameworkruntime.Registry
}

// NewOracle must be called after feature gates are set: the in-tree registry captures them.
func NewOracle(cfg *config.KubeSchedulerConfiguration) *Oracle {
	metrics.Register() // the framework's instrumentation expects the scheduler's metrics registered
	return &Oracle{cfg: cfg, registry: frameworkplugins.NewInTreeRegistry()}
}

// profileFor picks the profile named by the pod's schedulerName (kube's frameworkForPod).
func (o *Oracle) profileFor(pod *v1.Pod) (*config.KubeSchedulerProfile, error) {
	name := pod.Spec.SchedulerName
	if name == "" {
		name = v1.DefaultSchedulerName
	}
	for i := range o.cfg.Profiles {
		if o.cfg.Profiles[i].SchedulerName == name {
			return &o.cfg.Profiles[i], nil
		}
	}
	return nil, fmt.Errorf("profile not found for scheduler name %q", name)
}

// scoreWeights is the framework's getValidScoreWeights over the profile's configuration:
// Score.Enabled first, then MultiPoint.Enabled, a weight of 0 meaning 1.
func scoreWeights(p *config.KubeSchedulerProfile) map[string]int64 {
	w := map[string]int64{}
	if p.Plugins == nil {
		return w
	}
	for _, list := range [][]config.Plugin{p.Plugins.Score.Enabled, p.Plugins.MultiPoint.Enabled} {
		for _, e := range list {
			if _, ok := w[e.Name]; ok {
				continue
			}
			w[e.Name] = int64(e.Weight)
			if w[e.Name] == 0 {
				w[e.Name] = 1
			}
		}
	}
	return w
}

// noNominator: the cases carry no pending nominated pods besides the pod itself, which
// kube's nominator would skip anyway.
type noNominator struct{}

func (noNominator) AddNominatedPod(klog.Logger, fwk.PodInfo, *fwk.NominatingInfo) {}
func (noNominator) DeleteNominatedPodIfExists(*v1.Pod)                            {}
func (noNominator) UpdateNominatedPod(klog.Logger, *v1.Pod, fwk.PodInfo)          {}
func (noNominator) NominatedPodsForNode(string) []fwk.PodInfo                     { return nil }

// caseEnv is one case's world: a fake clientset holding the case's objects behind started
// informers (the listers PodTopologySpread, InterPodAffinity, DefaultPreemption read), a
// snapshot of its nodes and bound pods, and a framework built from the profile with the same
// options scheduler.New passes.
type caseEnv struct {
	ctx      context.Context
	cancel   context.CancelFunc
	client   *fake.Clientset
	factory  informers.SharedInformerFactory
	snapshot *internalcache.Snapshot
	fw       framework.Framework
	profile  *config.KubeSchedulerProfile
}

func (o *Oracle) newEnv(parent context.Context, c *Case, profile *config.KubeSchedulerProfile, extra func(*caseEnv) error) (*caseEnv, error) {
	ctx, cancel := context.WithCancel(parent)
	e := &caseEnv{ctx: ctx, cancel: cancel, profile: profile}
	objs := make([]runtime.Object, 0, len(c.Objects))
	objs = append(objs, c.Objects...)
	e.client = fake.NewClientset(objs...)
	e.factory = informers.NewSharedInformerFactory(e.client, 0)
	e.snapshot = internalcache.NewSnapshot(c.Pods, c.Nodes)
	logger := klog.FromContext(ctx)

	var draManager fwk.SharedDRAManager
	if utilfeature.DefaultFeatureGate.Enabled(features.DynamicResourceAllocation) {
		claimInformer := e.factory.Resource().V1().ResourceClaims().Informer()
		claimCache := assumecache.NewAssumeCache(logger, claimInformer, "ResourceClaim", "", nil)
		opts := resourceslicetracker.Options{
			EnableDeviceTaintRules:   utilfeature.DefaultFeatureGate.Enabled(features.DRADeviceTaintRules),
			EnableConsumableCapacity: utilfeature.DefaultFeatureGate.Enabled(features.DRAConsumableCapacity),
			SliceInformer:            e.factory.Resource().V1().ResourceSlices(),
			KubeClient:               e.client,
		}
		if opts.EnableDeviceTaintRules {
			opts.TaintInformer = e.factory.Resource().V1().DeviceTaintRules()
		}
		tracker, err := resourceslicetracker.StartTracker(ctx, opts)
		if err != nil {
			cancel()
			return nil, fmt.Errorf("resource slice tracker: %w", err)
		}
		draManager = dynamicresources.NewDRAManager(ctx, claimCache, tracker, e.factory)
	}
	fwOpts := []frameworkruntime.Option{
		frameworkruntime.WithClientSet(e.client),
		frameworkruntime.WithInformerFactory(e.factory),
		frameworkruntime.WithSharedDRAManager(draManager),
		frameworkruntime.WithSnapshotSharedLister(e.snapshot),
		frameworkruntime.WithMutableSnapshotLister(e.snapshot),
		frameworkruntime.WithSharedCSIManager(nodevolumelimits.NewCSIManager(e.factory.Storage().V1().CSINodes().Lister())),
		frameworkruntime.WithPodNominator(noNominator{}),
	}
	if utilfeature.DefaultFeatureGate.Enabled(features.GenericWorkload) {
		fwOpts = append(fwOpts, frameworkruntime.WithPodGroupManager(internalcache.New(ctx, nil, true,
			utilfeature.DefaultFeatureGate.Enabled(features.CompositePodGroup))))
	}
	fw, err := frameworkruntime.NewFramework(ctx, o.registry, profile, fwOpts...)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("building framework for profile %q: %w", profile.SchedulerName, err)
	}
	e.fw = fw
	if extra != nil {
		if err := extra(e); err != nil {
			cancel()
			return nil, err
		}
	}
	e.factory.Start(ctx.Done())
	e.factory.WaitForCacheSync(ctx.Done())
	return e, nil
}

func (e *caseEnv) close() {
	e.cancel()
	e.factory.Shutdown()
}

func statusOut(s *fwk.Status) *StatusOut {
	if s == nil {
		return &StatusOut{Code: fwk.Success.String()}
	}
	return &StatusOut{Code: s.Code().String(), Plugin: s.Plugin(), Reasons: s.Reasons()}
}

// Evaluate runs kube's scheduling algorithm for one pod as schedulePod does, except that
// every node is filtered and reported (no sampling, no nominated-node shortcut), and
// scoring also runs when a single node is feasible (reported with kubeSkipsScoring).
func (o *Oracle) Evaluate(parent context.Context, c *Case) (*Expected, error) {
	start := time.Now()
	pod := c.Pod
	profile, err := o.profileFor(pod)
	if err != nil {
		return nil, err
	}
	var pre *preemptor
	e, err := o.newEnv(parent, c, profile, func(e *caseEnv) error {
		if !c.Preemption {
			return nil
		}
		pre, err = newPreemptor(e)
		return err
	})
	if err != nil {
		return nil, err
	}
	defer e.close()
	ctx := e.ctx

	exp := &Expected{ID: c.ID, Profile: profile.SchedulerName, NumNodes: len(c.Nodes), Nodes: make([]NodeOut, len(c.Nodes))}
	for i, n := range c.Nodes {
		exp.Nodes[i].Name = n.Name
	}
	defer func() { exp.Micros = time.Since(start).Microseconds() }()
	if len(c.Nodes) == 0 {
		exp.FitError = scheduler.ErrNoNodesAvailable.Error()
		return exp, nil
	}

	state := framework.NewCycleState()
	state.SetRecordPluginMetrics(false)
	diagnosis := framework.Diagnosis{NodeToStatus: framework.NewDefaultNodeToStatus()}

	preRes, s, unschedPlugins := e.fw.RunPreFilterPlugins(ctx, state, pod)
	diagnosis.UnschedulablePlugins = unschedPlugins
	exp.PreFilter = statusOut(s)
	var feasible []fwk.NodeInfo
	feasibleIdx := map[string]int{}
	if !s.IsSuccess() {
		if !s.IsRejected() {
			// kube's schedulePod returns the error: no node is filtered, no FitError.
			exp.Error = &ErrorOut{Stage: "PreFilter", Plugin: s.Plugin(), Message: s.AsError().Error()}
			for i := range exp.Nodes {
				exp.Nodes[i].Stage, exp.Nodes[i].Plugin, exp.Nodes[i].Code, exp.Nodes[i].Reasons = "PreFilter", s.Plugin(), s.Code().String(), s.Reasons()
			}
			return exp, nil
		}
		diagnosis.NodeToStatus.SetAbsentNodesStatus(s)
		diagnosis.PreFilterMsg = s.Message()
		diagnosis.AddPluginStatus(s)
		for i := range exp.Nodes {
			exp.Nodes[i].Stage, exp.Nodes[i].Plugin, exp.Nodes[i].Code, exp.Nodes[i].Reasons = "PreFilter", s.Plugin(), s.Code().String(), s.Reasons()
		}
	} else {
		// Formatted now: diagnosis.UnschedulablePlugins is this same set, and Filter
		// rejections are added to it below.
		pfrPlugins := fmt.Sprintf("%v", sets.List(unschedPlugins))
		if !preRes.AllNodes() {
			exp.PreFilterResultNodes = sets.List(preRes.NodeNames)
			absent := fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(unschedPlugins)))
			diagnosis.NodeToStatus.SetAbsentNodesStatus(absent)
		}
		for i, n := range c.Nodes {
			out := &exp.Nodes[i]
			if !preRes.AllNodes() && !preRes.NodeNames.Has(n.Name) {
				out.Stage, out.Plugin, out.Code = "PreFilterResult", pfrPlugins, fwk.UnschedulableAndUnresolvable.String()
				out.Reasons = diagnosis.NodeToStatus.AbsentNodesStatus().Reasons()
				continue
			}
			ni, err := e.snapshot.Get(n.Name)
			if err != nil {
				return nil, err
			}
			st := e.fw.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni)
			if st.Code() == fwk.Error && exp.Error == nil {
				// kube stops the cycle on it (which node's error wins is a race; every
				// node is still reported here, the first in node order named).
				exp.Error = &ErrorOut{Stage: "Filter", Node: n.Name, Plugin: st.Plugin(), Message: st.AsError().Error()}
			}
			if st.IsSuccess() {
				out.Feasible = true
				feasibleIdx[n.Name] = i
				feasible = append(feasible, ni)
				continue
			}
			out.Stage, out.Plugin, out.Code, out.Reasons = "Filter", st.Plugin(), st.Code().String(), st.Reasons()
			diagnosis.NodeToStatus.Set(n.Name, st)
			diagnosis.AddPluginStatus(st)
		}
	}
	exp.FeasibleCount = len(feasible)
	if exp.Error != nil {
		return exp, nil
	}

	if len(feasible) == 0 {
		fitErr := &framework.FitError{Pod: pod, NumAllNodes: e.snapshot.NumNodesInPlacement(), Diagnosis: diagnosis}
		exp.FitError = fitErr.Error()
		exp.UnschedulablePlugins = sets.List(diagnosis.UnschedulablePlugins)
		if pre != nil {
			po, err := pre.run(ctx, state, pod, diagnosis.NodeToStatus)
			if err != nil {
				return nil, fmt.Errorf("preemption: %w", err)
			}
			exp.Preemption = po
			fitErr.Diagnosis.PostFilterMsg = po.Message
			exp.FitErrorWithPreemption = fitErr.Error()
		}
		return exp, nil
	}

	exp.KubeSkipsScoring = len(feasible) == 1
	totals := make([]int64, len(feasible))
	if !e.fw.HasScorePlugins() {
		for i := range totals {
			totals[i] = 1
		}
	} else {
		pss := e.fw.RunPreScorePlugins(ctx, state, pod, feasible)
		exp.PreScore = statusOut(pss)
		if !pss.IsSuccess() {
			exp.Error = &ErrorOut{Stage: "PreScore", Plugin: pss.Plugin(), Message: pss.AsError().Error()}
			return exp, nil
		}
		skipped := sets.List(state.GetSkipScorePlugins())
		if skipped == nil {
			skipped = []string{}
		}
		exp.SkippedScorePlugins = &skipped
		nodeScores, sst := e.fw.RunScorePlugins(ctx, state, pod, feasible)
		if !sst.IsSuccess() {
			exp.Error = &ErrorOut{Stage: "Score", Plugin: sst.Plugin(), Message: sst.AsError().Error()}
			return exp, nil
		}
		weights := scoreWeights(profile)
		for i, ns := range nodeScores {
			out := &exp.Nodes[feasibleIdx[ns.Name]]
			out.Scores = map[string]PluginScoreOut{}
			for _, ps := range ns.Scores {
				w := weights[ps.Name]
				if w == 0 {
					w = 1
				}
				out.Scores[ps.Name] = PluginScoreOut{Score: ps.Score / w, Weight: w, Weighted: ps.Score}
			}
			totals[i] = ns.TotalScore
		}
	}
	var maxScore int64 = -1 << 62
	for i, ni := range feasible {
		t := totals[i]
		exp.Nodes[feasibleIdx[ni.Node().Name]].Total = &t
		if t > maxScore {
			maxScore = t
		}
	}
	exp.MaxScore = &maxScore
	for _, n := range exp.Nodes {
		if n.Feasible && *n.Total == maxScore {
			exp.MaxNodes = append(exp.MaxNodes, n.Name)
		}
	}
	if err := e.reserveVolumes(state, pod, exp); err != nil {
		return nil, fmt.Errorf("Reserve: %w", err)
	}
	return exp, nil
}
