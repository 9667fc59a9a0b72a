// Command fakelb stands in for a cloud's load balancer controller in the local test bed:
// kwok never gives a `type: LoadBalancer` Service an address, so fakelb writes one from its
// pool (a slice of 192.0.2.0/24, TEST-NET-1) into the Service's status.loadBalancer.ingress.
// The address is written to status only: nothing serves it and nothing may dial it.
// hack/kube/up.sh starts one per bed cluster, each with its own slice, so the clusters of a
// bed never share an address.
//
//	fakelb -kubeconfig $STATE/kubeconfig -pool 192.0.2.1-192.0.2.30 -ready-file $STATE/fakelb.ready
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/istioctl-installer/istioctl/hack/internal/loopback"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

var everything = labels.Everything()

func main() {
	kubeconfig := flag.String("kubeconfig", "", "admin kubeconfig of the local cluster")
	poolFlag := flag.String("pool", "192.0.2.1-192.0.2.30", "addresses to hand out, FIRST-LAST inside 192.0.2.0/24")
	readyFile := flag.String("ready-file", "", "file to create once the Service cache is synced")
	flag.Parse()
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, *kubeconfig, *poolFlag, *readyFile); err != nil {
		fmt.Fprintln(os.Stderr, "fakelb:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, kubeconfig, poolSpec, readyFile string) error {
	p, err := parsePool(poolSpec)
	if err != nil {
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("loading kubeconfig %q: %w", kubeconfig, err)
	}
	if err := loopback.APIServer(cfg.Host); err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	c, inf, err := newController(client, p)
	if err != nil {
		return err
	}
	go inf.Run(ctx.Done())
	return c.run(ctx, func() error {
		log.Printf("watching Services at %s, handing out %s", cfg.Host, poolSpec)
		if readyFile == "" {
			return nil
		}
		return os.WriteFile(readyFile, nil, 0o644)
	})
}
