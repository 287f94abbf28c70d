package main

import (
	"fmt"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// Volume objects as the case files carry them (defaulted, as the API server stores them).
const wffcClass = `{"apiVersion":"storage.k8s.io/v1","kind":"StorageClass","metadata":{"name":"wffc"},
	"provisioner":"csi.example.com","reclaimPolicy":"Delete","volumeBindingMode":"WaitForFirstConsumer"}`

// localClass cannot provision: only pre-provisioned PVs satisfy its claims.
const localClass = `{"apiVersion":"storage.k8s.io/v1","kind":"StorageClass","metadata":{"name":"local"},
	"provisioner":"kubernetes.io/no-provisioner","reclaimPolicy":"Delete","volumeBindingMode":"WaitForFirstConsumer"}`

func claimJSON(name, class string) string {
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":%q,"namespace":"default","uid":"uid-pvc-%s"},
		"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}},"storageClassName":%q,"volumeMode":"Filesystem"},
		"status":{"phase":"Pending"}}`, name, name, class)
}

func localPVJSON(name, node string) string { // of class "local"
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":%q},
		"spec":{"accessModes":["ReadWriteOnce"],"capacity":{"storage":"5Gi"},"storageClassName":"local",
		"persistentVolumeReclaimPolicy":"Retain","volumeMode":"Filesystem","csi":{"driver":"csi.example.com","volumeHandle":%q},
		"nodeAffinity":{"required":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"kubernetes.io/hostname","operator":"In","values":[%q]}]}]}}},
		"status":{"phase":"Available"}}`, name, name, node)
}

func volumePodJSON(name, volumes string) string {
	return fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"default","uid":"uid-%s"},
		"spec":{"schedulerName":"default-scheduler","volumes":[%s],
		"containers":[{"name":"c","resources":{"requests":{"cpu":"100m"}}}]}}`, name, name, volumes)
}

func pvcVolume(claim string) string {
	return fmt.Sprintf(`{"name":"v-%s","persistentVolumeClaim":{"claimName":%q}}`, claim, claim)
}

func TestVolumeOutcomes(t *testing.T) {
	nodes := []string{nodeJSON("n0", "4"), nodeJSON("n1", "4")}
	tests := []struct {
		name  string
		line  string
		check func(t *testing.T, e *Expected)
	}{
		{
			name: "unbound WFFC claim: the PV's node affinity picks n1, Reserve binds the claim to it",
			line: caseLine("static", nodes, nil, volumePodJSON("p", pvcVolume("c1")),
				`,"objects":[`+localClass+","+claimJSON("c1", "local")+","+localPVJSON("pv1", "n1")+"]"),
			check: func(t *testing.T, e *Expected) {
				n0 := e.Nodes[0]
				if n0.Feasible || n0.Plugin != "VolumeBinding" || !reflect.DeepEqual(n0.Reasons, []string{"node(s) didn't find available persistent volumes to bind"}) {
					t.Errorf("n0 = %+v", n0)
				}
				want := []VolumeBindingOut{{Claim: "default/c1", VolumeName: "pv1"}}
				if !reflect.DeepEqual(e.VolumeBindings, want) || !reflect.DeepEqual(e.VolumeBindingsByNode["n1"], want) {
					t.Errorf("volumeBindings = %+v, by node %+v", e.VolumeBindings, e.VolumeBindingsByNode)
				}
			},
		},
		{
			name: "dynamic provisioning on tied nodes: each top node provisions there, no single choice",
			line: caseLine("dynamic", nodes, nil, volumePodJSON("p", pvcVolume("c1")),
				`,"objects":[`+wffcClass+","+claimJSON("c1", "wffc")+"]"),
			check: func(t *testing.T, e *Expected) {
				if len(e.MaxNodes) != 2 || e.VolumeBindings != nil {
					t.Fatalf("maxNodes %v, volumeBindings %+v", e.MaxNodes, e.VolumeBindings)
				}
				for _, n := range e.MaxNodes {
					want := []VolumeBindingOut{{Claim: "default/c1", Provisioned: true, SelectedNode: n}}
					if got := e.VolumeBindingsByNode[n]; !reflect.DeepEqual(got, want) {
						t.Errorf("%s: %+v, want %+v", n, got, want)
					}
				}
			},
		},
		{
			name: "ephemeral claim not owned by the pod: VolumeBinding's PreFilter rejects it, unresolvable",
			line: caseLine("ephemeral", nodes, nil,
				volumePodJSON("p", `{"name":"scratch","ephemeral":{"volumeClaimTemplate":{"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}}}`),
				`,"objects":[`+wffcClass+","+claimJSON("p-scratch", "wffc")+"]"),
			check: func(t *testing.T, e *Expected) {
				msg := "PVC default/p-scratch was not created for pod default/p (pod is not owner)"
				if e.Error != nil || e.PreFilter == nil || e.PreFilter.Code != "UnschedulableAndUnresolvable" ||
					!reflect.DeepEqual(e.PreFilter.Reasons, []string{msg}) {
					t.Fatalf("error %+v, preFilter %+v", e.Error, e.PreFilter)
				}
			},
		},
		{
			name: "an inline azureDisk of kind Shared on a migrated node is NodeVolumeLimits Filter Error, recorded",
			line: caseLine("error", nodes[:1], nil,
				volumePodJSON("p", `{"name":"az","azureDisk":{"diskName":"d1","diskURI":"https://x/d1","kind":"Shared","cachingMode":"ReadWrite","fsType":"ext4","readOnly":false}}`),
				`,"objects":[{"apiVersion":"storage.k8s.io/v1","kind":"CSINode","metadata":{"name":"n0",
				"annotations":{"storage.alpha.kubernetes.io/migrated-plugins":"kubernetes.io/azure-disk"}},
				"spec":{"drivers":[{"name":"disk.csi.azure.com","nodeID":"n0","allocatable":{"count":4}}]}}]`),
			check: func(t *testing.T, e *Expected) {
				msg := `running "NodeVolumeLimits" filter plugin: converting volume(az) from inline to csi: kind(Shared) is not supported in csi migration`
				want := ErrorOut{Stage: "Filter", Node: "n0", Plugin: "NodeVolumeLimits", Message: msg}
				if e.Error == nil || *e.Error != want {
					t.Fatalf("error = %+v, want %+v", e.Error, want)
				}
				if n := e.Nodes[0]; n.Code != "Error" || n.Feasible || !reflect.DeepEqual(n.Reasons, []string{msg}) {
					t.Errorf("n0 = %+v", n)
				}
				if e.FitError != "" || e.MaxNodes != nil {
					t.Errorf("fitError %q maxNodes %v after an Error", e.FitError, e.MaxNodes)
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

func TestClaimsWithoutUIDGetOneAsTheAPIServerWouldGive(t *testing.T) {
	claim := `{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"c1","namespace":"ns"},"spec":{}}`
	c, err := decodeCase([]byte(caseLine("uid", nil, nil, volumePodJSON("p", ""), `,"objects":[`+claimJSON("c0", "x")+","+claim+"]")), "t", 1, true)
	if err != nil {
		t.Fatal(err)
	}
	kept, given := c.Objects[0].(*v1.PersistentVolumeClaim), c.Objects[1].(*v1.PersistentVolumeClaim)
	if kept.UID != "uid-pvc-c0" || given.UID != "uid-pvc-ns-c1" {
		t.Errorf("uids %q %q, want uid-pvc-c0 (as written) and uid-pvc-ns-c1", kept.UID, given.UID)
	}
}
