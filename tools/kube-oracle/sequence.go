package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/profile"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

// SeqPod is one scheduled pod's outcome: its node, or "" and the message of its
// PodScheduled=False condition (kube's FitError text). Deleted marks a pod that a later
// pod's preemption evicted.
type SeqPod struct {
	Name    string `json:"name"`
	Node    string `json:"node"`
	Message string `json:"message,omitempty"`
	Deleted bool   `json:"deleted,omitempty"`
}

// SeqResult is one sequence run. Seconds runs from the first pod create to the moment every
// pod had its first decision (bound, or marked unschedulable).
type SeqResult struct {
	ID                    string   `json:"id"`
	NumNodes              int      `json:"numNodes"`
	NumPods               int      `json:"numPods"`
	Scheduled             int      `json:"scheduled"`
	Unschedulable         int      `json:"unschedulable"`
	TimedOut              bool     `json:"timedOut,omitempty"`
	Seconds               float64  `json:"seconds"`
	PodsPerSecond         float64  `json:"podsPerSecond"`
	OpportunisticBatching bool     `json:"opportunisticBatching"`
	NodesUsed             int      `json:"nodesUsed"`
	Pods                  []SeqPod `json:"pods,omitempty"`
}

var podsGVR = v1.SchemeGroupVersion.WithResource("pods")

type seqOptions struct {
	timeout   time.Duration
	printPods bool
}

// decisionLog collects what the scheduler told the (fake) API server: bindings through the
// pods/binding subresource, PodScheduled=False through pods/status patches, deletions.
type decisionLog struct {
	mu        sync.Mutex
	node      map[string]string // ns/name -> node
	message   map[string]string // ns/name -> last unschedulable message
	deleted   map[string]bool
	decided   map[string]bool // first decision seen
	watched   map[string]bool // the pods whose decisions we wait for
	last      time.Time
	remaining int
	done      chan struct{}
}

func (d *decisionLog) decide(key string) {
	if d.watched[key] && !d.decided[key] {
		d.decided[key] = true
		d.last = time.Now()
		d.remaining--
		if d.remaining == 0 {
			close(d.done)
		}
	}
}

// unschedulableMessage extracts the PodScheduled=False condition from a pods/status patch
// (the scheduler writes a strategic merge patch of the status).
func unschedulableMessage(patch []byte) (string, bool) {
	var p struct {
		Status struct {
			Conditions []v1.PodCondition `json:"conditions"`
		} `json:"status"`
	}
	if json.Unmarshal(patch, &p) != nil {
		return "", false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse {
			return c.Message, true
		}
	}
	return "", false
}

// admit applies what the API server's defaulting and admission would set and the scheduler
// relies on: a UID, the default scheduler name, the priority of a known PriorityClass.
func admit(p *v1.Pod, classes map[string]int32) {
	if p.Namespace == "" {
		p.Namespace = metav1.NamespaceDefault
	}
	if p.UID == "" {
		p.UID = types.UID("uid-" + p.Namespace + "-" + p.Name)
	}
	if p.Spec.SchedulerName == "" {
		p.Spec.SchedulerName = v1.DefaultSchedulerName
	}
	if p.Spec.Priority == nil {
		if v, ok := classes[p.Spec.PriorityClassName]; ok {
			p.Spec.Priority = &v
		}
	}
}

