package client_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/schedsvc/schedsvc/clients/go/client"
	"github.com/schedsvc/schedsvc/clients/go/kube"
	"github.com/schedsvc/schedsvc/clients/go/schedsvcv1"
)

// The README's example, compiled (it needs a server to run).
func Example() {
	ctx := context.Background()
	cs := fake.NewClientset()
	pendingPod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}}

	nodes, _ := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	c, _ := client.New("127.0.0.1:50051", client.Options{Cluster: "prod"})
	req := &schedsvcv1.UpdateSnapshotRequest{Replace: true}
	for i := range nodes.Items {
		n, _ := kube.NodeFromKube(&nodes.Items[i], "")
		req.UpsertNodes = append(req.UpsertNodes, n)
	}
	_, _ = c.UpdateSnapshot(ctx, req)
	p, err := kube.PodFromKube(pendingPod, "", kube.PodOptions{}) // an unmodelled field: *kube.ObjectError
	placements, _ := c.Schedule(ctx, []*schedsvcv1.Pod{p}, false)

	fmt.Println(len(placements), err)
}
