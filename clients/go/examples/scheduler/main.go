// Command scheduler is an example external scheduler built on the schedsvc Go client: it
// watches a cluster through client-go informers, sends the pending pods that name it as their
// scheduler to schedsvc in batches, and writes kube-scheduler's decisions back: bindings,
// and for a pod that fits only by preemption, its nominated node and the victims' eviction.
//
//	scheduler -kubeconfig ~/.kube/config -schedsvc 127.0.0.1:50051 -name schedsvc-example
package main

import (
	"context"
	"flag"
	"log"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/schedsvc/schedsvc/clients/go/client"
)

func ptrUID(uid string) *types.UID {
	u := types.UID(uid)
	return &u
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig (empty: in-cluster)")
	target := flag.String("schedsvc", "127.0.0.1:50051", "schedsvc address")
	name := flag.String("name", "schedsvc-example", "the schedulerName this scheduler serves")
	profile := flag.String("profile", "default-scheduler", "the schedsvc profile that schedules our pods")
	batch := flag.Int("batch", 100, "pods per Schedule request")
	every := flag.Duration("every", time.Second, "time between rounds")
	lenient := flag.Bool("lenient", false, "schedule pods with unmodelled fields without them")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		log.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		log.Fatal(err)
	}
	sched, err := client.New(*target, client.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer sched.Close()
	s := NewScheduler(cs, sched, *name)
	s.Profile, s.BatchSize, s.Lenient = *profile, *batch, *lenient
	if err := s.Start(ctx); err != nil {
		log.Fatal(err)
	}
	for ctx.Err() == nil {
		if n, err := s.RunOnce(ctx); err != nil {
			log.Print(err)
		} else if n > 0 {
			log.Printf("bound %d pod(s)", n)
		}
		select {
		case <-ctx.Done():
		case <-time.After(*every):
		}
	}
}