func runSequenceCase(parent context.Context, cfg *config.KubeSchedulerConfiguration, c *Case, opts seqOptions) (*SeqResult, error) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	toSchedule := c.PodsToSchedule
	if len(toSchedule) == 0 && c.Pod != nil {
		toSchedule = []*v1.Pod{c.Pod}
	}
	classes := priorityClasses(c)

	// The fake tracker's watchers have a fixed buffer (watch.DefaultChanSize) and panic when an
	// informer falls behind it; size it for every event this run can produce.
	watch.DefaultChanSize = int32(16*len(toSchedule) + 2*len(c.Pods) + 2*len(c.Nodes) + 10000)
	client, err := newFakeCluster(c, classes)
	if err != nil {
		return nil, err
	}

	log := &decisionLog{node: map[string]string{}, message: map[string]string{}, deleted: map[string]bool{},
		decided: map[string]bool{}, watched: map[string]bool{}, done: make(chan struct{})}
	pods := make([]*v1.Pod, len(toSchedule))
	for i, p := range toSchedule {
		p = p.DeepCopy()
		admit(p, classes)
		pods[i] = p
		key := p.Namespace + "/" + p.Name
		if log.watched[key] {
			return nil, fmt.Errorf("podsToSchedule: duplicate pod %s", key)
		}
		log.watched[key] = true
	}
	log.remaining = len(pods)

	addBindingReactor(client, func(key, node string) {
		log.mu.Lock()
		log.node[key] = node
		log.decide(key)
		log.mu.Unlock()
	})
	client.PrependReactor("patch", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		pa := action.(clienttesting.PatchAction)
		if pa.GetSubresource() == "status" {
			if msg, ok := unschedulableMessage(pa.GetPatch()); ok {
				key := pa.GetNamespace() + "/" + pa.GetName()
				log.mu.Lock()
				log.message[key] = msg
				log.decide(key)
				log.mu.Unlock()
			}
		}
		return false, nil, nil
	})
	client.PrependReactor("delete", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		da := action.(clienttesting.DeleteAction)
		log.mu.Lock()
		log.deleted[da.GetNamespace()+"/"+da.GetName()] = true
		log.mu.Unlock()
		return false, nil, nil
	})

	_, runDone, err := startScheduler(ctx, cfg, c, client)
	if err != nil {
		return nil, err
	}

	start := time.Now()
	for _, p := range pods {
		if _, err := client.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			cancel()
			<-runDone
			return nil, fmt.Errorf("creating pod %s/%s: %w", p.Namespace, p.Name, err)
		}
	}
	res := &SeqResult{ID: c.ID, NumNodes: len(c.Nodes), NumPods: len(pods),
		OpportunisticBatching: utilfeature.DefaultFeatureGate.Enabled(features.OpportunisticBatching)}
	if len(pods) > 0 {
		select {
		case <-log.done:
		case <-time.After(opts.timeout):
			res.TimedOut = true
		}
	}
	cancel()
	<-runDone

	log.mu.Lock()
	defer log.mu.Unlock()
	end := log.last
	if res.TimedOut || end.IsZero() {
		end = time.Now()
	}
	res.Seconds = end.Sub(start).Seconds()
	if res.Seconds > 0 {
		res.PodsPerSecond = float64(len(log.decided)) / res.Seconds
	}
	used := map[string]bool{}
	for _, p := range pods {
		key := p.Namespace + "/" + p.Name
		sp := SeqPod{Name: key, Node: log.node[key], Deleted: log.deleted[key]}
		if sp.Node == "" {
			sp.Message = log.message[key]
			if log.decided[key] {
				res.Unschedulable++
			}
		} else {
			res.Scheduled++
			used[sp.Node] = true
		}
		if opts.printPods {
			res.Pods = append(res.Pods, sp)
		}
	}
	res.NodesUsed = len(used)
	return res, nil
}

// priorityClasses maps the case's PriorityClass objects to their values (what priority
// admission would copy into a pod).
func priorityClasses(c *Case) map[string]int32 {
	classes := map[string]int32{}
	for _, o := range c.Objects {
		if pc, ok := o.(*schedulingv1.PriorityClass); ok {
			classes[pc.Name] = pc.Value
		}
	}
	return classes
}

// newFakeCluster is the fake API server holding the case's objects, nodes and bound pods.
// NewSimpleClientset, not NewClientset: the latter's managed-fields tracker made every binding
// ~7x slower, which would measure the fake API server, not the scheduler.
func newFakeCluster(c *Case, classes map[string]int32) (*fake.Clientset, error) {
	client := fake.NewSimpleClientset() //nolint:staticcheck
	tracker := client.Tracker()
	for _, o := range c.Objects {
		if err := tracker.Add(o); err != nil {
			return nil, fmt.Errorf("adding %T: %w", o, err)
		}
	}
	for _, n := range c.Nodes {
		if err := tracker.Add(n); err != nil {
			return nil, fmt.Errorf("adding node %s: %w", n.Name, err)
		}
	}
	for _, p := range c.Pods {
		p = p.DeepCopy()
		admit(p, classes)
		if err := tracker.Add(p); err != nil {
			return nil, fmt.Errorf("adding pod %s/%s: %w", p.Namespace, p.Name, err)
		}
	}
	return client, nil
}

