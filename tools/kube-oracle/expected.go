package main

// The output format: shared/conformance/README.md's `expected`, field for field, as the
// v1.35.4 recorder wrote it (plus the same extra diagnostics: preFilter, preScore,
// unschedulablePlugins, preFilterResultNodes, micros).

type StatusOut struct {
	Code    string   `json:"code"`
	Plugin  string   `json:"plugin,omitempty"`
	Reasons []string `json:"reasons,omitempty"`
}

type PluginScoreOut struct {
	Score    int64 `json:"score"`
	Weight   int64 `json:"weight"`
	Weighted int64 `json:"weighted"`
}

type NodeOut struct {
	Name     string                    `json:"name"`
	Feasible bool                      `json:"feasible"`
	Stage    string                    `json:"stage,omitempty"`
	Plugin   string                    `json:"plugin,omitempty"`
	Code     string                    `json:"code,omitempty"`
	Reasons  []string                  `json:"reasons,omitempty"`
	Scores   map[string]PluginScoreOut `json:"scores,omitempty"`
	Total    *int64                    `json:"total,omitempty"`
}

type VictimOut struct {
	Name     string `json:"name"`
	UID      string `json:"uid"`
	Priority int32  `json:"priority"`
}

type CandidateOut struct {
	Node             string      `json:"node"`
	Victims          []VictimOut `json:"victims"`
	NumPDBViolations int64       `json:"numPDBViolations"`
}

type PreemptionOut struct {
	Eligible       bool           `json:"eligible"`
	Message        string         `json:"message,omitempty"`
	Candidates     []CandidateOut `json:"candidates,omitempty"`
	NominatedNode  string         `json:"nominatedNode,omitempty"`
	NominatedNodes []string       `json:"nominatedNodes,omitempty"`
}

type Expected struct {
	ID                     string         `json:"id"`
	Profile                string         `json:"profile"`
	NumNodes               int            `json:"numNodes"`
	PreFilter              *StatusOut     `json:"preFilter,omitempty"`
	Nodes                  []NodeOut      `json:"nodes"`
	FeasibleCount          int            `json:"feasibleCount"`
	PreFilterResultNodes   []string       `json:"preFilterResultNodes,omitempty"`
	PreScore               *StatusOut     `json:"preScore,omitempty"`
	SkippedScorePlugins    *[]string      `json:"skippedScorePlugins,omitempty"`
	KubeSkipsScoring       bool           `json:"kubeSkipsScoring,omitempty"`
	MaxScore               *int64         `json:"maxScore,omitempty"`
	MaxNodes               []string       `json:"maxNodes,omitempty"`
	FitError               string         `json:"fitError,omitempty"`
	UnschedulablePlugins   []string       `json:"unschedulablePlugins,omitempty"`
	Preemption             *PreemptionOut `json:"preemption,omitempty"`
	FitErrorWithPreemption string         `json:"fitErrorWithPreemption,omitempty"`
	Error                  *ErrorOut      `json:"error,omitempty"`
	// VolumeBindingsByNode: for each node of maxNodes where VolumeBinding has a decision
	// to assume, the claims' bindings; VolumeBindings is that list when maxNodes is one node
	// (kube's choice among tied nodes is random).
	VolumeBindingsByNode map[string][]VolumeBindingOut `json:"volumeBindingsByNode,omitempty"`
	VolumeBindings       []VolumeBindingOut            `json:"volumeBindings,omitempty"`
	Micros               int64                         `json:"micros"`
}

type ScoreLine struct {
	ID       string    `json:"id"`
	Expected *Expected `json:"expected"`
}

// ErrorOut is an Error status that ends kube's scheduling cycle (schedulePod returns it
// instead of a FitError): the stage, the node for Filter/Reserve, the plugin and the message
// kube's status.AsError() carries.
type ErrorOut struct {
	Stage   string `json:"stage"`
	Node    string `json:"node,omitempty"`
	Plugin  string `json:"plugin,omitempty"`
	Message string `json:"message"`
}

// VolumeBindingOut is one claim's binding as VolumeBinding's Reserve assumes it on a node:
// a pre-provisioned PV (volumeName) or dynamic provisioning on selectedNode.
type VolumeBindingOut struct {
	Claim        string `json:"claim"`
	VolumeName   string `json:"volumeName,omitempty"`
	Provisioned  bool   `json:"provisioned,omitempty"`
	SelectedNode string `json:"selectedNode,omitempty"`
}