// startScheduler builds kube's scheduler over the fake client as scheduler.New is called by
// kube-scheduler's app, waits for its informers and handlers, and runs it until ctx ends
// (runDone is closed then).
func startScheduler(ctx context.Context, cfg *config.KubeSchedulerConfiguration, c *Case, client *fake.Clientset) (*scheduler.Scheduler, chan struct{}, error) {
	sched, informerFactory, err := newScheduler(ctx, cfg, c, client)
	if err != nil {
		return nil, nil, err
	}
	runDone := runScheduler(ctx, sched, informerFactory)
	if runDone == nil {
		return nil, nil, errors.New("waiting for the scheduler's handlers: context ended")
	}
	return sched, runDone, nil
}

func newScheduler(ctx context.Context, cfg *config.KubeSchedulerConfiguration, c *Case, client *fake.Clientset) (*scheduler.Scheduler, informers.SharedInformerFactory, error) {
	schedCfg := *cfg
	if c.PercentageOfNodesToScore != nil {
		schedCfg.PercentageOfNodesToScore = c.PercentageOfNodesToScore
	}
	informerFactory := scheduler.NewInformerFactory(client, 0, nil)
	recorder := &events.FakeRecorder{} // nil channel: events are dropped
	sched, err := scheduler.New(ctx, client, informerFactory, nil,
		profile.RecorderFactory(func(string) events.EventRecorderLogger { return recorder }),
		scheduler.WithComponentConfigVersion(schedCfg.TypeMeta.APIVersion),
		scheduler.WithProfiles(schedCfg.Profiles...),
		scheduler.WithPercentageOfNodesToScore(schedCfg.PercentageOfNodesToScore),
		scheduler.WithPodMaxBackoffSeconds(schedCfg.PodMaxBackoffSeconds),
		scheduler.WithPodInitialBackoffSeconds(schedCfg.PodInitialBackoffSeconds),
		scheduler.WithExtenders(schedCfg.Extenders...),
		scheduler.WithParallelism(schedCfg.Parallelism),
	)
	if err != nil {
		return nil, nil, fmt.Errorf("scheduler.New: %w", err)
	}
	return sched, informerFactory, nil
}

// runScheduler starts the informers, waits for their sync and the scheduler's handlers, and
// runs the scheduler: the channel closed when Run returns, nil if ctx ended first.
func runScheduler(ctx context.Context, sched *scheduler.Scheduler, informerFactory informers.SharedInformerFactory) chan struct{} {
	informerFactory.Start(ctx.Done())
	informerFactory.WaitForCacheSync(ctx.Done())
	if err := sched.WaitForHandlersSync(ctx); err != nil {
		return nil
	}
	runDone := make(chan struct{})
	go func() {
		sched.Run(ctx)
		close(runDone)
	}()
	return runDone
}

func setCondition(p *v1.Pod, c v1.PodCondition) {
	c.LastTransitionTime = metav1.Now()
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == c.Type {
			p.Status.Conditions[i] = c
			return
		}
	}
	p.Status.Conditions = append(p.Status.Conditions, c)
}

func runSequence(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sequence", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cf commonFlags
	cf.register(fs)
	var gen genOptions
	fs.StringVar(&gen.kind, "generate", "", "build a workload in-process: plain | deployment | one-per-node")
	fs.IntVar(&gen.nodes, "nodes", 5000, "--generate: number of nodes")
	fs.IntVar(&gen.pods, "pods", 10000, "--generate: number of pods")
	fs.IntVar(&gen.deploymentSize, "deployment-size", 500, "--generate deployment: pods per ReplicaSet/Service")
	fs.IntVar(&gen.deployments, "deployments", 0, "--generate deployment: this many Deployments in turns (runs of --run-length), instead of consecutive ReplicaSets")
	fs.IntVar(&gen.runLength, "run-length", 50, "--generate deployment with --deployments: pods per run")
	fs.StringVar(&gen.nodeCPU, "node-cpu", "32", "--generate: node allocatable cpu")
	fs.StringVar(&gen.nodeMemory, "node-memory", "128Gi", "--generate: node allocatable memory")
	fs.StringVar(&gen.nodePods, "node-pods", "110", "--generate: node allocatable pods")
	fs.StringVar(&gen.podCPU, "pod-cpu", "100m", "--generate: pod cpu request")
	fs.StringVar(&gen.podMem, "pod-memory", "128Mi", "--generate: pod memory request")
	var opts seqOptions
	fs.DurationVar(&opts.timeout, "timeout", 10*time.Minute, "give up waiting for decisions after this long")
	var sopts stepsOptions
	fs.DurationVar(&sopts.quiet, "quiet", 200*time.Millisecond, "steps cases: a step that has not bound every pod is settled after this long with an idle queue and no API write")
	fs.DurationVar(&sopts.stepTimeout, "step-timeout", 20*time.Second, "steps cases: give up on one step after this long")
	printPods := fs.String("print-pods", "auto", "per-pod results: auto (for --cases, not --generate) | true | false")
	cfg, code := parseAndLoad(fs, &cf, args, stderr)
	if cfg == nil {
		return code
	}
	switch *printPods {
	case "auto":
		opts.printPods = gen.kind == ""
	case "true", "false":
		opts.printPods = *printPods == "true"
	default:
		fmt.Fprintf(stderr, "kube-oracle: --print-pods %q: want auto, true or false\n", *printPods)
		return 2
	}
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	enc := json.NewEncoder(w)
	ctx := context.Background()
	if gen.kind != "" {
		if cf.cases != "" {
			fmt.Fprintln(stderr, "kube-oracle: --generate and --cases are exclusive")
			return 2
		}
		c, err := generate(gen)
		if err != nil {
			fmt.Fprintf(stderr, "kube-oracle: %v\n", err)
			return 2
		}
		res, err := runSequenceCase(ctx, cfg, c, opts)
		if err != nil {
			fmt.Fprintf(stderr, "kube-oracle: %v\n", err)
			return 1
		}
		_ = enc.Encode(res)
		return 0
	}
	r, source, closeCases, code := caseSource(cf.cases, stdin, stderr)
	if r == nil {
		return code
	}
	defer closeCases()
	err := forEachCase(r, source, false, func(c *Case) error {
		if c.Steps != nil {
			res, err := runStepsCase(ctx, cfg, c, sopts)
			if err != nil {
				return &InputError{Source: source, Line: c.Line, ID: c.ID, Msg: err.Error()}
			}
			if err := enc.Encode(res); err != nil {
				return err
			}
			return w.Flush()
		}
		res, err := runSequenceCase(ctx, cfg, c, opts)
		if err != nil {
			return &InputError{Source: source, Line: c.Line, ID: c.ID, Msg: err.Error()}
		}
		if err := enc.Encode(res); err != nil {
			return err
		}
		return w.Flush()
	})
	if err != nil {
		w.Flush()
		var ie *InputError
		if errors.As(err, &ie) {
			return exitFor(stderr, err)
		}
		fmt.Fprintf(stderr, "kube-oracle: %v\n", err)
		return 1
	}
	return 0
}

// addBindingReactor makes the fake API server do what pods/binding does (set nodeName and
// PodScheduled), so the scheduler's informers confirm the assumed pod; `bound` hears of each
// binding ("namespace/name", node) once it is stored.
func addBindingReactor(client *fake.Clientset, bound func(key, node string)) {
	tracker := client.Tracker()
	client.PrependReactor("create", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() != "binding" {
			return false, nil, nil
		}
		b := action.(clienttesting.CreateAction).GetObject().(*v1.Binding)
		ns := action.GetNamespace()
		obj, err := tracker.Get(podsGVR, ns, b.Name)
		if err != nil {
			return true, nil, err
		}
		pod := obj.(*v1.Pod).DeepCopy()
		if pod.Spec.NodeName != "" {
			return true, nil, fmt.Errorf("pod %s/%s is already bound to %s", ns, b.Name, pod.Spec.NodeName)
		}
		pod.Spec.NodeName = b.Target.Name
		setCondition(pod, v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionTrue})
		if err := tracker.Update(podsGVR, pod, ns); err != nil {
			return true, nil, err
		}
		bound(ns+"/"+b.Name, b.Target.Name)
		return true, b, nil
	})
}
